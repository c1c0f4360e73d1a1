#include <catch2/catch.hpp>

#include "models/phold/phold.h"
#include "sim/errors.h"

namespace {

phold::Params base_params() {
  phold::Params p{};
  p.lp_count = 64;
  p.initial_events_per_lp = 4;
  p.lookahead = sim::Time::from_ns(10);
  p.mean_extra_delay = sim::Time::from_ns(100);
  p.remote_fraction = 0.9;
  p.program_count = 0;
  p.program_every_events = 0;
  p.program_compute = sim::Time::zero();
  return p;
}

phold::RunResult run(const phold::Params& p, std::uint64_t seed, sim::Time duration, std::uint64_t drop = 0) {
  phold::RunOptions options;
  options.seed = seed;
  options.duration = duration;
  options.drop_event_number = drop;
  return phold::run(p, options);
}

} // namespace

TEST_CASE("phold::Model: one event on one LP with no random delay is handled every lookahead", "[phold][quick]") {
  phold::Params p = base_params();
  p.lp_count = 1;
  p.initial_events_per_lp = 1;
  p.mean_extra_delay = sim::Time::zero();
  p.lookahead = sim::Time::from_ps(1'234);
  const auto result = run(p, 1, sim::Time::from_ns(1'000));
  // Handled at 1234, 2468, ... ≤ 1 000 000 ps: floor(10^6 / 1234) = 810.
  CHECK(result.counters.events_handled == 810);
  CHECK(result.counters.events_sent_remote == 0);
  CHECK(result.events_pending == 1);
  CHECK(result.simulated_time == sim::Time::from_ns(1'000));
}

TEST_CASE("phold::Model: the same seed gives the same run, another seed another", "[phold][quick]") {
  const phold::Params p = base_params();
  const auto a = run(p, 7, sim::Time::from_us(20));
  const auto b = run(p, 7, sim::Time::from_us(20));
  const auto c = run(p, 8, sim::Time::from_us(20));
  CHECK(a.events_per_lp == b.events_per_lp);
  CHECK(a.counters.events_handled == b.counters.events_handled);
  CHECK(a.events_per_lp != c.events_per_lp);
}

TEST_CASE("phold::Model: remote_fraction sets where events go", "[phold][quick]") {
  phold::Params p = base_params();
  SECTION("never remote") {
    p.remote_fraction = 0;
    CHECK(run(p, 1, sim::Time::from_us(10)).counters.events_sent_remote == 0);
  }
  SECTION("always remote") {
    p.remote_fraction = 1;
    const auto result = run(p, 1, sim::Time::from_us(10));
    // Initial sends plus one per handled event, all remote.
    CHECK(result.counters.events_sent == result.counters.events_handled + 64 * 4);
    CHECK(result.counters.events_sent_remote == result.counters.events_sent);
  }
  SECTION("a fraction, observed within 1%") {
    p.remote_fraction = 0.25;
    const auto result = run(p, 3, sim::Time::from_us(200));
    const double observed =
        static_cast<double>(result.counters.events_sent_remote) / static_cast<double>(result.counters.events_sent);
    CHECK(observed == Approx(0.25).margin(0.01));
  }
}

TEST_CASE("phold::Model: a deliberately lost event violates event-conservation", "[phold][quick]") {
  try {
    run(base_params(), 1, sim::Time::from_us(10), 100);
    FAIL("no invariant violation");
  } catch (const sim::InvariantViolation& e) {
    CHECK(e.id() == "event-conservation");
    CHECK(e.component() == "phold");
    CHECK_THAT(e.state(), Catch::Contains("events_handled=100"));
  }
}

TEST_CASE("phold::Model: events handed to host programs come back after their compute time", "[phold][quick]") {
  phold::Params p = base_params();
  p.lp_count = 1;
  p.initial_events_per_lp = 1;
  p.mean_extra_delay = sim::Time::zero();
  p.lookahead = sim::Time::from_ps(1'000);
  p.program_count = 1;
  p.program_every_events = 1;
  p.program_compute = sim::Time::from_ps(250);
  const auto result = run(p, 1, sim::Time::from_ns(100));
  // The nth event is handled at n·1000 + (n-1)·250 ps ≤ 100 000 ps, so n ≤ 100 250 / 1250 = 80.
  CHECK(result.counters.events_handled == 80);
  CHECK(result.counters.events_to_programs == 80);
  CHECK(result.counters.events_from_programs == 80);
  CHECK(result.program_wakeups == 80 * 2); // a wake-up for the signal and one at the end of compute
}
