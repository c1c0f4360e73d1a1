// The completion writer (docs/models/hca.md, "Code structure"): the CQs in host memory, and the one completion unit
// that builds their CQEs in order before each goes to host memory by DMA write; the program sees a CQE once its
// write is visible. Private to the HCA model.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "models/hca/core.h"
#include "models/hca/verbs.h"
#include "sim/host_runtime.h"
#include "sim/time.h"

namespace ib::hca {

struct CqEntry {
  verbs::WorkCompletion wc;
  std::uint32_t qp_index = 0;
  std::uint32_t wqe_index = 0;
  bool is_send = false;
};

struct Cq {
  std::uint32_t depth = 0;
  std::uint64_t address = 0;
  std::vector<CqEntry> ring;
  std::uint32_t issued = 0;   ///< CQEs the HCA has started writing
  std::uint32_t visible = 0;  ///< CQEs visible in host memory (in order: posted writes are ordered)
  std::uint32_t consumed = 0; ///< CQEs the driver has polled
  bool overrun = false;
  sim::Signal* signal = nullptr;
};

class CompletionWriter {
public:
  explicit CompletionWriter(Core& core) : core_(core) {}

  /// A CQ of `depth` entries in host memory; `signal` (may be null) is raised whenever a CQE becomes visible.
  std::uint32_t create_cq(std::uint32_t depth, sim::Signal* signal);
  /// Queues a CQE for the completion unit; it comes back as Hca::Kind::cqe_ready (on_built) when built.
  void write(sim::Simulator& sim, std::uint32_t cq, const verbs::WorkCompletion& wc, std::uint32_t qp_index,
             std::uint32_t wqe_index, bool is_send);
  /// The completion unit has built the CQE: its DMA write goes.
  void on_built(sim::Simulator& sim, DmaHandle op);
  /// The CQE's write is visible in host memory: the program may take it.
  void on_visible(DmaHandle op);

  /// Takes up to out.size() visible CQEs, handing each to `consumed` (the driver frees queue entries by it); -1 if
  /// the CQ overran.
  template <class Consumed>
  int poll(std::uint32_t cq_index, std::span<verbs::WorkCompletion> out, Consumed&& consumed) {
    Cq& cq = cqs_.at(cq_index);
    if (cq.overrun)
      return -1;
    int n = 0;
    while (cq.consumed != cq.visible && static_cast<std::size_t>(n) < out.size()) {
      const CqEntry& e = cq.ring[cq.consumed % cq.depth];
      out[static_cast<std::size_t>(n++)] = e.wc;
      consumed(e);
      ++cq.consumed;
    }
    return n;
  }
  std::uint32_t cq_count() const { return static_cast<std::uint32_t>(cqs_.size()); }
  /// CQEs visible and not yet polled.
  std::uint32_t ready(std::uint32_t cq) const { return cqs_.at(cq).visible - cqs_.at(cq).consumed; }

private:
  Core& core_;
  std::vector<Cq> cqs_;
  sim::Time unit_free_; ///< the completion unit has built every CQE given to it by then
};

} // namespace ib::hca
