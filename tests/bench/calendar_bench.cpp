// Benchmark (a) of the foundation issue: the kernel alone under the hold model, at 10^3, 10^5 and 10^6 pending
// events. Prints events/s and peak RSS. Usage: bench_calendar [--events N] [--pending P] (P omitted: all three).
#include <chrono>
#include <cstdio>
#include <vector>

#include "sim/memory.h"
#include "sim/report.h"
#include "tests/bench/hold_model.h"

namespace {

struct Dispatch {
  bench::HoldSource& source;
  void operator()(const sim::Event& event) { source.schedule_next(event.time); }
};

void run(std::uint64_t pending, std::uint64_t events) {
  sim::Simulator sim(1);
  bench::HoldSource source{sim, sim.rng_for(0)};
  source.fill(pending);
  Dispatch dispatch{source};
  // Warm up until every pending event has been replaced once, so the measured part is steady state.
  sim.run_until(dispatch, sim::Time::from_ps(bench::max_delay_ps * 2));
  const std::uint64_t before = sim.events_dispatched();
  const auto started = std::chrono::steady_clock::now();
  while (sim.events_dispatched() - before < events)
    sim.run_until(dispatch, sim.now() + sim::Time::from_ps(bench::max_delay_ps));
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::uint64_t done = sim.events_dispatched() - before;
  std::printf("kernel hold  pending=%-8llu events=%-10llu wall=%.3f s  %.2f M events/s  peak_rss=%.1f MiB\n",
              static_cast<unsigned long long>(pending), static_cast<unsigned long long>(done), wall_s,
              static_cast<double>(done) / wall_s / 1e6, static_cast<double>(sim::peak_rss_bytes()) / (1024.0 * 1024.0));
}

} // namespace

int main(int argc, char** argv) {
  sim::back_heap_with_huge_pages(); // as ibnetsim runs
  const std::uint64_t events = bench::option(argc, argv, "--events", 20'000'000);
  const std::uint64_t pending = bench::option(argc, argv, "--pending", 0);
  if (pending)
    run(pending, events);
  else
    for (std::uint64_t p : {1'000ULL, 100'000ULL, 1'000'000ULL})
      run(p, events);
  return 0;
}
