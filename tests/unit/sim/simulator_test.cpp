// Unit tests for sim/simulator.h: dispatch order and the clock, run_until's bound, request_stop, put_back, the
// last activity (stale events left out), the component registry and per-component RNG streams.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/simulator.h"

namespace {

constexpr sim::Target node{3, 0};

struct Seen {
  sim::Time now;
  sim::Event event;
};

// Records every event with the clock at dispatch; optional hooks act on the simulator from inside a handler.
struct Recorder {
  explicit Recorder(sim::Simulator& simulator) : sim(simulator) {}
  void operator()(const sim::Event& event) {
    seen.push_back({sim.now(), event});
    if (on_event)
      on_event(event);
  }
  std::vector<std::uint32_t> handles() const {
    std::vector<std::uint32_t> out;
    for (const Seen& s : seen)
      out.push_back(s.event.handle);
    return out;
  }

  sim::Simulator& sim;
  std::vector<Seen> seen;
  std::function<void(const sim::Event&)> on_event;
};

} // namespace

TEST_CASE("sim::Simulator: a new simulator is idle at time zero", "[sim][quick]") {
  sim::Simulator simulator(42);
  CHECK(simulator.now() == sim::Time::zero());
  CHECK(simulator.seed() == 42);
  CHECK(simulator.idle());
  CHECK(simulator.pending_events() == 0);
  CHECK(simulator.events_dispatched() == 0);
  CHECK(simulator.next_event_time() == sim::Time::max());
  CHECK(simulator.component_count() == 0);

  // Running an idle simulator does nothing, not even move the clock.
  Recorder recorder(simulator);
  simulator.run_until(recorder, sim::Time::from_ms(1));
  CHECK(recorder.seen.empty());
  CHECK(simulator.now() == sim::Time::zero());
}

TEST_CASE("sim::Simulator: dispatches in time then scheduling order, with now() at the event's time", "[sim][quick]") {
  sim::Simulator simulator(1);
  // Handles name the expected dispatch position.
  simulator.schedule(sim::Time::from_ns(30), node, 0, 5);
  simulator.schedule(sim::Time::from_ns(10), node, 0, 1);
  simulator.schedule(sim::Time::from_ns(20), node, 0, 2);
  simulator.schedule(sim::Time::from_ns(20), node, 0, 3);
  simulator.schedule(sim::Time::from_ns(0), node, 0, 0);
  simulator.schedule(sim::Time::from_ns(20), node, 0, 4);
  CHECK(simulator.pending_events() == 6);
  CHECK(simulator.next_event_time() == sim::Time::zero());

  Recorder recorder(simulator);
  simulator.run_until(recorder, sim::Time::max());

  CHECK(recorder.handles() == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5});
  for (const Seen& s : recorder.seen)
    CHECK(s.now == s.event.time);
  // Scheduling order is the seq, so seqs at one instant ascend.
  CHECK(recorder.seen[2].event.seq < recorder.seen[3].event.seq);
  CHECK(recorder.seen[3].event.seq < recorder.seen[4].event.seq);
  CHECK(simulator.now() == sim::Time::from_ns(30));
  CHECK(simulator.events_dispatched() == 6);
  CHECK(simulator.idle());
  CHECK(simulator.pending_events() == 0);
}

TEST_CASE("sim::Simulator: the dispatcher receives the scheduled target, kind, handle and generation", "[sim][quick]") {
  sim::Simulator simulator(1);
  simulator.schedule(sim::Time::from_ps(5), sim::Target{200, 0xabcdef01u}, 9, 0x12345678u, 77);
  simulator.schedule(sim::Time::from_ps(6), sim::Target{sim::program_component_type, 4}, 1);
  Recorder recorder(simulator);
  simulator.run_until(recorder, sim::Time::max());
  REQUIRE(recorder.seen.size() == 2);
  const sim::Event& first = recorder.seen[0].event;
  CHECK(first.time == sim::Time::from_ps(5));
  CHECK(first.type == 200);
  CHECK(first.index == 0xabcdef01u);
  CHECK(first.kind == 9);
  CHECK(first.handle == 0x12345678u);
  CHECK(first.generation == 77);
  const sim::Event& second = recorder.seen[1].event;
  CHECK(second.type == sim::program_component_type);
  CHECK(second.index == 4);
  CHECK(second.handle == 0);
  CHECK(second.generation == 0);
}

TEST_CASE("sim::Simulator: events scheduled during dispatch", "[sim][quick]") {
  sim::Simulator simulator(1);
  Recorder recorder(simulator);
  simulator.schedule(sim::Time::from_ns(10), node, 0, 1);
  simulator.schedule(sim::Time::from_ns(10), node, 0, 2);
  simulator.schedule(sim::Time::from_ns(15), node, 0, 5);
  recorder.on_event = [&](const sim::Event& event) {
    if (event.handle == 1) {
      // At now: after the already pending tie (2), before anything later.
      simulator.schedule_in(sim::Time::zero(), node, 0, 3);
      simulator.schedule_in(sim::Time::from_ns(2), node, 0, 4);
    }
  };
  simulator.run_until(recorder, sim::Time::max());
  CHECK(recorder.handles() == std::vector<std::uint32_t>{1, 2, 3, 4, 5});
  REQUIRE(recorder.seen.size() == 5);
  CHECK(recorder.seen[2].now == sim::Time::from_ns(10));
  CHECK(recorder.seen[3].now == sim::Time::from_ns(12));
}

TEST_CASE("sim::Simulator: run_until dispatches up to and including until, and leaves later events pending",
          "[sim][quick]") {
  sim::Simulator simulator(1);
  for (std::uint32_t i = 1; i <= 4; ++i)
    simulator.schedule(sim::Time::from_ns(10 * i), node, 0, i);
  simulator.schedule(sim::Time::from_ns(20), node, 0, 22);
  Recorder recorder(simulator);

  simulator.run_until(recorder, sim::Time::from_ns(20));
  CHECK(recorder.handles() == std::vector<std::uint32_t>{1, 2, 22});
  CHECK(simulator.now() == sim::Time::from_ns(20));
  CHECK(simulator.pending_events() == 2);
  CHECK(simulator.next_event_time() == sim::Time::from_ns(30));
  CHECK(simulator.events_dispatched() == 3);

  // A bound just before the next event dispatches nothing and leaves the clock alone.
  simulator.run_until(recorder, sim::Time::from_ns(30) - sim::Time::from_ps(1));
  CHECK(recorder.seen.size() == 3);
  CHECK(simulator.now() == sim::Time::from_ns(20));

  simulator.run_until(recorder, sim::Time::from_ns(30));
  CHECK(recorder.handles() == std::vector<std::uint32_t>{1, 2, 22, 3});

  simulator.run_until(recorder, sim::Time::max());
  CHECK(recorder.handles() == std::vector<std::uint32_t>{1, 2, 22, 3, 4});
  CHECK(simulator.idle());
}

TEST_CASE("sim::Simulator: advance_to moves the clock without an event", "[sim][quick]") {
  sim::Simulator simulator(1);
  simulator.schedule(sim::Time::from_ns(100), node, 0, 1);
  simulator.advance_to(sim::Time::from_ns(40));
  CHECK(simulator.now() == sim::Time::from_ns(40));
  CHECK(simulator.events_dispatched() == 0);
  // Up to the next pending event, inclusive.
  simulator.advance_to(sim::Time::from_ns(100));
  CHECK(simulator.now() == sim::Time::from_ns(100));
  // schedule_in is relative to the new clock.
  simulator.schedule_in(sim::Time::from_ns(5), node, 0, 2);
  Recorder recorder(simulator);
  simulator.run_until(recorder, sim::Time::max());
  REQUIRE(recorder.seen.size() == 2);
  CHECK(recorder.seen[0].now == sim::Time::from_ns(100));
  CHECK(recorder.seen[1].now == sim::Time::from_ns(105));
}

TEST_CASE("sim::Simulator: request_stop returns after the current event", "[sim][quick]") {
  sim::Simulator simulator(1);
  for (std::uint32_t i = 1; i <= 5; ++i)
    simulator.schedule(sim::Time::from_ns(10), node, 0, i);
  Recorder recorder(simulator);
  recorder.on_event = [&](const sim::Event& event) {
    if (event.handle == 2 || event.handle == 4)
      simulator.request_stop();
  };

  simulator.run_until(recorder, sim::Time::max());
  CHECK(recorder.handles() == std::vector<std::uint32_t>{1, 2});
  CHECK(simulator.pending_events() == 3);
  CHECK(simulator.events_dispatched() == 2);

  // The next run starts afresh and stops again where asked.
  simulator.run_until(recorder, sim::Time::max());
  CHECK(recorder.handles() == std::vector<std::uint32_t>{1, 2, 3, 4});
  simulator.run_until(recorder, sim::Time::max());
  CHECK(recorder.handles() == std::vector<std::uint32_t>{1, 2, 3, 4, 5});
  CHECK(simulator.idle());
}

TEST_CASE("sim::Simulator: put_back stops the run and keeps the event's place among equal times", "[sim][quick]") {
  sim::Simulator simulator(1);
  for (std::uint32_t i = 1; i <= 3; ++i)
    simulator.schedule(sim::Time::from_ns(10), node, 0, i);
  simulator.schedule(sim::Time::from_ns(11), node, 0, 9);
  Recorder recorder(simulator);
  bool refused = false;
  std::uint64_t refused_seq = 0;
  recorder.on_event = [&](const sim::Event& event) {
    if (event.handle == 1) // schedules a tie behind everything pending at 10 ns
      simulator.schedule_in(sim::Time::zero(), node, 0, 4);
    if (event.handle == 2 && !refused) {
      refused = true;
      refused_seq = event.seq;
      simulator.put_back(event);
    }
  };

  simulator.run_until(recorder, sim::Time::max());
  CHECK(recorder.handles() == std::vector<std::uint32_t>{1, 2});
  CHECK(simulator.now() == sim::Time::from_ns(10));
  // The refused event does not count as dispatched and is pending again.
  CHECK(simulator.events_dispatched() == 1);
  CHECK(simulator.pending_events() == 4);
  CHECK(simulator.next_event_time() == sim::Time::from_ns(10));

  simulator.run_until(recorder, sim::Time::max());
  // 2 comes back before 3 and 4, which were scheduled after it, and with its own seq.
  CHECK(recorder.handles() == std::vector<std::uint32_t>{1, 2, 2, 3, 4, 9});
  REQUIRE(recorder.seen.size() == 6);
  CHECK(recorder.seen[2].event.seq == refused_seq);
  CHECK(recorder.seen[2].now == sim::Time::from_ns(10));
  CHECK(simulator.events_dispatched() == 5);
}

TEST_CASE("sim::Simulator: last_active_at is the last event not marked stale, and a put-back event is not yet "
          "activity",
          "[sim][quick]") {
  sim::Simulator simulator(1);
  CHECK(simulator.last_active_at() == sim::Time::zero());
  // 1 and 2 do something; 3 is a timer entry left behind (stale), far later, as a retry timer's after the last ACK.
  simulator.schedule(sim::Time::from_ns(10), node, 0, 1);
  simulator.schedule(sim::Time::from_ns(20), node, 0, 2);
  simulator.schedule(sim::Time::from_ms(67), node, 0, 3);
  Recorder recorder(simulator);
  recorder.on_event = [&](const sim::Event& event) {
    if (event.handle == 3)
      simulator.mark_stale();
  };
  simulator.run_until(recorder, sim::Time::max());
  CHECK(recorder.handles() == std::vector<std::uint32_t>{1, 2, 3});
  CHECK(simulator.now() == sim::Time::from_ms(67));
  CHECK(simulator.last_active_at() == sim::Time::from_ns(20));

  // Marking one event stale does not carry over to the next.
  simulator.schedule(sim::Time::from_ms(68), node, 0, 4);
  simulator.run_until(recorder, sim::Time::max());
  CHECK(simulator.last_active_at() == sim::Time::from_ms(68));

  // An event put back has not happened yet: it counts when it is dispatched again.
  simulator.schedule(sim::Time::from_ms(69), node, 0, 5);
  bool refused = false;
  recorder.on_event = [&](const sim::Event& event) {
    if (event.handle == 5 && !refused) {
      refused = true;
      simulator.put_back(event);
    }
  };
  simulator.run_until(recorder, sim::Time::max());
  CHECK(simulator.last_active_at() == sim::Time::from_ms(68));
  simulator.run_until(recorder, sim::Time::max());
  CHECK(simulator.last_active_at() == sim::Time::from_ms(69));
}

TEST_CASE("sim::Simulator: put_back of the only pending event at a bucket's last instant", "[sim][quick]") {
  // The refused event is the latest so far; it must still come back before later events.
  sim::Simulator simulator(1);
  for (std::uint32_t i = 0; i < 100; ++i)
    simulator.schedule(sim::Time::from_ps(i * 1'000), node, 0, i);
  simulator.schedule(sim::Time::from_ps(99'000), node, 0, 100);
  Recorder recorder(simulator);
  bool refused = false;
  recorder.on_event = [&](const sim::Event& event) {
    if (event.handle == 99 && !refused) {
      refused = true;
      simulator.put_back(event);
      simulator.schedule_in(sim::Time::from_ps(1), node, 0, 101);
    }
  };
  simulator.run_until(recorder, sim::Time::max());
  CHECK(recorder.seen.size() == 100);
  CHECK(simulator.pending_events() == 3);
  simulator.run_until(recorder, sim::Time::max());
  REQUIRE(recorder.seen.size() == 103);
  CHECK(recorder.seen[100].event.handle == 99);
  CHECK(recorder.seen[101].event.handle == 100);
  CHECK(recorder.seen[102].event.handle == 101);
}

TEST_CASE("sim::Simulator: components get dense ids and keep their names", "[sim][quick]") {
  sim::Simulator simulator(1);
  CHECK(simulator.add_component("s3/p7") == 0);
  CHECK(simulator.add_component("lp12") == 1);
  CHECK(simulator.add_component("") == 2);
  CHECK(simulator.component_count() == 3);
  CHECK(simulator.component_name(0) == "s3/p7");
  CHECK(simulator.component_name(1) == "lp12");
  CHECK(simulator.component_name(2) == "");
}

TEST_CASE("sim::Simulator: rng_for is a function of (seed, id) only", "[sim][quick]") {
  auto draws = [](sim::Rng rng) {
    std::vector<std::uint64_t> out;
    for (int i = 0; i < 16; ++i)
      out.push_back(rng.next_u64());
    return out;
  };
  sim::Simulator a(7);
  sim::Simulator b(7);
  sim::Simulator other_seed(8);

  CHECK(draws(a.rng_for(3)) == draws(a.rng_for(3)));
  CHECK(draws(a.rng_for(3)) == draws(b.rng_for(3)));
  CHECK(draws(a.rng_for(3)) == draws(sim::Rng(7, 3)));
  CHECK(draws(a.rng_for(3)) != draws(a.rng_for(4)));
  CHECK(draws(a.rng_for(3)) != draws(other_seed.rng_for(3)));

  // Neither registering components nor running events perturbs a stream.
  b.add_component("x");
  b.schedule(sim::Time::from_ns(1), node, 0);
  Recorder recorder(b);
  b.run_until(recorder, sim::Time::max());
  CHECK(draws(a.rng_for(3)) == draws(b.rng_for(3)));

  // Streams of many ids are pairwise distinct in their first draw.
  std::vector<std::uint64_t> firsts;
  for (std::uint32_t id = 0; id < 1'000; ++id)
    firsts.push_back(a.rng_for(id).next_u64());
  std::sort(firsts.begin(), firsts.end());
  CHECK(std::adjacent_find(firsts.begin(), firsts.end()) == firsts.end());
}

TEST_CASE("sim::Simulator: the progress hook runs every 2^20 events and can be removed", "[sim][quick]") {
  sim::Simulator simulator(1);
  struct Chain {
    sim::Simulator& sim;
    void operator()(const sim::Event&) { sim.schedule_in(sim::Time::from_ps(1), sim::Target{1, 0}, 0); }
  } chain{simulator};
  std::vector<std::uint64_t> seen;
  simulator.set_progress_hook(
      [](void* context, const sim::Simulator& sim) {
        static_cast<std::vector<std::uint64_t>*>(context)->push_back(sim.events_dispatched());
        return true;
      },
      &seen);
  simulator.schedule(sim::Time::zero(), sim::Target{1, 0}, 0);
  const std::uint64_t interval = std::uint64_t{1} << 20;
  simulator.run_until(chain, sim::Time::from_ps(static_cast<std::int64_t>(3 * interval + 10)));
  CHECK(seen == std::vector<std::uint64_t>{interval, 2 * interval, 3 * interval});
  simulator.set_progress_hook(nullptr, nullptr);
  simulator.run_until(chain, sim::Time::from_ps(static_cast<std::int64_t>(5 * interval)));
  CHECK(seen.size() == 3);
  CHECK_FALSE(simulator.halted());
}

TEST_CASE("sim::Simulator: a progress hook that returns false halts the run for good after the current event",
          "[sim][quick]") {
  sim::Simulator simulator(1);
  struct Chain {
    sim::Simulator& sim;
    std::uint64_t handled = 0;
    void operator()(const sim::Event&) {
      ++handled;
      sim.schedule_in(sim::Time::from_ps(1), sim::Target{1, 0}, 0);
    }
  } chain{simulator};
  int calls = 0;
  simulator.set_progress_hook([](void* context, const sim::Simulator&) { return ++*static_cast<int*>(context) < 2; },
                              &calls);
  simulator.schedule(sim::Time::zero(), sim::Target{1, 0}, 0);
  const std::uint64_t interval = std::uint64_t{1} << 20;
  simulator.run_until(chain, sim::Time::max());
  CHECK(calls == 2);
  CHECK(simulator.halted());
  CHECK(chain.handled == 2 * interval); // the event that met the hook was handled: nothing popped is lost
  CHECK(simulator.pending_events() == 1);
  simulator.run_until(chain, sim::Time::max()); // halted: nothing more runs
  CHECK(chain.handled == 2 * interval);
}
