#include <catch2/catch.hpp>

#include "models/link/link_rate.h"
#include "models/link/packet_format.h"

using ib::link::Opcode;
using ib::link::Transport;

TEST_CASE("ib::link::wire_bytes: reference E1 to E3 and E10 exactly", "[link][quick]") {
  const sim::Rate edr = ib::link::data_rate(ib::link::Width::x4, ib::link::Speed::edr);
  SECTION("E1: a 4 KiB RDMA WRITE First/Only is 4138 B, 331.04 ns at 4x EDR; Middle 4122 B, 329.76 ns") {
    CHECK(ib::link::wire_bytes(Transport::rc, Opcode::rdma_write_first, 4096, false) == 4138);
    CHECK(ib::link::wire_bytes(Transport::rc, Opcode::rdma_write_only, 4096, false) == 4138);
    CHECK(ib::link::wire_bytes(Transport::rc, Opcode::rdma_write_middle, 4096, false) == 4122);
    CHECK(sim::transfer_time(4138, edr) == sim::Time::from_ps(331'040));
    CHECK(sim::transfer_time(4122, edr) == sim::Time::from_ps(329'760));
  }
  SECTION("E2: a 2 KiB SEND Only is 2074 B, 518.5 ns at 4x QDR and about 304.2 ns at 4x FDR") {
    const std::uint32_t bytes = ib::link::wire_bytes(Transport::rc, Opcode::send_only, 2048, false);
    CHECK(bytes == 2074);
    CHECK(sim::transfer_time(bytes, ib::link::data_rate(ib::link::Width::x4, ib::link::Speed::qdr)) ==
          sim::Time::from_ps(518'500));
    // 16592 bits × 66 / (4 × 14.0625 × 64) Gb/s = 304186.67 ps, rounded up.
    CHECK(sim::transfer_time(bytes, ib::link::data_rate(ib::link::Width::x4, ib::link::Speed::fdr)) ==
          sim::Time::from_ps(304'187));
  }
  SECTION("E3: a 256 B SEND is 282 B") {
    CHECK(ib::link::wire_bytes(Transport::rc, Opcode::send_only, 256, false) == 282);
  }
  SECTION("E10: an 8 B inline RDMA WRITE is 50 B, 4 ns at 4x EDR") {
    const std::uint32_t bytes = ib::link::wire_bytes(Transport::rc, Opcode::rdma_write_only, 8, false);
    CHECK(bytes == 50);
    CHECK(sim::transfer_time(bytes, edr) == sim::Time::from_ns(4));
  }
}

TEST_CASE("ib::link::wire_bytes: payloads pad to 4 bytes and a GRH adds 40", "[link][quick]") {
  CHECK(ib::link::wire_bytes(Transport::rc, Opcode::send_only, 1, false) == 26 + 4);
  CHECK(ib::link::wire_bytes(Transport::rc, Opcode::send_only, 4, false) == 26 + 4);
  CHECK(ib::link::wire_bytes(Transport::rc, Opcode::send_only, 5, false) == 26 + 8);
  CHECK(ib::link::wire_bytes(Transport::rc, Opcode::send_only, 0, false) == 26);
  CHECK(ib::link::wire_bytes(Transport::rc, Opcode::send_only, 0, true) == 66);
}

TEST_CASE("ib::link::extension_header_bytes: each opcode carries its IBA headers", "[link][quick]") {
  struct Row {
    Transport transport;
    Opcode opcode;
    std::uint32_t bytes;
  };
  const Row rows[] = {
      {Transport::rc, Opcode::send_first, 0},
      {Transport::rc, Opcode::send_middle, 0},
      {Transport::rc, Opcode::send_last_with_immediate, 4},
      {Transport::rc, Opcode::send_only_with_immediate, 4},
      {Transport::rc, Opcode::rdma_write_first, 16},
      {Transport::rc, Opcode::rdma_write_last, 0},
      {Transport::rc, Opcode::rdma_write_last_with_immediate, 4},
      {Transport::rc, Opcode::rdma_write_only_with_immediate, 20},
      {Transport::rc, Opcode::rdma_read_request, 16},
      {Transport::rc, Opcode::rdma_read_response_first, 4},
      {Transport::rc, Opcode::rdma_read_response_middle, 0},
      {Transport::rc, Opcode::rdma_read_response_last, 4},
      {Transport::rc, Opcode::rdma_read_response_only, 4},
      {Transport::rc, Opcode::acknowledge, 4},
      {Transport::rc, Opcode::atomic_acknowledge, 12},
      {Transport::rc, Opcode::compare_swap, 28},
      {Transport::rc, Opcode::fetch_add, 28},
      {Transport::uc, Opcode::rdma_write_only, 16},
      {Transport::uc, Opcode::send_last, 0},
      {Transport::ud, Opcode::send_only, 8},
      {Transport::ud, Opcode::send_only_with_immediate, 12},
      {Transport::ud, Opcode::congestion_notification, 0},
  };
  for (const Row& row : rows) {
    INFO(ib::link::to_string(row.transport) << " " << ib::link::to_string(row.opcode));
    CHECK(ib::link::extension_header_bytes(row.transport, row.opcode) == row.bytes);
  }
  // An RC ACK is 30 B on the wire; a CAS request 54 B; its ACK 38 B.
  CHECK(ib::link::wire_bytes(Transport::rc, Opcode::acknowledge, 0, false) == 30);
  CHECK(ib::link::wire_bytes(Transport::rc, Opcode::compare_swap, 0, false) == 54);
  CHECK(ib::link::wire_bytes(Transport::rc, Opcode::atomic_acknowledge, 0, false) == 38);
  // A CNP is LRH, BTH, ICRC and VCRC: 26 B, on UC and UD alike (no DETH).
  CHECK(ib::link::wire_bytes(Transport::uc, Opcode::congestion_notification, 0, false) == 26);
  CHECK(ib::link::wire_bytes(Transport::ud, Opcode::congestion_notification, 0, false) == 26);
  CHECK(ib::link::valid(Transport::ud, Opcode::congestion_notification));
  CHECK_FALSE(ib::link::carries_payload(Opcode::congestion_notification));
}

TEST_CASE("ib::link::valid: UC has no READ, atomics or ACKs and UD has only SEND Only", "[link][quick]") {
  CHECK(ib::link::valid(Transport::uc, Opcode::rdma_write_middle));
  CHECK_FALSE(ib::link::valid(Transport::uc, Opcode::rdma_read_request));
  CHECK_FALSE(ib::link::valid(Transport::uc, Opcode::acknowledge));
  CHECK_FALSE(ib::link::valid(Transport::uc, Opcode::fetch_add));
  CHECK(ib::link::valid(Transport::ud, Opcode::send_only));
  CHECK(ib::link::valid(Transport::ud, Opcode::send_only_with_immediate));
  CHECK_FALSE(ib::link::valid(Transport::ud, Opcode::send_first));
  CHECK_FALSE(ib::link::valid(Transport::ud, Opcode::rdma_write_only));
  CHECK(ib::link::valid(Transport::rc, Opcode::compare_swap));
  CHECK_FALSE(ib::link::carries_payload(Opcode::rdma_read_request));
  CHECK(ib::link::carries_payload(Opcode::rdma_read_response_middle));
}
