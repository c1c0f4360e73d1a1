// The unloaded latency of one DMA read or write between a device and host memory, as the sum of its parts: wire
// time at the link's data rate, the link's one-way latency each way, the root complex, and the host memory
// (HostParams). It is the analytic expectation an unloaded event-driven run must reproduce, and the formula the
// host profile's memory-read figures were fitted through (topologies/hardware/xeon-e5-haswell.json, reference
// E7). Left out: queueing behind other traffic, credit and tag stalls, DLLPs, and cache or IOMMU misses.
#pragma once

#include <cstdint>

#include "models/pcie/bandwidth_model.h"
#include "models/pcie/params.h"
#include "sim/time.h"

namespace ib::pcie {

/// From the device starting its first MRd to the last CplD byte arriving, for a read of `size_bytes` at an
/// aligned address: the first MRd's wire time + one_way_latency + root_complex_latency + memory_read_latency +
/// memory_read_ns_per_byte × min(size, MRRS) + the wire time of all CplDs + one_way_latency (+ remote_numa_penalty).
/// Each read request's data costs the per-byte time for its own bytes, and the requests of a large read overlap.
sim::Time dma_read_latency(const LinkConfig& link, const HostParams& host, std::uint64_t size_bytes, bool remote_numa);

/// From the device starting a DMA write of `size_bytes` (aligned) to its last byte being visible in memory: the
/// wire time of all MWrs + one_way_latency + root_complex_latency + memory_write_latency (+ remote_numa_penalty).
sim::Time dma_write_latency(const LinkConfig& link, const HostParams& host, std::uint64_t size_bytes, bool remote_numa);

} // namespace ib::pcie
