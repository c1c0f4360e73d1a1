// dor (OpenSM's dimension-order routing, osm_ucast_mgr.c with is_dor): min-hop paths, but each switch sends a
// LID out of its lowest least-hop port, i.e. its lowest dimension, balancing only over parallel links to that
// neighbour. Deadlock-free on meshes and hypercubes. On a torus (grid.torus with coordinates, as the generators
// write) the rings of each dimension close a credit loop, so when at least 2 VLs are available this engine adds
// what OpenSM's dor lacks: two datelines per ring, the wraparound link and the link halfway round. A minimal
// route in one ring never crosses both, so a route's SL carries one bit per dimension, set when it crosses the
// wraparound link, and a hop in dimension d runs on VL = bit d. Each VL then sees a ring cut at one dateline,
// and dimension order keeps the dimensions acyclic.
#include <string>

#include "models/sm/sm_error.h"
#include "models/sm/ucast_mgr.h"

namespace ib::sm {
namespace {

using topo::NodeIndex;
using topo::PortNumber;

/// The dimension (and whether it is the wraparound link) of a link between two grid switches; -1 if they are not
/// neighbours in exactly one coordinate.
struct GridHop {
  int dimension = -1;
  bool wraps = false;
};

GridHop grid_hop(const topo::GridShape& grid, const topo::Node& a, const topo::Node& b) {
  GridHop hop;
  for (std::size_t d = 0; d < grid.extents.size(); ++d) {
    const std::int32_t ca = a.coordinates[d];
    const std::int32_t cb = b.coordinates[d];
    if (ca == cb)
      continue;
    if (hop.dimension >= 0)
      return {};
    hop.dimension = static_cast<int>(d);
    const std::int32_t k = static_cast<std::int32_t>(grid.extents[d]);
    hop.wraps = (ca == 0 && cb == k - 1) || (ca == k - 1 && cb == 0);
  }
  return hop;
}

class Dor : public Engine {
public:
  Routing route(const RoutingInput& input) override {
    Routing routing;
    const SwitchIndex index(input.topology);
    const detail::SwitchGraph graph(input.topology, index);
    detail::ShortestHops hops(graph);
    detail::build_lfts(input, index, graph, hops, {.dor = true}, routing);
    const auto& grid = input.topology.grid;
    if (grid && grid->torus && input.options.data_vls >= 2)
      add_datelines(input, index, *grid, routing);
    return routing;
  }

private:
  static void add_datelines(const RoutingInput& input, const SwitchIndex& index, const topo::GridShape& grid,
                            Routing& routing) {
    const topo::Topology& t = input.topology;
    const std::size_t dims = grid.extents.size();
    if (dims > 4)
      throw SmError("dor with datelines handles up to 4 dimensions (one SL bit each), got " + std::to_string(dims));
    for (NodeIndex n : index.switches) {
      if (t.node(n).coordinates.size() != dims)
        throw SmError("dor on a torus needs grid coordinates on every switch; " + t.node(n).name + " has " +
                      std::to_string(t.node(n).coordinates.size()) + " of " + std::to_string(dims));
    }
    // Per switch and port: the dimension it runs in (255: not a grid link).
    routing.sl_to_vl.assign(t.node_count(), {});
    std::vector<std::vector<std::uint8_t>> dimension_of(t.node_count());
    for (NodeIndex n : index.switches) {
      const unsigned ports = t.node(n).port_count;
      dimension_of[n].assign(ports + 1, 255);
      routing.sl_to_vl[n].assign(ports + 1, SlToVl{});
      for (unsigned p = 1; p <= ports; ++p) {
        const topo::PortRef peer = t.peer(n, static_cast<PortNumber>(p));
        if (peer.node == topo::no_node || t.node(peer.node).kind != topo::NodeKind::switch_node)
          continue;
        const GridHop hop = grid_hop(grid, t.node(n), t.node(peer.node));
        if (hop.dimension < 0)
          throw SmError("dor: " + t.node(n).name + " port " + std::to_string(p) + " leads to " +
                        t.node(peer.node).name + ", which is not its grid neighbour");
        dimension_of[n][p] = static_cast<std::uint8_t>(hop.dimension);
        for (unsigned sl = 0; sl < 16; ++sl)
          routing.sl_to_vl[n][p][sl] = static_cast<std::uint8_t>((sl >> hop.dimension) & 1u);
      }
    }
    // Each switch pair's route: which rings it takes round their wraparound link.
    const std::size_t count = index.switches.size();
    routing.path_sl_by_switch.assign(count * count, 0);
    for (std::size_t a = 0; a < count; ++a) {
      for (std::size_t b = 0; b < count; ++b) {
        const Lid dlid = input.lids.base_lid(index.switches[b], 0);
        NodeIndex at = index.switches[a];
        std::uint8_t sl = 0;
        for (std::size_t steps = 0; at != index.switches[b]; ++steps) {
          const std::uint8_t port = routing.lfts[at][dlid];
          if (port == no_path || port == 0 || steps > count)
            break; // unreachable: the credit-loop check and route checks report it
          const topo::PortRef next = t.peer(at, port);
          if (grid_hop(grid, t.node(at), t.node(next.node)).wraps)
            sl = static_cast<std::uint8_t>(sl | (1u << dimension_of[at][port]));
          at = next.node;
        }
        routing.path_sl_by_switch[a * count + b] = sl;
      }
    }
    routing.vls_needed = 2;
  }
};

} // namespace

extern const EngineInfo dor_engine{"dor", "dimension-order routing for meshes and tori (datelines on 2 VLs for tori)",
                                   false, [] { return std::unique_ptr<Engine>(std::make_unique<Dor>()); }};

} // namespace ib::sm
