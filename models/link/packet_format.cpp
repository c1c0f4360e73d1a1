#include "models/link/packet_format.h"

#include <cassert>

namespace ib::link {

bool valid(Transport transport, Opcode opcode) {
  if (opcode == Opcode::congestion_notification)
    return true;
  switch (transport) {
  case Transport::rc:
    return true;
  case Transport::uc:
    // IBA vol 1 §9.2 Table 38: UC carries SENDs and RDMA WRITEs only.
    return opcode <= Opcode::rdma_write_only_with_immediate;
  case Transport::ud:
    return opcode == Opcode::send_only || opcode == Opcode::send_only_with_immediate;
  }
  return false;
}

bool carries_payload(Opcode opcode) {
  switch (opcode) {
  case Opcode::rdma_read_request:
  case Opcode::acknowledge:
  case Opcode::atomic_acknowledge:
  case Opcode::compare_swap:
  case Opcode::fetch_add:
  case Opcode::congestion_notification:
    return false;
  default:
    return true;
  }
}

std::uint32_t extension_header_bytes(Transport transport, Opcode opcode) {
  assert(valid(transport, opcode));
  // Datagrams name their destination QP and Q_Key in every packet (IBA vol 1 §9.3.2).
  const std::uint32_t datagram = transport == Transport::ud ? deth_bytes : 0;
  switch (opcode) {
  case Opcode::send_first:
  case Opcode::send_middle:
  case Opcode::send_last:
  case Opcode::send_only:
  case Opcode::rdma_write_middle:
  case Opcode::rdma_write_last:
  case Opcode::rdma_read_response_middle:
    return datagram;
  case Opcode::send_last_with_immediate:
  case Opcode::send_only_with_immediate:
  case Opcode::rdma_write_last_with_immediate:
    return datagram + immdt_bytes;
  case Opcode::rdma_write_first:
  case Opcode::rdma_write_only:
  case Opcode::rdma_read_request:
    return reth_bytes;
  case Opcode::rdma_write_only_with_immediate:
    return reth_bytes + immdt_bytes;
  case Opcode::rdma_read_response_first:
  case Opcode::rdma_read_response_last:
  case Opcode::rdma_read_response_only:
  case Opcode::acknowledge:
    return aeth_bytes;
  case Opcode::atomic_acknowledge:
    return aeth_bytes + atomic_ack_eth_bytes;
  case Opcode::compare_swap:
  case Opcode::fetch_add:
    return atomic_eth_bytes;
  case Opcode::congestion_notification:
    return 0;
  }
  return 0;
}

std::uint32_t wire_bytes(Transport transport, Opcode opcode, std::uint32_t payload_bytes, bool global_route) {
  assert(valid(transport, opcode));
  assert(payload_bytes == 0 || carries_payload(opcode));
  const std::uint32_t padded =
      (payload_bytes + payload_alignment_bytes - 1) / payload_alignment_bytes * payload_alignment_bytes;
  return lrh_bytes + (global_route ? grh_bytes : 0) + bth_bytes + extension_header_bytes(transport, opcode) + padded +
         icrc_bytes + vcrc_bytes;
}

std::string_view to_string(Opcode opcode) {
  switch (opcode) {
  case Opcode::send_first:
    return "SEND_FIRST";
  case Opcode::send_middle:
    return "SEND_MIDDLE";
  case Opcode::send_last:
    return "SEND_LAST";
  case Opcode::send_last_with_immediate:
    return "SEND_LAST_WITH_IMMEDIATE";
  case Opcode::send_only:
    return "SEND_ONLY";
  case Opcode::send_only_with_immediate:
    return "SEND_ONLY_WITH_IMMEDIATE";
  case Opcode::rdma_write_first:
    return "RDMA_WRITE_FIRST";
  case Opcode::rdma_write_middle:
    return "RDMA_WRITE_MIDDLE";
  case Opcode::rdma_write_last:
    return "RDMA_WRITE_LAST";
  case Opcode::rdma_write_last_with_immediate:
    return "RDMA_WRITE_LAST_WITH_IMMEDIATE";
  case Opcode::rdma_write_only:
    return "RDMA_WRITE_ONLY";
  case Opcode::rdma_write_only_with_immediate:
    return "RDMA_WRITE_ONLY_WITH_IMMEDIATE";
  case Opcode::rdma_read_request:
    return "RDMA_READ_REQUEST";
  case Opcode::rdma_read_response_first:
    return "RDMA_READ_RESPONSE_FIRST";
  case Opcode::rdma_read_response_middle:
    return "RDMA_READ_RESPONSE_MIDDLE";
  case Opcode::rdma_read_response_last:
    return "RDMA_READ_RESPONSE_LAST";
  case Opcode::rdma_read_response_only:
    return "RDMA_READ_RESPONSE_ONLY";
  case Opcode::acknowledge:
    return "ACKNOWLEDGE";
  case Opcode::atomic_acknowledge:
    return "ATOMIC_ACKNOWLEDGE";
  case Opcode::compare_swap:
    return "COMPARE_SWAP";
  case Opcode::fetch_add:
    return "FETCH_ADD";
  case Opcode::congestion_notification:
    return "CNP";
  }
  return "?";
}

std::string_view to_string(Transport transport) {
  switch (transport) {
  case Transport::rc:
    return "RC";
  case Transport::uc:
    return "UC";
  case Transport::ud:
    return "UD";
  }
  return "?";
}

} // namespace ib::link
