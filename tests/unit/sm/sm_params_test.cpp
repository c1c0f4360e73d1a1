// The SM's timing profile (models/sm/sm_params.h): topologies/hardware/opensm.json reads through the table with a
// source per parameter and OpenSM's defaults, the SMP timing helpers, and the cross-field rule.
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "models/sm/sm_params.h"
#include "sim/errors.h"
#include "sim/profile.h"
#include "tests/support/profile_files.h"

using namespace ib;
using sim::Time;

namespace {

// Out of line: a table's std::visit inlined into a test body makes GCC 12 warn about alternatives that never run.
[[gnu::noinline]] sm::Params opensm_params(const std::vector<sim::Override>& overrides = {}) {
  return sim::read_checked_profile(sm::param_table(), sim::load_profile(sim::profile_path("opensm")), overrides,
                                   &sm::validate);
}

} // namespace

TEST_CASE("sm::Params: the opensm profile reads and validates, and its rule rejects a timeout below a round trip",
          "[sm][quick]") {
  const sm::Params p = opensm_params();
  CHECK(sm::validate(p).empty());
  CHECK(p.sweep_interval == Time::from_ms(10'000));
  CHECK(p.sweep_on_trap);
  CHECK(p.max_wire_smps == 4);
  CHECK(p.transaction_timeout == Time::from_ms(200));
  CHECK(p.transaction_retries == 3);
  ::testing::check_sources(sm::param_table(), sim::load_profile(sim::profile_path("opensm")));
  CHECK(::testing::profiles_of("sm") == std::set<std::string>{"opensm"});
  // A round trip is send + hops there and back + SMA + receive.
  CHECK(sm::smp_round_trip(p, 3) ==
        p.smp_send_overhead + p.smp_hop_latency * 6 + p.sma_processing + p.smp_receive_overhead);
  CHECK(sm::smp_arrival(p, 3) == p.smp_send_overhead + p.smp_hop_latency * 3 + p.sma_processing);
  try {
    opensm_params({{"/smp_receive_overhead_ns", "300000000"}});
    FAIL("a 300 ms receive path against a 200 ms timeout was accepted");
  } catch (const sim::InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("opensm.json:/parameters/transaction_timeout_ms/value: expected more than the "
                                         "round trip of an SMP to the SM's own port (300.015 ms), got 200"));
  }
}
