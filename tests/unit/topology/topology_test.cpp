// The wiring graph itself: nodes, ports, links, lookups, and the GUID scheme.
#include <catch2/catch.hpp>

#include "models/topology/topology.h"

namespace topo = ib::topo;
using topo::NodeKind;
using topo::PortRef;

namespace {

topo::Node make_node(std::string name, NodeKind kind, unsigned ports, topo::NodeIndex index) {
  topo::Node n{};
  n.name = std::move(name);
  n.kind = kind;
  n.profile = kind == NodeKind::hca ? "connectx4-edr" : "switch-ib2-edr";
  n.port_count = ports;
  n.node_guid = topo::default_node_guid(kind, index);
  n.system_image_guid = n.node_guid;
  n.port_guids = topo::default_port_guids(kind, n.node_guid, ports);
  return n;
}

} // namespace

TEST_CASE("topology::Topology: ports, peers and links of a host on a switch", "[topology][quick]") {
  topo::Topology t;
  const auto h = t.add_node(make_node("h0", NodeKind::hca, 1, 0));
  const auto s = t.add_node(make_node("leaf0", NodeKind::switch_node, 36, 1));
  CHECK(t.node_count() == 2);
  CHECK(t.peer(s, 5).node == topo::no_node);
  const auto l = t.add_link({PortRef{h, 1}, PortRef{s, 5}, ib::link::Width::x4, ib::link::Speed::edr, 2, "copper-dac"});
  CHECK(l == 0);
  CHECK(t.link_count() == 1);
  CHECK(t.peer(h, 1) == PortRef{s, 5});
  CHECK(t.peer(s, 5) == PortRef{h, 1});
  CHECK(t.peer(s, 4).node == topo::no_node);
  CHECK(t.peer(s, 0).node == topo::no_node); // the management port is never cabled
  CHECK(t.link_at(s, 5) == 0);
  CHECK(t.link_at(h, 1) == 0);
  CHECK(t.find("leaf0") == s);
  CHECK(t.find("h0") == h);
  CHECK_FALSE(t.find("h1").has_value());
  CHECK_FALSE(t.find("").has_value());
}

TEST_CASE("topology::Topology: name lookup over 10k nodes", "[topology][quick]") {
  topo::Topology t;
  for (topo::NodeIndex i = 0; i < 10'000; ++i) {
    t.add_node(make_node(std::string("n").append(std::to_string(i)), NodeKind::hca, 1, i));
  }
  for (topo::NodeIndex i = 0; i < 10'000; i += 997) {
    CHECK(t.find(std::string("n").append(std::to_string(i))) == i);
  }
}

TEST_CASE("topology::Topology: equality covers nodes, links, names and grid", "[topology][quick]") {
  topo::Topology a;
  a.add_node(make_node("h0", NodeKind::hca, 1, 0));
  topo::Topology b = a;
  CHECK(a == b);
  b.grid = topo::GridShape{{2, 2}, true};
  CHECK_FALSE(a == b);
  b = a;
  b.name = "other";
  CHECK_FALSE(a == b);
}

TEST_CASE("topology::without_links: same nodes and indices, the other links in order, and links_of",
          "[topology][quick]") {
  topo::Topology t;
  t.name = "ring";
  const auto a = t.add_node(make_node("a", NodeKind::switch_node, 4, 0));
  const auto b = t.add_node(make_node("b", NodeKind::switch_node, 4, 1));
  const auto c = t.add_node(make_node("c", NodeKind::switch_node, 4, 2));
  const auto h = t.add_node(make_node("h", NodeKind::hca, 1, 3));
  const auto link = [&](topo::NodeIndex x, unsigned px, topo::NodeIndex y, unsigned py) {
    return t.add_link({PortRef{x, static_cast<topo::PortNumber>(px)}, PortRef{y, static_cast<topo::PortNumber>(py)},
                       ib::link::Width::x4, ib::link::Speed::edr, 2, "copper-dac"});
  };
  link(a, 1, b, 1); // 0
  link(b, 2, c, 1); // 1
  link(c, 2, a, 2); // 2
  link(h, 1, a, 3); // 3
  CHECK(topo::links_of(t, a) == std::vector<std::uint32_t>{0, 2, 3});
  CHECK(topo::links_of(t, h) == std::vector<std::uint32_t>{3});

  const std::vector<std::uint32_t> down{2, 0, 2}; // repeats are harmless
  const topo::Topology d = topo::without_links(t, down);
  CHECK(d.nodes() == t.nodes());
  CHECK(d.name == "ring");
  REQUIRE(d.link_count() == 2);
  CHECK(d.link(0) == t.link(1));
  CHECK(d.link(1) == t.link(3));
  CHECK(d.peer(a, 1).node == topo::no_node);
  CHECK(d.peer(a, 2).node == topo::no_node);
  CHECK(d.peer(a, 3) == PortRef{h, 1});
  CHECK(d.peer(b, 2) == PortRef{c, 1});
  CHECK(d.find("c") == c);
  // A failed switch: all its links down leaves it without a link.
  const topo::Topology no_a = topo::without_links(t, topo::links_of(t, a));
  CHECK(topo::links_of(no_a, a).empty());
  CHECK(no_a.link_count() == 1);
  CHECK(topo::without_links(t, {}) == t);
}

TEST_CASE("topology::default_node_guid: OUI, kind and node index", "[topology][quick]") {
  CHECK(topo::default_node_guid(NodeKind::hca, 0) == 0x0002c90100000100u);
  CHECK(topo::default_node_guid(NodeKind::switch_node, 16) == 0x0002c90200001100u);
  CHECK(topo::default_port_guids(NodeKind::switch_node, 0x100, 36) == std::vector<std::uint64_t>{0x100});
  CHECK(topo::default_port_guids(NodeKind::hca, 0x100, 2) == std::vector<std::uint64_t>{0x101, 0x102});
  CHECK(topo::format_guid(0x0002c90100000100u) == "0x0002c90100000100");
  CHECK(topo::to_string(NodeKind::hca) == "hca");
  CHECK(topo::to_string(NodeKind::switch_node) == "switch");
}
