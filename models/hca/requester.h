// The requester (docs/models/hca.md, "Code structure"), being made a stage of its own. Its class holds so far the
// send queue's intake: doorbells and BlueFlame writes, the WQE fetch (one DMA read per contiguous range of new
// WQEs) and the processing of fetched WQEs, one at a time per QP, on the send engines, after which the QP joins its
// port's packet builder. Request packets, ACKs, retries and completions are still Hca members (requester.cpp).
// Private to the HCA model.
#pragma once

#include <cstdint>

#include "models/hca/core.h"
#include "models/hca/engines.h"
#include "sim/simulator.h"

namespace ib::hca {

class QpContexts;
class Transmitter;

class Requester {
public:
  /// Fetched WQEs wait for their QP's context in `contexts`, are processed on `send_engines`, and their QP then has
  /// packets for `tx` to build.
  Requester(Core& core, QpContexts& contexts, Transmitter& tx, EnginePool& send_engines)
      : core_(core), contexts_(contexts), tx_(tx), send_engines_(send_engines) {}

  /// Hca::Kind::doorbell_ready: a doorbell or BlueFlame write has reached the adapter.
  void on_doorbell(sim::Simulator& sim, DmaHandle op);
  /// The DMA read of a range of WQEs is in.
  void on_wqe_fetch_done(sim::Simulator& sim, DmaHandle op);
  /// Hands `count` fetched WQEs (their QP's context is on the adapter) to the send engines.
  void process_wqes(sim::Simulator& sim, Qp& qp, std::uint32_t count);
  /// Hca::Kind::wqe_processed: the QP's next WQE is processed.
  void on_wqe_processed(sim::Simulator& sim, Qp& qp);

private:
  void fetch_wqes(sim::Simulator& sim, Qp& qp);
  void on_wqes_fetched(sim::Simulator& sim, Qp& qp, std::uint32_t count);
  void process_next_wqe(sim::Simulator& sim, Qp& qp);

  Core& core_;
  QpContexts& contexts_;
  Transmitter& tx_;
  EnginePool& send_engines_;
};

} // namespace ib::hca
