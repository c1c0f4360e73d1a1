// Out-of-order data placement (QpCaps::out_of_order, mlx5dv's MLX5DV_QP_CREATE_OOO_DP) in the full HCA model, between
// two hosts on one switch. The fabric keeps order; the receiving HCA's test hook (Hca::swap_next_received) takes a
// chosen packet after the one behind it, as adaptive routing would deliver them.
//   responder  a request ahead of a missing PSN is kept, not NAKed, and taken in PSN order once the gap closes:
//              no sequence NAK, no retransmission, the data in place, receive completions in order;
//   requester  a READ response ahead of a missing one is kept, not dropped: no transport timeout;
//   without    the same swaps cost a sequence NAK and go-back-N (WRITE, SEND) or a timeout (READ), and still complete;
//   refusals   UD, or a device without the feature (ConnectX-3, -4: out_of_order_window_packets 0).
#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/hca_cluster.h"

using namespace ib;
using testing::bytes_at;
using testing::collect;
using testing::fill;
using verbs::WcStatus;

namespace {

constexpr sim::Time ns(std::int64_t n) {
  return sim::Time::from_ns(n);
}
constexpr sim::Time ms(std::int64_t n) {
  return sim::Time::from_ms(n);
}

constexpr std::uint32_t message_bytes = 4 * 4096; // four packets at a 4 KiB MTU

enum class Op { write, read, send };

struct Outcome {
  std::vector<verbs::WorkCompletion> sent, received; ///< the requester's and (SEND) the responder's completions
  hca::QpCounters requester, responder;
  bool data_equal = false; ///< every message's bytes arrived where they belong
};

/// h1 posts `messages` operations `op` of four packets each towards h2 on one RC QP pair (created with
/// out-of-order placement when `out_of_order`), its transport timeout 32.8 us. `swaps_at_h2` and `swaps_at_h1`
/// arm the hosts' test hook before anything is sent.
Outcome transfer(Op op, bool out_of_order, std::uint32_t messages, std::uint32_t swaps_at_h2,
                 std::uint32_t swaps_at_h1) {
  testing::TestCluster c(testing::star_topology(2, "connectx5-edr"), testing::verifying());
  const std::uint32_t bytes = messages * message_bytes;
  std::uint32_t qp1 = 0, qp2 = 0, cq1 = 0, cq2 = 0;
  std::uint64_t buf1 = 0, buf2 = 0;
  std::uint16_t lid1 = 0, lid2 = 0;
  Outcome out;
  verbs::QpCaps caps;
  caps.out_of_order = out_of_order;
  c->spawn("h1", "requester", [&](host::Context& ctx) {
    cq1 = ctx.create_cq(1024);
    qp1 = ctx.create_qp(verbs::QpType::rc, caps, cq1, cq1);
    buf1 = ctx.memory().allocate(bytes);
    lid1 = ctx.lid();
    fill(ctx.memory(), buf1, bytes, 5);
    ctx.program().sleep_until(ns(1));
    verbs::QpAttr attr = testing::attr_to({lid2, qp2});
    attr.timeout = 3;
    ctx.connect_qp(qp1, attr);
    ctx.program().sleep_until(ns(10));
    std::vector<verbs::SendWr> wrs(messages);
    for (std::uint32_t m = 0; m < messages; ++m) {
      verbs::SendWr& wr = wrs[m];
      wr.wr_id = m + 1;
      wr.opcode = op == Op::write  ? verbs::WrOpcode::rdma_write
                  : op == Op::read ? verbs::WrOpcode::rdma_read
                                   : verbs::WrOpcode::send;
      wr.local_address = buf1 + m * message_bytes;
      wr.length_bytes = message_bytes;
      wr.remote_address = buf2 + m * message_bytes;
    }
    REQUIRE(ctx.post_send(qp1, wrs).ok());
    out.sent = collect(ctx, cq1, messages, ms(2));
  });
  c->spawn("h2", "responder", [&](host::Context& ctx) {
    cq2 = ctx.create_cq(1024);
    qp2 = ctx.create_qp(verbs::QpType::rc, caps, cq2, cq2);
    buf2 = ctx.memory().allocate(bytes);
    lid2 = ctx.lid();
    fill(ctx.memory(), buf2, bytes, 9);
    ctx.program().sleep_until(ns(1));
    ctx.connect_qp(qp2, testing::attr_to({lid1, qp1}));
    if (op == Op::send) {
      for (std::uint32_t m = 0; m < messages; ++m)
        REQUIRE(ctx.post_recv(qp2, verbs::RecvWr{100 + m, buf2 + m * message_bytes, message_bytes}).ok());
      out.received = collect(ctx, cq2, messages, ms(2));
    }
  });
  c->host("h2").hca->swap_next_received(swaps_at_h2);
  c->host("h1").hca->swap_next_received(swaps_at_h1);
  c->run();
  CHECK(c->check_invariants() == "");
  out.requester = c->host("h1").hca->qp_counters(qp1);
  out.responder = c->host("h2").hca->qp_counters(qp2);
  INFO("requester: received " << out.requester.packets_received << " ooo " << out.requester.packets_out_of_order
                              << " dropped " << out.requester.dropped << " dup " << out.requester.duplicates_received
                              << " timeouts " << out.requester.timeouts << " retx "
                              << out.requester.retransmitted_packets << "; responder: received "
                              << out.responder.packets_received << " ooo " << out.responder.packets_out_of_order
                              << " naks " << out.responder.sequence_naks_sent << " dropped " << out.responder.dropped
                              << " dup " << out.responder.duplicates_received);
  CHECK(out.sent.size() == messages);
  out.data_equal = bytes_at(*c->host("h1").memory, buf1, bytes) == bytes_at(*c->host("h2").memory, buf2, bytes);
  return out;
}

void check_all_succeeded_in_order(const std::vector<verbs::WorkCompletion>& wcs, std::uint32_t messages,
                                  std::uint64_t first_id) {
  REQUIRE(wcs.size() == messages);
  for (std::uint32_t m = 0; m < messages; ++m) {
    CHECK(wcs[m].status == WcStatus::success);
    CHECK(wcs[m].wr_id == first_id + m); // verbs order, whatever order the packets came in
  }
}

} // namespace

TEST_CASE("out-of-order placement: WRITE packets that arrive swapped are taken without a NAK or a retransmission",
          "[hca][out_of_order]") {
  // Three swaps over three WRITEs: FIRST after MIDDLE of the first message, then later pairs.
  const Outcome ooo = transfer(Op::write, true, 3, 3, 0);
  check_all_succeeded_in_order(ooo.sent, 3, 1);
  CHECK(ooo.data_equal);
  CHECK(ooo.responder.packets_out_of_order == 3);
  CHECK(ooo.responder.reorder_depth_max == 1);
  CHECK(ooo.responder.sequence_naks_sent == 0);
  CHECK(ooo.responder.rc_messages_accepted == 3);
  CHECK(ooo.responder.packets_received == 12); // each once, though three were looked at twice
  CHECK(ooo.requester.retransmitted_packets == 0);
  CHECK(ooo.requester.timeouts == 0);

  // In order, one such swap is a sequence error: go-back-N resends, and everything still arrives once.
  const Outcome in_order = transfer(Op::write, false, 3, 1, 0);
  check_all_succeeded_in_order(in_order.sent, 3, 1);
  CHECK(in_order.data_equal);
  CHECK(in_order.responder.packets_out_of_order == 0);
  CHECK(in_order.responder.sequence_naks_sent >= 1);
  CHECK(in_order.requester.retransmitted_packets > 0);
  CHECK(in_order.responder.rc_messages_accepted == 3);
}

TEST_CASE("out-of-order placement: a SEND's packets swapped land in its receive WQE, completions in posting order",
          "[hca][out_of_order]") {
  const Outcome ooo = transfer(Op::send, true, 2, 2, 0);
  check_all_succeeded_in_order(ooo.sent, 2, 1);
  check_all_succeeded_in_order(ooo.received, 2, 100);
  CHECK(ooo.data_equal);
  CHECK(ooo.responder.packets_out_of_order == 2);
  CHECK(ooo.responder.sequence_naks_sent == 0);
  CHECK(ooo.requester.retransmitted_packets == 0);
}

TEST_CASE("out-of-order placement: READ responses that arrive swapped are kept by the requester, no timeout",
          "[hca][out_of_order]") {
  const Outcome ooo = transfer(Op::read, true, 2, 0, 2);
  check_all_succeeded_in_order(ooo.sent, 2, 1);
  CHECK(ooo.data_equal);
  CHECK(ooo.requester.packets_out_of_order == 2);
  CHECK(ooo.requester.timeouts == 0);
  CHECK(ooo.requester.dropped == 0);
  // In order, a response ahead of a gap is dropped with every one after it, and the timer asks again: the next
  // READ, answered in full meanwhile, does not stop it.
  const Outcome in_order = transfer(Op::read, false, 2, 0, 1);
  check_all_succeeded_in_order(in_order.sent, 2, 1);
  CHECK(in_order.data_equal);
  CHECK(in_order.requester.timeouts >= 1);
  CHECK(in_order.requester.dropped > 0);
}

TEST_CASE("out-of-order placement: refused for UD QPs and by devices without it", "[hca][out_of_order]") {
  verbs::QpCaps caps;
  caps.out_of_order = true;
  SECTION("UD") {
    testing::TestCluster c(testing::star_topology(2, "connectx5-edr"));
    hca::Hca& hca = *c->host("h1").hca;
    const std::uint32_t cq = hca.create_cq(16, nullptr);
    CHECK_THROWS_AS(hca.create_qp(verbs::QpType::ud, caps, cq, cq), std::invalid_argument);
    CHECK_NOTHROW(hca.create_qp(verbs::QpType::rc, caps, cq, cq));
  }
  SECTION("ConnectX-4 (out_of_order_window_packets 0)") {
    testing::TestCluster c(testing::star_topology(2, "connectx4-edr"));
    hca::Hca& hca = *c->host("h1").hca;
    const std::uint32_t cq = hca.create_cq(16, nullptr);
    CHECK_THROWS_AS(hca.create_qp(verbs::QpType::rc, caps, cq, cq), std::invalid_argument);
  }
}
