// Switch: forwarding by LFT, cut-through and store-and-forward latency, output contention, VL arbitration and
// head-of-line blocking, on small fabrics built with tests/support/test_fabric.h.
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "models/switch/switch.h"
#include "sim/errors.h"
#include "tests/support/test_fabric.h"

using namespace ib;
using ib::testing::Flow;
using ib::testing::TestFabric;
using ib::testing::write_flow;

TEST_CASE("sw::Switch: one packet through one cut-through switch takes link + latency + link, exactly",
          "[switch][quick]") {
  TestFabric net;
  net.add_star(2);
  testing::PacketEndpoint& a = net.endpoints[0];
  testing::PacketEndpoint& b = net.endpoints[1];
  a.add_flow(write_flow(2, 1));
  net.start();
  net.drain();
  const testing::SourceStats* stats = b.stats_from(1, 0);
  REQUIRE(stats != nullptr);
  // 10 ns cable + 100 ns switch (first bit in to first bit out) + 10 ns cable + 331.04 ns serialization.
  CHECK(stats->latency_min.ps() == 10'000 + 100'000 + 10'000 + 331'040);
  CHECK(net.check_invariants(true).empty());
}

namespace {

/// Wire bytes `sink` has taken in from (SLID, SL) so far.
std::uint64_t wire_bytes_from(const testing::PacketEndpoint& sink, std::uint16_t slid, std::uint8_t sl) {
  const testing::SourceStats* s = sink.stats_from(slid, sl);
  return s != nullptr ? s->wire_bytes : 0;
}

/// Runs to `until` in steps of `step`, collecting the credit and buffer invariants (FC packets may be in flight).
std::string run_checked(TestFabric& net, sim::Time until, sim::Time step) {
  std::string problems;
  for (sim::Time t = net.sim.now() + step; t < until; t += step) {
    net.run(t);
    problems += net.check_invariants(false);
  }
  net.run(until);
  return problems + net.check_invariants(false);
}

/// 4x EDR data rate: 12.5 bytes per ns.
constexpr double edr_bytes_per_ns = 12.5;

/// One packet of `payload` bytes (RDMA WRITE ONLY) through a chain h1 - s1 - ... - sk - h2 of 2 m EDR cables
/// (10 ns each): its injection to last bit in, in ps.
std::int64_t chain_latency_ps(int k, bool cut_through, sim::Time latency, std::uint32_t payload,
                              std::string* problems) {
  TestFabric net;
  sw::Params params = testing::test_switch_params();
  params.cut_through = cut_through;
  params.port_to_port_latency = latency;
  std::vector<sw::Switch*> chain;
  for (int i = 0; i < k; ++i) {
    chain.push_back(&net.add_switch(testing::numbered("s", i + 1), params));
  }
  testing::PacketEndpoint& a = net.add_endpoint("h1", 1);
  testing::PacketEndpoint& b = net.add_endpoint("h2", 2);
  net.connect(a.port(), chain.front()->port(1), testing::edr_link(2));
  for (int i = 0; i + 1 < k; ++i) {
    net.connect(chain[i]->port(2), chain[i + 1]->port(1), testing::edr_link(2));
  }
  net.connect(chain.back()->port(2), b.port(), testing::edr_link(2));
  net.route_shortest_paths();
  a.add_flow(write_flow(2, 1, payload));
  net.start();
  net.drain();
  *problems += net.check_invariants(true);
  const testing::SourceStats* stats = b.stats_from(1, 0);
  if (stats == nullptr || stats->packets != 1) {
    *problems += "the packet did not arrive; ";
    return 0;
  }
  return stats->latency_min.ps();
}

} // namespace

TEST_CASE("sw::Switch: one packet through a chain of 1 to 4 switches has the analytic latency", "[switch][quick]") {
  // Every cable is 10 ns, every link 4x EDR. Cut-through: each switch starts sending max(L, LRH time) after the
  // first bit is in and, input and output running at one rate, its tail never holds it back, so each hop adds
  // prop + L and serialization is paid once: (k+1) prop + k L + ser(B). Store-and-forward waits for the tail at
  // every switch: (k+1) (prop + ser(B)) + k L.
  const std::int64_t prop_ps = 10'000;
  struct Case {
    std::uint32_t payload;
    std::int64_t ser_ps;
  };
  // 4096 B WRITE ONLY: 4138 B = 331.04 ns; 256 B: 8 + 12 + 16 + 256 + 4 + 2 = 298 B = 23.84 ns (< L: the tail
  // is in before the switch may start).
  const Case cases[] = {{4096, 331'040}, {256, 23'840}};
  bool cut_through = true;
  sim::Time latency;
  std::int64_t per_switch_ps = 0; // what each switch adds besides cables and serialization
  SECTION("cut-through with a 100 ns port-to-port latency") {
    latency = sim::Time::from_ns(100);
    per_switch_ps = 100'000;
  }
  SECTION("cut-through with no latency waits for the 8-byte LRH: 0.64 ns at EDR") {
    latency = sim::Time::zero();
    per_switch_ps = 640;
  }
  SECTION("store-and-forward with a 100 ns latency") {
    cut_through = false;
    latency = sim::Time::from_ns(100);
    per_switch_ps = 100'000;
  }
  for (const Case c : cases) {
    for (int k = 1; k <= 4; ++k) {
      INFO("payload " << c.payload << " B through " << k << " switches");
      const std::int64_t serializations = cut_through ? 1 : k + 1;
      std::string problems;
      CHECK(chain_latency_ps(k, cut_through, latency, c.payload, &problems) ==
            (k + 1) * prop_ps + k * per_switch_ps + serializations * c.ser_ps);
      CHECK(problems.empty());
    }
  }
}

TEST_CASE("sw::Switch: a cut-through input holds a packet's 65 credits from its arrival until it has left",
          "[switch][quick]") {
  // First bit in at 10 ns, the switch hears of it 100 ns later (port-to-port latency) and takes its 65 blocks
  // (E3: ceil(4138 / 64)); it sends from 110 ns to 441.04 ns and frees the blocks then.
  TestFabric net;
  sw::Switch& s = net.add_star(2);
  testing::PacketEndpoint& a = net.endpoints[0];
  a.add_flow(write_flow(2, 1));
  net.start();
  net.run(sim::Time::from_ns(109));
  CHECK(s.port(1).used_blocks(0) == 0);
  net.run(sim::Time::from_ns(200));
  CHECK(s.port(1).used_blocks(0) == 65);
  CHECK(net.check_invariants(false).empty());
  net.run(sim::Time::from_ps(441'039));
  CHECK(s.port(1).used_blocks(0) == 65);
  net.run(sim::Time::from_ps(441'040));
  CHECK(s.port(1).used_blocks(0) == 0);
  net.drain();
  CHECK(s.counters().packets_forwarded == 1);
  CHECK(net.check_invariants(true).empty());
}

TEST_CASE("sw::Switch: two saturating inputs share one output evenly at its full rate", "[switch][quick]") {
  // h1 and h2 send 4 KiB WRITEs back to back to h3: the output is oversubscribed 2:1. First come, first served
  // among inputs alternates them, so each gets half; the output never idles, so it runs at 12.5 B/ns less the
  // switch's own FC refresh packets (0.48 ns per 2 us). Measured over 200 us after 20 us of warm-up (about 600
  // packets, so one packet more or less is 0.2 %).
  TestFabric net;
  net.add_star(3);
  testing::PacketEndpoint& h1 = net.endpoints[0];
  testing::PacketEndpoint& h2 = net.endpoints[1];
  testing::PacketEndpoint& h3 = net.endpoints[2];
  // 1000 packets each keep both sources saturated past the window (they need about 660 us).
  h1.add_flow(write_flow(3, 1000));
  h2.add_flow(write_flow(3, 1000));
  net.start();
  const sim::Time warm_up = sim::Time::from_us(20);
  const sim::Time window_end = sim::Time::from_us(220);
  CHECK(run_checked(net, warm_up, sim::Time::from_us(5)).empty());
  const std::uint64_t from_h1_before = wire_bytes_from(h3, 1, 0);
  const std::uint64_t from_h2_before = wire_bytes_from(h3, 2, 0);
  CHECK(run_checked(net, window_end, sim::Time::from_us(10)).empty());
  const auto from_h1 = static_cast<double>(wire_bytes_from(h3, 1, 0) - from_h1_before);
  const auto from_h2 = static_cast<double>(wire_bytes_from(h3, 2, 0) - from_h2_before);
  const double window_ns = (window_end - warm_up).ns();
  INFO("h1 " << from_h1 << " B, h2 " << from_h2 << " B in " << window_ns << " ns");
  CHECK(std::abs(from_h1 / (from_h1 + from_h2) - 0.5) <= 0.005);
  CHECK((from_h1 + from_h2) / window_ns >= 0.99 * edr_bytes_per_ns);
  CHECK_FALSE(h1.sources_done());
  CHECK_FALSE(h2.sources_done());
  net.drain();
  CHECK(h3.packets_received() == 2000);
  CHECK(net.check_invariants(true).empty());
}

TEST_CASE("sw::Switch: weighted VL arbitration splits a saturated output by the configured weights",
          "[switch][quick]") {
  // h1 on VL0 and h2 on VL1 saturate the output to h3 with 256 B WRITEs (298 B on the wire). The output's low
  // table gives VL0 weight 64 (4096 B per turn) and VL1 weight 192 (12288 B); no high table, VLHighLimit 0.
  // A packet that starts with weight left completes: VL0 sends ceil(4096 / 298) = 14 packets per turn and VL1
  // ceil(12288 / 298) = 42, so the byte ratio is 3.0, the configured 192 / 64.
  TestFabric net;
  sw::Switch& s = net.add_switch("s1");
  testing::PacketEndpoint& h1 = net.add_endpoint("h1", 1);
  testing::PacketEndpoint& h2 = net.add_endpoint("h2", 2);
  testing::PacketEndpoint& h3 = net.add_endpoint("h3", 3);
  net.connect(h1.port(), s.port(1), testing::edr_link(2));
  net.connect(h2.port(), s.port(2), testing::edr_link(2));
  net.connect(h3.port(), s.port(3), testing::edr_link(2));
  // After connect(), which installs OpenSM's default tables.
  s.port(3).set_vl_arbitration(link::VlArbConfig{{}, {{0, 64}, {1, 192}}, 0, 8});
  net.route_shortest_paths();
  // Enough packets that both VLs stay backlogged through the window (VL0 needs about 8700 at 25 %).
  h1.add_flow(write_flow(3, 10'000, 256, 0));
  h2.add_flow(write_flow(3, 10'000, 256, 1));
  net.start();
  const sim::Time warm_up = sim::Time::from_us(20);
  const sim::Time window_end = sim::Time::from_us(220);
  CHECK(run_checked(net, warm_up, sim::Time::from_us(5)).empty());
  const std::uint64_t vl0_before = wire_bytes_from(h3, 1, 0);
  const std::uint64_t vl1_before = wire_bytes_from(h3, 2, 1);
  CHECK(run_checked(net, window_end, sim::Time::from_us(10)).empty());
  const auto vl0 = static_cast<double>(wire_bytes_from(h3, 1, 0) - vl0_before);
  const auto vl1 = static_cast<double>(wire_bytes_from(h3, 2, 1) - vl1_before);
  INFO("VL0 " << vl0 << " B, VL1 " << vl1 << " B");
  CHECK(std::abs(vl1 / vl0 / 3.0 - 1) <= 0.02);
  CHECK((vl0 + vl1) / (window_end - warm_up).ns() >= 0.99 * edr_bytes_per_ns);
  net.drain();
  CHECK(h3.packets_received() == 20'000);
  CHECK(net.check_invariants(true).empty());
}

TEST_CASE("sw::Switch: a hot spot blocks a victim that shares its VL and not one on another VL", "[switch][quick]") {
  // h1 and h2 saturate h3 (the hot spot D) with 4 KiB WRITEs; h2 also sends a victim flow to h4 offered at 20 %
  // of line rate (one 331.04 ns packet every 1655.2 ns), same packet size. D's link is 4x SDR (8 Gb/s = 1 B/ns)
  // so the hot spot drains each hot source at 0.5 B/ns. On the hot VL the victim waits in h2's input FIFO behind
  // hot packets that each wait about 2 x 4.138 us for D: h2 gets a credit back only that often, so the victim
  // gets about one packet per 8.6 us, a fifth of what it offers. On another VL it has its own buffer and
  // credits and only now and then waits behind one hot packet on h2's link.
  std::uint8_t victim_vl = 0;
  SECTION("victim on the hot flow's VL") {
    victim_vl = 0;
  }
  SECTION("victim on another VL") {
    victim_vl = 1;
  }
  TestFabric net;
  sw::Switch& s = net.add_switch("s1");
  testing::PacketEndpoint& h1 = net.add_endpoint("h1", 1);
  testing::PacketEndpoint& h2 = net.add_endpoint("h2", 2);
  testing::PacketEndpoint& d = net.add_endpoint("h3", 3);
  testing::PacketEndpoint& v = net.add_endpoint("h4", 4);
  net.connect(h1.port(), s.port(1), testing::edr_link(2));
  net.connect(h2.port(), s.port(2), testing::edr_link(2));
  net.connect(d.port(), s.port(3), {link::data_rate(link::Width::x4, link::Speed::sdr), sim::Time::from_ns(10)});
  net.connect(v.port(), s.port(4), testing::edr_link(2));
  net.route_shortest_paths();
  const sim::Time ser = sim::Time::from_ps(331'040);
  h1.add_flow(write_flow(3, 250));
  h2.add_flow(write_flow(3, 250));
  Flow victim = write_flow(4, 1000, 4096, victim_vl);
  victim.gap = ser * 5;
  h2.add_flow(victim);
  net.start();
  const sim::Time warm_up = sim::Time::from_us(50);
  const sim::Time window_end = sim::Time::from_us(1050);
  CHECK(run_checked(net, warm_up, sim::Time::from_us(25)).empty());
  const std::uint64_t victim_before = wire_bytes_from(v, 2, victim_vl);
  const std::uint64_t hot_before = wire_bytes_from(d, 1, 0) + wire_bytes_from(d, 2, 0);
  CHECK(run_checked(net, window_end, sim::Time::from_us(50)).empty());
  const double window_ns = (window_end - warm_up).ns();
  const double victim_rate = static_cast<double>(wire_bytes_from(v, 2, victim_vl) - victim_before) / window_ns;
  const double hot_rate =
      static_cast<double>(wire_bytes_from(d, 1, 0) + wire_bytes_from(d, 2, 0) - hot_before) / window_ns;
  const double offered = 4138.0 / (ser * 5).ns();
  INFO("victim " << victim_rate << " B/ns of " << offered << " offered; hot spot " << hot_rate << " B/ns");
  // The hot spot runs at its full 1 B/ns either way.
  CHECK(hot_rate >= 0.99);
  if (victim_vl == 0) {
    CHECK(victim_rate < 0.5 * offered);
  } else {
    CHECK(victim_rate >= 0.95 * offered);
  }
  net.drain();
  CHECK(d.packets_received() == 500);
  CHECK(v.packets_received() == 1000);
  CHECK(net.check_invariants(true).empty());
}

TEST_CASE("sw::Switch: with virtual output queues a packet waits only behind packets for its own output",
          "[switch][quick]") {
  // h1 sends three 4 KiB WRITEs to h3, whose link is 4x SDR (4.138 us each), then at 1.2 us one to h4 (EDR). With
  // one FIFO per input VL, h4's packet waits in h1's input until the third h3 packet has started out, after two
  // SDR serializations; with a FIFO per output it leaves at once: 10 ns cable + 100 ns switch + 10 ns cable +
  // 331.04 ns serialization.
  bool voq = false;
  SECTION("one FIFO per input VL") {
    voq = false;
  }
  SECTION("virtual output queues") {
    voq = true;
  }
  TestFabric net;
  sw::Params params = testing::test_switch_params();
  params.virtual_output_queues = voq;
  REQUIRE(sw::validate(params).empty());
  sw::Switch& s = net.add_switch("s1", params);
  testing::PacketEndpoint& h1 = net.add_endpoint("h1", 1);
  testing::PacketEndpoint& h2 = net.add_endpoint("h2", 2);
  testing::PacketEndpoint& h3 = net.add_endpoint("h3", 3);
  testing::PacketEndpoint& h4 = net.add_endpoint("h4", 4);
  net.connect(h1.port(), s.port(1), testing::edr_link(2));
  net.connect(h2.port(), s.port(2), testing::edr_link(2));
  net.connect(h3.port(), s.port(3), {link::data_rate(link::Width::x4, link::Speed::sdr), sim::Time::from_ns(10)});
  net.connect(h4.port(), s.port(4), testing::edr_link(2));
  net.route_shortest_paths();
  h1.add_flow(write_flow(3, 3));
  Flow late = write_flow(4, 1);
  late.start_at = sim::Time::from_ns(1200);
  h1.add_flow(late);
  net.start();
  net.drain();
  const testing::SourceStats* to_h4 = h4.stats_from(1, 0);
  const testing::SourceStats* to_h3 = h3.stats_from(1, 0);
  REQUIRE(to_h4 != nullptr);
  REQUIRE(to_h3 != nullptr);
  CHECK(to_h3->packets == 3);
  if (voq) {
    CHECK(to_h4->latency_min.ps() == 10'000 + 100'000 + 10'000 + 331'040);
  } else {
    CHECK(to_h4->latency_min > sim::Time::from_ns(2 * 4138));
  }
  CHECK(net.check_invariants(true).empty());
}

TEST_CASE("sw::Switch: virtual output queues that a switch cannot index are refused", "[switch][quick]") {
  sw::Params params = testing::test_switch_params();
  params.virtual_output_queues = true;
  params.port_count = 64;
  CHECK(sw::validate(params).empty()); // 9 x 65 x 65 queues
  params.port_count = 100;
  CHECK(sw::validate(params).find("virtual_output_queues") == 0);
}

TEST_CASE("sw::Switch: a packet with no route is an unroutable-packet invariant violation", "[switch][quick]") {
  TestFabric net;
  sw::Switch& s = net.add_star(2);
  testing::PacketEndpoint& h1 = net.endpoints[0];
  testing::PacketEndpoint& h2 = net.endpoints[1];
  std::uint16_t dlid = 2;
  std::string why;
  SECTION("DLID beyond the LFT") {
    dlid = 7;
    why = "no route for its DLID";
  }
  SECTION("LFT entry set to no route") {
    s.set_forwarding_table({sw::no_route, 1, sw::no_route});
    why = "no route for its DLID";
  }
  SECTION("LFT entry naming a port with no cable") {
    s.set_forwarding_table({sw::no_route, 1, 5});
    why = "no route for its DLID";
  }
  SECTION("LFT entry sending it back out of its input port") {
    s.set_forwarding_table({sw::no_route, 1, 1});
    why = "back out of its input port";
  }
  h1.add_flow(write_flow(dlid, 1));
  net.start();
  try {
    net.drain();
    FAIL("no exception");
  } catch (const sim::InvariantViolation& e) {
    CHECK(e.id() == "unroutable-packet");
    CHECK(e.component() == "s1/p1");
    CHECK_THAT(e.detail(), Catch::Contains("DLID " + std::to_string(dlid)) && Catch::Contains(why));
  }
  CHECK(h2.packets_received() == 0);
}

TEST_CASE("sw::Switch: a finite 4 to 1 overload delivers every packet in order", "[switch][quick]") {
  // Four sources, two on SL0 and two on SL1, send 200 4 KiB WRITEs each to one sink: the output is 4x
  // oversubscribed, inputs back up and credits throttle the sources. Every packet must arrive, in order per
  // source (the sink throws otherwise), and nothing may be left once the fabric drains.
  bool cut_through = true;
  SECTION("cut-through") {
    cut_through = true;
  }
  SECTION("store-and-forward") {
    cut_through = false;
  }
  TestFabric net;
  sw::Params params = testing::test_switch_params();
  params.cut_through = cut_through;
  sw::Switch& s = net.add_switch("s1", params);
  std::vector<testing::PacketEndpoint*> sources;
  for (std::uint16_t lid = 1; lid <= 4; ++lid) {
    sources.push_back(&net.add_endpoint(testing::numbered("h", lid), lid));
  }
  testing::PacketEndpoint& sink = net.add_endpoint("h5", 5);
  for (std::uint8_t p = 1; p <= 4; ++p) {
    net.connect(sources[p - 1]->port(), s.port(p), testing::edr_link(2));
  }
  net.connect(sink.port(), s.port(5), testing::edr_link(2));
  net.route_shortest_paths();
  for (std::uint16_t lid = 1; lid <= 4; ++lid) {
    sources[lid - 1]->add_flow(write_flow(5, 200, 4096, static_cast<std::uint8_t>(lid % 2)));
  }
  net.start();
  // 800 packets at 331.04 ns take about 265 us on the output.
  CHECK(run_checked(net, sim::Time::from_us(200), sim::Time::from_us(10)).empty());
  CHECK(sink.packets_received() < 800);
  net.drain();
  for (std::uint16_t lid = 1; lid <= 4; ++lid) {
    INFO("source h" << lid);
    const testing::SourceStats* stats = sink.stats_from(lid, static_cast<std::uint8_t>(lid % 2));
    REQUIRE(stats != nullptr);
    CHECK(stats->packets == 200);
  }
  CHECK(sink.packets_received() == 800);
  CHECK(s.counters().packets_forwarded == 800);
  CHECK(s.port(5).counters().xmit_pkts == 800);
  CHECK(net.pool.live() == 0);
  CHECK(net.check_invariants(true).empty());
}

TEST_CASE("sw::Switch: SL2VL is looked up per input and output port pair", "[switch][quick]") {
  TestFabric net;
  sw::Switch& s = net.add_star(3);
  testing::PacketEndpoint& a = net.endpoints[0];
  testing::PacketEndpoint& b = net.endpoints[1];
  testing::PacketEndpoint& sink = net.endpoints[2];
  // The same SL 3 leaves on VL 2 when it came in on port 1 and on VL 5 when it came in on port 2.
  std::array<std::uint8_t, 16> from_port1{};
  std::array<std::uint8_t, 16> from_port2{};
  from_port1[3] = 2;
  from_port2[3] = 5;
  s.set_sl_to_vl(1, 3, from_port1);
  s.set_sl_to_vl(2, 3, from_port2);
  a.add_flow(write_flow(3, 7, 256, 3));
  b.add_flow(write_flow(3, 11, 256, 3));
  net.start();
  net.drain();
  const link::PortCounters& out = s.port(3).counters();
  CHECK(out.xmit_pkts_by_vl[2] == 7);
  CHECK(out.xmit_pkts_by_vl[5] == 11);
  CHECK(out.xmit_pkts_by_vl[3] == 0);
  CHECK(sink.packets_received() == 18);
  CHECK(net.check_invariants(true).empty());
}

TEST_CASE("sw::Switch: VL15 packets need no credits and reach the management port", "[switch][quick]") {
  TestFabric net;
  sw::Switch& s = net.add_switch("s1");
  testing::PacketEndpoint& a = net.add_endpoint("h1", 1);
  testing::PacketEndpoint& b = net.add_endpoint("h2", 2);
  net.connect(a.port(), s.port(1), testing::edr_link(2));
  net.connect(b.port(), s.port(2), testing::edr_link(2));
  // LID 3 is the switch itself: LFT entry 0 (IBA §18.2.4.3: port 0 is the switch's management port).
  s.set_forwarding_table({sw::no_route, 1, 2, sw::management_port});
  Flow mads = write_flow(3, 10, 256);
  mads.opcode = link::Opcode::send_only;
  mads.vl = link::management_vl;
  mads.sl = 15;
  a.add_flow(mads);
  net.start();
  net.drain();
  CHECK(s.counters().packets_to_management == 10);
  CHECK(s.counters().packets_forwarded == 0);
  CHECK(a.port().counters().xmit_pkts_by_vl[15] == 10);
  // No flow-control packet concerns VL15: the data VLs' credits never moved.
  CHECK(s.port(1).counters().flow_control_pkts == 0);
  CHECK(net.check_invariants(true).empty());
}

TEST_CASE("sw::Switch: VL15 packets are dropped, not flow-controlled, when the switch has no slot", "[switch][quick]") {
  TestFabric net;
  sw::Switch& s = net.add_switch("s1");
  testing::PacketEndpoint& a = net.add_endpoint("h1", 1);
  testing::PacketEndpoint& b = net.add_endpoint("h2", 2);
  net.connect(a.port(), s.port(1), testing::edr_link(2));
  // The way out is 1x SDR (2 Gb/s), 50 times slower than the way in: VL15's 4 slots at port 1 overflow.
  net.connect(b.port(), s.port(2), {link::data_rate(link::Width::x1, link::Speed::sdr), sim::Time::from_ns(10)});
  net.route_shortest_paths();
  Flow mads = write_flow(2, 20, 256);
  mads.opcode = link::Opcode::send_only;
  mads.vl = link::management_vl;
  mads.sl = 15;
  a.add_flow(mads);
  net.start();
  net.drain();
  const std::uint64_t dropped = s.port(1).counters().vl15_dropped;
  CHECK(dropped > 0);
  CHECK(b.packets_received() + dropped == 20);
  CHECK(net.pool.live() == 0);
  CHECK(net.check_invariants(true).empty());
}

namespace {

/// Per-port counters of a small leaf-spine under uniform random traffic, as one comparable vector.
std::vector<std::uint64_t> leaf_spine_fingerprint(std::uint64_t seed) {
  TestFabric net(seed);
  constexpr std::uint32_t leaves = 4;
  constexpr std::uint32_t spines = 2;
  constexpr std::uint32_t hosts_per_leaf = 4;
  for (std::uint32_t l = 0; l < leaves; ++l) {
    net.add_switch(testing::numbered("leaf", l));
  }
  for (std::uint32_t s = 0; s < spines; ++s) {
    net.add_switch(testing::numbered("spine", s));
  }
  for (std::uint32_t h = 0; h < leaves * hosts_per_leaf; ++h) {
    testing::PacketEndpoint& e = net.add_endpoint(testing::numbered("h", h), static_cast<std::uint16_t>(h + 1));
    net.connect(e.port(), net.switches[h / hosts_per_leaf].port(static_cast<std::uint8_t>(h % hosts_per_leaf + 1)),
                testing::edr_link(2));
    Flow f;
    f.uniform_dlid_first = 1;
    f.uniform_dlid_last = leaves * hosts_per_leaf;
    f.payload_bytes = 1024;
    f.packets = 300;
    e.add_flow(f);
  }
  for (std::uint32_t l = 0; l < leaves; ++l) {
    for (std::uint32_t s = 0; s < spines; ++s) {
      net.connect(net.switches[l].port(static_cast<std::uint8_t>(hosts_per_leaf + s + 1)),
                  net.switches[leaves + s].port(static_cast<std::uint8_t>(l + 1)), testing::edr_link(2));
    }
  }
  net.route_shortest_paths();
  net.start();
  net.drain();
  REQUIRE(net.check_invariants(true).empty());
  std::vector<std::uint64_t> fingerprint = {net.sim.events_dispatched(),
                                            static_cast<std::uint64_t>(net.sim.now().ps())};
  for (const auto& [a, b] : net.links) {
    for (const link::Port* p : {a, b}) {
      const link::PortCounters c = p->counters();
      fingerprint.insert(fingerprint.end(), {c.xmit_data_words, c.rcv_data_words, c.xmit_pkts, c.flow_control_pkts,
                                             static_cast<std::uint64_t>(c.xmit_wait.ps())});
    }
  }
  return fingerprint;
}

} // namespace

TEST_CASE("sw::Switch: the same seed gives bit-identical counters and another seed does not", "[switch][quick]") {
  const std::vector<std::uint64_t> first = leaf_spine_fingerprint(11);
  CHECK(leaf_spine_fingerprint(11) == first);
  CHECK(leaf_spine_fingerprint(12) != first);
}
