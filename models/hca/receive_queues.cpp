#include "models/hca/receive_queues.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/hca/hca.h"
#include "models/hca/hca_state.h"

namespace ib::hca {

std::uint32_t ReceiveQueues::new_queue(std::uint32_t depth) {
  RecvQueue rq;
  rq.depth = depth;
  rq.address = core_.memory.allocate(std::uint64_t{depth} * core_.params.recv_wqe_bytes);
  queues_.push_back(std::move(rq));
  return static_cast<std::uint32_t>(queues_.size() - 1);
}

std::uint32_t ReceiveQueues::create(std::uint32_t depth, std::uint32_t qp) {
  const std::uint32_t rq = new_queue(depth);
  queues_[rq].owner = qp;
  return rq;
}

std::uint32_t ReceiveQueues::create_srq(std::uint32_t depth) {
  if (depth == 0 || depth > core_.params.max_qp_wr)
    throw std::invalid_argument("SRQ depth must be 1.." + std::to_string(core_.params.max_qp_wr));
  const std::uint32_t rq = new_queue(depth);
  queues_[rq].shared = true;
  queues_[rq].owner = static_cast<std::uint32_t>(srqs_.size());
  SharedRecvQueue srq;
  srq.rq = rq;
  srq.busy.assign(depth, 0);
  srqs_.push_back(std::move(srq));
  return static_cast<std::uint32_t>(srqs_.size() - 1);
}

std::uint32_t ReceiveQueues::attach(std::uint32_t srq, std::uint32_t qp) {
  srqs_[srq].attached.push_back(qp);
  return srqs_[srq].rq;
}

void ReceiveQueues::arm_srq_limit(std::uint32_t srq, std::uint32_t limit, sim::Signal* signal) {
  SharedRecvQueue& shared = srqs_.at(srq);
  shared.limit = limit;
  shared.limit_signal = signal;
}

verbs::PostResult ReceiveQueues::post(std::uint32_t rq_index, std::span<const verbs::RecvWr> wrs) {
  RecvQueue& rq = queues_[rq_index];
  if (!rq.ring)
    rq.ring = std::make_unique<verbs::RecvWr[]>(rq.depth);
  std::uint32_t posted = 0;
  for (const verbs::RecvWr& wr : wrs) {
    // The next slot must be free: an SRQ's WQEs complete in the order their QPs' messages finish.
    const std::uint32_t slot = rq.posted % rq.depth;
    if (rq.posted - rq.completed >= rq.depth || (rq.shared && srqs_[rq.owner].busy[slot] != 0))
      return {verbs::PostError::queue_full, posted};
    // The receive WQE goes to the ring and the doorbell record in host memory: no MMIO (mlx5).
    rq.ring[slot] = wr;
    if (rq.shared)
      srqs_[rq.owner].busy[slot] = 1;
    ++rq.posted;
    ++posted;
  }
  return {};
}

void ReceiveQueues::complete(std::uint32_t rq_index, std::uint32_t index) {
  RecvQueue& rq = queues_[rq_index];
  if (rq.shared) {
    srqs_[rq.owner].busy[index % rq.depth] = 0;
    ++rq.completed;
  } else if (static_cast<std::int32_t>(index - rq.completed) >= 0) {
    rq.completed = index + 1;
  }
}

bool ReceiveQueues::claim(sim::Simulator& sim, std::uint32_t rq_index, std::uint32_t& index) {
  if (rq_index == not_made) // nothing was ever posted
    return false;
  RecvQueue& rq = queues_[rq_index];
  if (rq.claimed == rq.posted)
    return false;
  if (rq.fetched <= rq.claimed && !(rq.fetching && rq.fetch_end > rq.claimed)) {
    ++core_.pcie.recv_wqe_misses;
  }
  index = rq.claimed++;
  SharedRecvQueue* shared = rq.shared ? &srqs_[rq.owner] : nullptr;
  if (shared != nullptr && shared->limit > 0 && rq.posted - rq.claimed < shared->limit) {
    shared->limit = 0; // one event per arming (IBV_EVENT_SRQ_LIMIT_REACHED)
    ++shared->limit_events;
    if (shared->limit_signal != nullptr)
      shared->limit_signal->notify();
  }
  fetch(sim, rq);
  return true;
}

void ReceiveQueues::fetch(sim::Simulator& sim, RecvQueue& rq) {
  // The cache keeps up to recv_wqe_cache_entries WQEs ahead of the claims; it is refilled by one DMA read of the
  // posted WQEs that lie contiguously in the ring, when a claim waits for its WQE or half the cache is used up.
  // The producer index comes from the doorbell record the driver updates in host memory; the model lets the
  // adapter see it with no transaction of its own.
  if (rq.fetching || rq.fetched == rq.posted)
    return;
  const std::uint32_t capacity = core_.params.recv_wqe_cache_entries;
  const std::uint32_t ahead = rq.fetched > rq.claimed ? rq.fetched - rq.claimed : 0;
  if (rq.fetched > rq.claimed && ahead > capacity / 2)
    return;
  const std::uint32_t want = std::min(rq.claimed + capacity, rq.posted);
  if (static_cast<std::int32_t>(want - rq.fetched) <= 0)
    return;
  const std::uint32_t slot = rq.fetched % rq.depth;
  const std::uint32_t count = std::min(want - rq.fetched, rq.depth - slot);
  rq.fetching = true;
  rq.fetch_end = rq.fetched + count;
  const std::uint32_t bytes = count * core_.params.recv_wqe_bytes;
  const DmaHandle op = core_.new_op(sim, Purpose::recv_wqe_fetch, static_cast<std::uint32_t>(&rq - queues_.data()));
  core_.ops[op].count = count;
  core_.ops[op].bytes = bytes;
  ++core_.pcie.recv_wqe_fetches;
  core_.pcie.recv_wqes_fetched += count;
  core_.bus.dma_read(sim, rq.address + std::uint64_t{slot} * core_.params.recv_wqe_bytes, bytes, op.value);
}

std::uint32_t ReceiveQueues::trace_qp(std::uint32_t rq_index) const {
  const RecvQueue& rq = queues_[rq_index];
  if (!rq.shared)
    return rq.owner;
  const std::vector<std::uint32_t>& attached = srqs_[rq.owner].attached;
  return attached.empty() ? 0 : attached.front();
}

} // namespace ib::hca
