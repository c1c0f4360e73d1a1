// updn (OpenSM's up*/down*, osm_ucast_updn.c): switches are ranked by distance from the root switches (given, or
// found as OpenSM finds them: a switch is a root when more than 90 % of the HCAs sit at one hop distance from it
// and no other distance holds more than 5 %). A route may go up (towards lower rank; between equal ranks, towards
// the higher GUID) and then only down, which keeps the channel dependency graph acyclic. Hop counts come from
// OpenSM's own breadth-first search from each destination switch, whose first-reached direction per switch decides
// which later steps are legal; the LFTs are then built as min-hop builds them.
#include <algorithm>
#include <string>

#include "models/sm/sm_error.h"
#include "models/sm/ucast_mgr.h"

namespace ib::sm {
namespace {

using detail::unreachable;
using topo::NodeIndex;

enum class Dir : std::uint8_t { up, down };

class UpDownHops : public detail::HopSource {
public:
  UpDownHops(const detail::SwitchGraph& g, std::vector<std::uint32_t> rank, std::vector<std::uint64_t> id)
      : g_(g), rank_(std::move(rank)), id_(std::move(id)), dir_(g.count), visited_(g.count) {}

  void fill(std::uint32_t destination, std::vector<std::uint8_t>& row, std::vector<std::uint8_t>& least) override {
    row.assign(std::size_t{g_.count} * g_.stride, unreachable);
    least.assign(g_.count, unreachable);
    std::fill(visited_.begin(), visited_.end(), 0);
    set_hops(row, least, destination, 0, 0);
    dir_[destination] = Dir::up;
    queue_.clear();
    queue_.push_back(destination);
    for (std::size_t head = 0; head < queue_.size(); ++head) {
      const std::uint32_t u = queue_[head];
      visited_[u] = 0;
      const Dir current = dir_[u];
      for (unsigned p = 1; p <= g_.port_count[u]; ++p) {
        const std::int32_t r = g_.at(u, p);
        if (r < 0)
          continue;
        const auto rem = static_cast<std::uint32_t>(r);
        const Dir next = direction(u, rem);
        if (current == Dir::down && next == Dir::up)
          continue; // the only illegal step
        const unsigned rem_port = g_.peer_port[std::size_t{u} * g_.stride + p];
        const unsigned hops = least[u] + 1u;
        if (hops < row[std::size_t{rem} * g_.stride + rem_port]) {
          set_hops(row, least, rem, rem_port, static_cast<std::uint8_t>(std::min(hops, 254u)));
          if (!visited_[rem]) {
            dir_[rem] = next;
            visited_[rem] = 1;
            queue_.push_back(rem);
          }
        }
      }
    }
  }

private:
  /// updn_get_dir: the direction of the step from cur to rem.
  Dir direction(std::uint32_t cur, std::uint32_t rem) const {
    if (rank_[cur] == 0 && rank_[rem] == 0)
      return Dir::up;
    if (rank_[cur] < rank_[rem])
      return Dir::down;
    if (rank_[cur] > rank_[rem])
      return Dir::up;
    return id_[cur] > id_[rem] ? Dir::up : Dir::down;
  }
  static void set_hops(std::vector<std::uint8_t>& row, std::vector<std::uint8_t>& least, std::uint32_t s, unsigned port,
                       std::uint8_t hops) {
    row[std::size_t{s} * (row.size() / least.size()) + port] = hops;
    least[s] = std::min(least[s], hops);
  }

  const detail::SwitchGraph& g_;
  std::vector<std::uint32_t> rank_;
  std::vector<std::uint64_t> id_;
  std::vector<Dir> dir_;
  std::vector<std::uint8_t> visited_;
  std::vector<std::uint32_t> queue_;
};

/// updn_find_root_nodes_by_min_hop.
std::vector<std::uint32_t> find_roots(const RoutingInput& in, const SwitchIndex& index, const detail::SwitchGraph& g) {
  const topo::Topology& t = in.topology;
  std::vector<unsigned> hcas_at(g.count, 0);
  unsigned hcas = 0;
  for (NodeIndex n = 0; n < t.node_count(); ++n) {
    if (t.node(n).kind != topo::NodeKind::hca)
      continue;
    for (unsigned p = 1; p <= t.node(n).port_count; ++p) {
      const topo::PortRef peer = t.peer(n, static_cast<topo::PortNumber>(p));
      if (peer.node != topo::no_node && t.node(peer.node).kind == topo::NodeKind::switch_node) {
        ++hcas_at[static_cast<std::size_t>(index.ordinal_of_node[peer.node])];
        ++hcas;
      }
    }
  }
  const double above_most = hcas * 0.9;
  const double above_few = hcas * 0.05;
  detail::ShortestHops shortest(g);
  std::vector<std::vector<std::uint8_t>> distance(g.count); // distance[d][s]
  std::vector<std::uint8_t> row;
  for (std::uint32_t d = 0; d < g.count; ++d)
    shortest.fill(d, row, distance[d]);
  std::vector<std::uint32_t> roots;
  for (std::uint32_t s = 0; s < g.count; ++s) {
    std::vector<unsigned> histogram(64, 0);
    for (std::uint32_t d = 0; d < g.count; ++d) {
      if (hcas_at[d] != 0 && distance[d][s] < histogram.size())
        histogram[distance[d][s]] += hcas_at[d];
    }
    unsigned over_most = 0, over_few = 0;
    for (unsigned h : histogram) {
      over_most += h > above_most;
      over_few += h > above_few;
    }
    if (over_most == 1 && over_few == 1)
      roots.push_back(s);
  }
  return roots;
}

class UpDown : public Engine {
public:
  Routing route(const RoutingInput& input) override {
    const topo::Topology& t = input.topology;
    Routing routing;
    const SwitchIndex index(t);
    const detail::SwitchGraph graph(t, index);
    if (graph.count == 0)
      throw SmError("updn: the fabric has no switches");
    std::vector<std::uint32_t> roots;
    if (input.options.roots.empty()) {
      roots = find_roots(input, index, graph);
      if (roots.empty())
        throw SmError("updn: no switch qualifies as a root (OpenSM's test: over 90 % of the HCAs at one hop distance "
                      "and no other distance above 5 %); name the roots");
    } else {
      for (NodeIndex n : input.options.roots) {
        if (n >= t.node_count() || t.node(n).kind != topo::NodeKind::switch_node)
          throw SmError("updn: root " + (n < t.node_count() ? t.node(n).name : std::to_string(n)) + " is not a switch");
        roots.push_back(static_cast<std::uint32_t>(index.ordinal_of_node[n]));
      }
    }
    // updn_subn_rank: breadth first from every root, the roots queued in switch-GUID order.
    std::vector<std::uint32_t> rank(graph.count, ~0u);
    std::vector<std::uint64_t> id(graph.count);
    for (std::uint32_t s = 0; s < graph.count; ++s)
      id[s] = t.node(index.switches[s]).node_guid;
    std::vector<std::uint32_t> queue;
    for (std::uint32_t r : roots)
      rank[r] = 0;
    for (std::uint32_t s = 0; s < graph.count; ++s)
      if (rank[s] == 0)
        queue.push_back(s);
    std::sort(queue.begin(), queue.end(),
              [&](std::uint32_t a, std::uint32_t b) { return opensm_guid_order(id[a]) < opensm_guid_order(id[b]); });
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const std::uint32_t u = queue[head];
      for (unsigned p = 1; p <= graph.port_count[u]; ++p) {
        const std::int32_t r = graph.at(u, p);
        if (r >= 0 && rank[r] > rank[u] + 1) {
          rank[r] = rank[u] + 1;
          queue.push_back(static_cast<std::uint32_t>(r));
        }
      }
    }
    UpDownHops hops(graph, std::move(rank), std::move(id));
    detail::build_lfts(input, index, graph, hops, {}, routing);
    return routing;
  }
};

} // namespace

extern const EngineInfo updn_engine{"updn", "up*/down* from root switches: deadlock-free on any topology", false,
                                    [] { return std::unique_ptr<Engine>(std::make_unique<UpDown>()); }};

} // namespace ib::sm
