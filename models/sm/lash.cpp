// lash (LAyered SHortest path, Skeie et al., OpenSM osm_ucast_lash.c): shortest paths for every switch pair, each
// pair put in the first layer (SL) whose channel dependency graph stays acyclic with it; a pair and its reverse
// share a layer, as in OpenSM. Layer k runs on VL k (SL2VL identity). As in OpenSM, every LID behind a switch
// is routed as that switch. Paths here are min-hop's balanced LFTs
// rather than OpenSM's own BFS choice, and the layers are not rebalanced afterwards: both change which pairs
// share a VL, not whether the result is deadlock-free. Refuses when the pairs need more layers than the VLs.
#include <string>

#include "models/sm/sm_error.h"
#include "models/sm/ucast_mgr.h"

namespace ib::sm {
namespace {

using topo::NodeIndex;

/// One layer's channel dependency graph, kept acyclic: an edge is added only if its head cannot reach its tail.
class Layer {
public:
  explicit Layer(std::size_t channels) : out_(channels) {}
  using Added = std::vector<std::uint32_t>; ///< tails of the edges added, newest last

  /// Adds the dependency chain `path` if it keeps the graph acyclic, noting the edges in `added`; false (with
  /// this path's edges taken out again) otherwise.
  bool try_add(const std::vector<std::uint32_t>& path, Added& added) {
    const std::size_t mark = added.size();
    for (std::size_t i = 1; i < path.size(); ++i) {
      const std::uint32_t from = path[i - 1];
      const std::uint32_t to = path[i];
      if (has_edge(from, to))
        continue;
      if (reaches(to, from)) {
        undo(added, mark);
        return false;
      }
      out_[from].push_back(to);
      added.push_back(from);
    }
    return true;
  }
  /// Takes out the edges noted in `added` after its first `keep`, newest first.
  void undo(Added& added, std::size_t keep = 0) {
    while (added.size() > keep) {
      out_[added.back()].pop_back();
      added.pop_back();
    }
  }

private:
  bool has_edge(std::uint32_t from, std::uint32_t to) const {
    for (std::uint32_t w : out_[from])
      if (w == to)
        return true;
    return false;
  }
  bool reaches(std::uint32_t from, std::uint32_t to) {
    ++mark_;
    if (seen_.size() < out_.size())
      seen_.assign(out_.size(), 0);
    stack_.assign(1, from);
    seen_[from] = mark_;
    while (!stack_.empty()) {
      const std::uint32_t v = stack_.back();
      stack_.pop_back();
      if (v == to)
        return true;
      for (std::uint32_t w : out_[v]) {
        if (seen_[w] != mark_) {
          seen_[w] = mark_;
          stack_.push_back(w);
        }
      }
    }
    return false;
  }
  std::vector<std::vector<std::uint32_t>> out_;
  std::vector<std::uint32_t> seen_;
  std::vector<std::uint32_t> stack_;
  std::uint32_t mark_ = 0;
};

/// LASH routes switch to switch (its layers are per switch pair), so every LID behind a switch follows the route
/// to that switch's own LID, and only the last switch picks the HCA's port.
void route_hcas_as_their_switch(const RoutingInput& input, const SwitchIndex& index, Routing& routing) {
  const topo::Topology& t = input.topology;
  for (Lid lid = 1; lid <= input.lids.max_lid(); ++lid) {
    const topo::PortRef owner = input.lids.owner(lid);
    if (owner.node == topo::no_node || t.node(owner.node).kind != topo::NodeKind::hca)
      continue;
    const topo::PortRef attached = t.peer(owner.node, owner.port);
    if (attached.node == topo::no_node || t.node(attached.node).kind != topo::NodeKind::switch_node)
      continue;
    const Lid switch_lid = input.lids.base_lid(attached.node, 0);
    for (NodeIndex s : index.switches)
      if (s != attached.node)
        routing.lfts[s][lid] = routing.lfts[s][switch_lid];
  }
}

class Lash : public Engine {
public:
  Routing route(const RoutingInput& input) override {
    const topo::Topology& t = input.topology;
    Routing routing;
    const SwitchIndex index(t);
    const detail::SwitchGraph graph(t, index);
    detail::ShortestHops hops(graph);
    detail::build_lfts(input, index, graph, hops, {}, routing);
    route_hcas_as_their_switch(input, index, routing);

    const std::size_t count = index.switches.size();
    const unsigned max_layers = std::min(input.options.data_vls, 15u);
    std::vector<Layer> layers;
    routing.path_sl_by_switch.assign(count * count, 0);
    std::vector<std::uint32_t> path;
    const auto channels_of = [&](std::size_t a, std::size_t b) {
      path.clear();
      const Lid dlid = input.lids.base_lid(index.switches[b], 0);
      NodeIndex at = index.switches[a];
      for (std::size_t steps = 0; at != index.switches[b] && steps <= count; ++steps) {
        const std::uint8_t port = routing.lfts[at][dlid];
        if (port == no_path || port == 0)
          break;
        path.push_back(static_cast<std::uint32_t>(index.ordinal_of_node[at]) * graph.stride + port);
        at = t.peer(at, port).node;
      }
      return path;
    };
    const std::size_t channel_count = count * graph.stride;
    for (std::size_t a = 0; a < count; ++a) {
      for (std::size_t b = a + 1; b < count; ++b) {
        const std::vector<std::uint32_t> forward = channels_of(a, b);
        const std::vector<std::uint32_t> backward = channels_of(b, a);
        std::size_t layer = 0;
        for (;; ++layer) {
          if (layer == layers.size()) {
            if (layers.size() == max_layers)
              throw SmError("lash needs more than " + std::to_string(max_layers) +
                            " layers (one VL each) to route this fabric without credit loops");
            layers.emplace_back(channel_count);
          }
          // Both directions go in together, or neither does.
          Layer::Added added;
          if (layers[layer].try_add(forward, added)) {
            if (layers[layer].try_add(backward, added))
              break;
            layers[layer].undo(added);
          }
        }
        routing.path_sl_by_switch[a * count + b] = static_cast<std::uint8_t>(layer);
        routing.path_sl_by_switch[b * count + a] = static_cast<std::uint8_t>(layer);
      }
    }
    routing.vls_needed = std::max<std::size_t>(1, layers.size());
    routing.sl_to_vl.assign(t.node_count(), {});
    SlToVl identity{};
    for (unsigned sl = 0; sl < 16; ++sl)
      identity[sl] = static_cast<std::uint8_t>(sl < routing.vls_needed ? sl : 0);
    for (NodeIndex n : index.switches)
      routing.sl_to_vl[n].assign(t.node(n).port_count + 1u, identity);
    return routing;
  }
};

} // namespace

extern const EngineInfo lash_engine{"lash",
                                    "layered shortest paths: each switch pair on an SL whose layer stays deadlock-free",
                                    false, [] { return std::unique_ptr<Engine>(std::make_unique<Lash>()); }};

} // namespace ib::sm
