#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "sim/errors.h"
#include "sim/host_runtime.h"

namespace {

constexpr sim::ComponentType ticker_type = 1;

// A fabric stand-in: logs each event, raises `signal` at one instant, and can fail on demand.
struct Fabric {
  sim::Simulator& sim;
  std::vector<std::string>& log;
  sim::Signal* signal = nullptr;
  sim::Time notify_at = sim::Time::max();
  sim::Time fail_at = sim::Time::max();
  void operator()(const sim::Event& event) {
    REQUIRE(event.type == ticker_type);
    log.push_back("fabric" + std::to_string(event.handle) + "@" + std::to_string(sim.now().ps()));
    if (sim.now() == fail_at)
      throw sim::InvariantViolation("test-invariant", "ticker", "failed on purpose", "none");
    if (signal != nullptr && sim.now() == notify_at)
      signal->notify();
  }
};

// SimGrid's clock, in ps since `origin_s`. It never moves: the fabric runs in a simcall of the program that blocks
// last, with no timer, so SimGrid never needs a round of its models to reach an instant.
std::int64_t simgrid_ps_since(double origin_s) {
  return std::llround((simgrid::s4u::Engine::get_clock() - origin_s) * 1e12);
}

} // namespace

TEST_CASE("sim::HostRuntime: programs and fabric events interleave picoseconds apart in exact order", "[sim][quick]") {
  sim::Simulator sim(1);
  sim::HostRuntime runtime(sim);
  std::vector<std::string> log;
  sim::Signal signal(runtime);
  Fabric fabric{sim, log, &signal, sim::Time::from_ps(4)};
  for (int t = 1; t <= 6; ++t)
    sim.schedule(sim::Time::from_ps(t), sim::Target{ticker_type, 0}, 0, static_cast<std::uint32_t>(t));

  std::vector<std::int64_t> clock_moved_ps;
  runtime.spawn("A", [&](sim::Program& p) {
    const double origin = simgrid::s4u::Engine::get_clock();
    const auto note = [&](const char* what) {
      log.push_back(std::string(what) + "@" + std::to_string(p.now().ps()));
      clock_moved_ps.push_back(simgrid_ps_since(origin));
    };
    note("A.start");
    p.compute(sim::Time::from_ps(3)); // resumes at 3, after fabric3 (scheduled first)
    note("A.computed");
    p.wait(signal); // fabric4 raises it: resumes at 4, right after fabric4
    note("A.signalled");
    // A program may schedule fabric work at its own instant; it runs after the program blocks.
    p.simulator().schedule(p.now(), sim::Target{ticker_type, 0}, 0, 40);
    p.compute(sim::Time::from_ps(1));
    note("A.done");
  });
  runtime.spawn("B", [&](sim::Program& p) {
    const double origin = simgrid::s4u::Engine::get_clock();
    log.push_back("B.start@" + std::to_string(p.now().ps()));
    p.sleep_until(sim::Time::from_ps(2));
    log.push_back("B.woke@" + std::to_string(p.now().ps()));
    clock_moved_ps.push_back(simgrid_ps_since(origin));
    p.compute(sim::Time::from_ps(3));
    log.push_back("B.done@" + std::to_string(p.now().ps()));
  });

  const auto outcome = runtime.run(fabric, sim::Time::from_ps(100));

  const std::vector<std::string> expected = {"A.start@0", "B.start@0",    "fabric1@1", "fabric2@2",     "B.woke@2",
                                             "fabric3@3", "A.computed@3", "fabric4@4", "A.signalled@4", "fabric40@4",
                                             "fabric5@5", "B.done@5",     "A.done@5",  "fabric6@6"};
  CHECK(log == expected);
  CHECK(outcome.programs_finished == 2);
  CHECK(outcome.programs_stopped == 0);
  CHECK(outcome.wakeups == 5); // A: 3, 4, 5; B: 2, 5
  REQUIRE(clock_moved_ps.size() == 5);
  for (std::int64_t moved : clock_moved_ps)
    CHECK(moved == 0);
  CHECK(sim.now() == sim::Time::from_ps(6));
}

TEST_CASE("sim::HostRuntime: a notification before the wait is not lost, and wait_for times out exactly",
          "[sim][quick]") {
  sim::Simulator sim(1);
  sim::HostRuntime runtime(sim);
  std::vector<std::string> log;
  sim::Signal signal(runtime);
  Fabric fabric{sim, log, &signal, sim::Time::from_ps(10)};
  sim.schedule(sim::Time::from_ps(10), sim::Target{ticker_type, 0}, 0, 1);
  std::vector<std::pair<bool, std::int64_t>> results;
  runtime.spawn("waiter", [&](sim::Program& p) {
    // Nothing raises the signal before 10 ps: times out at exactly 7 ps.
    const bool first = p.wait_for(signal, sim::Time::from_ps(7));
    results.emplace_back(first, p.now().ps());
    // Raised at 10 ps, before this 50 ps deadline.
    const bool second = p.wait_for(signal, sim::Time::from_ps(50));
    results.emplace_back(second, p.now().ps());
    // The stale 50 ps timeout of the previous wait must not wake this one.
    p.compute(sim::Time::from_ps(100));
    results.emplace_back(true, p.now().ps());
  });
  runtime.run(fabric, sim::Time::from_ps(1'000));
  REQUIRE(results.size() == 3);
  CHECK_FALSE(results[0].first);
  CHECK(results[0].second == 7);
  CHECK(results[1].first);
  CHECK(results[1].second == 10);
  CHECK(results[2].first);
  CHECK(results[2].second == 110);

  sim::Simulator sim2(1);
  sim::HostRuntime runtime2(sim2);
  sim::Signal early(runtime2);
  std::vector<std::string> log2;
  Fabric fabric2{sim2, log2, &early, sim::Time::from_ps(3)};
  sim2.schedule(sim::Time::from_ps(3), sim::Target{ticker_type, 0}, 0, 1);
  std::int64_t woke_at = -1;
  runtime2.spawn("late", [&](sim::Program& p) {
    p.compute(sim::Time::from_ps(20)); // the signal is raised at 3, while computing
    p.wait(early);                     // and is still pending: no block
    woke_at = p.now().ps();
  });
  runtime2.run(fabric2, sim::Time::from_ps(1'000));
  CHECK(woke_at == 20);
}

TEST_CASE("sim::HostRuntime: a wait with a not-before instant resumes at the later of it and the notification",
          "[sim][quick]") {
  struct Case {
    std::int64_t notify_at, not_before, computed_first, expected;
  };
  // Notified before the instant: resumes at the instant; after it: at the notification; pending before the wait
  // began: still not before the instant.
  for (const Case c : {Case{5, 20, 0, 20}, Case{30, 20, 0, 30}, Case{20, 20, 0, 20}, Case{3, 40, 10, 40}}) {
    sim::Simulator sim(1);
    sim::HostRuntime runtime(sim);
    std::vector<std::string> log;
    sim::Signal signal(runtime);
    Fabric fabric{sim, log, &signal, sim::Time::from_ps(c.notify_at)};
    sim.schedule(sim::Time::from_ps(c.notify_at), sim::Target{ticker_type, 0}, 0, 1);
    std::int64_t woke_at = -1;
    runtime.spawn("waiter", [&](sim::Program& p) {
      if (c.computed_first > 0)
        p.compute(sim::Time::from_ps(c.computed_first));
      p.wait(signal, sim::Time::from_ps(c.not_before));
      woke_at = p.now().ps();
    });
    const auto outcome = runtime.run(fabric, sim::Time::from_ps(1'000));
    INFO("notified at " << c.notify_at << ", not before " << c.not_before);
    CHECK(woke_at == c.expected);
    CHECK(signal.pending() == 0);
    CHECK(outcome.wakeups == (c.computed_first > 0 ? 2u : 1u)); // never woken at the instant for nothing
  }
}

TEST_CASE("sim::HostRuntime: the run stops at its end time and unwinds programs still blocked", "[sim][quick]") {
  sim::Simulator sim(1);
  sim::HostRuntime runtime(sim);
  std::vector<std::string> log;
  sim::Signal never(runtime);
  Fabric fabric{sim, log};
  for (int t = 10; t <= 50; t += 10)
    sim.schedule(sim::Time::from_ps(t), sim::Target{ticker_type, 0}, 0, static_cast<std::uint32_t>(t));
  bool unwound_past_wait = false;
  runtime.spawn("forever", [&](sim::Program& p) {
    p.wait(never);
    unwound_past_wait = true;
  });
  runtime.spawn("sleeper", [&](sim::Program& p) { p.compute(sim::Time::from_ps(1'000)); });
  const auto outcome = runtime.run(fabric, sim::Time::from_ps(30));
  CHECK(log == std::vector<std::string>{"fabric10@10", "fabric20@20", "fabric30@30"});
  CHECK_FALSE(unwound_past_wait);
  CHECK(outcome.programs_stopped == 2);
  CHECK(outcome.programs_finished == 0);
  CHECK(sim.pending_events() == 3); // fabric 40, 50 and the sleeper's wake-up
}

TEST_CASE("sim::HostRuntime: failures in the fabric or in a program end the run and reach the caller", "[sim][quick]") {
  SECTION("an invariant violated by the fabric") {
    sim::Simulator sim(1);
    sim::HostRuntime runtime(sim);
    std::vector<std::string> log;
    Fabric fabric{sim, log};
    fabric.fail_at = sim::Time::from_ps(5);
    sim.schedule(sim::Time::from_ps(5), sim::Target{ticker_type, 0}, 0, 1);
    runtime.spawn("idle", [](sim::Program& p) { p.compute(sim::Time::from_ps(10)); });
    CHECK_THROWS_AS(runtime.run(fabric, sim::Time::from_ps(100)), sim::InvariantViolation);
  }
  SECTION("an exception thrown by a program") {
    sim::Simulator sim(1);
    sim::HostRuntime runtime(sim);
    std::vector<std::string> log;
    Fabric fabric{sim, log};
    runtime.spawn("faulty", [](sim::Program& p) {
      p.compute(sim::Time::from_ps(2));
      throw std::runtime_error("program failed");
    });
    runtime.spawn("bystander", [](sim::Program& p) { p.compute(sim::Time::from_ps(50)); });
    CHECK_THROWS_WITH(runtime.run(fabric, sim::Time::from_ps(100)), "program failed");
  }
}

TEST_CASE("sim::HostRuntime: runs with no programs drive the fabric alone", "[sim][quick]") {
  sim::Simulator sim(1);
  sim::HostRuntime runtime(sim);
  std::vector<std::string> log;
  Fabric fabric{sim, log};
  sim.schedule(sim::Time::from_ps(7), sim::Target{ticker_type, 0}, 0, 1);
  runtime.run(fabric, sim::Time::from_ps(10));
  CHECK(log == std::vector<std::string>{"fabric1@7"});
}

TEST_CASE("sim::HostRuntime: a run whose programs end with the calendar empty leaves SimGrid's clock for the next run",
          "[sim][quick]") {
  // When the fabric ran in a SimGrid timer, the last program left with nothing pending armed it at Time::max(),
  // SimGrid's clock went to 2^63 ps, and the next run in the process computed its dates past the end of int64
  // (SimGrid aborted). The clock must still carry over unchanged.
  const auto run_once = [] {
    sim::Simulator sim(1);
    sim::HostRuntime runtime(sim);
    std::vector<std::string> log;
    Fabric fabric{sim, log};
    double clock_s = 0;
    runtime.spawn("A", [&](sim::Program& p) {
      clock_s = simgrid::s4u::Engine::get_clock();
      p.compute(sim::Time::from_ns(5));
    });
    const sim::HostRuntime::Outcome outcome = runtime.run(fabric, sim::Time::max());
    CHECK(outcome.programs_finished == 1);
    CHECK(sim.now() == sim::Time::from_ns(5));
    return clock_s;
  };
  const double first = run_once();
  const double second = run_once();
  CHECK(second - first < 1e-6);
}
