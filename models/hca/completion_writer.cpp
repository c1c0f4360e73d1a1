#include "models/hca/completion_writer.h"

#include <algorithm>
#include <stdexcept>

#include "models/hca/hca.h"
#include "models/hca/hca_state.h"

namespace ib::hca {

std::uint32_t CompletionWriter::create_cq(std::uint32_t depth, sim::Signal* signal) {
  if (depth == 0)
    throw std::invalid_argument("a CQ needs at least one entry");
  Cq cq;
  cq.depth = depth;
  cq.address = core_.memory.allocate(std::uint64_t{depth} * core_.params.cqe_bytes);
  cq.ring.resize(depth);
  cq.signal = signal;
  cqs_.push_back(std::move(cq));
  return static_cast<std::uint32_t>(cqs_.size() - 1);
}

void CompletionWriter::write(sim::Simulator& sim, std::uint32_t cq_index, const verbs::WorkCompletion& wc,
                             std::uint32_t qp_index, std::uint32_t wqe_index, bool is_send) {
  Cq& cq = cqs_[cq_index];
  if (cq.issued - cq.consumed >= cq.depth) {
    cq.overrun = true; // the program polled too slowly: the CQ is in error, as on hardware
    return;
  }
  const DmaHandle op = core_.new_op(sim, Purpose::cqe_write, cq_index);
  core_.ops[op].count = cq.issued++;
  core_.ops[op].cqe = CqEntry{wc, qp_index, wqe_index, is_send};
  // One completion unit builds CQEs in order; their writes then stay in order on the bus.
  unit_free_ = std::max(sim.now(), unit_free_) + core_.params.cqe_generation;
  sim.schedule(unit_free_, core_.self, static_cast<std::uint8_t>(Hca::Kind::cqe_ready), op.value);
}

void CompletionWriter::on_built(sim::Simulator& sim, DmaHandle op) {
  const Cq& cq = cqs_[core_.ops[op].qp];
  ++core_.pcie.cqe_writes;
  core_.bus.dma_write(sim, cq.address + (core_.ops[op].count % cq.depth) * core_.params.cqe_bytes,
                      core_.params.cqe_bytes, op.value, false); // done when visible: dma_write_done is not needed
}

void CompletionWriter::on_visible(DmaHandle h) {
  // CQEs become visible in the order they were written (posted writes keep their order).
  const DmaOp& op = core_.ops[h];
  Cq& cq = cqs_[op.qp];
  cq.ring[op.count % cq.depth] = op.cqe;
  ++cq.visible;
  core_.ops.release(h);
  if (cq.signal != nullptr)
    cq.signal->notify();
}

} // namespace ib::hca
