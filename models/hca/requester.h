// The requester (docs/models/hca.md, "Code structure"): the send queue's intake (doorbells and BlueFlame writes, the
// WQE fetch by one DMA read per contiguous range of new WQEs, the processing of fetched WQEs one at a time per QP on
// the send engines), then request packets at the path MTU for the transmitter to send and, for RC, the
// acknowledgements, READ and atomic responses, go-back-N on sequence NAKs and timeouts, RNR waits and completions
// in WQE order; and the QP's move to the error state. Private to the HCA model.
#pragma once

#include <cstdint>

#include "models/hca/core.h"
#include "models/hca/engines.h"
#include "models/hca/verbs.h"
#include "sim/simulator.h"

namespace ib::hca {

class QpContexts;
class Transmitter;
class CompletionWriter;
class Responder;
struct PortState;
struct TxEntry;

class Requester {
public:
  /// Fetched WQEs wait for their QP's context in `contexts` and are processed on `send_engines`; their packets go
  /// to `tx`, their completions to `completions`. `responder` consumes the responses it received and, when a
  /// QP fails, flushes its receive side.
  Requester(Core& core, QpContexts& contexts, SendEngines& send_engines, Transmitter& tx, CompletionWriter& completions,
            Responder& responder)
      : core_(core), contexts_(contexts), send_engines_(send_engines), tx_(tx), completions_(completions),
        responder_(responder) {}

  // The send queue's intake.
  /// Hca::Kind::doorbell_ready: a doorbell or BlueFlame write has reached the adapter.
  void on_doorbell(sim::Simulator& sim, DmaHandle op);
  /// The DMA read of a range of WQEs is in.
  void on_wqe_fetch_done(sim::Simulator& sim, DmaHandle op);
  /// Hands `count` fetched WQEs (their QP's context is on the adapter) to the send engines.
  void process_wqes(sim::Simulator& sim, Qp& qp, std::uint32_t count);
  /// Hca::Kind::wqe_processed: the QP's next WQE is processed.
  void on_wqe_processed(sim::Simulator& sim, Qp& qp);

  // The transmitter's face.
  /// The QP has a request packet it may build now.
  bool can_build(const Qp& qp) const;
  /// Builds the QP's next request packet and queues it on `port`.
  void build_packet(sim::Simulator& sim, PortState& port, Qp& qp);
  /// A request packet has started on the wire.
  void on_request_sent(sim::Simulator& sim, Qp& qp, const TxEntry& entry);
  /// The last packet of a request has left the port.
  void on_request_left(sim::Simulator& sim, Qp& qp, const TxEntry& entry);
  /// The SL of the QP's next request packet (a UD QP's comes with each work request).
  std::uint8_t next_sl(const Qp& qp) const;

  // What comes back: the receive engines' responses and the timers.
  /// An ACK or NAK (its AETH in `h`); the packet stays the caller's.
  void on_acknowledge(sim::Simulator& sim, Qp& qp, const link::Packet& packet, const TransportHeaders& h);
  /// A READ response or atomic acknowledgement; the packet is the requester's.
  void on_read_response(sim::Simulator& sim, Qp& qp, link::PacketHandle packet);
  /// A BECN on SL `sl` for the QP, in an ACK or a CNP (IBA A10): its flow's CCTI rises.
  void on_becn(sim::Simulator& sim, Qp& qp, std::uint8_t sl);
  /// Hca::Kind::retry_timer.
  void on_retry_timer(sim::Simulator& sim, Qp& qp);
  /// Hca::Kind::rnr_timer.
  void on_rnr_timer(sim::Simulator& sim, Qp& qp);

  /// Moves the QP to the error state: the failing WQE completes with `status`, every other outstanding work request
  /// (send and receive) is flushed. The responder and the driver call it too.
  void fail_qp(sim::Simulator& sim, Qp& qp, verbs::WcStatus status);

  /// Bytes of RC SEND and WRITE requests completed successfully.
  std::uint64_t bytes_completed() const { return bytes_completed_; }
  /// QPs that went to the error state.
  std::uint32_t failed_qps() const { return failed_qps_; }

private:
  void fetch_wqes(sim::Simulator& sim, Qp& qp);
  void on_wqes_fetched(sim::Simulator& sim, Qp& qp, std::uint32_t count);
  void process_next_wqe(sim::Simulator& sim, Qp& qp);
  void acknowledge_upto(sim::Simulator& sim, Qp& qp, std::uint32_t psn);
  void complete_requests(sim::Simulator& sim, Qp& qp);
  void rewind(sim::Simulator& sim, Qp& qp, std::uint32_t psn);
  /// One READ response or atomic acknowledgement, in sequence or not (on_read_response's body).
  void take_response(sim::Simulator& sim, Qp& qp, link::PacketHandle packet);
  /// The outstanding READ or atomic WQE whose responses span `psn`, or no_wqe.
  std::uint32_t read_wqe_of(const Qp& qp, std::uint32_t psn) const;
  static constexpr std::uint32_t no_wqe = 0xffffffffu;
  /// PSN `psn`, a response to WQE `k`, less the PSN of the response expected next: 0 in sequence, above 0 ahead of
  /// a gap, below 0 a duplicate.
  std::int32_t response_gap(const Qp& qp, std::uint32_t k, std::uint32_t psn) const;
  /// Frees the READ responses held ahead of a gap (QpCaps::out_of_order) of a failed QP.
  void drop_early_responses(sim::Simulator& sim, Qp& qp);
  void arm_retry_timer(sim::Simulator& sim, Qp& qp);

  Core& core_;
  QpContexts& contexts_;
  SendEngines& send_engines_;
  Transmitter& tx_;
  CompletionWriter& completions_;
  Responder& responder_;
  std::uint64_t bytes_completed_ = 0;
  std::uint32_t failed_qps_ = 0;
};

} // namespace ib::hca
