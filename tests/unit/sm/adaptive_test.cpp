// Adaptive routing groups (models/sm/adaptive.h): on fat trees, a leaf's group for a remote host is every uplink and
// a spine's is its one downlink (no group); every port of a group leads on by a path as short as the static one.
#include <catch2/catch.hpp>

#include "models/sm/adaptive.h"
#include "models/sm/routing.h"
#include "tests/support/sm_fabrics.h"

using namespace ib;

namespace {

struct Routed {
  sm::LidMap lids;
  sm::Routing routing;
};

Routed route(const topo::Topology& t, std::string_view engine) {
  sm::LidMap lids = sm::assign_lids(t, {});
  sm::RoutingOptions options;
  sm::Routing routing = sm::make_engine(engine)->route({t, lids, options});
  return {std::move(lids), std::move(routing)};
}

} // namespace

TEST_CASE("adaptive routing: on a two-level fat tree a leaf may send a remote host's packets up any uplink, and "
          "nothing else has a choice",
          "[sm][adaptive]") {
  for (const char* engine : {"ftree", "updn", "minhop"}) {
    DYNAMIC_SECTION(engine) {
      const topo::Topology t = ::testing::two_level_tree(4, 4, 4); // 4 leaves x 4 hosts, 4 spines
      const Routed r = route(t, engine);
      const sm::ArTables ar = sm::tree_groups(t, r.lids, r.routing);
      for (topo::NodeIndex n = 0; n < t.node_count(); ++n) {
        const topo::Node& node = t.node(n);
        if (node.kind != topo::NodeKind::switch_node) {
          CHECK(ar.group_of_lid[n].empty());
          continue;
        }
        const bool leaf = t.node(t.peer(n, 1).node).kind == topo::NodeKind::hca;
        for (topo::NodeIndex h = 0; h < t.node_count(); ++h) {
          if (t.node(h).kind != topo::NodeKind::hca)
            continue;
          const sm::Lid d = r.lids.base_lid(h, 1);
          const bool local = t.peer(h, 1).node == n;
          const std::uint16_t g = ar.group_of_lid[n][d];
          INFO(node.name << " -> " << t.node(h).name);
          if (!leaf || local) {
            CHECK(g == 0); // a spine has one way down, a leaf one port to its own host
            continue;
          }
          REQUIRE(g != 0);
          const std::vector<std::uint8_t>& ports = ar.groups[n][g - 1];
          CHECK(ports.size() == 4);
          CHECK(ports.front() == r.routing.lfts[n][d]); // the static port first
          for (const std::uint8_t p : ports)
            CHECK(t.node(t.peer(n, p).node).kind == topo::NodeKind::switch_node);
        }
        // Remote hosts of a leaf all share one group: every uplink, whatever the static port.
        if (leaf)
          CHECK(ar.groups[n].size() <= 4);
      }
    }
  }
}

TEST_CASE("adaptive routing: on a three-level fat tree groups go up only where the static route goes up, and keep "
          "every path shortest",
          "[sm][adaptive]") {
  const topo::Topology t = ::testing::three_level_tree(4);
  const Routed r = route(t, "ftree");
  const sm::ArTables ar = sm::tree_groups(t, r.lids, r.routing);
  std::size_t grouped = 0;
  for (topo::NodeIndex n = 0; n < t.node_count(); ++n)
    for (std::size_t d = 0; d < ar.group_of_lid[n].size(); ++d) {
      const std::uint16_t g = ar.group_of_lid[n][d];
      if (g == 0)
        continue;
      ++grouped;
      // Taking any port of the group and then the static routes reaches the host in as many hops as the static route.
      const auto hops_from = [&](topo::NodeIndex s) {
        std::size_t hops = 0;
        for (topo::NodeIndex at = s;; ++hops) {
          const topo::PortRef next = t.peer(at, r.routing.lfts[at][d]);
          if (t.node(next.node).kind == topo::NodeKind::hca)
            return hops + 1;
          at = next.node;
        }
      };
      const std::size_t static_hops = hops_from(n);
      for (const std::uint8_t p : ar.groups[n][g - 1]) {
        const topo::PortRef next = t.peer(n, p);
        const std::size_t hops = t.node(next.node).kind == topo::NodeKind::hca ? 1 : 1 + hops_from(next.node);
        CHECK(hops == static_hops);
      }
    }
  CHECK(grouped > 0);
}
