// Benchmark (b) of the foundation issue: the hold model with host programs. Every Kth fabric event is handed to
// one of the programs (SimGrid actors, round robin), which wakes at that instant and schedules the replacement
// itself; the population stays constant. Prints fabric events/s (program wake-ups not counted) and peak RSS.
// Usage: bench_coupled [--events N] [--pending P] [--wake-every K] [--programs A] (K omitted: 10 and 100).
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "sim/host_runtime.h"
#include "sim/memory.h"
#include "sim/report.h"
#include "tests/bench/hold_model.h"

namespace {

struct Inbox {
  std::unique_ptr<sim::Signal> arrived;
  std::uint64_t waiting = 0;
};

struct Dispatch {
  bench::HoldSource& source;
  std::vector<Inbox>& inboxes;
  std::uint64_t wake_every;
  std::uint64_t handled = 0;
  void operator()(const sim::Event& event) {
    if (++handled % wake_every == 0) {
      Inbox& inbox = inboxes[(handled / wake_every) % inboxes.size()];
      ++inbox.waiting;
      inbox.arrived->notify();
      return;
    }
    source.schedule_next(event.time);
  }
};

void run(std::uint64_t pending, std::uint64_t events, std::uint64_t wake_every, std::uint64_t programs) {
  sim::Simulator sim(1);
  bench::HoldSource source{sim, sim.rng_for(0)};
  sim::HostRuntime runtime(sim);
  std::vector<Inbox> inboxes(programs);
  for (std::uint64_t i = 0; i < programs; ++i) {
    inboxes[i].arrived = std::make_unique<sim::Signal>(runtime);
    runtime.spawn("program" + std::to_string(i), [&source, &inbox = inboxes[i]](sim::Program& program) {
      for (;;) {
        program.wait(*inbox.arrived);
        --inbox.waiting;
        source.schedule_next(program.now());
      }
    });
  }
  source.fill(pending);
  Dispatch dispatch{source, inboxes, wake_every};
  // Events are about 0.5 µs apart per pending event on average: pick the duration that covers `events`.
  const double mean_gap_ps =
      static_cast<double>(bench::min_delay_ps + bench::max_delay_ps) / 2.0 / static_cast<double>(pending);
  const sim::Time until = sim::Time::from_ps(static_cast<std::int64_t>(mean_gap_ps * static_cast<double>(events)));
  const auto started = std::chrono::steady_clock::now();
  const sim::HostRuntime::Outcome outcome = runtime.run(dispatch, until);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::uint64_t fabric = dispatch.handled;
  std::printf("coupled hold pending=%-8llu wake 1/%-4llu programs=%llu fabric_events=%-9llu wakeups=%-8llu "
              "wall=%.3f s  %.2f M fabric events/s  peak_rss=%.1f MiB\n",
              static_cast<unsigned long long>(pending), static_cast<unsigned long long>(wake_every),
              static_cast<unsigned long long>(programs), static_cast<unsigned long long>(fabric),
              static_cast<unsigned long long>(outcome.wakeups), wall_s, static_cast<double>(fabric) / wall_s / 1e6,
              static_cast<double>(sim::peak_rss_bytes()) / (1024.0 * 1024.0));
}

} // namespace

int main(int argc, char** argv) {
  sim::back_heap_with_huge_pages(); // as ibnetsim runs
  const std::uint64_t events = bench::option(argc, argv, "--events", 10'000'000);
  const std::uint64_t pending = bench::option(argc, argv, "--pending", 100'000);
  const std::uint64_t wake_every = bench::option(argc, argv, "--wake-every", 0);
  const std::uint64_t programs = bench::option(argc, argv, "--programs", 16);
  if (wake_every)
    run(pending, events, wake_every, programs);
  else
    for (std::uint64_t k : {10ULL, 100ULL})
      run(pending, events, k, programs);
  return 0;
}
