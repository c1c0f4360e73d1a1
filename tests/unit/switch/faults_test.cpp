// Faults on links and switches (issue 23): a link going down loses what is on its wire and in its buffers, and
// what the switches hold for it, each loss counted once by cause; the link comes back with working credits; bit
// errors drop corrupted packets at the receiver, and lost flow-control packets heal with the next one. Every
// test checks packet conservation: sent = received + counted losses, with nothing left in the fabric.
#include <cmath>
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "models/switch/switch.h"
#include "sim/errors.h"
#include "tests/support/test_fabric.h"

using namespace ib;
using ib::testing::TestFabric;
using ib::testing::write_flow;

namespace {

/// h1 - s1 - s2 - h2 (and h3 on s2), 2 m EDR cables; the s1-s2 link is links[1].
struct Line {
  TestFabric net;
  Line() {
    sw::Switch& s1 = net.add_switch("s1");
    sw::Switch& s2 = net.add_switch("s2");
    net.connect(net.add_endpoint("h1", 1).port(), s1.port(1), testing::edr_link(2));
    net.connect(s1.port(2), s2.port(2), testing::edr_link(20));
    net.connect(s2.port(1), net.add_endpoint("h2", 2).port(), testing::edr_link(2));
    net.connect(s2.port(3), net.add_endpoint("h3", 3).port(), testing::edr_link(2));
    net.route_shortest_paths();
    for (sw::Switch& s : net.switches)
      s.set_fault_handling(nullptr);
    for (testing::PacketEndpoint& e : net.endpoints)
      e.check_order(false); // losses leave gaps
  }
  sw::Switch& s1() { return net.switches[0]; }
  sw::Switch& s2() { return net.switches[1]; }
  void trunk_down() {
    link::link_down(net.sim, s1().port(2), s2().port(2));
    s1().on_link_down(net.sim, 2);
    s2().on_link_down(net.sim, 2);
  }
  void trunk_up() { link::link_up(net.sim, s1().port(2), s2().port(2)); }
  std::uint64_t lost() const {
    std::uint64_t n = 0;
    for (const auto& [a, b] : net.links)
      n += a->counters().packets_lost() + b->counters().packets_lost();
    return n;
  }
  std::uint64_t sent() const {
    std::uint64_t n = 0;
    for (const testing::PacketEndpoint& e : net.endpoints)
      n += e.packets_sent();
    return n;
  }
  std::uint64_t received() const {
    std::uint64_t n = 0;
    for (const testing::PacketEndpoint& e : net.endpoints)
      n += e.packets_received();
    return n;
  }
};

} // namespace

TEST_CASE("faults: a link going down loses its wire's and buffers' packets, each counted once, and nothing leaks",
          "[switch][faults]") {
  Line line;
  line.net.endpoints[0].add_flow(write_flow(2, 400));
  line.net.start();
  line.net.run(sim::Time::from_us(20));
  const std::uint64_t received_before = line.net.endpoints[1].packets_received();
  REQUIRE(received_before > 0);
  line.trunk_down();
  CHECK(line.s1().port(2).down());
  CHECK_FALSE(line.s1().port(2).connected());
  line.net.drain();

  const link::PortCounters near = line.s1().port(2).counters();
  const link::PortCounters far = line.s2().port(2).counters();
  CHECK(near.link_downed == 1);
  CHECK(far.link_downed == 1);
  // The 20 m trunk holds about a packet on the wire, and h1 kept sending after it went down: s1 discards those.
  CHECK(far.lost_on_wire >= 1);
  CHECK(near.xmit_discards > 100);
  CHECK(line.net.endpoints[0].packets_sent() == 400);
  CHECK(line.sent() == line.received() + line.lost());
  CHECK(line.net.check_invariants(true).empty());
}

TEST_CASE("faults: a link that comes back carries traffic again with credits conserved", "[switch][faults]") {
  Line line;
  testing::Flow flow = write_flow(2, 2000);
  flow.gap = sim::Time::from_ns(400); // about 80 % of the link
  line.net.endpoints[0].add_flow(flow);
  line.net.endpoints[2].add_flow(write_flow(1, 1000)); // the other way, from h3
  line.net.start();
  line.net.run(sim::Time::from_us(100));
  line.trunk_down();
  line.net.run(sim::Time::from_us(200));
  const std::uint64_t at_up = line.net.endpoints[1].packets_received();
  line.trunk_up();
  CHECK(line.s1().port(2).connected());
  line.net.drain();
  // Packets sent after the link came back arrive: h1 was still sending (2000 packets at 400 ns take 800 us).
  CHECK(line.net.endpoints[1].packets_received() > at_up + 1000);
  CHECK(line.sent() == line.received() + line.lost());
  CHECK(line.lost() > 0);
  CHECK(line.net.check_invariants(true).empty());
}

TEST_CASE("faults: packets queued in a switch for a port that goes down are dropped, the rest keep flowing",
          "[switch][faults]") {
  Line line;
  // h2 and h3 both send to h1 through the trunk, and h2 also to h3 on the same switch (not through the trunk).
  line.net.endpoints[1].add_flow(write_flow(1, 300));
  line.net.endpoints[2].add_flow(write_flow(1, 300));
  testing::Flow local = write_flow(3, 300);
  line.net.endpoints[1].add_flow(local);
  line.net.start();
  line.net.run(sim::Time::from_us(10));
  line.trunk_down();
  line.net.drain();
  // Every local packet arrives: only traffic for the trunk is lost.
  const testing::SourceStats* to_h3 = line.net.endpoints[2].stats_from(2, 0);
  REQUIRE(to_h3 != nullptr);
  CHECK(to_h3->packets == 300);
  CHECK(line.s2().port(2).counters().xmit_discards > 0);
  CHECK(line.sent() == line.received() + line.lost());
  CHECK(line.net.check_invariants(true).empty());
}

TEST_CASE("faults: without fault handling, a packet for a cabled-but-down port is still an unroutable-packet error",
          "[switch][faults]") {
  TestFabric net;
  sw::Switch& s1 = net.add_switch("s1");
  sw::Switch& s2 = net.add_switch("s2");
  net.connect(net.add_endpoint("h1", 1).port(), s1.port(1), testing::edr_link(2));
  net.connect(s1.port(2), s2.port(2), testing::edr_link(2));
  net.connect(s2.port(1), net.add_endpoint("h2", 2).port(), testing::edr_link(2));
  net.route_shortest_paths();
  link::link_down(net.sim, s1.port(2), s2.port(2));
  net.endpoints[0].add_flow(write_flow(2, 1));
  net.start();
  CHECK_THROWS_AS(net.drain(), sim::InvariantViolation);
}

TEST_CASE("faults: bit errors drop corrupted packets at the receiver and lost flow-control packets heal",
          "[switch][faults]") {
  Line line;
  // 256-byte payloads: about 2,400 bits, so at 1e-4 a fifth of the data packets and half a percent of the 48-bit
  // flow-control packets are hit, in both directions of the trunk.
  line.s1().port(2).set_bit_error_rate(1e-4, sim::Rng(7, 1));
  line.s2().port(2).set_bit_error_rate(1e-4, sim::Rng(7, 2));
  line.net.endpoints[0].add_flow(write_flow(2, 20000, 256));
  line.net.endpoints[2].add_flow(write_flow(1, 20000, 256));
  line.net.start();
  line.net.drain();
  const link::PortCounters near = line.s1().port(2).counters();
  const link::PortCounters far = line.s2().port(2).counters();
  const double hit = static_cast<double>(far.rcv_errors) / 20000.0;
  const std::uint32_t bytes = link::wire_bytes(link::Transport::rc, link::Opcode::rdma_write_only, 256, false);
  const double expected = -std::expm1(8.0 * bytes * std::log1p(-1e-4));
  CHECK(hit == Approx(expected).epsilon(0.1));
  CHECK(near.rcv_errors > 0);
  CHECK(far.symbol_errors >= far.rcv_errors);
  CHECK(near.flow_control_lost + far.flow_control_lost > 0);
  // Every packet was sent (no credit was lost for good) and each is received or counted lost.
  CHECK(line.net.endpoints[0].packets_sent() == 20000);
  CHECK(line.net.endpoints[2].packets_sent() == 20000);
  CHECK(line.sent() == line.received() + line.lost());
  CHECK(line.net.check_invariants(true).empty());
}

namespace {

/// h1 (port 1) and h3 (port 4) on s1, h2 (port 1) on s2, s1 and s2 joined by two trunks (ports 2 and 3 on both);
/// s1 routes DLID 2 (h2) adaptively over both trunks, the LFT's port first.
struct Trunks {
  TestFabric net;
  std::uint8_t static_port = 0, other_port = 0;
  Trunks() {
    sw::Switch& s1 = net.add_switch("s1");
    sw::Switch& s2 = net.add_switch("s2");
    net.connect(net.add_endpoint("h1", 1).port(), s1.port(1), testing::edr_link(2));
    net.connect(s2.port(1), net.add_endpoint("h2", 2).port(), testing::edr_link(2));
    net.connect(net.add_endpoint("h3", 3).port(), s1.port(4), testing::edr_link(2));
    net.connect(s1.port(2), s2.port(2), testing::edr_link(20));
    net.connect(s1.port(3), s2.port(3), testing::edr_link(20));
    net.route_shortest_paths();
    static_port = s1.forwarding_table().at(2);
    other_port = static_port == 2 ? 3 : 2;
    s1.set_adaptive_routing({0, 0, 1, 0}, {{static_port, other_port}});
    for (sw::Switch& s : net.switches)
      s.set_fault_handling(nullptr);
    for (testing::PacketEndpoint& e : net.endpoints)
      e.check_order(false); // adaptive routing and losses reorder
    // h1 and h3 both send to h2: its one link is the bottleneck, so s1 queues packets for the trunks.
    net.endpoints[0].add_flow(write_flow(2, 2000));
    net.endpoints[2].add_flow(write_flow(2, 2000));
  }
  sw::Switch& s1() { return net.switches[0]; }
  void trunk_down(std::uint8_t port) {
    link::link_down(net.sim, s1().port(port), net.switches[1].port(port));
    s1().on_link_down(net.sim, port);
    net.switches[1].on_link_down(net.sim, port);
  }
  std::uint64_t sent() const { return net.endpoints[0].packets_sent() + net.endpoints[2].packets_sent(); }
  std::uint64_t lost() const {
    std::uint64_t n = 0;
    for (const auto& [a, b] : net.links)
      n += a->counters().packets_lost() + b->counters().packets_lost();
    return n;
  }
};

} // namespace

TEST_CASE("faults: with every port of an adaptive group down a packet takes the LFT's current entry",
          "[switch][faults][adaptive]") {
  Trunks t;
  t.net.start();
  t.net.run(sim::Time::from_us(30));
  t.trunk_down(2);
  t.trunk_down(3);
  // The SM found no path left and wrote "no route" before it rewrote the AR tables: the group is still there,
  // every port of it down, and packets follow the LFT into a counted loss (no route), not to a dead port.
  const std::uint8_t no_route[] = {sw::no_route};
  t.s1().set_forwarding_entries(2, no_route);
  const std::uint64_t relay_before = t.s1().port(1).counters().rcv_switch_relay_errors;
  t.net.run(sim::Time::from_us(60));
  CHECK(t.s1().port(1).counters().rcv_switch_relay_errors > relay_before);
  t.net.drain();
  CHECK(t.sent() == 4000);
  CHECK(t.sent() == t.net.endpoints[1].packets_received() + t.lost());
  CHECK(t.net.check_invariants(true).empty());
}

TEST_CASE("adaptive routing: AR tables rewritten mid-run keep the per-output load of the packets already queued",
          "[switch][adaptive]") {
  Trunks t;
  t.net.start();
  t.net.run(sim::Time::from_us(30));
  // Packets wait in s1 for both trunks; the new tables put the other trunk first and add a group nobody uses.
  REQUIRE(t.s1().port(1).used_blocks(0) + t.s1().port(4).used_blocks(0) > 0);
  t.s1().update_adaptive_routing({0, 0, 1, 2}, {{t.other_port, t.static_port}, {t.static_port, t.other_port}});
  t.net.run(sim::Time::from_us(40));
  CHECK(t.s1().check_invariants().empty());
  t.net.drain();
  CHECK(t.net.endpoints[1].packets_received() == 4000);
  CHECK(t.s1().counters().adaptive_off_static > 0);
  CHECK(t.net.check_invariants(true).empty()); // the load counts went back to zero, not below
}
