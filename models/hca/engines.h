// The HCA's processing units (send engines, receive engines): a pool that serves QPs one work item at a time. Any
// unit takes a QP's next item, but a QP is on one unit at a time, so its items run in order and one QP alone gets
// the pace of one unit (Kalia et al., ATC'16 section 3.3: a QP's work is handled by one processing unit; more QPs
// spread over more units). Private to the HCA model.
#pragma once

#include <cstdint>
#include <vector>

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

} // namespace ib::hca
