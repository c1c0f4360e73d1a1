// The memory budget (docs/user-guide.md, "Memory"): before anything is built, the peak memory a run of a scenario
// needs is estimated from what it will create (the fabric's hosts, switch ports and forwarding tables; each
// workload's programs, QPs, queues, planned messages and per-peer records; PHOLD's LPs and events), at per-item
// costs measured on this simulator. A scenario whose estimate exceeds the limit is bad input (exit 2) naming its
// biggest contributors and the options that set them, instead of a run that exhausts the machine's memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/scenario/scenario.h"

namespace ib::scenario {

/// One contributor to the estimate.
struct MemoryItem {
  std::string what;    ///< "all_to_all: 2400000000 planned messages"
  std::string pointer; ///< the option of the scenario file that sets it ("" for the process itself)
  double bytes = 0;
};

struct MemoryEstimate {
  double total_bytes = 0;
  std::vector<MemoryItem> items; ///< biggest first
  /// Fabric scenarios: QP numbers any HCA can have run from 2 to 1 + this (the workloads' most per host, summed).
  std::uint64_t max_qps_per_host = 0;
};

/// The estimate for a run of `scenario`. Reads its topology (InputError as a run would), builds nothing else.
MemoryEstimate estimate_memory(const Scenario& scenario);

/// InputError unless `estimate` fits in `limit_bytes`: at the option of its biggest contributor, with the estimate,
/// the limit and where it came from (`limit_source`, "--max-memory" or the machine's available memory), and its
/// biggest contributors.
void check_memory(const Scenario& scenario, const MemoryEstimate& estimate, std::uint64_t limit_bytes,
                  const std::string& limit_source);

/// The machine's available memory now (MemAvailable in /proc/meminfo); nullopt when it cannot be read.
std::optional<std::uint64_t> available_memory_bytes();

/// `bytes` for people: "512 MiB", "1.5 GiB".
std::string format_bytes(double bytes);

} // namespace ib::scenario
