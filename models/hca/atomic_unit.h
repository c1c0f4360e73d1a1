// The responder's atomic unit (docs/models/hca.md, "Transport"): it takes atomics one at a time, and each runs its
// read-modify-write on host memory (a DMA read, then a write) under a lock on its address's bucket, so that atomics on
// addresses sharing a bucket serialize. Private to the HCA model.
#pragma once

#include <cstdint>
#include <vector>

#include "models/hca/core.h"
#include "sim/ring.h"
#include "sim/time.h"

namespace ib::hca {

class AtomicUnit {
public:
  explicit AtomicUnit(Core& core);

  /// Runs the atomic `request` of QP `qp` on the 8 bytes at `address`, once its bucket is free; its read goes at
  /// Hca::Kind::atomic_issue (issue), and its write's completion goes back to the responder, which answers and
  /// calls release.
  void start(sim::Simulator& sim, std::uint32_t qp, link::PacketHandle request, std::uint64_t address);
  /// The unit is done with the atomic: the read of its read-modify-write goes.
  void issue(sim::Simulator& sim, DmaHandle op);
  /// The read is done: the new value is computed and written back under the same lock.
  void on_read_done(sim::Simulator& sim, DmaHandle op);
  /// The read-modify-write on `bucket` is done: the next atomic waiting for it goes.
  void release(sim::Simulator& sim, std::uint32_t bucket);

private:
  void run(sim::Simulator& sim, std::uint32_t bucket);

  Core& core_;
  std::vector<std::uint32_t> bucket_busy_; ///< per bucket: an atomic holds it
  sim::Ring<DmaHandle> waiting_;           ///< in arrival order
  sim::Time unit_free_;                    ///< the unit has taken every atomic given to it by then
};

} // namespace ib::hca
