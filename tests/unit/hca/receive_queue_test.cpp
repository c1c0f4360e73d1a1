// The receive side's WQE cache and shared receive queues: RECV WQEs posted ahead are read in batches and hit; a
// program that posts each RECV only as its message arrives pays a DMA read per message; an SRQ serves several QPs in
// the order their messages are accepted, frees its WQEs out of order, raises its limit event once per arming, and a
// failing QP flushes only the WQEs it had claimed.
#include <vector>

#include <catch2/catch.hpp>

#include "models/hca/hca.h"
#include "tests/support/hca_cluster.h"

using namespace ib;

namespace {

constexpr std::uint32_t cache_entries = 16; // connectx4-edr's recv_wqe_cache_entries

struct SendResult {
  hca::PcieCounters receiver;
  std::vector<sim::Time> arrivals; ///< when each RECV completion was seen
};

/// `sends` 256 B SENDs from h1 to h2, one at a time; h2 posts `ahead` RECVs first and then one more after each
/// completion (ahead = 0: each RECV is posted just before its SEND is sent).
SendResult ping(std::uint32_t sends, std::uint32_t ahead) {
  testing::TestCluster c(testing::star_topology(2));
  testing::QpAddress a, b;
  SendResult out;
  c->spawn("h1", "sender", [&](host::Context& ctx) {
    const std::uint32_t cq = ctx.create_cq(64);
    const std::uint32_t qp = ctx.create_qp(verbs::QpType::rc, {}, cq, cq);
    a = {ctx.lid(), qp};
    const std::uint64_t buffer = ctx.memory().allocate(4096);
    ctx.program().sleep_until(sim::Time::from_ns(1));
    ctx.connect_qp(qp, testing::attr_to(b));
    ctx.program().compute(sim::Time::from_us(2));
    std::vector<verbs::WorkCompletion> wc(1);
    for (std::uint32_t i = 0; i < sends; ++i) {
      verbs::SendWr wr;
      wr.local_address = buffer;
      wr.length_bytes = 256;
      REQUIRE(ctx.post_send(qp, wr).ok());
      REQUIRE(ctx.wait_cq(cq, wc) == 1);
      ctx.program().compute(sim::Time::from_us(2)); // the receiver reposts in the meantime
    }
  });
  c->spawn("h2", "receiver", [&](host::Context& ctx) {
    const std::uint32_t cq = ctx.create_cq(256);
    verbs::QpCaps caps;
    caps.max_recv_wr = 256;
    const std::uint32_t qp = ctx.create_qp(verbs::QpType::rc, caps, cq, cq);
    b = {ctx.lid(), qp};
    const std::uint64_t buffer = ctx.memory().allocate(4096);
    ctx.program().sleep_until(sim::Time::from_ns(1));
    ctx.connect_qp(qp, testing::attr_to(a));
    const verbs::RecvWr recv{0, buffer, 4096};
    for (std::uint32_t i = 0; i < std::max(ahead, 1u); ++i)
      REQUIRE(ctx.post_recv(qp, recv).ok());
    std::vector<verbs::WorkCompletion> wc(1);
    for (std::uint32_t seen = 0; seen < sends;) {
      seen += static_cast<std::uint32_t>(ctx.wait_cq(cq, wc));
      out.arrivals.push_back(ctx.now());
      REQUIRE(ctx.post_recv(qp, recv).ok());
    }
  });
  c->run();
  CHECK(c->check_invariants() == "");
  out.receiver = c->host("h2").hca->pcie_counters();
  return out;
}

} // namespace

TEST_CASE("RECV WQEs posted ahead are read in batches of the cache and hit", "[hca][recv-cache]") {
  // 64 RECVs posted, 48 SENDs: the first misses and reads 17 (its own and 16 ahead); each later read tops the
  // cache up when half of it is used, so no other message waits for its WQE.
  const SendResult r = ping(48, 64);
  CHECK(r.receiver.recv_wqe_misses == 1);
  CHECK(r.receiver.recv_wqes_fetched >= 48);
  CHECK(r.receiver.recv_wqe_fetches <= 1 + 48 / (cache_entries / 2) + 1);
  CHECK(r.receiver.recv_wqe_fetches >= 48 / cache_entries);
}

TEST_CASE("a receive queue kept one RECV deep reads every WQE on its message's path", "[hca][recv-cache]") {
  // One RECV posted at a time, after the previous message: the adapter cannot read ahead, so every message
  // misses and waits one DMA read (about 0.5 us on the Haswell host) for its WQE.
  const SendResult late = ping(16, 0);
  CHECK(late.receiver.recv_wqe_misses == 16);
  CHECK(late.receiver.recv_wqe_fetches == 16);
  const SendResult early = ping(16, 64);
  CHECK(early.receiver.recv_wqe_misses == 1);
}

TEST_CASE("an SRQ serves several QPs, frees out of order and raises its limit event once per arming", "[hca][srq]") {
  testing::TestCluster c(testing::star_topology(3));
  testing::QpAddress s1, s2, r1, r2;
  constexpr std::uint32_t per_sender = 20;
  std::uint32_t srq = 0;
  std::vector<std::uint32_t> received_on(2, 0);
  std::uint64_t events_at_end = 0;
  const auto sender = [&](testing::QpAddress& me, testing::QpAddress& peer, std::uint32_t size) {
    return [&, size](host::Context& ctx) {
      const std::uint32_t cq = ctx.create_cq(64);
      const std::uint32_t qp = ctx.create_qp(verbs::QpType::rc, {}, cq, cq);
      me = {ctx.lid(), qp};
      const std::uint64_t buffer = ctx.memory().allocate(8192);
      ctx.program().sleep_until(sim::Time::from_ns(1));
      ctx.connect_qp(qp, testing::attr_to(peer));
      ctx.program().compute(sim::Time::from_us(2));
      std::vector<verbs::WorkCompletion> wc(1);
      for (std::uint32_t i = 0; i < per_sender; ++i) {
        verbs::SendWr wr;
        wr.local_address = buffer;
        wr.length_bytes = size;
        REQUIRE(ctx.post_send(qp, wr).ok());
        REQUIRE(ctx.wait_cq(cq, wc) == 1);
        REQUIRE(wc[0].status == verbs::WcStatus::success);
      }
    };
  };
  // Different sizes so that the two QPs' messages finish in an order other than the one they claimed WQEs in.
  c->spawn("h1", "sender1", sender(s1, r1, 6000));
  c->spawn("h2", "sender2", sender(s2, r2, 64));
  c->spawn("h3", "receiver", [&](host::Context& ctx) {
    const std::uint32_t cq = ctx.create_cq(256);
    srq = ctx.create_srq(48);
    verbs::QpCaps caps;
    caps.srq = srq;
    const std::uint32_t q1 = ctx.create_qp(verbs::QpType::rc, caps, cq, cq);
    const std::uint32_t q2 = ctx.create_qp(verbs::QpType::rc, caps, cq, cq);
    r1 = {ctx.lid(), q1};
    r2 = {ctx.lid(), q2};
    const std::uint64_t buffer = ctx.memory().allocate(8192);
    ctx.program().sleep_until(sim::Time::from_ns(1));
    ctx.connect_qp(q1, testing::attr_to(s1));
    ctx.connect_qp(q2, testing::attr_to(s2));
    const verbs::RecvWr recv{0, buffer, 8192};
    CHECK(ctx.post_recv(q1, recv).error == verbs::PostError::invalid_state); // a QP on an SRQ has no RQ
    for (std::uint32_t i = 0; i < 8; ++i)
      REQUIRE(ctx.post_srq_recv(srq, recv).ok());
    ctx.hca().arm_srq_limit(srq, 4, nullptr);
    std::vector<verbs::WorkCompletion> wc(4);
    for (std::uint32_t seen = 0; seen < 2 * per_sender;) {
      const int n = ctx.wait_cq(cq, wc);
      for (int i = 0; i < n; ++i) {
        REQUIRE(wc[static_cast<std::size_t>(i)].status == verbs::WcStatus::success);
        ++received_on[wc[static_cast<std::size_t>(i)].qp_num == q1 ? 0 : 1];
        // The program lets the queue run low before it reposts: the limit must be crossed.
        if (seen + static_cast<std::uint32_t>(i) >= 5)
          REQUIRE(ctx.post_srq_recv(srq, recv).ok());
      }
      seen += static_cast<std::uint32_t>(n);
    }
    events_at_end = ctx.hca().srq_limit_events(srq);
  });
  c->run();
  CHECK(c->check_invariants() == "");
  CHECK(received_on[0] == per_sender);
  CHECK(received_on[1] == per_sender);
  // 8 posted, limit 4: the event fires once the fifth is claimed, and not again without rearming.
  CHECK(events_at_end == 1);
}

TEST_CASE("a QP on an SRQ that fails flushes only the WQEs it claimed, and the others serve the QPs left",
          "[hca][srq]") {
  testing::TestCluster c(testing::star_topology(2));
  testing::QpAddress s1, r1, r2;
  constexpr std::uint32_t sends = 12;
  std::uint32_t successes = 0, flushed = 0;
  c->spawn("h1", "sender", [&](host::Context& ctx) {
    const std::uint32_t cq = ctx.create_cq(64);
    const std::uint32_t qp = ctx.create_qp(verbs::QpType::rc, {}, cq, cq);
    s1 = {ctx.lid(), qp};
    const std::uint64_t buffer = ctx.memory().allocate(4096);
    ctx.program().sleep_until(sim::Time::from_ns(1));
    ctx.connect_qp(qp, testing::attr_to(r1));
    ctx.program().compute(sim::Time::from_us(5)); // the receiver's second QP has failed by then
    std::vector<verbs::WorkCompletion> wc(1);
    for (std::uint32_t i = 0; i < sends; ++i) {
      verbs::SendWr wr;
      wr.local_address = buffer;
      wr.length_bytes = 128;
      REQUIRE(ctx.post_send(qp, wr).ok());
      REQUIRE(ctx.wait_cq(cq, wc) == 1);
      REQUIRE(wc[0].status == verbs::WcStatus::success);
    }
  });
  c->spawn("h2", "receiver", [&](host::Context& ctx) {
    const std::uint32_t cq = ctx.create_cq(64);
    const std::uint32_t srq = ctx.create_srq(32);
    verbs::QpCaps caps;
    caps.srq = srq;
    const std::uint32_t q1 = ctx.create_qp(verbs::QpType::rc, caps, cq, cq);
    const std::uint32_t q2 = ctx.create_qp(verbs::QpType::rc, caps, cq, cq);
    r1 = {ctx.lid(), q1};
    r2 = {ctx.lid(), q2};
    const std::uint64_t buffer = ctx.memory().allocate(4096);
    ctx.program().sleep_until(sim::Time::from_ns(1));
    ctx.connect_qp(q1, testing::attr_to(s1));
    ctx.connect_qp(q2, testing::attr_to(s1)); // never used: its peer is not listening
    const verbs::RecvWr recv{0, buffer, 4096};
    for (std::uint32_t i = 0; i < sends; ++i)
      REQUIRE(ctx.post_srq_recv(srq, recv).ok());
    REQUIRE(ctx.modify_qp(q2, verbs::QpState::error, {}) == "");
    std::vector<verbs::WorkCompletion> wc(4);
    while (successes < sends) {
      const int n = ctx.wait_cq(cq, wc);
      for (int i = 0; i < n; ++i)
        (wc[static_cast<std::size_t>(i)].status == verbs::WcStatus::success ? successes : flushed) += 1;
    }
  });
  c->run();
  CHECK(c->check_invariants() == "");
  CHECK(successes == sends); // every SRQ WQE was still there for q1
  CHECK(flushed == 0);       // q2 had claimed none
}
