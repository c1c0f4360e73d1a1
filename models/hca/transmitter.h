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
  void drop_front(PortState& port);

  Core& core_;
  Requester& requester_;
  Responder& responder_;
  std::vector<PortState> ports_;
  sim::Pool<TxEntry, 256> entries_; // per HCA: small chunks (see pcie::Bus)
};

} // namespace ib::hca
