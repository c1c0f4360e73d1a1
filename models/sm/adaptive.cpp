#include "models/sm/adaptive.h"

#include <algorithm>
#include <deque>
#include <limits>

namespace ib::sm {

namespace {

constexpr std::int32_t unreachable = std::numeric_limits<std::int32_t>::max();

/// Per node: hops from the nearest HCA (an HCA 0, a switch cabled to one 1, ...); unreachable for none.
std::vector<std::int32_t> levels(const topo::Topology& topology) {
  std::vector<std::int32_t> level(topology.node_count(), unreachable);
  std::deque<topo::NodeIndex> queue;
  for (std::size_t n = 0; n < topology.node_count(); ++n)
    if (topology.node(static_cast<topo::NodeIndex>(n)).kind == topo::NodeKind::hca) {
      level[n] = 0;
      queue.push_back(static_cast<topo::NodeIndex>(n));
    }
  while (!queue.empty()) {
    const topo::NodeIndex n = queue.front();
    queue.pop_front();
    const topo::Node& node = topology.node(n);
    for (topo::PortNumber p = 1; p <= node.port_count; ++p) {
      const topo::PortRef peer = topology.peer(n, p);
      if (peer.node == topo::no_node || topology.node(peer.node).kind != topo::NodeKind::switch_node ||
          level[peer.node] != unreachable)
        continue;
      level[peer.node] = level[n] + 1;
      queue.push_back(peer.node);
    }
  }
  return level;
}

} // namespace

ArTables tree_groups(const topo::Topology& topology, const LidMap& lids, const Routing& routing) {
  const std::size_t nodes = topology.node_count();
  ArTables out;
  out.group_of_lid.resize(nodes);
  out.groups.resize(nodes);
  for (std::size_t n = 0; n < nodes; ++n)
    if (topology.node(static_cast<topo::NodeIndex>(n)).kind == topo::NodeKind::switch_node)
      out.group_of_lid[n].assign(static_cast<std::size_t>(lids.max_lid()) + 1, 0);
  const std::vector<std::int32_t> level = levels(topology);
  // hops[s]: hops of the static route from switch s to the LID at hand (memoised per LID); -1: not yet known.
  std::vector<std::int32_t> hops(nodes, -1);
  for (Lid d = 1; d <= lids.max_lid(); ++d) {
    const topo::PortRef owner = lids.owner(d);
    if (owner.node == topo::no_node || topology.node(owner.node).kind != topo::NodeKind::hca)
      continue;
    std::fill(hops.begin(), hops.end(), -1);
    // Follows the LFTs from `s`, iteratively: a route that loops or ends nowhere is unreachable.
    const auto route_hops = [&](topo::NodeIndex s) {
      std::vector<topo::NodeIndex> path;
      std::int32_t tail = unreachable;
      for (topo::NodeIndex at = s;;) {
        if (hops[at] >= 0) {
          tail = hops[at];
          break;
        }
        if (std::find(path.begin(), path.end(), at) != path.end())
          break;
        path.push_back(at);
        const std::vector<std::uint8_t>& lft = routing.lfts[at];
        const std::uint8_t port = d < lft.size() ? lft[d] : no_path;
        if (port == no_path || port == 0)
          break;
        const topo::PortRef next = topology.peer(at, port);
        if (next == owner) { // `at` is one hop from the destination, its predecessors one more each
          tail = 1;
          hops[at] = 1;
          path.pop_back();
          break;
        }
        if (next.node == topo::no_node || topology.node(next.node).kind != topo::NodeKind::switch_node)
          break;
        at = next.node;
      }
      for (auto it = path.rbegin(); it != path.rend(); ++it) {
        tail = tail == unreachable ? unreachable : tail + 1;
        hops[*it] = tail;
      }
      return hops[s];
    };
    for (std::size_t n = 0; n < nodes; ++n) {
      const auto s = static_cast<topo::NodeIndex>(n);
      const topo::Node& node = topology.node(s);
      if (node.kind != topo::NodeKind::switch_node || d >= routing.lfts[s].size())
        continue;
      const std::uint8_t static_port = routing.lfts[s][d];
      if (static_port == no_path || static_port == 0)
        continue;
      const std::int32_t h = route_hops(s);
      if (h == unreachable)
        continue;
      // Which way a port goes: -1 towards the HCAs, 0 level, +1 away from them.
      const auto way = [&](topo::PortRef peer) {
        const std::int32_t l = topology.node(peer.node).kind == topo::NodeKind::hca ? 0 : level[peer.node];
        return l < level[s] ? -1 : l > level[s] ? 1 : 0;
      };
      const int static_way = way(topology.peer(s, static_port));
      std::vector<std::uint8_t> group{static_port};
      for (topo::PortNumber p = 1; p <= node.port_count; ++p) {
        if (p == static_port)
          continue;
        const topo::PortRef peer = topology.peer(s, p);
        if (peer.node == topo::no_node || way(peer) != static_way)
          continue;
        const bool reaches = peer == owner || (topology.node(peer.node).kind == topo::NodeKind::switch_node &&
                                               route_hops(peer.node) == h - 1);
        if (reaches)
          group.push_back(static_cast<std::uint8_t>(p));
      }
      if (group.size() < 2)
        continue;
      // A switch has few distinct groups (on a fat tree, a leaf's uplinks in a few orders): a linear search.
      std::vector<std::vector<std::uint8_t>>& groups = out.groups[n];
      const auto index = static_cast<std::size_t>(std::find(groups.begin(), groups.end(), group) - groups.begin());
      if (index == groups.size())
        groups.push_back(std::move(group));
      out.group_of_lid[n][d] = static_cast<std::uint16_t>(index + 1);
    }
  }
  return out;
}

} // namespace ib::sm
