// Congestion control (IBA A10) in the full HCA model, between two hosts on one switch. The switch does not mark:
// the responder's test hook (Hca::mark_next_received_fecn) marks requests FECN as they arrive, as a congested switch
// would, so that each test knows which packet carried it.
//   responder  an RC request marked FECN gets an ACK with BECN, at once even when it asked for none; UC and UD
//              requests get a CNP back to their source QP;
//   requester  the BECN raises the flow's CCTI; a throttled QP's next request packet is built no earlier than the
//              end of the previous one on the wire plus table[CCTI] x T_packet: each unit of the multiplier delays
//              a message of n packets by exactly the n - 1 packet times between them;
//   per QP     another QP of the same host is not throttled; per SL, every QP of the SL is;
//   ACKs       a throttled QP's ACKs (as a responder) leave at once.
#include <array>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "models/link/congestion.h"
#include "tests/support/hca_cluster.h"

using namespace ib;
using testing::QpAddress;

namespace {

constexpr sim::Time ns(std::int64_t n) {
  return sim::Time::from_ns(n);
}
constexpr sim::Time ms(std::int64_t n) {
  return sim::Time::from_ms(n);
}

struct Side {
  verbs::QpType type = verbs::QpType::rc;
  std::uint32_t cq = 0;
  std::array<std::uint32_t, 2> qp{};
  std::uint64_t buffer = 0;
  std::array<QpAddress, 2> address{};
};

constexpr std::uint32_t buffer_bytes = 64 * 1024;
constexpr std::uint32_t ud_qkey = 0x1234;

/// A CQ, two QPs of `type` and a buffer, at time 0; then RTR/RTS at 1 ns towards the peer's QPs of the same index.
void open(host::Context& ctx, Side& s, verbs::QpType type) {
  s.type = type;
  s.cq = ctx.create_cq(1024);
  for (std::size_t i = 0; i < 2; ++i) {
    s.qp[i] = ctx.create_qp(type, {}, s.cq, s.cq);
    s.address[i] = {ctx.lid(), s.qp[i]};
  }
  s.buffer = ctx.memory().allocate(buffer_bytes);
}
void connect(host::Context& ctx, const Side& me, const Side& peer) {
  ctx.program().sleep_until(ns(1));
  for (std::size_t i = 0; i < 2; ++i) {
    verbs::QpAttr attr;
    attr.path_mtu = verbs::Mtu::mtu4096;
    if (me.type == verbs::QpType::ud) {
      attr.qkey = ud_qkey;
      attr.path_mtu = verbs::Mtu::mtu2048;
    } else {
      attr.dest_lid = peer.address[i].lid;
      attr.dest_qpn = peer.address[i].qpn;
    }
    ctx.connect_qp(me.qp[i], attr);
  }
}

verbs::SendWr write_wr(std::uint64_t id, const Side& from, std::uint32_t length, const Side& to) {
  verbs::SendWr wr;
  wr.wr_id = id;
  wr.opcode = verbs::WrOpcode::rdma_write;
  wr.local_address = from.buffer;
  wr.length_bytes = length;
  wr.remote_address = to.buffer;
  return wr;
}

/// Waits for one completion on the side's CQ; its status.
verbs::WcStatus wait_one(host::Context& ctx, const Side& s) {
  std::array<verbs::WorkCompletion, 1> wc{};
  const int n = ctx.wait_cq(s.cq, wc, ctx.now() + ms(1));
  return n == 1 ? wc[0].status : verbs::WcStatus::wr_flush_err;
}

/// A setting that throttles SL 0 from the first BECN on: CCTI 1 holds table[1] = (shift 0, `multiplier`), and the
/// CCTI never drops (no CCTI_Timer).
link::cc::CaSetting throttling(std::uint16_t multiplier, bool per_sl = false) {
  link::cc::CaSetting s;
  s.enabled = true;
  s.per_sl = per_sl;
  s.sl_mask = 1;
  s.ccti_increase = 1;
  s.trigger_threshold = 1;
  s.table = {{0, 0}, {0, multiplier}};
  return s;
}
host::ClusterOptions with(const link::cc::CaSetting& setting) {
  host::ClusterOptions o;
  o.congestion_ca = setting;
  return o;
}

/// RC: h1 WRITEs one packet to h2 on its QP 0, marked FECN on arrival when `mark`; once it completes, a WRITE of
/// four 4 KiB packets on QP `second_qp`. What the second took, from post to completion, and the hosts' counters.
struct TwoWrites {
  sim::Time second;
  link::cc::CaCounters h1, h2;
};
TwoWrites two_writes(const host::ClusterOptions& options, bool mark, std::size_t second_qp) {
  testing::TestCluster c(testing::star_topology(2), options);
  Side a, b;
  TwoWrites out;
  c->spawn("h1", "requester", [&](host::Context& ctx) {
    open(ctx, a, verbs::QpType::rc);
    connect(ctx, a, b);
    REQUIRE(ctx.post_send(a.qp[0], write_wr(1, a, 1000, b)).ok());
    REQUIRE(wait_one(ctx, a) == verbs::WcStatus::success);
    const sim::Time posted = ctx.now();
    REQUIRE(ctx.post_send(a.qp[second_qp], write_wr(2, a, 4 * 4096, b)).ok());
    REQUIRE(wait_one(ctx, a) == verbs::WcStatus::success);
    out.second = ctx.now() - posted;
  });
  c->spawn("h2", "responder", [&](host::Context& ctx) {
    open(ctx, b, verbs::QpType::rc);
    connect(ctx, b, a);
  });
  if (mark)
    c->host("h2").hca->mark_next_received_fecn(1);
  c->run();
  CHECK(c->check_invariants() == "");
  out.h1 = c->host("h1").hca->congestion_counters();
  out.h2 = c->host("h2").hca->congestion_counters();
  return out;
}

/// The packet times between the four packets of the second WRITE: after its FIRST and two MIDDLEs.
sim::Time gaps_of_second_write() {
  testing::TestCluster c(testing::star_topology(2));
  const sim::Rate rate = c->host("h1").hca->port(1).link().data_rate;
  return sim::transfer_time(link::wire_bytes(link::Transport::rc, link::Opcode::rdma_write_first, 4096, false), rate) +
         sim::transfer_time(link::wire_bytes(link::Transport::rc, link::Opcode::rdma_write_middle, 4096, false), rate) *
             2;
}

} // namespace

TEST_CASE("congestion control: a FECN-marked RC request gets an ACK with BECN, which raises its source QP's CCTI",
          "[hca][congestion]") {
  const TwoWrites r = two_writes(with(throttling(1)), true, 0);
  CHECK(r.h2.fecn_received == 1);
  CHECK(r.h2.becn_sent == 1);
  CHECK(r.h1.becn_received == 1);
  CHECK(r.h1.max_ccti == 1);
  CHECK(r.h1.trigger_events == 1);
  // The second WRITE's first three packets were each followed by the delay; its last one too, with nothing after.
  CHECK(r.h1.throttled_packets == 4);
  CHECK(r.h1.fecn_received == 0);
  // Without a mark nothing happens; CC off counts nothing.
  const TwoWrites unmarked = two_writes(with(throttling(1)), false, 0);
  CHECK(unmarked.h1.becn_received + unmarked.h2.becn_sent + unmarked.h1.throttled_packets == 0);
  CHECK(unmarked.second == two_writes({}, false, 0).second);
}

TEST_CASE("congestion control: a marked RC packet that asked for no ACK is acknowledged at once with BECN",
          "[hca][congestion]") {
  testing::TestCluster c(testing::star_topology(2), with(throttling(1)));
  Side a, b;
  c->spawn("h1", "requester", [&](host::Context& ctx) {
    open(ctx, a, verbs::QpType::rc);
    connect(ctx, a, b);
    REQUIRE(ctx.post_send(a.qp[0], write_wr(1, a, 8 * 4096, b)).ok()); // only its LAST asks for an ACK
    REQUIRE(wait_one(ctx, a) == verbs::WcStatus::success);
  });
  c->spawn("h2", "responder", [&](host::Context& ctx) {
    open(ctx, b, verbs::QpType::rc);
    connect(ctx, b, a);
  });
  c->host("h2").hca->mark_next_received_fecn(1); // its FIRST
  c->run();
  CHECK(c->host("h2").hca->congestion_counters().becn_sent == 1);
  CHECK(c->host("h1").hca->congestion_counters().becn_received == 1);
  // Per QP too: the one that was marked, and the one the BECN came back to; not their neighbours.
  CHECK(c->host("h2").hca->qp_counters(b.qp[0]).fecn_received == 1);
  CHECK(c->host("h2").hca->qp_counters(b.qp[1]).fecn_received == 0);
  CHECK(c->host("h1").hca->qp_counters(a.qp[0]).becn_received == 1);
  CHECK(c->host("h1").hca->qp_counters(a.qp[1]).becn_received == 0);
  // Throttled from the packet after the BECN on: fewer than the eight.
  CHECK(c->host("h1").hca->congestion_counters().throttled_packets > 0);
  CHECK(c->host("h1").hca->congestion_counters().throttled_packets < 8);
  CHECK(c->check_invariants() == "");
}

TEST_CASE("congestion control: a throttled QP's next request packet leaves exactly the injection delay later",
          "[hca][congestion]") {
  // table[1] = (0, m): after each packet the QP waits m x T_packet of that packet. One unit more of m delays the
  // four-packet WRITE by exactly its three packet times between packets, to the picosecond.
  const sim::Time gaps = gaps_of_second_write();
  const sim::Time m1 = two_writes(with(throttling(1)), true, 0).second;
  const sim::Time m2 = two_writes(with(throttling(2)), true, 0).second;
  const sim::Time m5 = two_writes(with(throttling(5)), true, 0).second;
  INFO("m=1 " << m1.ns() << " ns, m=2 " << m2.ns() << " ns, m=5 " << m5.ns() << " ns, gaps " << gaps.ns() << " ns");
  CHECK(m2 - m1 == gaps);
  CHECK(m5 - m1 == gaps * 4);
  // Against no congestion control at all, the delays come on top of a pipeline that no longer overlaps the build
  // of one packet with the sending of the one before: at least the delays.
  const sim::Time off = two_writes({}, true, 0).second;
  CHECK(m1 - off >= gaps);
}

TEST_CASE("congestion control: per QP another QP of the host is not throttled, per SL every QP of the SL is",
          "[hca][congestion]") {
  const sim::Time gaps = gaps_of_second_write();
  // Per QP: the second WRITE on the other QP takes what it takes without congestion control.
  const sim::Time off = two_writes({}, true, 1).second;
  const TwoWrites per_qp = two_writes(with(throttling(1)), true, 1);
  CHECK(per_qp.second == off);
  CHECK(per_qp.h1.throttled_packets == 0);
  // Per SL: the SL's CCTI throttles it as it would the marked QP.
  const TwoWrites sl1 = two_writes(with(throttling(1, true)), true, 1);
  const TwoWrites sl2 = two_writes(with(throttling(2, true)), true, 1);
  CHECK(sl1.h1.throttled_packets == 4);
  CHECK(sl2.second - sl1.second == gaps);
  CHECK(sl1.second - off >= gaps);
}

TEST_CASE("congestion control: a throttled QP's ACKs are not delayed", "[hca][congestion]") {
  // h2 WRITEs to h1 first, marked at h1: h2's QP is throttled by 1000 packet times (about 330 us) from then on.
  // Then h1 WRITEs to h2 on the same QP pair: h2's ACK still leaves at once.
  const auto latency = [](bool mark) {
    testing::TestCluster c(testing::star_topology(2), with(throttling(1000)));
    Side a, b;
    sim::Time took;
    bool throttled_b_sent = false;
    c->spawn("h1", "requester", [&](host::Context& ctx) {
      open(ctx, a, verbs::QpType::rc);
      connect(ctx, a, b);
      ctx.program().sleep_until(sim::Time::from_us(20)); // h2's WRITE and its ACK are done
      const sim::Time posted = ctx.now();
      REQUIRE(ctx.post_send(a.qp[0], write_wr(1, a, 1000, b)).ok());
      REQUIRE(wait_one(ctx, a) == verbs::WcStatus::success);
      took = ctx.now() - posted;
    });
    c->spawn("h2", "responder", [&](host::Context& ctx) {
      open(ctx, b, verbs::QpType::rc);
      connect(ctx, b, a);
      REQUIRE(ctx.post_send(b.qp[0], write_wr(7, b, 1000, a)).ok());
      throttled_b_sent = wait_one(ctx, b) == verbs::WcStatus::success;
    });
    if (mark)
      c->host("h1").hca->mark_next_received_fecn(1);
    c->run();
    CHECK(throttled_b_sent);
    CHECK(c->host("h2").hca->congestion_counters().max_ccti == (mark ? 1 : 0));
    CHECK(c->check_invariants() == "");
    return took;
  };
  CHECK(latency(true) == latency(false));
}

TEST_CASE("congestion control: FECN on UC and UD requests comes back in a CNP to the source QP", "[hca][congestion]") {
  for (const verbs::QpType type : {verbs::QpType::uc, verbs::QpType::ud}) {
    DYNAMIC_SECTION((type == verbs::QpType::uc ? "UC" : "UD")) {
      testing::TestCluster c(testing::star_topology(2), with(throttling(1)));
      Side a, b;
      c->spawn("h1", "sender", [&](host::Context& ctx) {
        open(ctx, a, type);
        connect(ctx, a, b);
        ctx.program().sleep_until(sim::Time::from_us(5)); // the receiver's RECVs are posted
        for (std::uint64_t id = 1; id <= 3; ++id) {
          verbs::SendWr wr = write_wr(id, a, 1000, b);
          if (type == verbs::QpType::ud) {
            wr.opcode = verbs::WrOpcode::send;
            wr.ah.dlid = b.address[1].lid;
            wr.remote_qpn = b.address[1].qpn;
            wr.remote_qkey = ud_qkey;
          }
          REQUIRE(ctx.post_send(a.qp[1], wr).ok());
          REQUIRE(wait_one(ctx, a) == verbs::WcStatus::success);
          ctx.program().sleep_until(ctx.now() + sim::Time::from_us(5)); // a CNP would be in by then
        }
      });
      c->spawn("h2", "receiver", [&](host::Context& ctx) {
        open(ctx, b, type);
        connect(ctx, b, a);
        if (type == verbs::QpType::ud)
          for (std::uint64_t id = 0; id < 3; ++id)
            REQUIRE(ctx.post_recv(b.qp[1], verbs::RecvWr{100 + id, b.buffer + id * 4096, 4096}).ok());
      });
      c->host("h2").hca->mark_next_received_fecn(1);
      c->run();
      const link::cc::CaCounters& h1 = c->host("h1").hca->congestion_counters();
      const link::cc::CaCounters& h2 = c->host("h2").hca->congestion_counters();
      CHECK(h2.fecn_received == 1);
      CHECK(h2.becn_sent == 1);
      CHECK(h1.becn_received == 1);
      CHECK(h1.max_ccti == 1);
      CHECK(h1.throttled_packets >= 1);                                     // the datagrams after the CNP
      CHECK(c->host("h1").hca->qp_counters(a.qp[1]).packets_received == 0); // a CNP is no request
      CHECK(c->host("h2").hca->qp_counters(b.qp[1]).messages_received == 3);
      CHECK(c->check_invariants() == "");
    }
  }
}
