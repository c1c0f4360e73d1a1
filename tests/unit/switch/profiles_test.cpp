// The shipped hardware profiles (topologies/hardware/*.json) against the tables that read them: every switch
// profile reads through sw::param_table() and passes sw::validate(), every cable profile reads through the cable
// table, every parameter cites a source, and the schema names the same keys. Then each rejected input, on a copy
// of a real switch profile, with its file, JSON pointer and text.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <system_error>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "models/link/link.h"
#include "models/switch/switch.h"
#include "sim/errors.h"
#include "sim/json_reader.h"
#include "sim/profile.h"
#include "tests/support/profile_files.h"

namespace {

using nlohmann::json;
namespace sw = ib::sw;
using testing::check_sources;
using testing::profile_files;
using testing::profiles_of;

/// "port_count, port_to_port_latency_ns, ...": the table's keys as finish() lists them.
template <class P>
std::string key_list(const sim::ParamTable<P>& table) {
  std::string text;
  for (const auto& field : table.fields()) {
    text += (text.empty() ? "" : ", ") + std::string(field.key);
  }
  return text;
}

} // namespace

TEST_CASE("sim::Profile: every shipped profile names its file and a model with a table", "[switch][quick]") {
  const auto files = profile_files();
  REQUIRE(files.size() >= 5);
  for (const auto& path : files) {
    INFO(path.string());
    const sim::Profile p = sim::load_profile(path.string());
    CHECK(p.name == path.stem().string());
    CHECK((p.model == "switch" || p.model == "hca" || p.model == "cable" || p.model == "pcie-link" ||
           p.model == "host" || p.model == "sm" || p.model == "cc" || p.model == "topo-import"));
    CHECK(sim::profile_path(p.name) == path.string());
  }
  CHECK(profiles_of("switch") ==
        std::set<std::string>{"quantum-hdr", "quantum2-ndr", "switch-ib2-edr", "switchx2-fdr"});
  CHECK(profiles_of("cable") == std::set<std::string>{"copper-dac", "fibre"});
}

TEST_CASE("sim::Profile: every switch profile reads and passes sw::validate with a source per parameter",
          "[switch][quick]") {
  for (const std::string& name : profiles_of("switch")) {
    INFO(name);
    const sim::Profile p = sim::load_profile(sim::profile_path(name));
    const sw::Params params = sim::read_profile(sw::param_table(), p);
    CHECK(sw::validate(params).empty());
    CHECK(params.cut_through);
    check_sources(sw::param_table(), p);
    const json digest = sim::digest(sw::param_table(), params, p);
    CHECK(digest.size() == sw::param_table().fields().size());
    for (const auto& [key, row] : digest.items()) {
      CHECK(row.at("source") != "override");
    }
  }
  // The figures the profiles were built to (see each file's sources).
  const sw::Params edr = sim::read_profile(sw::param_table(), sim::load_profile(sim::profile_path("switch-ib2-edr")));
  CHECK(edr.port_count == 36);
  CHECK(edr.port_to_port_latency.ps() == 90'000);
  CHECK(edr.input_buffer_bytes_per_port / edr.vl_cap / ib::link::block_bytes == 272);
  const sw::Params hdr = sim::read_profile(sw::param_table(), sim::load_profile(sim::profile_path("quantum-hdr")));
  CHECK(hdr.port_count == 40);
}

TEST_CASE("sim::Profile: quantum2-ndr is 64 ports of 4x NDR whose buffers keep 400 Gb/s over 100 m with FEC",
          "[switch][quick]") {
  namespace link = ib::link;
  const sw::Params ndr = sim::read_profile(sw::param_table(), sim::load_profile(sim::profile_path("quantum2-ndr")));
  CHECK(ndr.port_count == 64); // 32 OSFP cages of 2 ports (docs/references.md quantum2_ports_and_capacity)
  CHECK(*link::parse_speed_set(ndr.link_speeds) & link::speed_bit(link::Speed::ndr));
  CHECK(*link::parse_speed_set(ndr.link_speeds) & link::speed_bit(link::Speed::hdr));
  CHECK(*link::parse_width_set(ndr.link_widths) & link::width_bit(link::Width::x2)); // NDR200
  const sim::Rate rate = link::data_rate(link::Width::x4, link::Speed::ndr);
  CHECK(rate.bps() == 400e9);
  CHECK(ndr.cut_through);
  // Reference E4 at NDR: one VL's blocks cover a 100 m copper round trip with the FEC latency at both ends, at line
  // rate, plus one largest packet (66 blocks).
  const link::CableParams copper =
      sim::read_profile(link::param_table(), sim::load_profile(sim::profile_path("copper-dac")));
  const double round_trip_ns = 2 * link::link_delay(copper, 100, link::Speed::ndr).ns();
  const double blocks_per_vl = static_cast<double>(ndr.input_buffer_bytes_per_port / ndr.vl_cap / link::block_bytes);
  CHECK(round_trip_ns == Approx(1080));
  CHECK(blocks_per_vl >= std::ceil(round_trip_ns * rate.bps() / 8e9 / link::block_bytes) + 66);
  // IBA vol 1 section 7.9.4: a flow-control packet at least every 65,536 symbol times (0.08 ns at NDR).
  CHECK(ndr.flow_control_refresh.ns() <= 65536 * 8 / (rate.bps() / 4 / 1e9));
  CHECK(ndr.flow_control_refresh.ns() > 5200);
}

TEST_CASE("sim::Profile: every cable profile reads through the cable table with its source", "[switch][quick]") {
  for (const std::string& name : profiles_of("cable")) {
    INFO(name);
    const sim::Profile p = sim::load_profile(sim::profile_path(name));
    const ib::link::CableParams params = sim::read_profile(ib::link::param_table(), p);
    check_sources(ib::link::param_table(), p);
    // Reference E10's 2 m cable: about 10 ns in any medium.
    const sim::Time two_m = ib::link::propagation_delay(params, 2);
    CHECK(two_m >= sim::Time::from_ns(9));
    CHECK(two_m <= sim::Time::from_ns(11));
  }
}

TEST_CASE("sim::Profile: the profile schema lists exactly the switch and cable keys", "[switch][quick]") {
  CHECK(testing::schema_keys("switch") == testing::table_keys(sw::param_table()));
  CHECK(testing::schema_keys("cable") == testing::table_keys(ib::link::param_table()));
}

TEST_CASE("sim::Profile: rejected switch profile inputs name the file and the pointer", "[switch][quick]") {
  json doc = sim::load_json_file(sim::profile_path("switch-ib2-edr")).root;
  std::vector<sim::Override> overrides;
  std::string label;
  std::string file;
  std::string pointer;
  std::string text;
  SECTION("unknown key") {
    doc["parameters"]["bogus_ns"] = {{"value", 5}, {"source", "estimate: none"}};
    label = "unknown_key";
    pointer = "/parameters/bogus_ns/value";
    text = "expected one of the keys " + key_list(sw::param_table()) + ", got unknown key \"bogus_ns\"";
  }
  SECTION("missing source") {
    doc["parameters"]["port_to_port_latency_ns"].erase("source");
    label = "missing_source";
    pointer = "/parameters/port_to_port_latency_ns/source";
    text = "expected a non-empty string (required key \"source\"), got nothing";
  }
  SECTION("wrong type") {
    doc["parameters"]["port_count"]["value"] = "36";
    label = "wrong_type";
    pointer = "/parameters/port_count/value";
    text = "expected an integer in [1, 254], got string \"36\"";
  }
  SECTION("missing parameter") {
    doc["parameters"].erase("vl_cap");
    label = "missing_parameter";
    pointer = "/parameters/vl_cap/value";
    text = "expected an integer in [1, 15] (required key \"vl_cap\"), got nothing";
  }
  SECTION("value out of range") {
    doc["parameters"]["port_to_port_latency_ns"]["value"] = -1;
    label = "out_of_range";
    pointer = "/parameters/port_to_port_latency_ns/value";
    text = "expected a duration in [0, 1000000] ns, got number -1";
  }
  SECTION("unknown override key") {
    overrides = {{"/port_to_port_latency_ns", "120"}, {"/bogus_ns", "5"}};
    label = "unknown_override";
    file = "--set";
    pointer = "/bogus_ns";
    text = "expected one of the keys " + key_list(sw::param_table()) + ", got unknown key \"bogus_ns\"";
  }
  // In the temp directory, named after this process: test runs may overlap, and the source tree stays clean.
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("ibnetsim_profiles_test_" + label + "_" + std::to_string(::getpid()) + ".json"))
                               .string();
  std::ofstream(path) << doc.dump(2);
  if (file.empty()) {
    file = path;
  }
  try {
    sim::read_profile(sw::param_table(), sim::load_profile(path), overrides);
    FAIL("no sim::InputError was thrown");
  } catch (const sim::InputError& e) {
    CHECK(e.file() == file);
    CHECK(e.json_pointer() == pointer);
    CHECK(std::string(e.what()) == file + ":" + pointer + ": " + text);
  }
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
}

TEST_CASE("sim::Profile: an override that reads but breaks sw::validate is caught by it", "[switch][quick]") {
  const sim::Profile p = sim::load_profile(sim::profile_path("switch-ib2-edr"));
  const sw::Params params = sim::read_profile(sw::param_table(), p, {{"/vl_cap", "3"}});
  CHECK(sw::validate(params) == "vl_cap: expected 1, 2, 4, 8 or 15, got 3");
  const json digest = sim::digest(sw::param_table(), params, p);
  CHECK(digest.at("vl_cap").at("source") == "override");
  CHECK(digest.at("vl_cap").at("value") == 3);
}
