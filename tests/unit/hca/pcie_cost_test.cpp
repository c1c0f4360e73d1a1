// PCIe transactions per verb, for every combination of inline, BlueFlame, postlist n and signaling every s, against
// the reference's "PCIe cost per verb" (docs/references.md: verb_pcie_cost_baseline and
// verb_pcie_cost_inline_blueflame, exact-spec; kalia16_verb_pcie_transactions for postlist and unsignaled):
//   baseline            1 MMIO write (doorbell), 2 DMA reads (WQE, payload), 1 DMA write (CQE) per verb;
//   inline + BlueFlame  1 MMIO write (the WQE), no DMA read, 1 DMA write;
//   postlist n          1 doorbell and 1 WQE read per n WQEs (BlueFlame only for single-WR posts);
//   signal every s      1 CQE per s WQEs.
// Posts are spaced so that no two doorbells share a WQE fetch (the HCA coalesces those, as hardware does), which
// makes every count exact. The same run also checks the TLP sizes of E5 (doorbell 32 B, BlueFlame line 88 B).
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/hca_cluster.h"

using namespace ib;

namespace {

struct Combination {
  bool inline_data;
  bool blueflame;
  std::uint32_t postlist;
  std::uint32_t signal_every;
};

struct Costs {
  hca::PcieCounters requester;
  hca::PcieCounters responder;
  pcie::DirectionCounters down; ///< requester's bus, host to HCA
  pcie::DirectionCounters up;   ///< requester's bus, HCA to host
};

constexpr std::uint32_t verbs_posted = 16;
constexpr std::uint32_t payload_bytes = 8;

Costs run(const Combination& k) {
  testing::TestCluster c(testing::star_topology(2));
  testing::QpAddress a, b;
  std::uint64_t a_buffer = 0, b_buffer = 0;
  c->spawn("h1", "poster", [&](host::Context& ctx) {
    verbs::QpCaps caps;
    caps.max_inline_data = 64;
    caps.blueflame = k.blueflame;
    const std::uint32_t cq = ctx.create_cq(256);
    const std::uint32_t qp = ctx.create_qp(verbs::QpType::rc, caps, cq, cq);
    a = {ctx.lid(), qp};
    a_buffer = ctx.memory().allocate(4096);
    ctx.program().sleep_until(sim::Time::from_ns(1));
    ctx.connect_qp(qp, testing::attr_to(b));
    std::uint32_t signaled = 0;
    for (std::uint32_t first = 0; first < verbs_posted; first += k.postlist) {
      std::vector<verbs::SendWr> wrs(k.postlist);
      for (std::uint32_t i = 0; i < k.postlist; ++i) {
        verbs::SendWr& wr = wrs[i];
        wr.wr_id = first + i;
        wr.opcode = verbs::WrOpcode::rdma_write;
        wr.inline_data = k.inline_data;
        wr.local_address = a_buffer + 8 * (first + i);
        wr.length_bytes = payload_bytes;
        wr.remote_address = b_buffer + 8 * (first + i);
        wr.signaled = (first + i + 1) % k.signal_every == 0;
        signaled += wr.signaled ? 1 : 0;
      }
      REQUIRE(ctx.post_send(qp, wrs).ok());
      ctx.program().compute(sim::Time::from_us(5)); // the verb is done before the next post
    }
    std::vector<verbs::WorkCompletion> wc(64);
    std::uint32_t seen = 0;
    while (seen < signaled) {
      const int n = ctx.wait_cq(cq, wc);
      REQUIRE(n > 0);
      for (int i = 0; i < n; ++i)
        CHECK(wc[static_cast<std::size_t>(i)].status == verbs::WcStatus::success);
      seen += static_cast<std::uint32_t>(n);
    }
  });
  c->spawn("h2", "target", [&](host::Context& ctx) {
    const std::uint32_t cq = ctx.create_cq(16);
    const std::uint32_t qp = ctx.create_qp(verbs::QpType::rc, {}, cq, cq);
    b = {ctx.lid(), qp};
    b_buffer = ctx.memory().allocate(4096);
    ctx.program().sleep_until(sim::Time::from_ns(1));
    ctx.connect_qp(qp, testing::attr_to(a));
  });
  c->run();
  CHECK(c->check_invariants() == "");
  const hca::Hca& h1 = *c->host("h1").hca;
  return {h1.pcie_counters(), c->host("h2").hca->pcie_counters(), h1.bus().counters(pcie::Direction::downstream),
          h1.bus().counters(pcie::Direction::upstream)};
}

std::string describe(const Combination& k) {
  return std::string(k.inline_data ? "inline" : "no inline") + ", " + (k.blueflame ? "BlueFlame" : "doorbell") +
         ", postlist " + std::to_string(k.postlist) + ", signal every " + std::to_string(k.signal_every);
}

constexpr auto mwr = static_cast<std::size_t>(pcie::TlpKind::mwr);
constexpr auto mrd = static_cast<std::size_t>(pcie::TlpKind::mrd);

} // namespace

TEST_CASE("PCIe transactions per verb match the reference for every feature combination", "[hca][pcie-cost]") {
  for (const bool inline_data : {false, true})
    for (const bool blueflame : {false, true})
      for (const std::uint32_t postlist : {1u, 4u})
        for (const std::uint32_t signal_every : {1u, 4u}) {
          const Combination k{inline_data, blueflame, postlist, signal_every};
          INFO(describe(k));
          const Costs costs = run(k);
          const hca::PcieCounters& r = costs.requester;
          const std::uint32_t posts = verbs_posted / postlist;
          const bool by_blueflame = blueflame && postlist == 1;
          // MMIO: one store of the doorbell, or one write-combined 64-byte line with the whole WQE.
          CHECK(r.doorbells == (by_blueflame ? 0 : posts));
          CHECK(r.blueflame_writes == (by_blueflame ? posts : 0));
          CHECK(costs.down.tlps[mwr] == posts);
          CHECK(costs.down.tlp_bytes[mwr] == posts * (by_blueflame ? 88u : 32u)); // reference E5
          // DMA reads: the WQEs of each doorbell in one read, and each payload unless inlined.
          CHECK(r.wqe_fetches == (by_blueflame ? 0 : posts));
          CHECK(r.wqe_fetch_bytes == (by_blueflame ? 0 : verbs_posted * 64u));
          CHECK(r.payload_reads == (inline_data ? 0 : verbs_posted));
          CHECK(costs.up.tlps[mrd] == r.wqe_fetches + r.payload_reads);
          // DMA writes: one CQE per signaled verb; nothing else leaves the requester.
          CHECK(r.cqe_writes == verbs_posted / signal_every);
          CHECK(costs.up.tlps[mwr] == r.cqe_writes);
          // The responder writes each payload and nothing else: RDMA WRITE consumes no RECV and writes no CQE.
          CHECK(costs.responder.payload_writes == verbs_posted);
          CHECK(costs.responder.recv_wqe_fetches == 0);
          CHECK(costs.responder.cqe_writes == 0);
          if (!inline_data && !blueflame && postlist == 1 && signal_every == 1) {
            // verb_pcie_cost_baseline: {mmio_writes 1, dma_reads 2, dma_writes 1} per post.
            CHECK(r.doorbells + r.blueflame_writes == verbs_posted * 1);
            CHECK(r.wqe_fetches + r.payload_reads == verbs_posted * 2);
            CHECK(r.cqe_writes == verbs_posted * 1);
          }
          if (inline_data && blueflame && postlist == 1 && signal_every == 1) {
            // verb_pcie_cost_inline_blueflame: {mmio_writes 1, dma_reads 0, dma_writes 1} per post.
            CHECK(r.doorbells + r.blueflame_writes == verbs_posted * 1);
            CHECK(r.wqe_fetches + r.payload_reads == 0);
            CHECK(r.cqe_writes == verbs_posted * 1);
          }
        }
}

TEST_CASE("a SEND costs the responder its share of a batched RECV WQE read, the payload write and a CQE",
          "[hca][pcie-cost]") {
  testing::TestCluster c(testing::star_topology(2));
  testing::QpAddress a, b;
  std::uint64_t a_buffer = 0, b_buffer = 0;
  constexpr std::uint32_t sends = 8;
  c->spawn("h1", "sender", [&](host::Context& ctx) {
    const std::uint32_t cq = ctx.create_cq(64);
    const std::uint32_t qp = ctx.create_qp(verbs::QpType::rc, {}, cq, cq);
    a = {ctx.lid(), qp};
    a_buffer = ctx.memory().allocate(4096);
    ctx.program().sleep_until(sim::Time::from_ns(1));
    ctx.connect_qp(qp, testing::attr_to(b));
    ctx.program().compute(sim::Time::from_us(1)); // the receiver has posted its RECVs
    std::vector<verbs::WorkCompletion> wc(1);
    for (std::uint32_t i = 0; i < sends; ++i) {
      verbs::SendWr wr;
      wr.local_address = a_buffer;
      wr.length_bytes = 256;
      REQUIRE(ctx.post_send(qp, wr).ok());
      REQUIRE(ctx.wait_cq(cq, wc) == 1);
    }
  });
  c->spawn("h2", "receiver", [&](host::Context& ctx) {
    const std::uint32_t cq = ctx.create_cq(64);
    const std::uint32_t qp = ctx.create_qp(verbs::QpType::rc, {}, cq, cq);
    b = {ctx.lid(), qp};
    b_buffer = ctx.memory().allocate(4096);
    ctx.program().sleep_until(sim::Time::from_ns(1));
    ctx.connect_qp(qp, testing::attr_to(a));
    std::vector<verbs::RecvWr> recvs(sends, verbs::RecvWr{0, b_buffer, 4096});
    REQUIRE(ctx.post_recv(qp, recvs).ok());
    std::vector<verbs::WorkCompletion> wc(sends);
    std::uint32_t seen = 0;
    while (seen < sends)
      seen += static_cast<std::uint32_t>(ctx.wait_cq(cq, wc));
  });
  c->run();
  CHECK(c->check_invariants() == "");
  const hca::PcieCounters& r = c->host("h2").hca->pcie_counters();
  // The RECVs were posted ahead: the first SEND misses and reads them all in one DMA read (8 x 16 B, within the
  // cache of recv_wqe_cache_entries); the others find theirs on the adapter.
  CHECK(r.recv_wqe_fetches == 1);
  CHECK(r.recv_wqes_fetched == sends);
  CHECK(r.recv_wqe_misses == 1);
  CHECK(r.payload_writes == sends);
  CHECK(r.cqe_writes == sends);
  const pcie::DirectionCounters& up = c->host("h2").hca->bus().counters(pcie::Direction::upstream);
  CHECK(up.tlps[mrd] == 1);         // the RECV WQEs, 128 B in one read
  CHECK(up.tlps[mwr] == 2 * sends); // 256 B payload (one MWr at MPS 256) and the CQE
}
