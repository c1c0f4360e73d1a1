// The ports' transmit side (docs/models/hca.md, "Send path"): per port, the packet builder that takes QPs round
// robin, one packet per turn, within the port's payload buffer; the transmit queue of built packets, which leave in
// build order once their payload's DMA read is in and the link has credits; and control packets (ACKs, NAKs), sent
// before data. The requester and the responder build the packets; the requester hears when its
// requests leave. Private to the HCA model.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "models/hca/core.h"
#include "models/link/congestion.h"
#include "models/link/port.h"
#include "sim/pool.h"
#include "sim/ring.h"
#include "sim/time.h"
#include "sim/trace.h"

namespace ib::hca {

class Requester;
class Responder;

/// A packet in a port's transmit queue.
struct TxEntry {
  link::PacketHandle packet;
  std::uint32_t qp_index = 0;
  std::uint32_t generation = 0;
  std::uint32_t wqe_index = 0;
  std::uint32_t payload_bytes = 0; ///< held in the port's payload buffer
  sim::Time ready_at;              ///< headers built
  bool payload_in = true;
  bool is_request = false; ///< a requester packet (else a response)
  bool last_of_message = false;
};
using TxHandle = sim::Handle<TxEntry>;

/// A flow congestion control throttles (IBA A10): a QP's requests, or with per-SL control those of every QP of one SL
/// on a port. While its CCTI is above 0 it has at most one request packet built and not yet sent, and the next one is
/// built no earlier than that packet's end on the wire plus the injection delay: a packet built ahead would escape
/// the delay its predecessor sets.
struct CcFlow {
  link::cc::Ccti ccti;
  sim::Time next_build_at;              ///< the hold: no request packet of the flow is built before
  std::uint32_t unsent = 0;             ///< request packets built and not yet sent (nor dropped)
  sim::Time wake_at = sim::Time::max(); ///< a wake is scheduled then ...
  std::uint32_t wake_generation = 0;    ///< ... under this generation; older ones are stale
};

/// Per-SL congestion control: the SL's flow and the QPs it holds (QP indices).
struct SlFlow {
  CcFlow flow;
  sim::Ring<std::uint32_t> held;
};

struct PortState {
  link::Port port;
  std::uint16_t lid = 0;
  std::uint8_t index = 0;
  std::array<std::uint8_t, 16> sl_to_vl{};
  bool sl_to_vl_set = false;
  sim::Ring<std::uint32_t> active;       ///< QP indices with packets to build, round robin
  sim::Ring<TxHandle> data;              ///< built packets, in build order
  sim::Ring<link::PacketHandle> control; ///< ACKs and NAKs, sent before data
  std::uint32_t payload_buffered = 0;
  std::uint32_t awaiting_payload = 0; ///< packets of `data` whose payload's DMA read has not completed
  bool transmitting = false;
  TxHandle sending; ///< the data packet on the wire, if any
  sim::Time wake_at = sim::Time::max();
  std::uint32_t wake_generation = 0;
  std::vector<SlFlow> sl_flows; ///< by SL, with per-SL congestion control only
};

class Transmitter {
public:
  /// Its packets come from `requester` and from `responder`'s READ responses.
  Transmitter(Core& core, Requester& requester, Responder& responder);

  /// By index: port number - 1.
  PortState& port(std::uint32_t index) { return ports_[index]; }
  const PortState& port(std::uint32_t index) const { return ports_[index]; }
  const std::vector<PortState>& ports() const { return ports_; }
  void set_tracer(sim::Tracer* tracer);

  /// The QP has packets to build: it joins its port's builder ring if not in it.
  void activate(sim::Simulator& sim, Qp& qp);
  /// The builder builds while it may, then the port sends what is ready.
  void pump(sim::Simulator& sim, PortState& port);
  /// Sends the next packet if the port is free, it is ready and the link has credits.
  void try_transmit(sim::Simulator& sim, PortState& port);
  /// Hca::Kind::tx_wake: the builder is free or a packet is ready.
  void on_wake(sim::Simulator& sim, std::uint32_t port, std::uint32_t generation);
  /// Hca::Kind::tx_done: the packet on the wire has left.
  void on_tx_done(sim::Simulator& sim, PortState& port);

  // Congestion control (IBA A10; only when the SM configured it).
  /// The flow whose CCTI and hold apply to the QP's request packets on SL `sl`: the QP's, or its port's SL's.
  CcFlow& cc_flow(Qp& qp, std::uint8_t sl);
  /// Traces the flow's CCTI as a counter when it changed since last traced (with a tracer only).
  void trace_ccti(const sim::Simulator& sim, const Qp& qp, std::uint8_t sl, CcFlow& flow, std::uint16_t index);
  /// Hca::Kind::cc_wake and cc_sl_wake: a flow's hold is over; the QPs it held join the builder ring again.
  void on_cc_wake(sim::Simulator& sim, std::uint32_t qp_index, std::uint32_t generation);
  void on_cc_sl_wake(sim::Simulator& sim, std::uint32_t handle, std::uint32_t generation);

  // The builders' face.
  /// A packet of QP `qp` with its transport headers (zeroed), not yet queued.
  link::PacketHandle new_packet(const Qp& qp, std::uint16_t dlid, std::uint8_t sl, link::Opcode opcode,
                                std::uint32_t payload, std::uint32_t psn, std::uint32_t dest_qpn);
  TxHandle new_entry() { return entries_.acquire(); }
  TxEntry& entry(TxHandle tx) { return entries_[tx]; }
  /// Queues a built packet on its port; unless its payload is in, it is read from host memory at `payload_address`
  /// (a request's data, or a READ response's) and the packet may leave once it is in.
  void queue(sim::Simulator& sim, PortState& port, TxHandle tx, std::uint64_t payload_address);
  void on_payload_read_done(sim::Simulator& sim, DmaHandle op);
  /// An ACK, NAK or atomic response of the QP, sent before data.
  void send_control(sim::Simulator& sim, const Qp& qp, link::PacketHandle packet);

private:
  void wake(sim::Simulator& sim, PortState& port, sim::Time at);
  /// The port's link is down: drops its queued packets whose payload is in.
  void discard_queued(sim::Simulator& sim, PortState& port);
  /// Takes the first packet of `port`'s transmit queue out of it and frees it, unsent.
  void drop_front(sim::Simulator& sim, PortState& port);
  /// Whether the QP's next request packet may be built now; if not, the QP is held until its flow's wake.
  bool cc_admit(sim::Simulator& sim, PortState& port, Qp& qp);
  /// A request packet left the transmit queue: on the wire until `done`, or dropped (`sent` false). Sets the hold a
  /// throttled flow keeps after it and wakes the QPs it held once they may build again.
  void cc_left_queue(sim::Simulator& sim, PortState& port, const TxEntry& entry, bool sent, sim::Time done);
  void schedule_cc_wake(sim::Simulator& sim, PortState& port, std::uint32_t qp_index, std::uint8_t sl, CcFlow& flow,
                        sim::Time at);

  Core& core_;
  Requester& requester_;
  Responder& responder_;
  std::vector<PortState> ports_;
  sim::Pool<TxEntry, 256> entries_; // per HCA: small chunks (see pcie::Bus)
};

} // namespace ib::hca
