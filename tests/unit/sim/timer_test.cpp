// Unit tests for sim/timer.h: a timer fires exactly once at its final deadline, cancel and re-arming work from
// outside and inside a run, and re-arming later never adds a calendar entry.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/timer.h"

namespace {

constexpr sim::Target owner{4, 0};
constexpr std::uint8_t timer_kind = 1;
constexpr std::uint8_t packet_kind = 2;

sim::Time ns(std::int64_t n) {
  return sim::Time::from_ns(n);
}

// A simulator whose one component owns a timer and may receive "packet" events that act on it.
struct Harness {
  void operator()(const sim::Event& event) {
    switch (event.kind) {
    case timer_kind:
      ++timer_entries;
      if (timer.on_event(sim, event)) {
        fired.push_back(sim.now());
        if (on_fire)
          on_fire();
      }
      break;
    case packet_kind:
      on_packet(event);
      break;
    }
  }
  void run() { sim.run_until(*this, sim::Time::max()); }

  sim::Simulator sim{1};
  sim::Timer timer{owner, timer_kind};
  std::vector<sim::Time> fired;
  // Timer entries dispatched, including stale and early ones.
  std::size_t timer_entries = 0;
  std::function<void()> on_fire;
  std::function<void(const sim::Event&)> on_packet;
};

} // namespace

TEST_CASE("sim::Timer: a new timer is not armed", "[sim][quick]") {
  sim::Timer timer(owner, timer_kind);
  CHECK_FALSE(timer.armed());
  CHECK(timer.deadline() == sim::Time::max());
}

TEST_CASE("sim::Timer: fires once at its deadline", "[sim][quick]") {
  Harness h;
  h.timer.arm(h.sim, ns(100));
  CHECK(h.timer.armed());
  CHECK(h.timer.deadline() == ns(100));
  CHECK(h.sim.pending_events() == 1);
  CHECK(h.sim.next_event_time() == ns(100));
  h.run();
  CHECK(h.fired == std::vector<sim::Time>{ns(100)});
  CHECK(h.timer_entries == 1);
  CHECK_FALSE(h.timer.armed());
  CHECK(h.timer.deadline() == sim::Time::max());
  CHECK(h.sim.idle());
}

TEST_CASE("sim::Timer: the calendar entry addresses the owner", "[sim][quick]") {
  sim::Simulator simulator(1);
  sim::Timer timer(sim::Target{9, 1234}, 42);
  timer.arm(simulator, ns(7));
  std::vector<sim::Event> seen;
  auto record = [&](const sim::Event& event) { seen.push_back(event); };
  simulator.run_until(record, sim::Time::max());
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].type == 9);
  CHECK(seen[0].index == 1234);
  CHECK(seen[0].kind == 42);
  CHECK(seen[0].time == ns(7));
  CHECK(timer.on_event(simulator, seen[0]));
}

TEST_CASE("sim::Timer: arming at the current instant fires at that instant", "[sim][quick]") {
  Harness h;
  h.sim.advance_to(ns(50));
  h.timer.arm(h.sim, h.sim.now());
  h.run();
  CHECK(h.fired == std::vector<sim::Time>{ns(50)});
}

TEST_CASE("sim::Timer: cancel prevents firing", "[sim][quick]") {
  Harness h;
  SECTION("before the run") {
    h.timer.arm(h.sim, ns(100));
    h.timer.cancel();
    CHECK_FALSE(h.timer.armed());
    CHECK(h.timer.deadline() == sim::Time::max());
  }
  SECTION("from an event before the deadline") {
    h.timer.arm(h.sim, ns(100));
    h.sim.schedule(ns(50), owner, packet_kind);
    h.on_packet = [&](const sim::Event&) { h.timer.cancel(); };
  }
  SECTION("from an event at the deadline, dispatched before the timer's entry") {
    h.sim.schedule(ns(100), owner, packet_kind);
    h.timer.arm(h.sim, ns(100));
    h.on_packet = [&](const sim::Event&) { h.timer.cancel(); };
  }
  h.run();
  CHECK(h.fired.empty());
  CHECK_FALSE(h.timer.armed());
  CHECK(h.sim.idle());
}

TEST_CASE("sim::Timer: re-arming later keeps one calendar entry and fires at the final deadline", "[sim][quick]") {
  Harness h;
  SECTION("several times before the run") {
    for (int i = 1; i <= 5; ++i) {
      h.timer.arm(h.sim, ns(100 * i));
      CHECK(h.sim.pending_events() == 1);
    }
    CHECK(h.timer.deadline() == ns(500));
    h.run();
    CHECK(h.fired == std::vector<sim::Time>{ns(500)});
  }
  SECTION("on every packet, as a transport timer is") {
    // Packets every 10 ns from 0 to 490 ns each push the deadline to now + 100 ns.
    std::size_t most_timer_entries = 0;
    h.sim.schedule(ns(0), owner, packet_kind);
    h.on_packet = [&](const sim::Event&) {
      h.timer.arm(h.sim, h.sim.now() + ns(100));
      // The packet's own entry was popped and the next is not scheduled yet: only the timer's remain.
      most_timer_entries = std::max(most_timer_entries, h.sim.pending_events());
      if (h.sim.now() < ns(490))
        h.sim.schedule_in(ns(10), owner, packet_kind);
    };
    h.run();
    CHECK(most_timer_entries == 1);
    CHECK(h.fired == std::vector<sim::Time>{ns(590)});
    // One entry per deadline overtaken, not one per packet (50 packets).
    CHECK(h.timer_entries <= 7);
  }
  CHECK(h.sim.idle());
}

TEST_CASE("sim::Timer: re-arming earlier fires at the earlier time exactly once", "[sim][quick]") {
  Harness h;
  SECTION("earlier only") {
    h.timer.arm(h.sim, ns(300));
    h.timer.arm(h.sim, ns(100));
    CHECK(h.timer.deadline() == ns(100));
    h.run();
    CHECK(h.fired == std::vector<sim::Time>{ns(100)});
    // The entry at 300 ns was dispatched and dropped as stale.
    CHECK(h.timer_entries == 2);
  }
  SECTION("earlier, then later than both") {
    h.timer.arm(h.sim, ns(300));
    h.timer.arm(h.sim, ns(100));
    h.timer.arm(h.sim, ns(500));
    h.run();
    CHECK(h.fired == std::vector<sim::Time>{ns(500)});
  }
  SECTION("earlier from inside the run") {
    h.timer.arm(h.sim, ns(300));
    h.sim.schedule(ns(50), owner, packet_kind);
    h.on_packet = [&](const sim::Event&) { h.timer.arm(h.sim, ns(120)); };
    h.run();
    CHECK(h.fired == std::vector<sim::Time>{ns(120)});
  }
  CHECK(h.sim.idle());
}

TEST_CASE("sim::Timer: arming after cancel", "[sim][quick]") {
  Harness h;
  SECTION("later than the cancelled deadline") {
    h.timer.arm(h.sim, ns(100));
    h.timer.cancel();
    h.timer.arm(h.sim, ns(200));
    CHECK(h.sim.pending_events() == 1);
    h.run();
    CHECK(h.fired == std::vector<sim::Time>{ns(200)});
  }
  SECTION("earlier than the cancelled deadline") {
    h.timer.arm(h.sim, ns(100));
    h.timer.cancel();
    h.timer.arm(h.sim, ns(50));
    h.run();
    CHECK(h.fired == std::vector<sim::Time>{ns(50)});
  }
  SECTION("at the cancelled deadline") {
    h.timer.arm(h.sim, ns(100));
    h.timer.cancel();
    h.timer.arm(h.sim, ns(100));
    CHECK(h.sim.pending_events() == 1);
    h.run();
    CHECK(h.fired == std::vector<sim::Time>{ns(100)});
  }
  SECTION("after the cancelled entry was dropped") {
    h.timer.arm(h.sim, ns(100));
    h.timer.cancel();
    h.run();
    CHECK(h.fired.empty());
    h.timer.arm(h.sim, ns(300));
    CHECK(h.timer.armed());
    h.run();
    CHECK(h.fired == std::vector<sim::Time>{ns(300)});
  }
  CHECK(h.sim.idle());
}

TEST_CASE("sim::Timer: arming the same deadline twice schedules once", "[sim][quick]") {
  Harness h;
  h.timer.arm(h.sim, ns(100));
  h.timer.arm(h.sim, ns(100));
  CHECK(h.sim.pending_events() == 1);
  h.run();
  CHECK(h.fired == std::vector<sim::Time>{ns(100)});
  CHECK(h.timer_entries == 1);
}

TEST_CASE("sim::Timer: re-armed from its own expiry it fires periodically", "[sim][quick]") {
  Harness h;
  h.on_fire = [&] {
    if (h.fired.size() < 5)
      h.timer.arm(h.sim, h.sim.now() + ns(100));
  };
  h.timer.arm(h.sim, ns(100));
  h.run();
  CHECK(h.fired == std::vector<sim::Time>{ns(100), ns(200), ns(300), ns(400), ns(500)});
  CHECK(h.timer_entries == 5);
}

TEST_CASE("sim::Timer: two timers of one kind on different owners stay independent", "[sim][quick]") {
  sim::Simulator simulator(1);
  sim::Timer timers[2] = {sim::Timer(sim::Target{4, 0}, timer_kind), sim::Timer(sim::Target{4, 1}, timer_kind)};
  std::vector<sim::Time> fired[2];
  auto dispatch = [&](const sim::Event& event) {
    if (timers[event.index].on_event(simulator, event))
      fired[event.index].push_back(simulator.now());
  };
  // Same generations on both, so only the target keeps them apart.
  timers[0].arm(simulator, ns(300));
  timers[1].arm(simulator, ns(300));
  timers[0].arm(simulator, ns(100));
  timers[1].arm(simulator, ns(200));
  timers[1].cancel();
  simulator.run_until(dispatch, sim::Time::max());
  CHECK(fired[0] == std::vector<sim::Time>{ns(100)});
  CHECK(fired[1].empty());
}

TEST_CASE("sim::Timer: random arms and cancels match a reference deadline", "[sim][quick]") {
  // Packets at odd picoseconds arm at even ones, so no packet ties with a deadline and the expected firing
  // times are unambiguous: the timer fires at its deadline unless a packet before it moved or cancelled it.
  for (const std::uint64_t seed : {1u, 2u, 3u, 4u}) {
    CAPTURE(seed);
    std::mt19937_64 engine(seed);
    Harness h;
    sim::Time expected_deadline = sim::Time::max();
    std::vector<sim::Time> expected;
    int packets = 0;
    bool deadline_agreed = true;
    h.on_packet = [&](const sim::Event&) {
      if (expected_deadline < h.sim.now()) {
        expected.push_back(expected_deadline);
        expected_deadline = sim::Time::max();
      }
      const auto choice = engine() % 10;
      if (choice < 2) {
        h.timer.cancel();
        expected_deadline = sim::Time::max();
      } else if (choice < 8) {
        // Mostly near (pushing the deadline back), sometimes far.
        const auto reach_ps = choice < 7 ? 3'000 : 50'000;
        const sim::Time at = h.sim.now() + sim::Time::from_ps(2 * static_cast<std::int64_t>(engine() % reach_ps) + 1);
        h.timer.arm(h.sim, at);
        expected_deadline = at;
      }
      deadline_agreed = deadline_agreed && h.timer.deadline() == expected_deadline &&
                        h.timer.armed() == (expected_deadline != sim::Time::max());
      if (++packets < 20'000)
        h.sim.schedule_in(sim::Time::from_ps(2 * static_cast<std::int64_t>(engine() % 1'000) + 2), owner, packet_kind);
    };
    h.sim.schedule(sim::Time::from_ps(1), owner, packet_kind);
    h.run();
    if (expected_deadline != sim::Time::max())
      expected.push_back(expected_deadline);
    CHECK(deadline_agreed);
    CHECK(h.fired.size() == expected.size());
    CHECK(h.fired == expected);
    CHECK(h.sim.idle());
  }
}

TEST_CASE("sim::Timer: a cancelled timer's entry, and an early one that moves on, are not activity", "[sim][quick]") {
  Harness h;
  h.on_packet = [&](const sim::Event&) { h.timer.arm(h.sim, ns(500)); };
  h.timer.arm(h.sim, ns(100));
  h.sim.schedule(ns(50), owner, packet_kind);
  h.run();
  // The entry at 100 ns fires early and moves to 500 ns, where the timer expires: activity ends there.
  CHECK(h.fired == std::vector<sim::Time>{ns(500)});
  CHECK(h.sim.last_active_at() == ns(500));

  // Cancelled after its last packet, the timer's entry still fires, stale: activity ended with the packet.
  Harness c;
  c.on_packet = [&](const sim::Event&) { c.timer.cancel(); };
  c.timer.arm(c.sim, ns(67'000'000));
  c.sim.schedule(ns(1400), owner, packet_kind);
  c.run();
  CHECK(c.fired.empty());
  CHECK(c.timer_entries == 1);
  CHECK(c.sim.now() == ns(67'000'000));
  CHECK(c.sim.last_active_at() == ns(1400));
}
