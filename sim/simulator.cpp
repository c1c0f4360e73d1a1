#include "sim/simulator.h"

#include <cassert>
#include <utility>

namespace sim {

std::uint32_t Simulator::add_component(std::string name) {
  names_.push_back(std::move(name));
  return static_cast<std::uint32_t>(names_.size() - 1);
}

void Simulator::advance_to(Time at) {
  assert(at >= now_ && "the clock never goes back");
  assert((calendar_.empty() || calendar_.next_time() >= at) && "advancing past a pending event");
  now_ = at;
}

void Simulator::report_progress() {
  next_progress_at_ += progress_interval;
  if (!progress_hook_(progress_context_, *this))
    halted_ = stop_requested_ = true;
}

void Simulator::check_not_in_past([[maybe_unused]] Time at) const {
  assert(at >= now_ && "event scheduled in the past");
}

} // namespace sim
