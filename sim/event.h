// The kernel's event: a 32-byte POD that travels through the calendar by value (docs/models/kernel.md, STYLE rule 21).
// Ties at one instant break on `seq`, the order in which events were scheduled, so runs are deterministic.
#pragma once

#include <cstdint>

#include "sim/time.h"

namespace sim {

/// Which kind of component an event is addressed to; the dispatcher switches on it. Values are assigned by
/// whoever composes the simulation (the fabric), except `program`, which the SimGrid coupling reserves.
using ComponentType = std::uint8_t;
inline constexpr ComponentType program_component_type = 255;

/// An addressee: a component type and the instance's index among components of that type.
struct Target {
  ComponentType type = 0;
  std::uint32_t index = 0;
};

struct Event {
  Time time;                    ///< when it happens
  std::uint64_t seq = 0;        ///< scheduling order, the tie-break at equal times
  std::uint32_t index = 0;      ///< instance index of the target, within its type
  std::uint32_t handle = 0;     ///< payload: a pool handle or a small integer, meaning set by `kind`
  std::uint32_t generation = 0; ///< the target's generation when scheduled; a stale event is dropped (STYLE 25)
  ComponentType type = 0;       ///< component type of the target
  std::uint8_t kind = 0;        ///< the target model's own `enum class Kind`
  /// Unused. Named so that an event has no padding: copies move it as two whole 16-byte halves, where GCC copies
  /// 30 bytes as two overlapping loads that stall on the stores just before them (store forwarding).
  std::uint16_t spare = 0;
};
static_assert(sizeof(Event) == 32, "events are half a cache line");

/// Strict calendar order: time, then scheduling order.
inline bool fires_before(const Event& a, const Event& b) {
  return a.time < b.time || (a.time == b.time && a.seq < b.seq);
}

} // namespace sim
