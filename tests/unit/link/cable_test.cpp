// The cable as a pure delay: length times delay per metre, to the nearest picosecond, and its parameter table.
#include <string>

#include <catch2/catch.hpp>

#include "models/link/cable.h"
#include "sim/errors.h"
#include "sim/json_reader.h"

using ib::link::CableParams;
using ib::link::propagation_delay;

namespace {

// Out of line on purpose: inlined into a test body, the table's std::visit over every member type meets a CableParams
// GCC 12 can see, and it warns (-Warray-bounds, -Wmaybe-uninitialized) about alternatives that can never run.
[[gnu::noinline]] CableParams read_cable(const nlohmann::json& value) {
  sim::JsonObjectReader reader("c.json", value, "/parameters");
  const CableParams params = ib::link::param_table().read(reader);
  reader.finish();
  return params;
}

[[gnu::noinline]] nlohmann::json cable_json(const CableParams& params) {
  return ib::link::param_table().to_json(params);
}

} // namespace

TEST_CASE("ib::link::propagation_delay: length times delay per metre, exactly", "[link][quick]") {
  const CableParams copper{5.0, {}, {}};
  const CableParams fibre{4.9, {}, {}};
  CHECK(propagation_delay(copper, 0).ps() == 0);
  CHECK(propagation_delay(copper, 2).ps() == 10'000);    // reference E10: 2 m cables, 10 ns each
  CHECK(propagation_delay(copper, 100).ps() == 500'000); // reference E4: 100 m at 5 ns/m
  CHECK(propagation_delay(fibre, 2).ps() == 9'800);
  CHECK(propagation_delay(fibre, 30).ps() == 147'000);
  CHECK(propagation_delay(fibre, 0.5).ps() == 2'450);
  // 1.2345 m × 4.9 ns/m = 6.04905 ns: a decimal product a double cannot hold, still the right picosecond.
  CHECK(propagation_delay(fibre, 1.2345).ps() == 6'049);
  CHECK(propagation_delay(copper, 1e6).ps() == 5'000'000'000); // 1000 km: 5 ms
}

TEST_CASE("ib::link::propagation_delay: rounds to the nearest picosecond", "[link][quick]") {
  const CableParams copper{5.0, {}, {}};
  CHECK(propagation_delay(copper, 0.00029).ps() == 1);                  // 1.45 ps
  CHECK(propagation_delay(copper, 0.00031).ps() == 2);                  // 1.55 ps
  CHECK(propagation_delay(CableParams{4.9, {}, {}}, 0.0001).ps() == 0); // 0.49 ps
}

TEST_CASE("ib::link::link_delay: propagation plus the receiver's FEC latency at HDR and NDR only", "[link][quick]") {
  using ib::link::Speed;
  const CableParams copper{5.0, sim::Time::from_ns(50), sim::Time::from_ns(40)};
  for (const Speed s : {Speed::sdr, Speed::ddr, Speed::qdr, Speed::fdr10, Speed::fdr, Speed::edr}) {
    CHECK(ib::link::fec_latency(copper, s) == sim::Time::zero());
    CHECK(ib::link::link_delay(copper, 2, s).ps() == 10'000); // reference E10's 2 m cable, unchanged below HDR
  }
  CHECK(ib::link::fec_latency(copper, Speed::hdr).ps() == 50'000);
  CHECK(ib::link::fec_latency(copper, Speed::ndr).ps() == 40'000);
  CHECK(ib::link::link_delay(copper, 2, Speed::hdr).ps() == 60'000);
  CHECK(ib::link::link_delay(copper, 2, Speed::ndr).ps() == 50'000);
}

TEST_CASE("ib::link::param_table: the cable table reads, checks and lists its key", "[link][quick]") {
  const auto& table = ib::link::param_table();
  CHECK(table.model() == "cable");
  REQUIRE(table.fields().size() == 3);
  CHECK(table.fields()[0].key == "propagation_delay_ns_per_m");
  CHECK(table.fields()[0].unit == "ns/m");
  CHECK(table.fields()[1].key == "fec_latency_hdr_ns");
  CHECK(table.fields()[2].key == "fec_latency_ndr_ns");
  const CableParams read =
      read_cable({{"propagation_delay_ns_per_m", 4.9}, {"fec_latency_hdr_ns", 50}, {"fec_latency_ndr_ns", 40.5}});
  CHECK(read.propagation_delay_ns_per_m == 4.9);
  CHECK(read.fec_latency_hdr.ps() == 50'000);
  CHECK(read.fec_latency_ndr.ps() == 40'500);
  CHECK(cable_json(CableParams{4.9, sim::Time::from_ns(50), sim::Time::from_ns(40)}) ==
        nlohmann::json{{"propagation_delay_ns_per_m", 4.9}, {"fec_latency_hdr_ns", 50}, {"fec_latency_ndr_ns", 40}});
  CHECK_THAT(table.describe(), Catch::Contains("propagation_delay_ns_per_m") && Catch::Contains("[3.33, 10]"));
  SECTION("faster than light") {
    try {
      read_cable({{"propagation_delay_ns_per_m", 3}});
      FAIL("no sim::InputError was thrown");
    } catch (const sim::InputError& e) {
      CHECK(e.json_pointer() == "/parameters/propagation_delay_ns_per_m");
      CHECK(std::string(e.what()) ==
            "c.json:/parameters/propagation_delay_ns_per_m: expected a number in [3.33, 10], got number 3");
    }
  }
}
