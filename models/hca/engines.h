// The HCA's processing units (send engines, receive engines): a pool that serves QPs one work item at a time. Any
// unit takes a QP's next item, but a QP is on one unit at a time, so its items run in order and one QP alone gets
// the pace of one unit (Kalia et al., ATC'16 section 3.3: a QP's work is handled by one processing unit; more QPs
// spread over more units). SendEngines is the send engines' pool as the stages use it. Private to the HCA model.
#pragma once

#include <cstdint>
#include <vector>

#include "models/hca/params.h"
#include "models/hca/qp_contexts.h"
#include "sim/time.h"

namespace ib::hca {

class EnginePool {
public:
  void resize(std::uint32_t units) { free_at_.assign(units, sim::Time::zero()); }

  /// Reserves `work` for a QP whose previous item on this pool ends at `qp_busy` (updated), on the unit that
  /// can start it soonest, at `now` or later; returns when it ends. Loading the QP's context from the on-chip cache
  /// is pipelined with the unit's current item and costs no unit time (a miss is the QP-context cache's business).
  sim::Time reserve(sim::Time now, sim::Time& qp_busy, sim::Time work) {
    const sim::Time earliest = qp_busy > now ? qp_busy : now;
    // Of the units free by then, the one freed last (the others stay free for QPs that can start sooner);
    // otherwise the one freed first.
    std::size_t best = 0;
    for (std::size_t u = 1; u < free_at_.size(); ++u) {
      const bool u_fits = free_at_[u] <= earliest, best_fits = free_at_[best] <= earliest;
      if (u_fits ? (!best_fits || free_at_[u] > free_at_[best]) : (!best_fits && free_at_[u] < free_at_[best]))
        best = u;
    }
    const sim::Time start = free_at_[best] > earliest ? free_at_[best] : earliest;
    const sim::Time end = start + work;
    free_at_[best] = end;
    qp_busy = end;
    return end;
  }

private:
  std::vector<sim::Time> free_at_;
};

/// The send engines, as the requester and the responder (its READ responses) share them: they process WQEs and
/// build every packet's headers, holding the QP's context while they work for it.
class SendEngines {
public:
  SendEngines(const Params& params, QpContexts& contexts) : params_(params), contexts_(contexts) {
    pool_.resize(params.send_engines);
  }

  /// Processes QP's next WQE, whose context is on the adapter; `qp_busy` is its last item on the engines (updated).
  /// Returns when it is done.
  sim::Time process_wqe(sim::Time now, sim::Time& qp_busy) {
    return pool_.reserve(now, qp_busy, params_.wqe_processing);
  }
  /// When QP `qp`'s send engine will have built the headers of a packet it starts on now.
  sim::Time build_headers(sim::Time now, std::uint32_t qp, sim::Time& qp_busy) {
    contexts_.touch(qp); // a use, never a miss
    return pool_.reserve(now, qp_busy, params_.tx_packet_processing);
  }
  /// The same for the first packet of a READ response: a send job the responder makes for itself, which the engine
  /// parses as it would a WQE before it builds the packet.
  sim::Time build_first_response(sim::Time now, std::uint32_t qp, sim::Time& qp_busy) {
    contexts_.touch(qp);
    return pool_.reserve(now, qp_busy, params_.wqe_processing + params_.tx_packet_processing);
  }

private:
  const Params& params_;
  QpContexts& contexts_;
  EnginePool pool_;
};

} // namespace ib::hca
