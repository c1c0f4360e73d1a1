#include "models/pcie/latency_model.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace ib::pcie {

sim::Time dma_read_latency(const LinkConfig& link, const HostParams& host, std::uint64_t size_bytes, bool remote_numa) {
  assert(size_bytes > 0);
  const sim::Rate rate = data_rate(link.generation, link.width);
  const std::uint64_t first_request_bytes = wire_bytes(TlpKind::mrd, 0, link.address64, link.ecrc);
  // Each read request's data takes the per-byte time for its own bytes; requests overlap, so the last to finish
  // is a full one (MRRS bytes, or the whole read if smaller). The bus rounds the per-byte figure to whole ps.
  const std::uint64_t request_bytes = std::min<std::uint64_t>(size_bytes, link.max_read_request_bytes);
  const auto ps_per_byte = static_cast<std::int64_t>(std::llround(host.memory_read_ns_per_byte * 1e3));
  const sim::Time memory =
      host.memory_read_latency + sim::Time::from_ps(ps_per_byte * static_cast<std::int64_t>(request_bytes));
  return sim::transfer_time(first_request_bytes, rate) + link.one_way_latency + host.root_complex_latency + memory +
         sim::transfer_time(dma_read_completion_wire_bytes(link, 0, size_bytes), rate) + link.one_way_latency +
         (remote_numa ? host.remote_numa_penalty : sim::Time::zero());
}

sim::Time dma_write_latency(const LinkConfig& link, const HostParams& host, std::uint64_t size_bytes,
                            bool remote_numa) {
  assert(size_bytes > 0);
  const sim::Rate rate = data_rate(link.generation, link.width);
  return sim::transfer_time(dma_write_wire_bytes(link, 0, size_bytes), rate) + link.one_way_latency +
         host.root_complex_latency + host.memory_write_latency +
         (remote_numa ? host.remote_numa_penalty : sim::Time::zero());
}

} // namespace ib::pcie
