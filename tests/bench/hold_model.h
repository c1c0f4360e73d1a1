// The hold model shared by the kernel benchmarks: a constant population of pending events; handling one
// schedules its replacement at now + uniform(1 ns, 1 µs), as benchmark (a) in docs/performance.md does.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sim/rng.h"
#include "sim/simulator.h"

namespace bench {

inline constexpr sim::ComponentType hold_type = 1;
inline constexpr std::int64_t min_delay_ps = 1'000;
inline constexpr std::int64_t max_delay_ps = 1'000'000;

struct HoldSource {
  sim::Simulator& sim;
  sim::Rng rng;
  void schedule_next(sim::Time from) {
    sim.schedule(from + sim::Time::from_ps(rng.uniform_between(min_delay_ps, max_delay_ps)), sim::Target{hold_type, 0},
                 0);
  }
  void fill(std::uint64_t pending) {
    for (std::uint64_t i = 0; i < pending; ++i)
      schedule_next(sim.now());
  }
};

/// `--name value` from argv, or `fallback`.
inline std::uint64_t option(int argc, char** argv, const char* name, std::uint64_t fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0)
      return std::strtoull(argv[i + 1], nullptr, 10);
  return fallback;
}

} // namespace bench
