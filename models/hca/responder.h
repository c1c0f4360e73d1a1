// The responder (docs/models/hca.md, "Code structure", "Transport"), with the receive side it sits on: received
// packets wait for their QP's context and are checked on the receive engines, one at a time per QP; responses go
// to the requester, requests to the responder's PSN checks (duplicates answered again, sequence NAKs, RNR NAKs),
// payload placement by DMA write into the receive WQEs the receive queues bring, READ response jobs built on the
// send engines, atomics through the atomic unit, and receive completions; UC and UD receive. Private to the HCA model.
#pragma once

#include <cstdint>

#include "models/hca/core.h"
#include "models/hca/engines.h"
#include "sim/simulator.h"

namespace ib::hca {

class QpContexts;
class Transmitter;
class ReceiveQueues;
class AtomicUnit;
class CompletionWriter;
class Requester;
struct PortState;
struct ReorderHold;
enum class Aeth : std::uint8_t;

class Responder {
public:
  /// Received packets wait for their QP's context in `contexts`; answers and READ responses (built on
  /// `send_engines`) go to `tx`; messages take their receive WQEs from `recv`; atomics run on `atomics`; receive
  /// completions go to `completions`; responses to the QP's own requests go to `requester`, which it also asks to
  /// fail a QP.
  Responder(Core& core, QpContexts& contexts, SendEngines& send_engines, Transmitter& tx, ReceiveQueues& recv,
            AtomicUnit& atomics, CompletionWriter& completions, Requester& requester);

  // The receive side.
  /// Hca::Kind::packet_arrives on `port`.
  void on_packet_arrives(sim::Simulator& sim, PortState& port, link::PacketHandle packet);
  /// The QP's context is on the adapter: the packet goes to the receive engines.
  void receive_packet(sim::Simulator& sim, Qp& qp, link::PacketHandle packet);
  /// Hca::Kind::rx_processed: the receive engine has checked the packet.
  void on_rx_processed(sim::Simulator& sim, link::PacketHandle packet);
  /// The received packet is done with: its IB receive buffer is free again and the packet goes.
  void consume_packet(sim::Simulator& sim, link::PacketHandle packet);

  /// What hold_early did with a packet.
  enum class Early : std::uint8_t { beyond_window, kept, duplicate };
  /// QpCaps::out_of_order: keeps `packet`, `ahead` PSNs past the one expected, in `hold` until the gap before it
  /// closes, its link buffer freed now; a copy already held is a duplicate and goes. Nothing is done when it lies
  /// beyond the adapter's window (out_of_order_window_packets).
  Early hold_early(sim::Simulator& sim, Qp& qp, ReorderHold& hold, std::int32_t ahead, link::PacketHandle packet);

  /// Places the QP's packets that waited for their receive WQE, in order, while their WQEs are on the adapter.
  void drain_parked(sim::Simulator& sim, Qp& qp);
  /// The transmitter's face: the QP has a READ response packet to build, and builds it on `port`.
  bool can_build(const Qp& qp) const;
  void build_packet(sim::Simulator& sim, PortState& port, Qp& qp);
  /// The write of an atomic's read-modify-write has left: answer, and let the next atomic on its bucket go.
  void on_atomic_write_done(sim::Simulator& sim, DmaHandle op);
  /// A failed QP's receive side (the requester's fail_qp): the receive WQEs it is placing into or its messages
  /// claimed, and (own queue) every other posted one, are flushed; its parked packets go.
  void flush(sim::Simulator& sim, Qp& qp);

  /// Test hook (fault injection): the next `count` data packets are dropped on arrival.
  void drop_next_received(std::uint32_t count) { drop_next_ += count; }
  std::uint64_t packets_dropped_by_fault() const { return dropped_by_fault_; }
  /// Test hook: the next `count` requests arrive marked FECN.
  void mark_next_received_fecn(std::uint32_t count) { mark_fecn_next_ += count; }
  /// Test hook: `count` times, a packet other than an ACK is taken only after the one that arrives next.
  void swap_next_received(std::uint32_t count) { swap_next_ += count; }
  /// Bytes of RC SEND and WRITE payload placed in host memory.
  std::uint64_t bytes_placed() const { return bytes_placed_; }

private:
  /// A packet the port took in: its QP's context, then the receive engines.
  void take_arrival(sim::Simulator& sim, link::PacketHandle packet);
  /// A request for the QP: a FECN on it goes back as BECN (IBA A10), then respond_to answers it.
  void respond(sim::Simulator& sim, Qp& qp, link::PacketHandle packet);
  void respond_to(sim::Simulator& sim, Qp& qp, link::PacketHandle packet);
  /// QpCaps::out_of_order: the requests held ahead of a gap that are now in sequence, answered in PSN order.
  void take_early_requests(sim::Simulator& sim, Qp& qp);
  /// A CNP to QP `dest_qpn` at `dlid` on SL `sl`: the BECN of a UC or UD request that came marked FECN.
  void send_cnp(sim::Simulator& sim, Qp& qp, std::uint16_t dlid, std::uint8_t sl, std::uint32_t dest_qpn);
  void receive_payload(sim::Simulator& sim, Qp& qp, link::PacketHandle packet);
  /// Places an accepted packet now if nothing waits before it and its RECV WQE (if it needs one) is on the adapter;
  /// parks it otherwise.
  void place_or_park(sim::Simulator& sim, Qp& qp, link::PacketHandle packet);
  bool ready_to_place(const Qp& qp, link::PacketHandle packet) const;
  /// Claims the next RECV WQE of the QP's receive queue for an accepted message; false if none is posted.
  bool claim_recv(sim::Simulator& sim, Qp& qp);
  void place_payload(sim::Simulator& sim, Qp& qp, link::PacketHandle packet, std::uint64_t address, Purpose purpose);
  void finish_message(sim::Simulator& sim, Qp& qp, const link::Packet& last, const TransportHeaders& h);
  /// An ACK or NAK; it carries the BECN owed for the request being answered, if any.
  void send_ack(sim::Simulator& sim, Qp& qp, Aeth syndrome, std::uint32_t psn);
  void start_read_response(sim::Simulator& sim, Qp& qp, const link::Packet& request, const TransportHeaders& h);
  void start_atomic(sim::Simulator& sim, Qp& qp, link::PacketHandle request);

  Core& core_;
  QpContexts& contexts_;
  SendEngines& send_engines_;
  Transmitter& tx_;
  ReceiveQueues& recv_;
  AtomicUnit& atomics_;
  CompletionWriter& completions_;
  Requester& requester_;
  EnginePool receive_engines_;
  std::uint32_t drop_next_ = 0;
  std::uint32_t mark_fecn_next_ = 0;
  std::uint32_t swap_next_ = 0;
  link::PacketHandle swapped_; ///< swap_next_received: the packet waiting for the one behind it
  bool becn_owed_ = false;     ///< the RC request being answered came marked FECN: its first ACK or NAK carries BECN
  std::uint64_t dropped_by_fault_ = 0;
  std::uint64_t bytes_placed_ = 0;
};

} // namespace ib::hca
