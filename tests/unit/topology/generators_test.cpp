// The generators against their analytic shapes (k-ary n-trees: k^n hosts, n·k^(n-1) switches, n·k^n links;
// leaf-spine; dragonfly groups each joined once; torus and mesh degrees), their port conventions, determinism,
// and the loader: every output passes its checks and reads back equal from its own JSON.
#include <functional>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include "models/topology/catalog.h"
#include "models/topology/generators.h"
#include "models/topology/topology.h"
#include "sim/errors.h"

namespace topo = ib::topo;
using topo::NodeIndex;
using topo::NodeKind;
using topo::PortRef;

namespace {

topo::CommonOptions edr() {
  return topo::CommonOptions{"switch-ib2-edr", "connectx4-edr", std::nullopt, std::nullopt, 2, "copper-dac", 10,
                             "fibre"};
}

topo::CommonOptions hdr() {
  topo::CommonOptions c = edr();
  c.switch_profile = "quantum-hdr";
  c.hca_profile = "connectx6-hdr";
  return c;
}

std::size_t count_kind(const topo::Topology& t, NodeKind kind) {
  std::size_t n = 0;
  for (const topo::Node& node : t.nodes()) {
    n += node.kind == kind ? 1 : 0;
  }
  return n;
}

NodeIndex node(const topo::Topology& t, const std::string& name) {
  const auto n = t.find(name);
  REQUIRE(n.has_value());
  return *n;
}

/// The peer of `name`/`port` as "name/port", or "" when free.
std::string peer(const topo::Topology& t, const std::string& name, unsigned port) {
  const PortRef p = t.peer(node(t, name), static_cast<topo::PortNumber>(port));
  return p.node == topo::no_node ? "" : t.node(p.node).name + "/" + std::to_string(p.port);
}

/// Cabled ports of node n.
unsigned degree(const topo::Topology& t, NodeIndex n) {
  unsigned d = 0;
  for (unsigned p = 1; p <= t.node(n).port_count; ++p) {
    d += t.peer(n, static_cast<topo::PortNumber>(p)).node != topo::no_node ? 1 : 0;
  }
  return d;
}

/// The loader accepts the generator's output and reads it back equal.
void check_reloads(const topo::Topology& t) {
  topo::ProfileCatalog catalog;
  const topo::Topology back = topo::read_topology(sim::JsonDocument{"gen.json", topo::to_json(t), ""}, catalog);
  CHECK(back == t);
}

std::string option_error(const std::function<void()>& generate) {
  try {
    generate();
  } catch (const topo::OptionError& e) {
    return e.key() + ": expected " + e.expected() + ", got " + e.got();
  }
  return "";
}

} // namespace

TEST_CASE("topology::generate_fat_tree: k-ary n-trees have the analytic counts", "[topology][quick]") {
  topo::ProfileCatalog catalog;
  for (unsigned levels : {2u, 3u}) {
    for (unsigned k : {2u, 3u, 4u}) {
      INFO("k = " << k << ", n = " << levels);
      const topo::Topology t = topo::generate_fat_tree({edr(), k, levels, std::nullopt, std::nullopt}, catalog);
      const std::size_t k_n1 = levels == 2 ? k : k * k;
      CHECK(count_kind(t, NodeKind::hca) == k_n1 * k);
      CHECK(count_kind(t, NodeKind::switch_node) == levels * k_n1);
      CHECK(t.link_count() == levels * k_n1 * k);
      for (NodeIndex n = 0; n < t.node_count(); ++n) {
        const bool top = t.node(n).name.rfind(levels == 2 ? "spine" : "core", 0) == 0;
        CHECK(degree(t, n) == (t.node(n).kind == NodeKind::hca ? 1 : top ? k : 2 * k));
      }
      check_reloads(t);
    }
  }
}

TEST_CASE("topology::generate_fat_tree: port conventions and pods of a 3-level tree", "[topology][quick]") {
  topo::ProfileCatalog catalog;
  const topo::Topology t = topo::generate_fat_tree({edr(), 4, 3, std::nullopt, std::nullopt}, catalog);
  CHECK(t.name == "fat-tree-k4-n3");
  // Leaf 5 is position 1 of pod 1: hosts 20..23 on ports 1..4, then spines 4..7 (pod 1) on ports 5..8.
  CHECK(peer(t, "leaf5", 1) == "h20/1");
  CHECK(peer(t, "leaf5", 4) == "h23/1");
  CHECK(peer(t, "leaf5", 5) == "spine4/2");
  CHECK(peer(t, "leaf5", 8) == "spine7/2");
  // Spine 6 is position 2 of pod 1: leaves 4..7 down on ports 1..4, cores 2, 6, 10, 14 up on ports 5..8.
  CHECK(peer(t, "spine6", 1) == "leaf4/7");
  CHECK(peer(t, "spine6", 5) == "core2/2");
  CHECK(peer(t, "spine6", 8) == "core14/2");
  // Core 2 serves position 2 of every pod, pods in order on ports 1..4.
  for (unsigned pod = 0; pod < 4; ++pod) {
    CHECK(peer(t, "core2", pod + 1) == "spine" + std::to_string(pod * 4 + 2) + "/" + std::to_string(1 + 4 + 0));
  }
  CHECK(peer(t, "core2", 5).empty());
}

TEST_CASE("topology::generate_fat_tree: oversubscribed leaves shrink the upper levels", "[topology][quick]") {
  topo::ProfileCatalog catalog;
  const topo::Topology two = topo::generate_fat_tree({edr(), 4, 2, 6, 2}, catalog);
  CHECK(two.name == "fat-tree-k4-n2-h6u2");
  CHECK(count_kind(two, NodeKind::hca) == 24);
  CHECK(count_kind(two, NodeKind::switch_node) == 4 + 2);
  CHECK(two.link_count() == 24 + 8);
  CHECK(peer(two, "leaf1", 6) == "h11/1");
  CHECK(peer(two, "leaf1", 7) == "spine0/2");
  CHECK(peer(two, "leaf1", 8) == "spine1/2");
  CHECK(peer(two, "spine1", 4) == "leaf3/8");
  check_reloads(two);
  const topo::Topology three = topo::generate_fat_tree({edr(), 4, 3, 4, 2}, catalog);
  CHECK(count_kind(three, NodeKind::hca) == 64);
  CHECK(count_kind(three, NodeKind::switch_node) == 16 + 8 + 8);
  CHECK(three.link_count() == 64 + 32 + 32);
  CHECK(degree(three, node(three, "core7")) == 4);
  CHECK(degree(three, node(three, "spine3")) == 4 + 4);
  check_reloads(three);
}

TEST_CASE("topology::generate_leaf_spine: parallel links on adjacent ports", "[topology][quick]") {
  topo::ProfileCatalog catalog;
  const topo::Topology t = topo::generate_leaf_spine({edr(), 3, 2, 4, 2}, catalog);
  CHECK(count_kind(t, NodeKind::hca) == 12);
  CHECK(count_kind(t, NodeKind::switch_node) == 5);
  CHECK(t.link_count() == 12 + 3 * 2 * 2);
  CHECK(peer(t, "leaf0", 4) == "h3/1");
  CHECK(peer(t, "leaf0", 5) == "spine0/1");
  CHECK(peer(t, "leaf0", 6) == "spine0/2");
  CHECK(peer(t, "leaf0", 7) == "spine1/1");
  CHECK(peer(t, "leaf2", 8) == "spine1/6");
  CHECK(t.link(0).cable == "copper-dac");
  CHECK(t.link(12).cable == "fibre");
  CHECK(t.link(12).length_m == 10);
  check_reloads(t);
}

TEST_CASE("topology::generate_dragonfly: every pair of groups joined by one global link", "[topology][quick]") {
  topo::ProfileCatalog catalog;
  const unsigned a = 4, p = 2, h = 2;
  const topo::Topology t = topo::generate_dragonfly({edr(), a, p, h, std::nullopt}, catalog);
  const unsigned g = a * h + 1;
  CHECK(t.name == "dragonfly-a4p2h2g9");
  CHECK(count_kind(t, NodeKind::hca) == g * a * p);
  CHECK(count_kind(t, NodeKind::switch_node) == g * a);
  const auto group_of = [&](NodeIndex n) { return std::stoi(t.node(n).name.substr(1, t.node(n).name.find('r') - 1)); };
  std::map<std::pair<int, int>, int> global;
  std::map<int, int> local;
  for (const topo::Link& l : t.links()) {
    if (t.node(l.a.node).kind == NodeKind::hca || t.node(l.b.node).kind == NodeKind::hca) {
      continue;
    }
    const int ga = group_of(l.a.node);
    const int gb = group_of(l.b.node);
    if (ga == gb) {
      ++local[ga];
      CHECK(l.a.port <= p + a - 1);
    } else {
      ++global[{std::min(ga, gb), std::max(ga, gb)}];
      CHECK(l.a.port > p + a - 1);
      CHECK(l.b.port > p + a - 1);
    }
  }
  CHECK(global.size() == g * (g - 1) / 2);
  for (const auto& [pair, links] : global) {
    CHECK(links == 1);
  }
  for (const auto& [group, links] : local) {
    CHECK(links == a * (a - 1) / 2);
  }
  for (NodeIndex n = 0; n < t.node_count(); ++n) {
    CHECK(degree(t, n) == (t.node(n).kind == NodeKind::hca ? 1 : p + a - 1 + h));
  }
  // Group 0's global link i = r·h + j goes to group i + 1; group 3's link back to group 0 is its link 0.
  CHECK(peer(t, "g0r0", p + a) == "g1r0/" + std::to_string(p + a));
  CHECK(peer(t, "g0r1", p + a) == "g3r0/" + std::to_string(p + a));
  check_reloads(t);

  // Fewer groups: floor(a·h / (g-1)) links per pair.
  const topo::Topology five = topo::generate_dragonfly({edr(), a, p, h, 5}, catalog);
  std::map<std::pair<int, int>, int> pairs;
  for (const topo::Link& l : five.links()) {
    if (five.node(l.a.node).kind == NodeKind::switch_node && five.node(l.b.node).kind == NodeKind::switch_node) {
      const int ga = std::stoi(five.node(l.a.node).name.substr(1));
      const int gb = std::stoi(five.node(l.b.node).name.substr(1));
      if (ga != gb) {
        ++pairs[{std::min(ga, gb), std::max(ga, gb)}];
      }
    }
  }
  CHECK(pairs.size() == 10);
  for (const auto& [pair, links] : pairs) {
    CHECK(links == 2);
  }
  check_reloads(five);
}

TEST_CASE("topology::generate_grid: torus degrees and the dor port convention", "[topology][quick]") {
  topo::ProfileCatalog catalog;
  for (const std::vector<unsigned>& dims : {std::vector<unsigned>{6}, {4, 4}, {3, 3, 3}, {2, 3}}) {
    const topo::Topology t = topo::generate_grid({edr(), dims, 2, true}, catalog);
    INFO(t.name);
    REQUIRE(t.grid.has_value());
    CHECK(t.grid->torus);
    CHECK(t.grid->extents == std::vector<std::uint32_t>(dims.begin(), dims.end()));
    const unsigned d = static_cast<unsigned>(dims.size());
    for (NodeIndex n = 0; n < t.node_count(); ++n) {
      const topo::Node& sw = t.node(n);
      if (sw.kind == NodeKind::hca) {
        continue;
      }
      CHECK(degree(t, n) == 2 * d + 2);
      for (unsigned dim = 0; dim < d; ++dim) {
        // Port 2d+1 reaches the + neighbour (wrapping) at its port 2d+2.
        const PortRef plus = t.peer(n, static_cast<topo::PortNumber>(2 * dim + 1));
        CHECK(plus.port == 2 * dim + 2);
        std::vector<std::int32_t> next = sw.coordinates;
        next[dim] = (next[dim] + 1) % static_cast<std::int32_t>(dims[dim]);
        CHECK(t.node(plus.node).coordinates == next);
      }
      CHECK(t.node(t.peer(n, static_cast<topo::PortNumber>(2 * d + 1)).node).kind == NodeKind::hca);
      CHECK(t.node(t.peer(n, static_cast<topo::PortNumber>(2 * d + 2)).node).kind == NodeKind::hca);
    }
    check_reloads(t);
  }
  const topo::Topology ring = topo::generate_grid({edr(), {6}, 1, true}, catalog);
  CHECK(ring.name == "torus-6");
  CHECK(peer(ring, "sw_5", 1) == "sw_0/2");
  CHECK(peer(ring, "sw_0", 2) == "sw_5/1");
  CHECK(peer(ring, "sw_0", 3) == "h0/1");
}

TEST_CASE("topology::generate_grid: mesh edges leave their outward ports free", "[topology][quick]") {
  topo::ProfileCatalog catalog;
  const topo::Topology t = topo::generate_grid({edr(), {3, 3}, 1, false}, catalog);
  CHECK(t.name == "mesh-3x3");
  CHECK(t.link_count() == 9 + 12);
  CHECK(degree(t, node(t, "sw_0_0")) == 2 + 1);
  CHECK(degree(t, node(t, "sw_1_0")) == 3 + 1);
  CHECK(degree(t, node(t, "sw_1_1")) == 4 + 1);
  CHECK(peer(t, "sw_0_0", 1) == "sw_1_0/2");
  CHECK(peer(t, "sw_0_0", 2).empty());
  CHECK(peer(t, "sw_0_0", 3) == "sw_0_1/4");
  CHECK(peer(t, "sw_2_2", 1).empty());
  CHECK(peer(t, "sw_2_2", 3).empty());
  CHECK(peer(t, "sw_2_2", 5) == "h8/1");
  CHECK(t.node(node(t, "sw_2_1")).coordinates == std::vector<std::int32_t>{2, 1});
  REQUIRE(t.grid.has_value());
  CHECK_FALSE(t.grid->torus);
  check_reloads(t);
}

TEST_CASE("topology generators: the same options give byte-identical files", "[topology][quick]") {
  topo::ProfileCatalog catalog;
  const auto twice = [&](auto generate) { CHECK(topo::to_json_text(generate()) == topo::to_json_text(generate())); };
  twice([&] { return topo::generate_fat_tree({edr(), 4, 3, 3, 2}, catalog); });
  twice([&] { return topo::generate_leaf_spine({edr(), 4, 3, 5, 1}, catalog); });
  twice([&] { return topo::generate_dragonfly({edr(), 3, 1, 2, std::nullopt}, catalog); });
  twice([&] { return topo::generate_grid({edr(), {3, 2, 2}, 1, true}, catalog); });
}

TEST_CASE("topology generators: options that cannot work name the option", "[topology][quick]") {
  topo::ProfileCatalog catalog;
  CHECK(
      option_error([&] {
        topo::generate_fat_tree({edr(), 19, 3, std::nullopt, std::nullopt}, catalog);
      }) ==
      "k: expected at most 36 ports per switch (profile switch-ib2-edr), got 38 ports: 19 hosts + 19 uplinks per leaf");
  CHECK(option_error([&] {
          topo::generate_fat_tree({edr(), 4, 3, 30, 8}, catalog);
        }) ==
        "hosts_per_leaf: expected at most 36 ports per switch (profile switch-ib2-edr), got 38 ports: 30 hosts + 8 "
        "uplinks per leaf");
  CHECK(option_error([&] {
          topo::generate_fat_tree({edr(), 4, 4, std::nullopt, std::nullopt}, catalog);
        }) == "levels: expected 2 or 3, got 4");
  CHECK(option_error([&] {
          topo::generate_leaf_spine({edr(), 40, 2, 4, 1}, catalog);
        }) ==
        "leaves: expected at most 36 ports per switch (profile switch-ib2-edr), got 40 ports: 40 downlinks per spine");
  CHECK(option_error([&] {
          topo::generate_dragonfly({edr(), 4, 2, 2, 10}, catalog);
        }) == "groups: expected an integer in [2, 9] (at most a*h + 1), got 10");
  CHECK(option_error([&] {
          topo::generate_grid({edr(), {4, 4, 4}, 31, true}, catalog);
        }) ==
        "hosts_per_switch: expected at most 36 ports per switch (profile switch-ib2-edr), got 37 ports: 6 grid ports + "
        "31 hosts");
  topo::CommonOptions bad = edr();
  bad.switch_profile = "fibre";
  CHECK(option_error([&] {
          topo::generate_grid({bad, {4}, 1, true}, catalog);
        }) == "switch_profile: expected a switch profile (quantum-hdr, quantum2-ndr, switch-ib2-edr, switchx2-fdr), "
              "got string \"fibre\", "
              "a cable profile");
  bad = edr();
  bad.host_cable = "copper";
  CHECK(option_error([&] {
          topo::generate_grid({bad, {4}, 1, true}, catalog);
        }) == "host_cable: expected a cable profile (copper-dac, fibre), got string \"copper\", no such profile");
  bad = edr();
  bad.width = ib::link::Width::x12;
  CHECK(option_error([&] {
          topo::generate_grid({bad, {4}, 1, true}, catalog);
        }) == "width: expected a width both switch-ib2-edr and connectx4-edr support: 1x, 4x, got string \"12x\"");
}

TEST_CASE("topology::generate_fat_tree: a 3-level tree of 8000 hosts", "[topology][quick]") {
  topo::ProfileCatalog catalog;
  const topo::Topology t = topo::generate_fat_tree({hdr(), 20, 3, std::nullopt, std::nullopt}, catalog);
  CHECK(count_kind(t, NodeKind::hca) == 8000);
  CHECK(count_kind(t, NodeKind::switch_node) == 1200);
  CHECK(t.link_count() == 24000);
  CHECK(t.node(8000).port_count == 40);
  CHECK(t.link(0).speed == ib::link::Speed::hdr);
  check_reloads(t);
}
