// Small-message latency against the reference budget (E10): an ib_write_lat-style ping-pong of 2-byte inline
// RDMA WRITEs posted by BlueFlame, each side spinning on its buffer, on the connectx4-edr profile. Half the round
// trip must lie in 0.55-1.0 us back to back, and one switch between the hosts must add its port-to-port latency
// and one more cable, and nothing else.
#include <algorithm>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/hca_cluster.h"

using namespace ib;

namespace {

/// Median half round trip of `iterations` ping-pongs between h1 and h2.
sim::Time write_latency(testing::TestCluster& c, std::uint32_t iterations) {
  testing::QpAddress a, b;
  std::uint64_t a_buffer = 0, b_buffer = 0;
  std::vector<sim::Time> half_rtts;
  const auto side = [&](host::Context& ctx, bool client) {
    verbs::QpCaps caps;
    caps.max_inline_data = 64;
    const std::uint32_t cq = ctx.create_cq(256);
    const std::uint32_t qp = ctx.create_qp(verbs::QpType::rc, caps, cq, cq);
    (client ? a : b) = {ctx.lid(), qp};
    (client ? a_buffer : b_buffer) = ctx.memory().allocate(4096);
    ctx.program().sleep_until(sim::Time::from_ns(1));
    ctx.connect_qp(qp, testing::attr_to(client ? b : a));
    verbs::SendWr wr;
    wr.opcode = verbs::WrOpcode::rdma_write;
    wr.inline_data = true;
    wr.length_bytes = 2;
    wr.local_address = client ? a_buffer : b_buffer;
    wr.remote_address = client ? b_buffer : a_buffer;
    std::vector<verbs::WorkCompletion> wc(1);
    const std::size_t watch = ctx.watch_buffer(client ? a_buffer : b_buffer);
    for (std::uint32_t i = 0; i < iterations; ++i) {
      const sim::Time start = ctx.now();
      if (!client)
        ctx.wait_for_writes(watch, i + 1);
      REQUIRE(ctx.post_send(qp, wr).ok());
      if (client)
        ctx.wait_for_writes(watch, i + 1);
      REQUIRE(ctx.wait_cq(cq, wc) == 1); // the own WRITE's completion, long there by now
      if (client)
        half_rtts.push_back(sim::Time::from_ps((ctx.now() - start).ps() / 2));
    }
  };
  c->spawn("h1", "client", [&](host::Context& ctx) { side(ctx, true); });
  c->spawn("h2", "server", [&](host::Context& ctx) { side(ctx, false); });
  c->run();
  CHECK(c->check_invariants() == "");
  REQUIRE(half_rtts.size() == iterations);
  std::sort(half_rtts.begin(), half_rtts.end());
  return half_rtts[iterations / 2];
}

} // namespace

TEST_CASE("ib_write_lat-style 2-byte latency back to back on connectx4-edr lies in the E10 band", "[hca][latency]") {
  testing::TestCluster pair(testing::pair_topology("connectx4-edr"));
  const sim::Time back_to_back = write_latency(pair, 100);
  INFO("back to back: " << back_to_back.ns() << " ns");
  CHECK(back_to_back >= sim::Time::from_ns(550));
  CHECK(back_to_back <= sim::Time::from_ns(1000));

  testing::TestCluster star(testing::star_topology(2, "connectx4-edr", "switch-ib2-edr"));
  const sim::Time one_switch = write_latency(star, 100);
  INFO("one switch: " << one_switch.ns() << " ns");
  // One hop more: the switch's 90 ns (first bit in to first bit out; cut-through overlaps the 4 ns the 52-byte
  // packet takes to serialize) and a second 2 m cable, 10 ns at 5 ns/m.
  const double added_ns = one_switch.ns() - back_to_back.ns();
  CHECK(added_ns == Approx(90 + 10).margin(1));
}
