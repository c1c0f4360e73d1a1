// ftree (OpenSM's fat-tree routing, osm_ucast_ftree.c, after Zahavi et al.): refuses a fabric that is not a fat
// tree, then routes destination by destination, leaf switch by leaf switch and each leaf's HCAs in port order.
// Routes towards a destination are laid from its leaf upwards: each switch above takes the down port (among the
// least-hop ones) that carries the fewest down routes so far; every other switch then goes up by the least-hop up
// port carrying the fewest up routes, top level first. Down and up routes are counted apart, as OpenSM does, which
// spreads both evenly over parallel links and spines. Switch LIDs are routed the same way from their own switch.
// What it checks, ranking switches by their distance from the nearest leaf (a switch with HCAs): every HCA hangs
// off a switch, every switch-to-switch link joins adjacent ranks (so no leaf sits above another, and no two
// switches of one rank are cabled), and every switch but the top ones has a link upwards. It does not reproduce
// OpenSM's exact port choices.
#include <algorithm>
#include <string>

#include "models/sm/sm_error.h"
#include "models/sm/ucast_mgr.h"

namespace ib::sm {
namespace {

using detail::unreachable;
using topo::NodeIndex;
using topo::NodeKind;
using topo::PortRef;

class FatTree : public Engine {
public:
  Routing route(const RoutingInput& input) override {
    const topo::Topology& t = input.topology;
    const SwitchIndex index(t);
    const detail::SwitchGraph g(t, index);
    if (input.lids.lmc() > 0)
      throw SmError("ftree does not route with LMC > 0 (as OpenSM's ftree); use minhop or updn");
    rank_fabric(input, index, g);

    Routing routing;
    routing.lfts.assign(t.node_count(), {});
    for (NodeIndex n : index.switches)
      routing.lfts[n].assign(std::size_t{input.lids.max_lid()} + 1, no_path);
    std::vector<std::uint32_t> down_count(std::size_t{g.count} * g.stride, 0);
    std::vector<std::uint32_t> up_count(std::size_t{g.count} * g.stride, 0);
    detail::ShortestHops shortest(g);
    std::vector<std::uint8_t> row, least;

    // Destinations: each leaf's HCA ports in port order, leaves in switch order; then the switches.
    std::vector<std::pair<Lid, std::uint32_t>> destinations; // (LID, its switch ordinal)
    for (std::uint32_t s = 0; s < g.count; ++s) {
      const NodeIndex n = index.switches[s];
      for (unsigned p = 1; p <= g.port_count[s]; ++p) {
        const PortRef peer = t.peer(n, static_cast<topo::PortNumber>(p));
        if (peer.node != topo::no_node && t.node(peer.node).kind == NodeKind::hca)
          destinations.push_back({input.lids.base_lid(peer.node, peer.port), s});
      }
    }
    for (std::uint32_t s = 0; s < g.count; ++s)
      destinations.push_back({input.lids.base_lid(index.switches[s], 0), s});

    std::vector<std::uint32_t> order(g.count);
    for (std::uint32_t s = 0; s < g.count; ++s)
      order[s] = s;
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return rank_[a] < rank_[b]; });

    std::uint32_t row_of = ~0u;
    for (const auto& [lid, home] : destinations) {
      if (home != row_of) {
        shortest.fill(home, row, least);
        row_of = home;
      }
      const NodeIndex home_node = index.switches[home];
      const PortRef owner = input.lids.owner(lid);
      routing.lfts[home_node][lid] =
          t.node(owner.node).kind == NodeKind::switch_node ? 0 : t.peer(owner.node, owner.port).port;
      lay_down_routes(index, g, routing, lid, home, row, least, down_count);
      lay_up_routes(index, g, routing, lid, row, least, up_count, order);
    }
    return routing;
  }

private:
  std::vector<std::uint32_t> rank_; ///< per switch: 0 at the top, leaves at the largest rank

  /// Switches that are shortest-path closer to the destination than `s`, through which of s's ports.
  static bool toward(const detail::SwitchGraph& g, const std::vector<std::uint8_t>& row,
                     const std::vector<std::uint8_t>& least, std::uint32_t s, unsigned p) {
    return g.at(s, p) >= 0 && row[std::size_t{s} * g.stride + p] == least[s] && least[s] != unreachable;
  }

  void lay_down_routes(const SwitchIndex& index, const detail::SwitchGraph& g, Routing& routing, Lid lid,
                       std::uint32_t home, const std::vector<std::uint8_t>& row, const std::vector<std::uint8_t>& least,
                       std::vector<std::uint32_t>& down_count) const {
    // Breadth first upwards from the destination's switch: a switch one rank up (closer to the top) routes down
    // to some switch that already has the route.
    std::vector<std::uint32_t> frontier{home};
    while (!frontier.empty()) {
      std::vector<std::uint32_t> above;
      for (std::uint32_t lower : frontier) {
        for (unsigned p = 1; p <= g.port_count[lower]; ++p) {
          const std::int32_t u = g.at(lower, p);
          if (u < 0 || rank_[static_cast<std::size_t>(u)] + 1 != rank_[lower])
            continue;
          const auto upper = static_cast<std::uint32_t>(u);
          std::vector<std::uint8_t>& lft = routing.lfts[index.switches[upper]];
          if (lft[lid] != no_path)
            continue;
          // The least-loaded down port of `upper` on a shortest path.
          unsigned best = 0;
          for (unsigned q = 1; q <= g.port_count[upper]; ++q) {
            if (!toward(g, row, least, upper, q) || rank_[static_cast<std::size_t>(g.at(upper, q))] != rank_[upper] + 1)
              continue;
            if (best == 0 || down_count[upper * g.stride + q] < down_count[upper * g.stride + best])
              best = q;
          }
          if (best == 0)
            continue;
          lft[lid] = static_cast<std::uint8_t>(best);
          ++down_count[upper * g.stride + best];
          above.push_back(upper);
        }
      }
      frontier = std::move(above);
    }
  }

  void lay_up_routes(const SwitchIndex& index, const detail::SwitchGraph& g, Routing& routing, Lid lid,
                     const std::vector<std::uint8_t>& row, const std::vector<std::uint8_t>& least,
                     std::vector<std::uint32_t>& up_count, const std::vector<std::uint32_t>& top_first) const {
    for (std::uint32_t s : top_first) {
      std::vector<std::uint8_t>& lft = routing.lfts[index.switches[s]];
      if (lft[lid] != no_path)
        continue;
      unsigned best = 0;
      for (unsigned p = 1; p <= g.port_count[s]; ++p) {
        if (!toward(g, row, least, s, p))
          continue;
        if (best == 0 || up_count[s * g.stride + p] < up_count[s * g.stride + best])
          best = p;
      }
      if (best == 0)
        continue; // unreachable: the route check reports it
      lft[lid] = static_cast<std::uint8_t>(best);
      ++up_count[s * g.stride + best];
    }
  }

  void rank_fabric(const RoutingInput& input, const SwitchIndex& index, const detail::SwitchGraph& g) {
    const topo::Topology& t = input.topology;
    // Leaves: switches with HCAs. Every HCA must hang off a switch.
    std::vector<std::uint8_t> leaf(g.count, 0);
    for (NodeIndex n = 0; n < t.node_count(); ++n) {
      if (t.node(n).kind != NodeKind::hca)
        continue;
      for (unsigned p = 1; p <= t.node(n).port_count; ++p) {
        const PortRef peer = t.peer(n, static_cast<topo::PortNumber>(p));
        if (peer.node == topo::no_node)
          continue;
        if (t.node(peer.node).kind != NodeKind::switch_node)
          throw SmError("ftree: not a fat tree: HCA " + t.node(n).name + " is cabled to HCA " + t.node(peer.node).name);
        leaf[static_cast<std::size_t>(index.ordinal_of_node[peer.node])] = 1;
      }
    }
    // Height above the leaves, breadth first from all leaves; the top switches are the highest.
    std::vector<std::uint32_t> height(g.count, ~0u);
    std::vector<std::uint32_t> queue;
    for (std::uint32_t s = 0; s < g.count; ++s)
      if (leaf[s]) {
        height[s] = 0;
        queue.push_back(s);
      }
    if (queue.empty())
      throw SmError("ftree: not a fat tree: no switch has HCAs");
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const std::uint32_t s = queue[head];
      for (unsigned p = 1; p <= g.port_count[s]; ++p) {
        const std::int32_t n = g.at(s, p);
        if (n >= 0 && height[n] == ~0u) {
          height[n] = height[s] + 1;
          queue.push_back(static_cast<std::uint32_t>(n));
        }
      }
    }
    // A switch without any link is not part of the fabric the SM sees (a failed switch, or one cut off from the
    // SM after a fault: models/sm/reroute.h); OpenSM would not have discovered it, so it is left out of the ranks.
    std::vector<std::uint8_t> present(g.count, 0);
    for (std::uint32_t s = 0; s < g.count; ++s)
      for (unsigned p = 1; p <= g.port_count[s] && !present[s]; ++p)
        present[s] = g.cabled[s * g.stride + p];
    std::uint32_t top = 0;
    for (std::uint32_t s = 0; s < g.count; ++s) {
      if (!present[s])
        continue;
      if (height[s] == ~0u)
        throw SmError("ftree: not a fat tree: switch " + t.node(index.switches[s]).name +
                      " is not connected to the "
                      "leaves");
      top = std::max(top, height[s]);
    }
    rank_.assign(g.count, 0);
    for (std::uint32_t s = 0; s < g.count; ++s)
      rank_[s] = present[s] ? top - height[s] : 0;
    for (std::uint32_t s = 0; s < g.count; ++s) {
      if (!present[s])
        continue;
      bool has_up = rank_[s] == 0;
      for (unsigned p = 1; p <= g.port_count[s]; ++p) {
        const std::int32_t n = g.at(s, p);
        if (n < 0)
          continue;
        const std::uint32_t a = rank_[s];
        const std::uint32_t b = rank_[static_cast<std::size_t>(n)];
        if (a != b + 1 && b != a + 1)
          throw SmError("ftree: not a fat tree: the link " + t.node(index.switches[s]).name + "/" + std::to_string(p) +
                        " - " + t.node(index.switches[static_cast<std::size_t>(n)]).name + " joins switches " +
                        (a == b ? "of the same rank " + std::to_string(a)
                                : "of ranks " + std::to_string(a) + " and " + std::to_string(b)) +
                        " (ranks count down from the top, leaves at rank " + std::to_string(top) + ")");
        has_up = has_up || b + 1 == a;
      }
      if (!has_up)
        throw SmError("ftree: not a fat tree: switch " + t.node(index.switches[s]).name + " has no link upwards");
    }
  }
};

} // namespace

extern const EngineInfo ftree_engine{"ftree", "fat-tree routing (Zahavi): refuses a fabric that is not a fat tree",
                                     false, [] { return std::unique_ptr<Engine>(std::make_unique<FatTree>()); }};

} // namespace ib::sm
