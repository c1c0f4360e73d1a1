// The simulation kernel: the clock, the calendar, the component registry and the run loop (docs/models/kernel.md).
//
// Components are registered once, at wiring time, and get a dense id (for names in errors and reports, and for
// their RNG stream) plus a Target (type, index) that events address. The run loop is a template over the
// dispatcher the composer supplies, which switches on the event's component type and calls the model's
// on_event() directly: no virtual call and no std::function per event (STYLE rules 22-23).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/calendar.h"
#include "sim/event.h"
#include "sim/rng.h"
#include "sim/time.h"

namespace sim {

class Simulator {
public:
  explicit Simulator(std::uint64_t seed) : seed_(seed) {}
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  Time now() const { return now_; }
  std::uint64_t seed() const { return seed_; }

  /// Registers a component instance and returns its dense id. `name` is how errors and reports name it
  /// (`s3/p7`, `lp12`).
  std::uint32_t add_component(std::string name);
  const std::string& component_name(std::uint32_t id) const { return names_[id]; }
  std::uint32_t component_count() const { return static_cast<std::uint32_t>(names_.size()); }
  /// The RNG stream of component `id`: a function of (seed, id) only.
  Rng rng_for(std::uint32_t id) const { return Rng(seed_, id); }

  /// Schedules an event for `target` at absolute time `at`, which must not be in the past.
  void schedule(Time at, Target target, std::uint8_t kind, std::uint32_t handle = 0, std::uint32_t generation = 0) {
    check_not_in_past(at);
    Event event;
    event.time = at;
    event.seq = next_seq_++;
    event.index = target.index;
    event.handle = handle;
    event.generation = generation;
    event.type = target.type;
    event.kind = kind;
    calendar_.push(event);
  }
  void schedule_in(Time delay, Target target, std::uint8_t kind, std::uint32_t handle = 0,
                   std::uint32_t generation = 0) {
    schedule(now_ + delay, target, kind, handle, generation);
  }

  /// Deferred events (docs/models/kernel.md): a component may keep events whose effects only it can observe in a
  /// queue of its own, and handle them when it is next touched, in the order the calendar would have dispatched
  /// them. reserve_seq() gives such an event its place in that order, as schedule() would have; dispatch_position()
  /// is the place of the event being dispatched, before which a deferred event counts as already happened; and
  /// schedule_reserved() hands a deferred event to the calendar at its reserved place, when its moment must be kept.
  std::uint64_t reserve_seq() { return next_seq_++; }
  std::uint64_t dispatching_seq() const { return dispatching_seq_; }
  void schedule_reserved(Time at, std::uint64_t seq, Target target, std::uint8_t kind, std::uint32_t handle = 0) {
    check_not_in_past(at);
    Event event;
    event.time = at;
    event.seq = seq;
    event.index = target.index;
    event.handle = handle;
    event.type = target.type;
    event.kind = kind;
    calendar_.push(event);
  }
  /// A deferred event handled after the calendar ran dry still counts as activity (last_active_at()).
  void note_deferred_activity(Time at) {
    if (at > last_active_at_)
      last_active_at_ = at;
  }

  /// Dispatches events in order while they are due no later than `until`, until the calendar empties or a
  /// handler calls request_stop(). `dispatch(const Event&)` is called with the clock set to the event's time.
  /// A dispatcher with `prefetch(const Event&)` is shown the events likely to come after the next one, so that the
  /// memory they will touch is on its way meanwhile: a fabric's events touch state spread over megabytes, and
  /// handling them one after another otherwise waits on each cache miss in turn. One with
  /// `prefetch_near(const Event&)` is shown the next event, when what prefetch() loaded (a packet) can be read to
  /// find what depends on it.
  template <class Dispatch>
  void run_until(Dispatch& dispatch, Time until) {
    stop_requested_ = halted_;
    Event event;
    while (!stop_requested_ && calendar_.pop_due(until, event)) {
      now_ = event.time;
      dispatching_seq_ = event.seq;
      if (++events_dispatched_ == next_progress_at_)
        report_progress();
      // Two stages, each an event's handling apart: the events that may follow the next one get their first
      // line (a packet) loaded; the next one, whose first line the previous round loaded, gets what depends on it.
      if constexpr (requires { dispatch.prefetch(event); })
        calendar_.for_each_likely_second([&dispatch](const Event& soon) { dispatch.prefetch(soon); });
      if constexpr (requires { dispatch.prefetch_near(event); }) {
        if (const Event* next = calendar_.likely_next())
          dispatch.prefetch_near(*next);
      }
      dispatch(event);
      // A stale event changed nothing: the last activity stays where it was.
      if (!stale_)
        last_active_at_ = now_;
      stale_ = false;
    }
  }

  /// Calls `hook(context, *this)` every 2^20 events, for progress reports; nullptr removes it. Cold path. A hook
  /// that returns false halts the run: run_until() returns after the current event, and does nothing from then on.
  void set_progress_hook(bool (*hook)(void*, const Simulator&), void* context) {
    progress_hook_ = hook;
    progress_context_ = context;
    next_progress_at_ = hook ? (events_dispatched_ | (progress_interval - 1)) + 1 : 0;
  }

  /// Returns an event just popped, unchanged (same time and seq, so its order is kept), and stops the run: for
  /// a dispatcher that finds the event cannot be handled yet.
  void put_back(const Event& event) {
    calendar_.push(event);
    --events_dispatched_;
    stop_requested_ = true;
    stale_ = true; // it happens later, when it is dispatched again
  }
  /// Called by a handler whose event turned out stale (STYLE rule 25): a timer entry left in the calendar by a
  /// cancel, or one that fired before a deadline that has since moved. Such an event is not activity.
  void mark_stale() { stale_ = true; }
  /// When the last event that was not stale happened: the instant activity ended, which stale timer entries still
  /// in the calendar (a retry timer of 4.096 us x 2^14 stopped by the last ACK) outlast. Zero before any event.
  Time last_active_at() const { return last_active_at_; }
  /// Makes run_until() return after the current event.
  void request_stop() { stop_requested_ = true; }
  /// Whether the progress hook halted the run (an interrupted run: what happened so far is all there is).
  bool halted() const { return halted_; }
  /// Moves the clock forward to `at` with no event (the end of a run, or an external clock catching up).
  void advance_to(Time at);

  bool idle() { return calendar_.empty(); }
  /// Time of the next pending event, or Time::max() when none is pending.
  Time next_event_time() { return calendar_.empty() ? Time::max() : calendar_.next_time(); }
  std::size_t pending_events() const { return calendar_.size(); }
  std::uint64_t events_dispatched() const { return events_dispatched_; }

private:
  static constexpr std::uint64_t progress_interval = std::uint64_t{1} << 20;
  void check_not_in_past(Time at) const;
  void report_progress();

  Calendar calendar_;
  Time now_;
  Time last_active_at_;
  bool stale_ = false; // set by mark_stale() during the current dispatch
  std::uint64_t next_seq_ = 0;
  std::uint64_t dispatching_seq_ = 0; // seq of the event being dispatched (or last dispatched)
  std::uint64_t events_dispatched_ = 0;
  std::uint64_t seed_;
  bool stop_requested_ = false;
  bool halted_ = false;
  std::uint64_t next_progress_at_ = 0; // 0: no hook (events_dispatched_ is never 0 after an increment)
  bool (*progress_hook_)(void*, const Simulator&) = nullptr;
  void* progress_context_ = nullptr;
  std::vector<std::string> names_;
};

} // namespace sim
