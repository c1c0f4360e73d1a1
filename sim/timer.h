// A re-armable timer that keeps at most one entry in the calendar (STYLE rules 24-25).
//
// Transport timers (retry, RNR, ACK coalescing) are re-armed on every packet and cancelled far more often than
// they fire. Here, cancel() and re-arming later are O(1) and schedule nothing: the one pending entry fires early,
// sees the deadline has moved, and schedules itself again. Only re-arming earlier schedules a new entry, and a
// generation number makes the older one stale.
#pragma once

#include <cstdint>

#include "sim/simulator.h"

namespace sim {

class Timer {
public:
  /// `target` and `kind` address the owner's expiry handler.
  Timer(Target target, std::uint8_t kind) : target_(target), kind_(kind) {}

  /// Fires at `at` (replacing any earlier deadline).
  void arm(Simulator& sim, Time at) {
    deadline_ = at;
    if (pending_at_ <= at)
      return;
    ++generation_;
    pending_at_ = at;
    sim.schedule(at, target_, kind_, 0, generation_);
  }
  void cancel() { deadline_ = Time::max(); }
  bool armed() const { return deadline_ != Time::max(); }
  Time deadline() const { return deadline_; }

  /// Call from the owner's handler for this timer's events. True when the timer really expires now; false for a
  /// stale or early entry, which it reschedules as needed and marks stale (Simulator::mark_stale): not activity.
  bool on_event(Simulator& sim, const Event& event) {
    if (event.generation != generation_) {
      sim.mark_stale();
      return false;
    }
    pending_at_ = Time::max();
    if (deadline_ == Time::max()) {
      sim.mark_stale();
      return false;
    }
    if (deadline_ > sim.now()) {
      sim.mark_stale();
      arm(sim, deadline_);
      return false;
    }
    deadline_ = Time::max();
    return true;
  }

private:
  Target target_;
  std::uint8_t kind_;
  std::uint32_t generation_ = 0;
  Time deadline_ = Time::max();
  Time pending_at_ = Time::max();
};

} // namespace sim
