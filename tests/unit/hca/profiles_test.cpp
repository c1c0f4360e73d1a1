// The shipped HCA profiles against hca::param_table() and hca::validate(), and hca::validate()'s rules.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "models/hca/params.h"
#include "models/link/link.h"
#include "sim/errors.h"
#include "sim/profile.h"
#include "tests/support/profile_files.h"

namespace hca = ib::hca;

TEST_CASE("hca profiles: each reads, validates and cites a source per parameter", "[hca][quick]") {
  REQUIRE(testing::profiles_of("hca") == std::set<std::string>{"connectx3-fdr", "connectx4-edr", "connectx6-hdr"});
  for (const std::string& name : testing::profiles_of("hca")) {
    INFO(name);
    const sim::Profile p = sim::load_profile(sim::profile_path(name));
    const hca::Params params = sim::read_profile(hca::param_table(), p);
    CHECK(hca::validate(params).empty());
    testing::check_sources(hca::param_table(), p);
  }
  const hca::Params cx4 = sim::read_profile(hca::param_table(), sim::load_profile(sim::profile_path("connectx4-edr")));
  CHECK(cx4.port_count == 1);
  CHECK(*ib::link::parse_speed_set(cx4.link_speeds) & ib::link::speed_bit(ib::link::Speed::edr));
  CHECK_FALSE(*ib::link::parse_speed_set(cx4.link_speeds) & ib::link::speed_bit(ib::link::Speed::hdr));
}

TEST_CASE("hca profiles: the schema lists exactly the table's keys", "[hca][quick]") {
  CHECK(testing::schema_keys("hca") == testing::table_keys(hca::param_table()));
}

TEST_CASE("hca::validate names the broken rule", "[hca][quick]") {
  const hca::Params good = sim::read_profile(hca::param_table(), sim::load_profile(sim::profile_path("connectx4-edr")));
  hca::Params p = good;
  p.link_speeds = "EDR,QDR,EDR";
  CHECK(hca::validate(p).rfind("link_speeds: ", 0) == 0);
  p = good;
  p.link_widths = "3x";
  CHECK(hca::validate(p).rfind("link_widths: ", 0) == 0);
  p = good;
  p.vl_cap = 3;
  CHECK(hca::validate(p) == "vl_cap: expected 1, 2, 4, 8 or 15, got 3");
  p = good;
  p.input_buffer_bytes_per_port = 4 * 65 * 64;
  CHECK(hca::validate(p).rfind("input_buffer_bytes_per_port: expected at least 16896", 0) == 0);
}

TEST_CASE("hca profiles: a port count the table refuses names the file and pointer", "[hca][quick]") {
  const sim::Profile p = sim::load_profile(sim::profile_path("connectx4-edr"));
  try {
    (void)sim::read_profile(hca::param_table(), p, {{"/port_count", "3"}});
    FAIL("expected an InputError");
  } catch (const sim::InputError& e) {
    CHECK(std::string(e.what()).find("/port_count") != std::string::npos);
  }
}
