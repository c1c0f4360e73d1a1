// The bytes an IB packet occupies on the wire, from its real headers (IBA vol 1 §5.2 local route header, §8.3
// global route header, §9.2-9.3 base and extension transport headers): LRH, optional GRH, BTH, the extension
// headers the opcode carries, the payload padded to 4 bytes, ICRC and VCRC. Physical-layer start/end delimiters
// and idles are left out (the reference's convention); the link model adds them if a profile asks for it.
#pragma once

#include <cstdint>
#include <string_view>

namespace ib::link {

// Header sizes in bytes (IBA vol 1: LRH §7.7, GRH §8.3, BTH §9.2, extension headers §9.3, CRCs §7.8).
inline constexpr std::uint32_t lrh_bytes = 8;
inline constexpr std::uint32_t grh_bytes = 40;
inline constexpr std::uint32_t bth_bytes = 12;
inline constexpr std::uint32_t reth_bytes = 16;
inline constexpr std::uint32_t aeth_bytes = 4;
inline constexpr std::uint32_t atomic_eth_bytes = 28;
inline constexpr std::uint32_t atomic_ack_eth_bytes = 8;
inline constexpr std::uint32_t immdt_bytes = 4;
inline constexpr std::uint32_t deth_bytes = 8;
inline constexpr std::uint32_t icrc_bytes = 4;
inline constexpr std::uint32_t vcrc_bytes = 2;
/// Payloads are padded to a multiple of 4 bytes; BTH.PadCnt says by how much (IBA vol 1 §9.2).
inline constexpr std::uint32_t payload_alignment_bytes = 4;
/// A link-level flow-control packet: 4-bit op, 12-bit FCTBS, 4-bit VL, 12-bit FCCL, 16-bit LPCRC (IBA vol 1 §7.9.4).
inline constexpr std::uint32_t flow_control_packet_bytes = 6;

enum class Transport : std::uint8_t { rc, uc, ud };

/// BTH opcodes (IBA vol 1 §9.2, Table 38) that ibnetsim's transports use.
enum class Opcode : std::uint8_t {
  send_first,
  send_middle,
  send_last,
  send_last_with_immediate,
  send_only,
  send_only_with_immediate,
  rdma_write_first,
  rdma_write_middle,
  rdma_write_last,
  rdma_write_last_with_immediate,
  rdma_write_only,
  rdma_write_only_with_immediate,
  rdma_read_request,
  rdma_read_response_first,
  rdma_read_response_middle,
  rdma_read_response_last,
  rdma_read_response_only,
  acknowledge,
  atomic_acknowledge,
  compare_swap,
  fetch_add,
  /// BTH opcode 0x80 (IBA vol 1 A10.2.2.2): a Congestion Notification Packet, LRH + BTH with BECN and no payload, by
  /// which the destination of a FECN-marked UC or UD packet returns the congestion to its source QP.
  congestion_notification,
};

/// Whether `opcode` exists on `transport` (UD has only SEND ONLY; UC has no READ, atomics or ACKs; any may carry a
/// CNP).
bool valid(Transport transport, Opcode opcode);
/// Whether packets with `opcode` carry a data payload.
bool carries_payload(Opcode opcode);
/// Bytes of the extension headers between BTH and the payload (DETH for UD; RETH, AETH, ImmDt, AtomicETH...).
std::uint32_t extension_header_bytes(Transport transport, Opcode opcode);
/// Wire bytes of one packet: LRH + GRH if `global_route` + BTH + extension headers + payload padded to 4 + ICRC +
/// VCRC. Preconditions: valid(transport, opcode), and payload_bytes == 0 unless carries_payload(opcode).
std::uint32_t wire_bytes(Transport transport, Opcode opcode, std::uint32_t payload_bytes, bool global_route);

std::string_view to_string(Opcode opcode);
std::string_view to_string(Transport transport);

} // namespace ib::link
