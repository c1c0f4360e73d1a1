// The QP contexts (docs/models/hca.md, "QP contexts"): each QP's context in host memory (ICM), the on-chip cache of
// those the adapter served most recently, and the DMA reads of the ones it misses, a few at a time. What needs a
// context that is not cached waits for its read; the callers keep what waits. Private to the HCA model.
#pragma once

#include <cstdint>
#include <vector>

#include "models/hca/core.h"
#include "models/hca/qp_context_cache.h"
#include "sim/ring.h"

namespace ib::hca {

class QpContexts {
public:
  explicit QpContexts(Core& core);

  /// Places QP `qp`'s context in host memory. The firmware command that creates the QP writes it, so it starts on
  /// the adapter.
  void create(std::uint32_t qp);
  /// True if the QP's context is on the adapter (and marks it used); else starts (or queues) its read and false.
  bool ready(sim::Simulator& sim, std::uint32_t qp);
  /// An engine holds the QP's context while it works for the QP: a use, never a miss.
  void touch(std::uint32_t qp) { cache_.touch(qp); }
  /// Being read, or waiting for a read slot.
  bool loading(std::uint32_t qp) const { return loading_[qp] != 0; }
  /// The read of QP `qp`'s context is done: it is cached. What waited for it is the caller's to resume, then
  /// read_queued.
  void on_read(std::uint32_t qp);
  /// Starts the reads queued for a free slot.
  void read_queued(sim::Simulator& sim);

private:
  void read(sim::Simulator& sim, std::uint32_t qp);
  std::uint64_t address_of(std::uint32_t qp) const {
    return table_chunks_[qp / contexts_per_chunk_] + std::uint64_t{qp % contexts_per_chunk_} * stride_bytes_;
  }

  Core& core_;
  QpContextCache cache_;
  // The contexts lie in a table in host memory (ICM), at a power-of-two stride so that none straddles a page, in
  // chunks the table grows by: one host-memory region per chunk, not per QP.
  static constexpr std::uint32_t chunk_bytes = 64 * 1024;
  std::uint32_t stride_bytes_;
  std::uint32_t contexts_per_chunk_;
  std::vector<std::uint64_t> table_chunks_;
  std::vector<std::uint8_t> loading_; ///< per QP: being read, or waiting for a read slot
  std::uint32_t reads_ = 0;           ///< in flight
  sim::Ring<std::uint32_t> queue_;    ///< QPs waiting for a read slot
};

} // namespace ib::hca
