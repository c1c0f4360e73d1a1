// The receive queues (docs/models/hca.md, "Receive path"): QPs' own and shared ones (SRQs), their WQEs in host memory
// as the driver posts them, and the HCA's cache of the WQEs it has read ahead of the messages that will claim them.
// Private to the HCA model.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "models/hca/core.h"
#include "models/hca/verbs.h"
#include "sim/host_runtime.h"

namespace ib::hca {

/// A receive queue: its WQEs in host memory as the driver posts them, and the HCA's cache of those it has read
/// ahead. A QP's own, or a shared one (SRQ) that its QPs take WQEs from in the order their messages are accepted.
/// Indices count WQEs since creation; slot = index modulo depth. Most QPs of a big run only take RDMA WRITEs: a
/// QP's own queue is made on its first post, and the fields are packed (docs/models/hca.md, "Memory per QP").
struct RecvQueue {
  std::uint64_t address = 0;
  std::unique_ptr<verbs::RecvWr[]> ring; ///< `depth` entries once a WQE has been posted
  std::uint32_t depth = 0;
  std::uint32_t posted = 0;    ///< driver: WQEs written
  std::uint32_t completed = 0; ///< driver: WQEs freed by polled completions
  // Device side.
  std::uint32_t claimed = 0;   ///< WQEs taken by accepted messages (may run ahead of fetched: a miss)
  std::uint32_t fetched = 0;   ///< WQEs read into the cache: those below are on the HCA
  std::uint32_t fetch_end = 0; ///< the read in flight brings WQEs up to here
  /// A QP's own queue: that QP's index; an SRQ's: its SRQ number.
  std::uint32_t owner = 0;
  bool fetching = false;
  bool shared = false;
};

/// What only a shared receive queue has: the QPs that take from it, which slots hold WQEs not yet completed (they
/// complete out of order), and its limit event.
struct SharedRecvQueue {
  std::uint32_t rq = 0; ///< its queue in queues_
  std::vector<std::uint8_t> busy;
  std::vector<std::uint32_t> attached;
  std::uint32_t limit = 0; ///< armed when > 0: the event fires when fewer WQEs remain
  std::uint64_t limit_events = 0;
  sim::Signal* limit_signal = nullptr;
};

class ReceiveQueues {
public:
  explicit ReceiveQueues(Core& core) : core_(core) {}

  // The driver's face. Queues are named by their index here; SRQs also by their SRQ number.
  /// A QP's own receive queue is made on its first post (`create`): most QPs of a big run only take RDMA WRITEs.
  /// Until then the QP names `not_made`, and its messages find no WQE to claim.
  static constexpr std::uint32_t not_made = 0xffffffffu;
  /// QP `qp`'s own receive queue of `depth` WQEs.
  std::uint32_t create(std::uint32_t depth, std::uint32_t qp);
  /// See Hca::create_srq.
  std::uint32_t create_srq(std::uint32_t depth);
  std::uint32_t srq_count() const { return static_cast<std::uint32_t>(srqs_.size()); }
  /// QP `qp` takes its WQEs from SRQ `srq` from now on; the SRQ's queue.
  std::uint32_t attach(std::uint32_t srq, std::uint32_t qp);
  /// The queue of SRQ `srq`; throws std::out_of_range if there is none.
  std::uint32_t srq_queue(std::uint32_t srq) const { return srqs_.at(srq).rq; }
  void arm_srq_limit(std::uint32_t srq, std::uint32_t limit, sim::Signal* signal);
  std::uint64_t srq_limit_events(std::uint32_t srq) const { return srqs_.at(srq).limit_events; }
  bool shared(std::uint32_t rq) const { return rq != not_made && queues_[rq].shared; }
  verbs::PostResult post(std::uint32_t rq, std::span<const verbs::RecvWr> wrs);
  /// The driver polled the completion of WQE `index`: a QP's own queue frees up to it, an SRQ just its slot.
  void complete(std::uint32_t rq, std::uint32_t index);

  // The responder's face.
  /// Claims the next WQE for an accepted message (`index`); false if none is posted.
  bool claim(sim::Simulator& sim, std::uint32_t rq, std::uint32_t& index);
  /// Whether WQE `index` is in the cache on the HCA.
  bool on_hca(std::uint32_t rq, std::uint32_t index) const {
    return static_cast<std::int32_t>(queues_[rq].fetched - index) > 0;
  }
  const verbs::RecvWr& wqe(std::uint32_t rq, std::uint32_t index) const {
    return queues_[rq].ring[index % queues_[rq].depth];
  }
  /// The read of WQEs into the cache is done: `drain(qp)` for each QP taking from the queue (the messages waiting
  /// for their WQE go on), then the cache is refilled if it ran low.
  template <class Drain>
  void on_fetched(sim::Simulator& sim, std::uint32_t rq_index, Drain&& drain) {
    RecvQueue& rq = queues_[rq_index];
    rq.fetching = false;
    rq.fetched = rq.fetch_end;
    if (rq.shared) {
      for (const std::uint32_t qp : srqs_[rq.owner].attached)
        drain(qp);
    } else {
      drain(rq.owner);
    }
    fetch(sim, rq);
  }
  /// A QP failed: `flush(index)` for every WQE of its own queue no message claimed, which it then gives up; an
  /// SRQ keeps its unclaimed WQEs for its other QPs.
  template <class Flush>
  void flush_unclaimed(std::uint32_t rq_index, Flush&& flush) {
    if (rq_index == not_made)
      return;
    RecvQueue& rq = queues_[rq_index];
    if (rq.shared)
      return;
    for (std::uint32_t k = rq.claimed; k != rq.posted; ++k)
      flush(k);
    rq.claimed = rq.fetched = rq.posted;
    if (!rq.fetching)
      rq.fetch_end = rq.posted;
  }
  /// The QP whose trace track a read of the queue goes on (an SRQ's: the first QP it serves).
  std::uint32_t trace_qp(std::uint32_t rq) const;
  /// Frees every queue (Hca::release_queue_pairs).
  void release() {
    std::vector<RecvQueue>().swap(queues_);
    std::vector<SharedRecvQueue>().swap(srqs_);
  }

private:
  /// Reads WQEs into the queue's cache when a claim is waiting for one or the cache has run below half.
  void fetch(sim::Simulator& sim, RecvQueue& rq);
  std::uint32_t new_queue(std::uint32_t depth);

  Core& core_;
  std::vector<RecvQueue> queues_;     ///< QPs' own receive queues and SRQs'
  std::vector<SharedRecvQueue> srqs_; ///< by SRQ number
};

} // namespace ib::hca
