// Port: serialization, propagation, per-VL credits and flow-control packets between two endpoints wired
// back to back (STYLE rule 31: the smallest wiring, exact integer-picosecond figures).
#include <catch2/catch.hpp>

#include <deque>

#include "models/link/link.h"
#include "tests/support/packet_endpoint.h"

using namespace ib;
using ib::testing::Flow;
using ib::testing::PacketEndpoint;

namespace {

struct BackToBack {
  explicit BackToBack(const link::LinkConfig& link_config, const link::PortConfig& a_config,
                      const link::PortConfig& b_config)
      : sim(7) {
    const std::uint32_t a_id = sim.add_component("a");
    const std::uint32_t b_id = sim.add_component("b");
    endpoints.emplace_back(sim::Target{2, 0}, a_id, 1, pool, a_config, sim.rng_for(a_id));
    endpoints.emplace_back(sim::Target{2, 1}, b_id, 2, pool, b_config, sim.rng_for(b_id));
    link::connect(a().port(), b().port(), link_config);
  }
  PacketEndpoint& a() { return endpoints[0]; }
  PacketEndpoint& b() { return endpoints[1]; }
  void run(sim::Time until = sim::Time::max()) {
    for (auto& e : endpoints) {
      e.start(sim);
    }
    auto dispatch = [this](const sim::Event& event) { endpoints[event.index].on_event(sim, event); };
    sim.run_until(dispatch, until);
  }
  std::string invariants(bool quiescent) {
    return link::check_credit_conservation(a().port(), b().port(), quiescent) +
           link::check_credit_conservation(b().port(), a().port(), quiescent);
  }

  sim::Simulator sim;
  link::PacketPool pool;
  std::deque<PacketEndpoint> endpoints;
};

link::PortConfig port_config(std::uint32_t blocks_per_vl, std::uint8_t vl_cap = 1) {
  return {blocks_per_vl * link::block_bytes * vl_cap, vl_cap, 4, sim::Time::from_us(2)};
}

link::LinkConfig edr(std::int64_t propagation_ns) {
  return {link::data_rate(link::Width::x4, link::Speed::edr), sim::Time::from_ns(propagation_ns)};
}

Flow write_flow(std::uint16_t dlid, std::uint64_t packets, std::uint32_t payload = 4096, std::uint8_t vl = 0) {
  Flow f;
  f.dlids = {dlid};
  f.payload_bytes = payload;
  f.packets = packets;
  f.vl = vl;
  f.sl = vl;
  return f;
}

} // namespace

TEST_CASE("link::Port: one 4 KiB RDMA WRITE arrives after serialization plus propagation, exactly (E1)",
          "[link][quick]") {
  BackToBack net(edr(10), port_config(256), port_config(256));
  net.a().add_flow(write_flow(2, 1));
  net.run();
  const testing::SourceStats* s = net.b().stats_from(1, 0);
  REQUIRE(s != nullptr);
  CHECK(s->packets == 1);
  // 4138 B at 100 Gb/s = 331.04 ns, plus 10 ns of cable.
  CHECK(s->latency_min.ps() == 331'040 + 10'000);
  CHECK(net.invariants(true).empty());
  CHECK(net.pool.live() == 0);
}

TEST_CASE("link::Port: a packet takes ceil(bytes/64) credits until the receiver frees it (E3)", "[link][quick]") {
  BackToBack net(edr(10), port_config(256), port_config(256));
  net.a().add_flow(write_flow(2, 1));
  // Stop between the first bit's arrival (10 ns) and the tail's (341.04 ns): the packet holds 65 blocks.
  net.run(sim::Time::from_ns(100));
  CHECK(net.b().port().used_blocks(0) == 65);
  CHECK(net.invariants(false).empty());
  net.run();
  CHECK(net.b().port().used_blocks(0) == 0);
  // The tail arrived at 341.04 ns, the buffer freed and an FC packet (6 B, 0.48 ns) went back over 10 ns.
  CHECK(net.a().port().counters().xmit_pkts == 1);
  CHECK(net.b().port().counters().flow_control_pkts >= 1);
  CHECK(net.invariants(true).empty());
}

TEST_CASE("link::Port: back-to-back packets stream at the link's data rate", "[link][quick]") {
  BackToBack net(edr(10), port_config(512), port_config(512));
  net.a().add_flow(write_flow(2, 100));
  net.run();
  const testing::SourceStats* s = net.b().stats_from(1, 0);
  REQUIRE(s != nullptr);
  CHECK(s->packets == 100);
  // Enough credits: packets leave back to back, 331.04 ns apart, except that the sender's own periodic FC
  // packets (carrying its FCTBS, every 2 us while it sends) take 0.48 ns of the wire each. The last one goes out
  // after the last packet, delaying none.
  const std::uint64_t refreshes = net.a().port().counters().flow_control_pkts;
  CHECK(refreshes >= 15);
  CHECK(refreshes <= 17);
  CHECK((s->last_last_bit_at - s->first_last_bit_at).ps() ==
        99 * 331'040 + static_cast<std::int64_t>(refreshes - 1) * 480);
  CHECK(net.a().port().counters().xmit_data_words == 100 * (4138 + 2) / 4);
  CHECK(net.a().port().counters().xmit_wait == sim::Time::zero());
  CHECK(net.invariants(true).empty());
}

TEST_CASE("link::Port: too few credits over a long cable cap throughput at credits x 64 B per round trip (E4)",
          "[link][quick]") {
  // 100 m at 5 ns/m: 500 ns each way. 130 blocks = two 65-block packets per round trip.
  BackToBack net(edr(500), port_config(130), port_config(130));
  net.a().add_flow(write_flow(2, 200));
  net.run();
  const testing::SourceStats* s = net.b().stats_from(1, 0);
  REQUIRE(s != nullptr);
  CHECK(s->packets == 200);
  // A credit comes back one serialization + 2 x 500 ns + one FC packet (0.48 ns at EDR) after its packet started.
  const sim::Time cycle = sim::Time::from_ps(331'040 + 1'000'000 + 480);
  const sim::Time measured = s->last_last_bit_at - s->first_last_bit_at;
  // Packets go in pairs, one cycle apart; the last pair's second packet ends one serialization after its first.
  CHECK(measured.ps() == (cycle * 99).ps() + 331'040);
  CHECK(net.a().port().counters().xmit_wait > sim::Time::zero());
  CHECK(net.invariants(true).empty());
}

TEST_CASE("link::Port: a buffer smaller than one largest packet per VL is refused", "[link][quick]") {
  sim::Simulator sim(1);
  link::PacketPool pool;
  link::Port a;
  link::Port b;
  a.bind({2, 0}, 0, 1, port_config(65));
  b.bind({2, 1}, 0, 1, port_config(256));
  CHECK_THROWS_WITH(link::connect(a, b, edr(1)), Catch::Contains("below one largest packet"));
}

TEST_CASE("link::Port: the operational VLs are the largest count both ends support", "[link][quick]") {
  link::Port a;
  link::Port b;
  a.bind({2, 0}, 0, 1, port_config(128, 8));
  b.bind({2, 1}, 0, 1, port_config(128, 4));
  link::connect(a, b, edr(1));
  CHECK(a.data_vls() == 4);
  CHECK(b.data_vls() == 4);
  // a's 8 x 128 blocks are split over the 4 VLs in use.
  CHECK(a.buffer_blocks_per_vl() == 256);
  CHECK(b.buffer_blocks_per_vl() == 128);
}
