// The transports between two hosts on one switch, in verification mode (host memory holds bytes), with losses
// injected at the responder (Hca::drop_next_received):
//   RC  go-back-N: a packet lost mid-message is recovered through a sequence NAK, a lost last packet through the
//       retry timer; every WR completes once and the bytes are right; retries exhausted fail the first WR with
//       retry_exc_err, flush the rest and leave the QP in error; RNR NAK timers decode as IBA Table 45 says; a SEND
//       before its RECV is RNR NAKed and retried after the advertised wait, or fails with rnr_retry_exc_err once
//       rnr_retry is spent; max_rd_atomic bounds the READs in flight;
//   UD  a datagram lands after 40 bytes of GRH space with its source QP and LID, one above the MTU is refused, one
//       with no RECV is dropped silently while its sender completes, and nothing is acknowledged;
//   UC  no ACKs and no retries: a lost packet loses its message only, the next one arrives intact; when the lost
//       packet is a FIRST, the rest of its message (no address of its own) lands nowhere;
//   a WRITE or READ longer than the transport timeout completes, through AckReqs inside it or its responses;
//   and a QP moved to ERROR flushes its outstanding send WRs and posted RECVs.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/hca_cluster.h"

using namespace ib;
using testing::bytes_at;
using testing::collect;
using testing::fill;
using testing::QpAddress;
using testing::verifying;
using verbs::WcStatus;

namespace {

constexpr sim::Time ns(std::int64_t n) {
  return sim::Time::from_ns(n);
}
constexpr sim::Time us(std::int64_t n) {
  return sim::Time::from_us(n);
}
constexpr sim::Time ms(std::int64_t n) {
  return sim::Time::from_ms(n);
}

/// The first offset where the two ranges differ, or -1 when they are equal.
std::int64_t first_difference(pcie::HostMemory& m1, std::uint64_t a1, pcie::HostMemory& m2, std::uint64_t a2,
                              std::uint32_t size) {
  const std::vector<std::uint8_t> x = bytes_at(m1, a1, size);
  const std::vector<std::uint8_t> y = bytes_at(m2, a2, size);
  for (std::uint32_t i = 0; i < size; ++i)
    if (x[i] != y[i])
      return i;
  return -1;
}
/// The first offset of the range holding a nonzero byte, or -1 when it is all zero (never written).
std::int64_t first_nonzero(pcie::HostMemory& memory, std::uint64_t address, std::uint32_t size) {
  const std::vector<std::uint8_t> x = bytes_at(memory, address, size);
  for (std::uint32_t i = 0; i < size; ++i)
    if (x[i] != 0)
      return i;
  return -1;
}

/// One side of a connection: a CQ for sends and receives, a QP, a buffer, and where the peer finds the QP.
struct Endpoint {
  verbs::QpType type = verbs::QpType::rc;
  std::uint32_t cq = 0;
  std::uint32_t qp = 0;
  std::uint64_t buffer = 0;
  QpAddress address;
};

/// Creates the CQ, a QP of `type` (in RESET) and a buffer, at time 0 before either side connects.
void open(host::Context& ctx, Endpoint& e, verbs::QpType type, std::uint32_t buffer_bytes, verbs::QpCaps caps = {}) {
  e.type = type;
  e.cq = ctx.create_cq(1024);
  e.qp = ctx.create_qp(type, caps, e.cq, e.cq);
  e.buffer = ctx.memory().allocate(buffer_bytes);
  e.address = {ctx.lid(), e.qp};
}

/// RESET→INIT→RTR→RTS at 1 ns, when both sides have opened; RC and UC towards `peer`, UD with no destination.
void connect(host::Context& ctx, const Endpoint& me, const Endpoint& peer, verbs::QpAttr attr = {}) {
  if (ctx.now() < ns(1))
    ctx.program().sleep_until(ns(1));
  if (me.type != verbs::QpType::ud) {
    attr.dest_lid = peer.address.lid;
    attr.dest_qpn = peer.address.qpn;
  }
  ctx.connect_qp(me.qp, attr);
}

/// Loses the packet after the first `n` this host's QP `qpn` receives: waits until they are in (polling every 10 ns,
/// well inside the ~330 ns a 4 KiB packet takes at EDR), then arms the fault. The packets counted when it did.
std::uint64_t lose_packet_after(host::Context& ctx, std::uint32_t qpn, std::uint64_t n) {
  const sim::Time deadline = ctx.now() + ms(1);
  while (ctx.hca().qp_counters(qpn).packets_received < n && ctx.now() < deadline)
    ctx.program().sleep_until(ctx.now() + ns(10));
  ctx.hca().drop_next_received(1);
  return ctx.hca().qp_counters(qpn).packets_received;
}

/// Waits `linger`, then appends whatever completions came in the meantime (a correct model adds none).
void collect_stragglers(host::Context& ctx, std::uint32_t cq, sim::Time linger,
                        std::vector<verbs::WorkCompletion>& into) {
  ctx.program().sleep_until(ctx.now() + linger);
  std::array<verbs::WorkCompletion, 16> wc{};
  for (int n = ctx.poll_cq(cq, wc); n > 0; n = ctx.poll_cq(cq, wc))
    into.insert(into.end(), wc.begin(), wc.begin() + n);
}

std::map<std::uint64_t, int> count_by_wr_id(const std::vector<verbs::WorkCompletion>& wcs) {
  std::map<std::uint64_t, int> counts;
  for (const verbs::WorkCompletion& wc : wcs)
    ++counts[wc.wr_id];
  return counts;
}

verbs::SendWr write_wr(std::uint64_t id, std::uint64_t local, std::uint32_t length, std::uint64_t remote) {
  verbs::SendWr wr;
  wr.wr_id = id;
  wr.opcode = verbs::WrOpcode::rdma_write;
  wr.local_address = local;
  wr.length_bytes = length;
  wr.remote_address = remote;
  return wr;
}
verbs::SendWr send_wr(std::uint64_t id, std::uint64_t local, std::uint32_t length) {
  verbs::SendWr wr;
  wr.wr_id = id;
  wr.opcode = verbs::WrOpcode::send;
  wr.local_address = local;
  wr.length_bytes = length;
  return wr;
}
verbs::SendWr read_wr(std::uint64_t id, std::uint64_t local, std::uint32_t length, std::uint64_t remote) {
  verbs::SendWr wr = write_wr(id, local, length, remote);
  wr.opcode = verbs::WrOpcode::rdma_read;
  return wr;
}

/// The cluster's invariants apart from the byte balance: the fabric idle with its credits back, every HCA
/// quiescent. "" or what broke.
std::string quiescence(host::Cluster& c) {
  std::string problems = c.fabric().check_invariants(true);
  for (std::size_t i = 0; i < c.host_count(); ++i) {
    const std::string p = c.host(i).hca->check_quiescent();
    if (!p.empty())
      problems += c.host(i).name + ": " + p + "\n";
  }
  return problems;
}

} // namespace

// ---- RC: go-back-N.

TEST_CASE("RC go-back-N recovers a packet lost mid-message through a sequence NAK", "[hca][transport]") {
  testing::TestCluster c(testing::star_topology(2), verifying());
  Endpoint a, b;
  constexpr std::uint32_t area = 128 * 1024;
  std::vector<verbs::WorkCompletion> sent, received;
  std::uint64_t received_before_drop = 0;
  c->spawn("h1", "requester", [&](host::Context& ctx) {
    open(ctx, a, verbs::QpType::rc, area);
    fill(ctx.memory(), a.buffer, area, 5);
    verbs::QpAttr attr;
    attr.timeout = 10; // 4.2 ms, far beyond the recovery: only the NAK can bring it
    connect(ctx, a, b, attr);
    const std::vector<verbs::SendWr> wrs = {
        write_wr(0, a.buffer, 65536, b.buffer),                  // 16 packets
        write_wr(1, a.buffer + 65536, 10000, b.buffer + 65536),  // 3
        send_wr(2, a.buffer + 80000, 5000),                      // 2, into the RECV at b + 90000
        write_wr(3, a.buffer + 100000, 3000, b.buffer + 100000), // 1
    };
    REQUIRE(ctx.post_send(a.qp, wrs).ok());
    sent = collect(ctx, a.cq, wrs.size(), ms(2));
    collect_stragglers(ctx, a.cq, us(50), sent);
  });
  c->spawn("h2", "responder", [&](host::Context& ctx) {
    open(ctx, b, verbs::QpType::rc, area);
    connect(ctx, b, a);
    REQUIRE(ctx.post_recv(b.qp, verbs::RecvWr{100, b.buffer + 90000, 8192}).ok());
    // Five packets of the 64 KiB WRITE in, then the next one is lost.
    received_before_drop = lose_packet_after(ctx, b.qp, 5);
    received = collect(ctx, b.cq, 1, ms(2));
    collect_stragglers(ctx, b.cq, us(50), received);
  });
  c->run();

  CHECK(received_before_drop == 5);
  CHECK(c->host("h2").hca->packets_dropped_by_fault() == 1);
  // Every WR completes once, successfully.
  CHECK(sent.size() == 4);
  std::map<std::uint64_t, int> counts = count_by_wr_id(sent);
  for (std::uint64_t id = 0; id < 4; ++id)
    CHECK(counts[id] == 1);
  for (const verbs::WorkCompletion& wc : sent)
    CHECK(wc.status == WcStatus::success);
  REQUIRE(received.size() == 1);
  CHECK(received[0].wr_id == 100);
  CHECK(received[0].status == WcStatus::success);
  CHECK(received[0].byte_len == 5000);
  // The bytes are where they belong.
  pcie::HostMemory& m1 = *c->host("h1").memory;
  pcie::HostMemory& m2 = *c->host("h2").memory;
  CHECK(first_difference(m2, b.buffer, m1, a.buffer, 65536) == -1);
  CHECK(first_difference(m2, b.buffer + 65536, m1, a.buffer + 65536, 10000) == -1);
  CHECK(first_difference(m2, b.buffer + 90000, m1, a.buffer + 80000, 5000) == -1);
  CHECK(first_difference(m2, b.buffer + 100000, m1, a.buffer + 100000, 3000) == -1);
  // Recovered by go-back-N from the NAK, not by the timer.
  const hca::QpCounters& q1 = c->host("h1").hca->qp_counters(a.qp);
  const hca::QpCounters& q2 = c->host("h2").hca->qp_counters(b.qp);
  CHECK(q1.sequence_naks_received >= 1);
  CHECK(q1.retransmitted_packets > 0);
  CHECK(q1.timeouts == 0);
  CHECK(q2.sequence_naks_sent >= 1);
  CHECK(q2.sequence_naks_sent == q1.sequence_naks_received);
  // Placed bytes equal completed ones: nothing was written twice.
  CHECK(c->check_invariants() == "");
}

TEST_CASE("RC go-back-N recovers a lost last packet through the retry timer", "[hca][transport]") {
  testing::TestCluster c(testing::star_topology(2), verifying());
  Endpoint a, b;
  constexpr std::uint32_t size = 65536;
  std::vector<verbs::WorkCompletion> sent;
  sim::Time completed_at;
  std::uint64_t received_before_drop = 0;
  c->spawn("h1", "requester", [&](host::Context& ctx) {
    open(ctx, a, verbs::QpType::rc, size);
    fill(ctx.memory(), a.buffer, size, 21);
    verbs::QpAttr attr;
    attr.timeout = 4; // 4.096 us x 2^4 = 65.5 us
    connect(ctx, a, b, attr);
    REQUIRE(ctx.post_send(a.qp, write_wr(7, a.buffer, size, b.buffer)).ok());
    sent = collect(ctx, a.cq, 1, ms(2));
    completed_at = ctx.now();
    collect_stragglers(ctx, a.cq, us(200), sent);
  });
  c->spawn("h2", "responder", [&](host::Context& ctx) {
    open(ctx, b, verbs::QpType::rc, size);
    connect(ctx, b, a);
    // 15 of the 16 packets in, then the last one is lost: no later packet reveals the gap.
    received_before_drop = lose_packet_after(ctx, b.qp, 15);
  });
  c->run();

  CHECK(received_before_drop == 15);
  CHECK(c->host("h2").hca->packets_dropped_by_fault() == 1);
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].wr_id == 7);
  CHECK(sent[0].status == WcStatus::success);
  CHECK(first_difference(*c->host("h2").memory, b.buffer, *c->host("h1").memory, a.buffer, size) == -1);
  const hca::QpCounters& q1 = c->host("h1").hca->qp_counters(a.qp);
  const hca::QpCounters& q2 = c->host("h2").hca->qp_counters(b.qp);
  CHECK(q1.timeouts >= 1);
  CHECK(q1.retransmitted_packets > 0);
  CHECK(q1.sequence_naks_received == 0);
  CHECK(q2.sequence_naks_sent == 0);
  // The completion waited for the timer, and not much longer.
  CHECK(completed_at.us() > 65.536);
  CHECK(completed_at.us() < 150.0);
  CHECK(c->check_invariants() == "");
}

// ---- RC: retries exhausted.

TEST_CASE("RC retries exhausted fail the first WR with retry_exc_err and flush the rest", "[hca][transport]") {
  testing::TestCluster c(testing::star_topology(2), verifying());
  c->host("h2").hca->drop_next_received(1000000); // the responder hears nothing
  Endpoint a, b;
  std::vector<verbs::WorkCompletion> sent;
  sim::Time failed_at;
  verbs::PostResult after_error;
  c->spawn("h1", "requester", [&](host::Context& ctx) {
    open(ctx, a, verbs::QpType::rc, 8192);
    fill(ctx.memory(), a.buffer, 8192, 3);
    verbs::QpAttr attr;
    attr.retry_cnt = 2;
    attr.timeout = 4; // 65.5 us
    connect(ctx, a, b, attr);
    REQUIRE(ctx.post_send(a.qp, write_wr(0, a.buffer, 1000, b.buffer)).ok());
    ctx.program().sleep_until(ctx.now() + us(10));
    const std::vector<verbs::SendWr> later = {write_wr(1, a.buffer + 1000, 1000, b.buffer + 1000),
                                              send_wr(2, a.buffer + 2000, 100)};
    REQUIRE(ctx.post_send(a.qp, later).ok());
    sent = collect(ctx, a.cq, 3, ms(5));
    failed_at = ctx.now();
    collect_stragglers(ctx, a.cq, us(200), sent);
    after_error = ctx.post_send(a.qp, write_wr(9, a.buffer, 8, b.buffer));
  });
  c->spawn("h2", "responder", [&](host::Context& ctx) {
    open(ctx, b, verbs::QpType::rc, 8192);
    connect(ctx, b, a);
  });
  c->run();

  REQUIRE(sent.size() == 3);
  CHECK(sent[0].wr_id == 0);
  CHECK(sent[0].status == WcStatus::retry_exc_err);
  CHECK(sent[1].wr_id == 1);
  CHECK(sent[1].status == WcStatus::wr_flush_err);
  CHECK(sent[2].wr_id == 2);
  CHECK(sent[2].status == WcStatus::wr_flush_err);
  hca::Hca& h1 = *c->host("h1").hca;
  CHECK(h1.qp_state(a.qp) == verbs::QpState::error);
  const hca::QpCounters& q1 = h1.qp_counters(a.qp);
  CHECK(q1.timeouts == 3); // the first try and retry_cnt = 2 retries, each timed out
  CHECK(q1.retransmitted_packets > 0);
  CHECK(failed_at.us() > 3 * 65.536);
  CHECK(failed_at.us() < 4 * 65.536);
  CHECK(after_error.error == verbs::PostError::invalid_state);
  CHECK(c->check_invariants() == "");
}

// ---- RC: messages longer than the transport timeout.

namespace {

/// One 1 MiB RC WRITE or READ (256 packets, about 84 us at EDR) from h1 to h2 under a 32.8 us transport timeout
/// (timeout 3), with `ack_request_interval_packets` set to `interval` (nullopt: the shipped profile's): its
/// completion and the requester's counters.
struct LongMessage {
  std::vector<verbs::WorkCompletion> completions;
  hca::QpCounters requester;
};
LongMessage long_message(verbs::WrOpcode opcode, std::optional<std::uint32_t> interval) {
  constexpr std::uint32_t size = 1 << 20;
  host::ClusterOptions options = verifying();
  if (interval)
    options.profiles["connectx4-edr"].push_back({"/ack_request_interval_packets", std::to_string(*interval)});
  testing::TestCluster c(testing::star_topology(2), options);
  Endpoint a, b;
  LongMessage out;
  c->spawn("h1", "requester", [&](host::Context& ctx) {
    open(ctx, a, verbs::QpType::rc, size);
    fill(ctx.memory(), a.buffer, size, 5);
    verbs::QpAttr attr;
    attr.timeout = 3; // 4.096 us x 2^3 = 32.8 us: well below the message's 84 us
    connect(ctx, a, b, attr);
    verbs::SendWr wr = write_wr(1, a.buffer, size, b.buffer);
    wr.opcode = opcode;
    REQUIRE(ctx.post_send(a.qp, wr).ok());
    out.completions = collect(ctx, a.cq, 1, ms(5));
  });
  c->spawn("h2", "responder", [&](host::Context& ctx) {
    open(ctx, b, verbs::QpType::rc, size);
    fill(ctx.memory(), b.buffer, size, 9);
    connect(ctx, b, a);
  });
  c->run();
  out.requester = c->host("h1").hca->qp_counters(a.qp);
  if (out.completions.size() == 1 && out.completions[0].status == WcStatus::success)
    CHECK(first_difference(*c->host("h2").memory, b.buffer, *c->host("h1").memory, a.buffer, size) == -1);
  return out;
}

} // namespace

TEST_CASE("RC messages that take longer than the transport timeout to send complete, since progress restarts it",
          "[hca][transport]") {
  SECTION("a WRITE asks for ACKs inside the message (the shipped profile's every 64 packets)") {
    const LongMessage m = long_message(verbs::WrOpcode::rdma_write, std::nullopt);
    REQUIRE(m.completions.size() == 1);
    CHECK(m.completions[0].status == WcStatus::success);
    CHECK(m.requester.timeouts == 0);
    CHECK(m.requester.retransmitted_packets == 0);
  }
  SECTION("asking only with the last packet, the timer expires before any ACK can come: the WRITE fails") {
    const LongMessage m = long_message(verbs::WrOpcode::rdma_write, 0);
    REQUIRE(m.completions.size() == 1);
    CHECK(m.completions[0].status == WcStatus::retry_exc_err);
    CHECK(m.requester.timeouts == 8); // the first try and retry_cnt = 7 retries
  }
  SECTION("a READ's responses in sequence restart the timer, whatever the AckReq interval") {
    const LongMessage m = long_message(verbs::WrOpcode::rdma_read, 0);
    REQUIRE(m.completions.size() == 1);
    CHECK(m.completions[0].status == WcStatus::success);
    CHECK(m.requester.timeouts == 0);
    CHECK(m.requester.retransmitted_packets == 0);
  }
}

// ---- RC: receiver not ready.

TEST_CASE("RNR NAK timer encodings follow IBA Table 45", "[hca][transport]") {
  // IBA vol 1 Table 45: 1 = 0.01 ms, 12 = 0.64 ms, 14 = 1.28 ms, 31 = 491.52 ms, 0 = 655.36 ms.
  CHECK(hca::rnr_timer_duration(1).ps() == us(10).ps());
  CHECK(hca::rnr_timer_duration(5).ps() == us(60).ps());
  CHECK(hca::rnr_timer_duration(12).ps() == us(640).ps());
  CHECK(hca::rnr_timer_duration(14).ps() == us(1280).ps());
  CHECK(hca::rnr_timer_duration(31).ps() == us(491520).ps());
  CHECK(hca::rnr_timer_duration(0).ps() == us(655360).ps());
}

TEST_CASE("RC SEND before its RECV is RNR NAKed and retried after the advertised wait until delivered",
          "[hca][transport]") {
  testing::TestCluster c(testing::star_topology(2), verifying());
  Endpoint a, b;
  constexpr std::uint32_t size = 10000; // 3 packets
  std::vector<verbs::WorkCompletion> sent, received;
  sim::Time completed_at, recv_posted_at;
  c->spawn("h1", "sender", [&](host::Context& ctx) {
    open(ctx, a, verbs::QpType::rc, 16384);
    fill(ctx.memory(), a.buffer, size, 40);
    verbs::QpAttr attr;
    attr.timeout = 10;  // 4.2 ms: the RNR wait, not the transport timer, must bring the retries
    attr.rnr_retry = 7; // forever
    connect(ctx, a, b, attr);
    REQUIRE(ctx.post_send(a.qp, send_wr(5, a.buffer, size)).ok());
    sent = collect(ctx, a.cq, 1, ms(20));
    completed_at = ctx.now();
    collect_stragglers(ctx, a.cq, us(50), sent);
  });
  c->spawn("h2", "receiver", [&](host::Context& ctx) {
    open(ctx, b, verbs::QpType::rc, 16384);
    verbs::QpAttr attr;
    attr.min_rnr_timer = 1; // 0.01 ms
    connect(ctx, b, a, attr);
    ctx.program().sleep_until(us(50));
    recv_posted_at = ctx.now();
    REQUIRE(ctx.post_recv(b.qp, verbs::RecvWr{200, b.buffer, 16384}).ok());
    received = collect(ctx, b.cq, 1, ms(20));
    collect_stragglers(ctx, b.cq, us(50), received);
  });
  c->run();

  REQUIRE(sent.size() == 1);
  CHECK(sent[0].wr_id == 5);
  CHECK(sent[0].status == WcStatus::success);
  REQUIRE(received.size() == 1);
  CHECK(received[0].wr_id == 200);
  CHECK(received[0].status == WcStatus::success);
  CHECK(received[0].byte_len == size);
  CHECK(first_difference(*c->host("h2").memory, b.buffer, *c->host("h1").memory, a.buffer, size) == -1);
  const hca::QpCounters& q1 = c->host("h1").hca->qp_counters(a.qp);
  const hca::QpCounters& q2 = c->host("h2").hca->qp_counters(b.qp);
  // One RNR NAK per try until the RECV is there: tries about every 10 us + a round trip over the first 50 us.
  CHECK(q1.rnr_naks_received >= 3);
  CHECK(q1.rnr_naks_received <= 5);
  CHECK(q2.rnr_naks_sent == q1.rnr_naks_received);
  CHECK(q1.timeouts == 0);
  // Delivered by the first try after the RECV was posted: within one RNR wait and a round trip of it.
  CHECK(completed_at > recv_posted_at);
  CHECK(completed_at.us() < recv_posted_at.us() + 10 + 10);
  CHECK(c->check_invariants() == "");
}

TEST_CASE("RC SEND that never finds a RECV fails with rnr_retry_exc_err after rnr_retry + 1 RNR NAKs",
          "[hca][transport]") {
  testing::TestCluster c(testing::star_topology(2), verifying());
  Endpoint a, b;
  std::vector<verbs::WorkCompletion> sent;
  sim::Time failed_at;
  c->spawn("h1", "sender", [&](host::Context& ctx) {
    open(ctx, a, verbs::QpType::rc, 4096);
    verbs::QpAttr attr;
    attr.timeout = 10; // 4.2 ms
    attr.rnr_retry = 2;
    connect(ctx, a, b, attr);
    REQUIRE(ctx.post_send(a.qp, send_wr(6, a.buffer, 100)).ok());
    sent = collect(ctx, a.cq, 1, ms(100));
    failed_at = ctx.now();
    collect_stragglers(ctx, a.cq, us(50), sent);
  });
  c->spawn("h2", "receiver", [&](host::Context& ctx) {
    open(ctx, b, verbs::QpType::rc, 4096);
    verbs::QpAttr attr;
    attr.min_rnr_timer = 1; // 0.01 ms
    connect(ctx, b, a, attr);
  });
  c->run();

  REQUIRE(sent.size() == 1);
  CHECK(sent[0].wr_id == 6);
  CHECK(sent[0].status == WcStatus::rnr_retry_exc_err);
  hca::Hca& h1 = *c->host("h1").hca;
  CHECK(h1.qp_state(a.qp) == verbs::QpState::error);
  const hca::QpCounters& q1 = h1.qp_counters(a.qp);
  const hca::QpCounters& q2 = c->host("h2").hca->qp_counters(b.qp);
  CHECK(q1.rnr_naks_received == 3); // the first try and rnr_retry = 2 retries
  CHECK(q2.rnr_naks_sent == 3);
  CHECK(q1.timeouts == 0);
  // Two RNR waits of 10 us and three round trips.
  CHECK(failed_at.us() > 20.0);
  CHECK(failed_at.us() < 100.0);
  CHECK(c->check_invariants() == "");
}

// ---- RC: initiator depth.

namespace {

struct ReadRun {
  std::vector<verbs::WorkCompletion> completions;
  std::uint32_t peak = 0;
  sim::Time elapsed;
  std::vector<std::int64_t> mismatches; ///< per READ: first_difference
  std::string invariants;
};

/// Eight 2 KiB READs posted at once by a QP of initiator depth `depth`.
ReadRun eight_reads(std::uint8_t depth) {
  testing::TestCluster c(testing::star_topology(2), verifying());
  Endpoint a, b;
  constexpr std::uint32_t size = 2048, stride = 4096, reads = 8;
  ReadRun r;
  c->spawn("h1", "reader", [&](host::Context& ctx) {
    open(ctx, a, verbs::QpType::rc, reads * stride);
    verbs::QpAttr attr;
    attr.max_rd_atomic = depth;
    connect(ctx, a, b, attr);
    std::vector<verbs::SendWr> wrs;
    for (std::uint32_t i = 0; i < reads; ++i)
      wrs.push_back(read_wr(i, a.buffer + i * stride, size, b.buffer + i * stride));
    const sim::Time start = ctx.now();
    REQUIRE(ctx.post_send(a.qp, wrs).ok());
    r.completions = collect(ctx, a.cq, reads, ms(1));
    r.elapsed = ctx.now() - start;
    collect_stragglers(ctx, a.cq, us(20), r.completions);
  });
  c->spawn("h2", "target", [&](host::Context& ctx) {
    open(ctx, b, verbs::QpType::rc, reads * stride);
    fill(ctx.memory(), b.buffer, reads * stride, 99);
    connect(ctx, b, a);
  });
  c->run();
  r.peak = c->host("h1").hca->qp_counters(a.qp).peak_reads_outstanding;
  for (std::uint32_t i = 0; i < reads; ++i)
    r.mismatches.push_back(first_difference(*c->host("h1").memory, a.buffer + i * stride, *c->host("h2").memory,
                                            b.buffer + i * stride, size));
  r.invariants = c->check_invariants();
  return r;
}

} // namespace

TEST_CASE("RC initiator depth: max_rd_atomic bounds the READs in flight", "[hca][transport]") {
  const ReadRun shallow = eight_reads(2);
  const ReadRun deep = eight_reads(16);
  for (const ReadRun* r : {&shallow, &deep}) {
    REQUIRE(r->completions.size() == 8);
    for (std::size_t i = 0; i < 8; ++i) {
      CHECK(r->completions[i].wr_id == i);
      CHECK(r->completions[i].status == WcStatus::success);
      CHECK(r->completions[i].opcode == verbs::WcOpcode::rdma_read);
      CHECK(r->mismatches[i] == -1);
    }
    CHECK(r->invariants == "");
  }
  CHECK(shallow.peak == 2);
  CHECK(deep.peak == 8);
  // Two at a time takes four round trips where sixteen takes one.
  CHECK(shallow.elapsed.us() > deep.elapsed.us() + 2.0);
}

// ---- UD.

namespace {

constexpr std::uint32_t ud_qkey = 0x11111111;

verbs::QpAttr ud_attr() {
  verbs::QpAttr attr;
  attr.qkey = ud_qkey;
  attr.path_mtu = verbs::Mtu::mtu2048;
  return attr;
}

verbs::SendWr datagram(std::uint64_t id, std::uint64_t local, std::uint32_t length, const Endpoint& to) {
  verbs::SendWr wr = send_wr(id, local, length);
  wr.ah.dlid = to.address.lid;
  wr.remote_qpn = to.address.qpn;
  wr.remote_qkey = ud_qkey;
  return wr;
}

} // namespace

TEST_CASE("UD SEND lands after 40 bytes of GRH space with its source QP and LID and is not acknowledged",
          "[hca][transport]") {
  testing::TestCluster c(testing::star_topology(2), verifying());
  Endpoint a, b;
  constexpr std::uint32_t size = 1000;
  std::vector<verbs::WorkCompletion> sent, received;
  verbs::PostResult too_big;
  c->spawn("h1", "sender", [&](host::Context& ctx) {
    open(ctx, a, verbs::QpType::ud, 8192);
    fill(ctx.memory(), a.buffer, 8192, 17);
    connect(ctx, a, b, ud_attr());
    ctx.program().sleep_until(us(5)); // the receiver's RECV is posted
    REQUIRE(ctx.post_send(a.qp, datagram(1, a.buffer, size, b)).ok());
    sent = collect(ctx, a.cq, 1, ms(1));
    too_big = ctx.post_send(a.qp, datagram(2, a.buffer, 3000, b)); // above the 2048 B path MTU
    collect_stragglers(ctx, a.cq, us(20), sent);
  });
  c->spawn("h2", "receiver", [&](host::Context& ctx) {
    open(ctx, b, verbs::QpType::ud, 8192);
    connect(ctx, b, a, ud_attr());
    REQUIRE(ctx.post_recv(b.qp, verbs::RecvWr{300, b.buffer, 4096}).ok());
    received = collect(ctx, b.cq, 1, ms(1));
    collect_stragglers(ctx, b.cq, us(20), received);
  });
  c->run();

  REQUIRE(sent.size() == 1);
  CHECK(sent[0].wr_id == 1);
  CHECK(sent[0].status == WcStatus::success);
  CHECK(sent[0].opcode == verbs::WcOpcode::send);
  CHECK(too_big.error == verbs::PostError::invalid_wr);
  CHECK(too_big.bad_wr == 0);
  REQUIRE(received.size() == 1);
  CHECK(received[0].wr_id == 300);
  CHECK(received[0].status == WcStatus::success);
  CHECK(received[0].opcode == verbs::WcOpcode::recv);
  CHECK(received[0].byte_len == size + 40);
  CHECK(received[0].qp_num == b.qp);
  CHECK(received[0].src_qp == a.qp);
  CHECK(received[0].slid == a.address.lid);
  CHECK(first_difference(*c->host("h2").memory, b.buffer + 40, *c->host("h1").memory, a.buffer, size) == -1);
  const hca::QpCounters& q1 = c->host("h1").hca->qp_counters(a.qp);
  const hca::QpCounters& q2 = c->host("h2").hca->qp_counters(b.qp);
  CHECK(q1.packets_sent == 1);
  CHECK(q1.packets_received == 0); // no ACK
  CHECK(q2.packets_received == 1);
  CHECK(q2.packets_sent == 0);
  CHECK(c->check_invariants() == "");
}

TEST_CASE("UD datagram with no RECV posted is dropped silently while its sender completes", "[hca][transport]") {
  testing::TestCluster c(testing::star_topology(2), verifying());
  Endpoint a, b;
  std::vector<verbs::WorkCompletion> sent, received;
  c->spawn("h1", "sender", [&](host::Context& ctx) {
    open(ctx, a, verbs::QpType::ud, 4096);
    fill(ctx.memory(), a.buffer, 4096, 23);
    connect(ctx, a, b, ud_attr());
    ctx.program().sleep_until(us(5));
    REQUIRE(ctx.post_send(a.qp, datagram(1, a.buffer, 1000, b)).ok());
    sent = collect(ctx, a.cq, 1, ms(1));
    collect_stragglers(ctx, a.cq, us(20), sent);
  });
  c->spawn("h2", "receiver", [&](host::Context& ctx) {
    open(ctx, b, verbs::QpType::ud, 4096);
    connect(ctx, b, a, ud_attr());
    ctx.program().sleep_until(us(30));
    collect_stragglers(ctx, b.cq, us(1), received);
  });
  c->run();

  REQUIRE(sent.size() == 1);
  CHECK(sent[0].status == WcStatus::success);
  CHECK(received.empty());
  const hca::QpCounters& q1 = c->host("h1").hca->qp_counters(a.qp);
  const hca::QpCounters& q2 = c->host("h2").hca->qp_counters(b.qp);
  CHECK(q2.dropped == 1);
  CHECK(q2.messages_received == 0);
  CHECK(q1.packets_received == 0);
  CHECK(q2.packets_sent == 0); // no NAK either
  CHECK(first_nonzero(*c->host("h2").memory, b.buffer, 4096) == -1);
  CHECK(quiescence(*c) == "");
  // A datagram lost for want of a RECV is a legitimate outcome: the cluster's invariants must still hold.
  CHECK(c->check_invariants() == "");
}

// ---- UC.

TEST_CASE("UC WRITEs of three packets are delivered and complete without ACKs", "[hca][transport]") {
  testing::TestCluster c(testing::star_topology(2), verifying());
  Endpoint a, b;
  constexpr std::uint32_t size = 12000; // 3 packets at 4096
  std::vector<verbs::WorkCompletion> sent;
  c->spawn("h1", "writer", [&](host::Context& ctx) {
    open(ctx, a, verbs::QpType::uc, 32768);
    fill(ctx.memory(), a.buffer, 32768, 61);
    connect(ctx, a, b);
    const std::vector<verbs::SendWr> wrs = {write_wr(0, a.buffer, size, b.buffer),
                                            write_wr(1, a.buffer + 16384, size, b.buffer + 16384)};
    REQUIRE(ctx.post_send(a.qp, wrs).ok());
    sent = collect(ctx, a.cq, 2, ms(1));
    collect_stragglers(ctx, a.cq, us(20), sent);
  });
  c->spawn("h2", "target", [&](host::Context& ctx) {
    open(ctx, b, verbs::QpType::uc, 32768);
    connect(ctx, b, a);
  });
  c->run();

  REQUIRE(sent.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(sent[i].wr_id == i);
    CHECK(sent[i].status == WcStatus::success);
    CHECK(sent[i].opcode == verbs::WcOpcode::rdma_write);
  }
  pcie::HostMemory& m1 = *c->host("h1").memory;
  pcie::HostMemory& m2 = *c->host("h2").memory;
  CHECK(first_difference(m2, b.buffer, m1, a.buffer, size) == -1);
  CHECK(first_difference(m2, b.buffer + 16384, m1, a.buffer + 16384, size) == -1);
  const hca::QpCounters& q1 = c->host("h1").hca->qp_counters(a.qp);
  const hca::QpCounters& q2 = c->host("h2").hca->qp_counters(b.qp);
  CHECK(q1.packets_sent == 6);
  CHECK(q1.packets_received == 0); // no ACKs
  CHECK(q2.packets_received == 6);
  CHECK(q2.packets_sent == 0);
  CHECK(q2.messages_received == 2);
  CHECK(c->check_invariants() == "");
}

TEST_CASE("UC packet lost mid-message loses that message only and is not retried", "[hca][transport]") {
  testing::TestCluster c(testing::star_topology(2), verifying());
  Endpoint a, b;
  constexpr std::uint32_t size = 12000; // 3 packets at 4096
  std::vector<verbs::WorkCompletion> sent;
  std::uint64_t received_before_drop = 0;
  c->spawn("h1", "writer", [&](host::Context& ctx) {
    open(ctx, a, verbs::QpType::uc, 32768);
    fill(ctx.memory(), a.buffer, 32768, 62);
    connect(ctx, a, b);
    const std::vector<verbs::SendWr> wrs = {write_wr(0, a.buffer, size, b.buffer),
                                            write_wr(1, a.buffer + 16384, size, b.buffer + 16384)};
    REQUIRE(ctx.post_send(a.qp, wrs).ok());
    sent = collect(ctx, a.cq, 2, ms(1));
    collect_stragglers(ctx, a.cq, us(20), sent);
  });
  c->spawn("h2", "target", [&](host::Context& ctx) {
    open(ctx, b, verbs::QpType::uc, 32768);
    connect(ctx, b, a);
    // The first packet of message 0 in, then its middle one is lost.
    received_before_drop = lose_packet_after(ctx, b.qp, 1);
  });
  c->run();

  CHECK(received_before_drop == 1);
  CHECK(c->host("h2").hca->packets_dropped_by_fault() == 1);
  // Both complete successfully: UC neither knows nor retries.
  REQUIRE(sent.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(sent[i].wr_id == i);
    CHECK(sent[i].status == WcStatus::success);
  }
  pcie::HostMemory& m1 = *c->host("h1").memory;
  pcie::HostMemory& m2 = *c->host("h2").memory;
  // Message 0: its first packet landed, the lost one and the one after it did not.
  CHECK(first_difference(m2, b.buffer, m1, a.buffer, 4096) == -1);
  CHECK(first_nonzero(m2, b.buffer + 4096, size - 4096) == -1);
  // Message 1 arrived intact.
  CHECK(first_difference(m2, b.buffer + 16384, m1, a.buffer + 16384, size) == -1);
  const hca::QpCounters& q1 = c->host("h1").hca->qp_counters(a.qp);
  const hca::QpCounters& q2 = c->host("h2").hca->qp_counters(b.qp);
  CHECK(q1.packets_received == 0);
  CHECK(q1.retransmitted_packets == 0);
  CHECK(q1.packets_sent == 6);
  CHECK(q2.messages_received == 1);
  CHECK(q2.dropped >= 1); // the last packet of message 0
  CHECK(quiescence(*c) == "");
  // A UC loss is a legitimate outcome: the cluster's invariants must still hold.
  CHECK(c->check_invariants() == "");
}

TEST_CASE("UC message whose first packet is lost writes nothing anywhere", "[hca][transport]") {
  // WRITE W1 and a SEND, then WRITE W2 with its FIRST packet lost (its RETH with it), then W3. What follows the
  // loss in W2 has no address of its own and must be dropped, not written where W1 went.
  testing::TestCluster c(testing::star_topology(2), verifying());
  Endpoint a, b;
  constexpr std::uint32_t size = 12000; // 3 packets at 4096
  constexpr std::uint32_t w1 = 0, w2 = 16384, w3 = 32768, recv = 49152, send_from = 48000;
  std::vector<verbs::WorkCompletion> sent, received;
  c->spawn("h1", "writer", [&](host::Context& ctx) {
    open(ctx, a, verbs::QpType::uc, 65536);
    fill(ctx.memory(), a.buffer, 65536, 63);
    connect(ctx, a, b);
    const std::vector<verbs::SendWr> first = {write_wr(0, a.buffer + w1, size, b.buffer + w1),
                                              send_wr(1, a.buffer + send_from, 100)};
    REQUIRE(ctx.post_send(a.qp, first).ok());
    sent = collect(ctx, a.cq, 2, ms(1));
    ctx.program().sleep_until(us(20)); // the responder arms the loss at 10 us
    const std::vector<verbs::SendWr> second = {write_wr(2, a.buffer + w2, size, b.buffer + w2),
                                               write_wr(3, a.buffer + w3, size, b.buffer + w3)};
    REQUIRE(ctx.post_send(a.qp, second).ok());
    const std::vector<verbs::WorkCompletion> more = collect(ctx, a.cq, 2, ms(1));
    sent.insert(sent.end(), more.begin(), more.end());
    collect_stragglers(ctx, a.cq, us(20), sent);
  });
  c->spawn("h2", "target", [&](host::Context& ctx) {
    open(ctx, b, verbs::QpType::uc, 65536);
    connect(ctx, b, a);
    REQUIRE(ctx.post_recv(b.qp, verbs::RecvWr{400, b.buffer + recv, 256}).ok());
    received = collect(ctx, b.cq, 1, ms(1));
    ctx.program().sleep_until(us(10));
    ctx.hca().drop_next_received(1); // W2's FIRST packet
    collect_stragglers(ctx, b.cq, us(30), received);
  });
  c->run();

  CHECK(c->host("h2").hca->packets_dropped_by_fault() == 1);
  REQUIRE(sent.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(sent[i].wr_id == i);
    CHECK(sent[i].status == WcStatus::success);
  }
  REQUIRE(received.size() == 1);
  CHECK(received[0].wr_id == 400);
  CHECK(received[0].byte_len == 100);
  pcie::HostMemory& m1 = *c->host("h1").memory;
  pcie::HostMemory& m2 = *c->host("h2").memory;
  CHECK(first_difference(m2, b.buffer + recv, m1, a.buffer + send_from, 100) == -1);
  CHECK(first_difference(m2, b.buffer + w1, m1, a.buffer + w1, size) == -1); // W1 not overwritten by W2's rest
  CHECK(first_nonzero(m2, b.buffer + w2, size) == -1);                       // nothing of W2
  CHECK(first_difference(m2, b.buffer + w3, m1, a.buffer + w3, size) == -1); // W3 intact
  const hca::QpCounters& q2 = c->host("h2").hca->qp_counters(b.qp);
  CHECK(q2.messages_received == 3); // W1, the SEND, W3
  CHECK(quiescence(*c) == "");
  CHECK(c->check_invariants() == "");
}

// ---- Error state.

TEST_CASE("modify_qp to ERROR flushes outstanding send WRs and posted RECVs with wr_flush_err", "[hca][transport]") {
  testing::TestCluster c(testing::star_topology(2), verifying());
  Endpoint a, b;
  constexpr std::uint32_t size = 65536, writes = 4, recvs = 4;
  std::vector<verbs::WorkCompletion> flushed;
  bool in_flight = false;
  std::uint32_t completed_before = 1;
  std::string modify_error = "not called";
  verbs::PostResult send_after, recv_after;
  c->spawn("h1", "requester", [&](host::Context& ctx) {
    open(ctx, a, verbs::QpType::rc, (writes + 1) * size);
    fill(ctx.memory(), a.buffer, writes * size, 77);
    connect(ctx, a, b);
    std::vector<verbs::RecvWr> rwrs;
    for (std::uint32_t i = 0; i < recvs; ++i)
      rwrs.push_back({300 + i, a.buffer + writes * size + i * 1024, 1024});
    REQUIRE(ctx.post_recv(a.qp, rwrs).ok());
    std::vector<verbs::SendWr> wrs;
    for (std::uint32_t i = 0; i < writes; ++i)
      wrs.push_back(write_wr(i, a.buffer + i * size, size, b.buffer + i * size));
    REQUIRE(ctx.post_send(a.qp, wrs).ok());
    ctx.program().sleep_until(ctx.now() + us(3)); // packets on the wire, none acknowledged yet
    in_flight = ctx.hca().qp_counters(a.qp).packets_sent > 0;
    completed_before = ctx.hca().cq_ready(a.cq);
    modify_error = ctx.modify_qp(a.qp, verbs::QpState::error, verbs::QpAttr{});
    flushed = collect(ctx, a.cq, writes + recvs, ms(1));
    collect_stragglers(ctx, a.cq, us(50), flushed);
    send_after = ctx.post_send(a.qp, write_wr(9, a.buffer, 8, b.buffer));
    recv_after = ctx.post_recv(a.qp, verbs::RecvWr{309, a.buffer, 64});
  });
  c->spawn("h2", "target", [&](host::Context& ctx) {
    open(ctx, b, verbs::QpType::rc, writes * size);
    connect(ctx, b, a);
  });
  c->run();

  CHECK(modify_error == "");
  CHECK(in_flight);
  CHECK(completed_before == 0);
  REQUIRE(flushed.size() == writes + recvs);
  std::vector<verbs::WorkCompletion> sends, receives;
  for (const verbs::WorkCompletion& wc : flushed) {
    CHECK(wc.status == WcStatus::wr_flush_err);
    CHECK(wc.qp_num == a.qp);
    (wc.opcode == verbs::WcOpcode::recv ? receives : sends).push_back(wc);
  }
  REQUIRE(sends.size() == writes);
  REQUIRE(receives.size() == recvs);
  for (std::uint32_t i = 0; i < writes; ++i)
    CHECK(sends[i].wr_id == i);
  for (std::uint32_t i = 0; i < recvs; ++i)
    CHECK(receives[i].wr_id == 300 + i);
  CHECK(c->host("h1").hca->qp_state(a.qp) == verbs::QpState::error);
  CHECK(send_after.error == verbs::PostError::invalid_state);
  CHECK(recv_after.error == verbs::PostError::invalid_state);
  CHECK(c->check_invariants() == "");
}
