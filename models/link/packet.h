// An IB data packet as the fabric carries it: the header fields switches and HCAs act on (LRH: DLID, SLID, SL, VL;
// BTH opcode, destination QP, PSN, AckReq), its size on the wire, and per-hop timing the receiving port fills in.
// Packets live in a pool and cross ports as 32-bit handles (STYLE rule 19); the bytes themselves are not
// simulated. The extension headers (RETH, AETH, DETH, AtomicETH, ImmDt) only HCAs read live in their own pool
// (models/hca), named by `transport_headers`, so that switches touch one cache line per packet.
#pragma once

#include <cstdint>

#include "models/link/packet_format.h"
#include "sim/pool.h"
#include "sim/time.h"

namespace ib::link {

// Aligned to a cache line: a pool's chunks would otherwise be only 16-byte aligned (operator new), and every
// packet would straddle two lines.
struct alignas(64) Packet {
  // Per hop, written by the sending port and read by the node that receives it. A node must not read them once
  // it has started sending the packet on: the next node may overwrite them from then on.
  sim::Time first_bit_at; ///< first bit arrives at the current receiver
  sim::Time last_bit_at;  ///< last bit arrives at the current receiver

  // Set by whoever creates the packet.
  sim::Time injected_at;           ///< when the source handed it to its port
  std::uint32_t flow_seq = 0;      ///< the source's sequence number (wrapping), for the in-order invariant
  std::uint32_t wire_bytes = 0;    ///< LRH through VCRC (packet_format.h)
  std::uint32_t payload_bytes = 0; ///< data payload, before padding
  std::uint16_t slid = 0;          ///< source LID (LRH)
  std::uint16_t dlid = 0;          ///< destination LID (LRH); switches forward on it
  std::uint32_t dest_qpn = 0;      ///< BTH.DestQP
  std::uint32_t psn = 0;           ///< BTH.PSN (24 bits)
  std::uint32_t transport_headers = 0xffffffffu; ///< handle of the HCA's extension headers, if any
  std::uint8_t sl = 0;                           ///< service level (LRH), 0..15; each hop maps it to a VL by SL2VL
  std::uint8_t vl = 0;                           ///< VL of the current hop (LRH.VL, rewritten at each output port)
  std::uint8_t in_port = 0;                      ///< port number it arrives on at the current node
  std::uint8_t out_port = 0;                     ///< the current switch's LFT answer for DLID
  std::uint8_t out_vl = 0;                       ///< the current switch's SL2VL answer for (in_port, out_port, SL)
  Transport transport = Transport::rc;
  Opcode opcode = Opcode::send_only;
  bool global_route : 1 = false; ///< carries a GRH
  bool ack_request : 1 = false;  ///< BTH.A: the responder must acknowledge this packet
  /// Per hop: a bit error hit it on the current link, so the receiver drops it on its CRC check (faults only).
  bool corrupted : 1 = false;
  /// BTH.FECN: a switch port that was the root of congestion marked it (IBA A10; congestion control only).
  bool fecn : 1 = false;
  /// BTH.BECN: the destination returns congestion to the source, on an ACK or a CNP (congestion control only).
  bool becn : 1 = false;
  /// At its destination: the receiver returned its buffer credits before it is done with the packet (an HCA keeps a
  /// packet that came out of order on chip, not in the link's buffer).
  bool buffer_released : 1 = false;
  /// Per hop: the packet behind this one in the current switch's input FIFO (its value; invalid = none). The FIFO
  /// lives in the packets it holds, so queueing touches no memory but theirs.
  std::uint32_t next_in_queue = 0xffffffffu;
};

// One cache line per packet: every hop touches it.
static_assert(sizeof(Packet) == 64, "a packet's fabric fields fit one cache line");

using PacketPool = sim::Pool<Packet>;
using PacketHandle = sim::Handle<Packet>;

/// Where a node puts a packet it drops (a fault lost it): the composer frees the packet and whatever its creator
/// attached to it (an HCA's transport headers), which a switch cannot see.
class PacketDiscard {
public:
  virtual ~PacketDiscard() = default;
  virtual void discard(PacketHandle packet) = 0;
};

} // namespace ib::link
