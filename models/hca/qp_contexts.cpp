#include "models/hca/qp_contexts.h"

#include <algorithm>
#include <bit>

#include "models/hca/hca.h"
#include "models/hca/hca_state.h"

namespace ib::hca {

QpContexts::QpContexts(Core& core)
    : core_(core), cache_(core.params.qp_context_cache_entries),
      stride_bytes_(std::bit_ceil(core.params.qp_context_bytes)),
      contexts_per_chunk_(std::max<std::uint32_t>(1, chunk_bytes / stride_bytes_)) {}

void QpContexts::create(std::uint32_t qp) {
  if (qp % contexts_per_chunk_ == 0)
    table_chunks_.push_back(core_.memory.allocate(std::uint64_t{contexts_per_chunk_} * stride_bytes_));
  loading_.push_back(0);
  cache_.grow(qp + 1);
  cache_.insert(qp);
}

bool QpContexts::ready(sim::Simulator& sim, std::uint32_t qp) {
  if (loading_[qp] == 0 && cache_.touch(qp))
    return true;
  if (loading_[qp] == 0) {
    loading_[qp] = 1;
    if (reads_ < core_.params.qp_context_max_reads)
      read(sim, qp);
    else
      queue_.push_back(qp);
  }
  return false;
}

void QpContexts::read(sim::Simulator& sim, std::uint32_t qp) {
  ++reads_;
  ++core_.pcie.qp_context_reads;
  const DmaHandle op = core_.new_op(sim, Purpose::qp_context, qp);
  core_.ops[op].bytes = core_.params.qp_context_bytes;
  core_.bus.dma_read(sim, address_of(qp), core_.params.qp_context_bytes, op.value);
}

void QpContexts::on_read(std::uint32_t qp) {
  --reads_;
  loading_[qp] = 0;
  cache_.insert(qp);
}

void QpContexts::read_queued(sim::Simulator& sim) {
  while (reads_ < core_.params.qp_context_max_reads && !queue_.empty()) {
    const std::uint32_t qp = queue_.front();
    queue_.pop_front();
    read(sim, qp);
  }
}

} // namespace ib::hca
