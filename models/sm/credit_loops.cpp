#include "models/sm/credit_loops.h"

#include <algorithm>

namespace ib::sm {

using topo::NodeIndex;
using topo::NodeKind;
using topo::PortNumber;
using topo::PortRef;

namespace {

enum class Outcome : std::uint8_t { arrives, unrouted, loops };
constexpr std::uint32_t no_channel = ~0u;

/// The switch a LID's packets are delivered by: the switch itself, or the one its HCA port is cabled to.
NodeIndex delivering_switch(const topo::Topology& t, const PortRef& owner) {
  if (owner.node == topo::no_node)
    return topo::no_node;
  if (t.node(owner.node).kind == NodeKind::switch_node)
    return owner.node;
  const PortRef peer = t.peer(owner.node, owner.port);
  return peer.node != topo::no_node && t.node(peer.node).kind == NodeKind::switch_node ? peer.node : topo::no_node;
}

/// Finds one cycle in the graph given as CSR (first[v]..first[v+1] index into targets); empty if acyclic.
std::vector<std::uint32_t> find_cycle(const std::vector<std::uint32_t>& first,
                                      const std::vector<std::uint32_t>& targets) {
  const std::size_t n = first.size() - 1;
  std::vector<std::uint8_t> colour(n, 0);                     // 0 new, 1 on the stack, 2 done
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stack; // (vertex, next edge)
  for (std::uint32_t root = 0; root < n; ++root) {
    if (colour[root] != 0 || first[root] == first[root + 1])
      continue;
    stack.push_back({root, first[root]});
    colour[root] = 1;
    while (!stack.empty()) {
      auto& [v, next] = stack.back();
      if (next == first[v + 1]) {
        colour[v] = 2;
        stack.pop_back();
        continue;
      }
      const std::uint32_t w = targets[next++];
      if (colour[w] == 1) {
        std::vector<std::uint32_t> cycle;
        std::size_t i = stack.size();
        while (stack[--i].first != w) {
        }
        for (; i < stack.size(); ++i)
          cycle.push_back(stack[i].first);
        return cycle;
      }
      if (colour[w] == 0) {
        colour[w] = 1;
        stack.push_back({w, first[w]});
      }
    }
  }
  return {};
}

} // namespace

RouteCheck check_routes(const topo::Topology& t, const LidMap& lids, const Routing& routing, unsigned data_vls) {
  RouteCheck result;
  const SwitchIndex index(t);
  const std::size_t switches = index.switches.size();
  unsigned widest = 0;
  for (NodeIndex n : index.switches)
    widest = std::max(widest, t.node(n).port_count);
  const std::size_t stride = widest + 1;
  const auto channel_id = [&](std::size_t s, unsigned port, unsigned vl) {
    return static_cast<std::uint32_t>((s * stride + port) * 16 + vl);
  };

  std::vector<std::int32_t> sources; // switch ordinals with HCAs
  for (std::size_t s = 0; s < switches; ++s) {
    const NodeIndex n = index.switches[s];
    for (unsigned p = 1; p <= t.node(n).port_count; ++p) {
      const PortRef peer = t.peer(n, static_cast<PortNumber>(p));
      if (peer.node != topo::no_node && t.node(peer.node).kind == NodeKind::hca) {
        sources.push_back(static_cast<std::int32_t>(s));
        break;
      }
    }
  }

  // Per (switch, SL) state of the current destination: when stamped, the channel it leaves by, the hops left
  // and how its route ends.
  std::vector<std::uint32_t> stamp(switches * 16, 0);
  std::vector<std::uint32_t> walk_of(switches * 16, 0);
  std::vector<std::uint32_t> next_channel(switches * 16, no_channel);
  std::vector<std::uint8_t> hops_left(switches * 16, 0);
  std::vector<Outcome> outcome(switches * 16, Outcome::arrives);
  std::vector<std::uint64_t> edges;
  std::vector<std::uint32_t> walk;
  std::uint32_t generation = 0;
  std::uint32_t walk_number = 0;

  for (Lid d = 1; d <= lids.max_lid(); ++d) {
    const PortRef owner = lids.owner(d);
    if (owner.node == topo::no_node)
      continue;
    const NodeIndex last_switch = delivering_switch(t, owner);
    const bool to_hca = t.node(owner.node).kind == NodeKind::hca;
    ++generation;
    for (const std::int32_t a : sources) {
      ++walk_number;
      std::uint8_t sl = 0;
      if (!routing.path_sl_by_switch.empty() && last_switch != topo::no_node)
        sl = routing.path_sl_by_switch[static_cast<std::size_t>(a) * switches +
                                       static_cast<std::size_t>(index.ordinal_of_node[last_switch])];
      walk.clear();
      std::uint32_t previous = no_channel;
      std::size_t s = static_cast<std::size_t>(a);
      Outcome end = Outcome::arrives;
      unsigned hops_after = 0;
      std::string why;
      while (true) {
        const std::size_t state = s * 16 + sl;
        if (stamp[state] == generation) {
          if (walk_of[state] == walk_number) {
            end = Outcome::loops;
            why = "revisits " + t.node(index.switches[s]).name;
          } else {
            end = outcome[state];
            hops_after = hops_left[state];
            if (previous != no_channel && next_channel[state] != no_channel)
              edges.push_back(std::uint64_t{previous} << 32 | next_channel[state]);
          }
          break;
        }
        stamp[state] = generation;
        walk_of[state] = walk_number;
        next_channel[state] = no_channel;
        walk.push_back(static_cast<std::uint32_t>(state));
        const NodeIndex node = index.switches[s];
        const std::vector<std::uint8_t>& lft = routing.lfts[node];
        const std::uint8_t port = d < lft.size() ? lft[d] : no_path;
        const bool port_cabled =
            port >= 1 && port <= t.node(node).port_count && t.peer(node, port).node != topo::no_node;
        if (node == last_switch && (to_hca ? port_cabled && t.peer(node, port) == owner : port == 0))
          break; // delivered
        if (!port_cabled) {
          end = Outcome::unrouted;
          why = t.node(node).name + " has " + (port == no_path ? "no LFT entry" : "LFT port " + std::to_string(port));
          break;
        }
        const PortRef peer = t.peer(node, port);
        if (t.node(peer.node).kind != NodeKind::switch_node) {
          end = Outcome::unrouted;
          why = t.node(node).name + " sends it to " + t.node(peer.node).name;
          break;
        }
        const std::uint8_t vl = output_vl(routing, node, port, sl, data_vls);
        const std::uint32_t channel = channel_id(s, port, vl);
        next_channel[state] = channel;
        if (previous != no_channel)
          edges.push_back(std::uint64_t{previous} << 32 | channel);
        previous = channel;
        s = static_cast<std::size_t>(index.ordinal_of_node[peer.node]);
      }
      // Every state of this walk ends as the walk did, that many hops further on.
      for (std::size_t i = walk.size(); i-- > 0;) {
        outcome[walk[i]] = end;
        hops_left[walk[i]] =
            static_cast<std::uint8_t>(std::min(254u, hops_after + static_cast<unsigned>(walk.size() - 1 - i)));
      }
      if (end == Outcome::arrives) {
        result.max_hops =
            std::max(result.max_hops,
                     hops_after + static_cast<unsigned>(walk.empty() ? 0 : walk.size() - 1) + 1u + (to_hca ? 1u : 0u));
      } else {
        ++(end == Outcome::loops ? result.looping_pairs : result.unrouted_pairs);
        if (result.problems.size() < 10 && !why.empty())
          result.problems.push_back("from " + t.node(index.switches[static_cast<std::size_t>(a)]).name + " to LID " +
                                    std::to_string(d) + " (" + t.node(owner.node).name + "): " + why);
      }
    }
  }

  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  result.dependencies = edges.size();
  // Compact the channels that occur into a dense graph.
  std::vector<std::uint32_t> ids;
  ids.reserve(edges.size() * 2);
  for (std::uint64_t e : edges) {
    ids.push_back(static_cast<std::uint32_t>(e >> 32));
    ids.push_back(static_cast<std::uint32_t>(e));
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  result.channels = ids.size();
  const auto dense = [&](std::uint32_t id) {
    return static_cast<std::uint32_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
  };
  std::vector<std::uint32_t> first(ids.size() + 1, 0);
  std::vector<std::uint32_t> targets(edges.size());
  for (std::uint64_t e : edges)
    ++first[dense(static_cast<std::uint32_t>(e >> 32)) + 1];
  for (std::size_t v = 0; v < ids.size(); ++v)
    first[v + 1] += first[v];
  {
    std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
    for (std::uint64_t e : edges) // edges are sorted by source, so each list stays sorted
      targets[fill[dense(static_cast<std::uint32_t>(e >> 32))]++] = dense(static_cast<std::uint32_t>(e));
  }
  for (std::uint32_t v : find_cycle(first, targets)) {
    const std::uint32_t id = ids[v];
    const std::size_t s = id / 16 / stride;
    result.cycle.push_back(
        {index.switches[s], static_cast<PortNumber>(id / 16 % stride), static_cast<std::uint8_t>(id % 16)});
  }
  return result;
}

std::string describe_cycle(const topo::Topology& t, const std::vector<Channel>& cycle) {
  std::string text;
  for (const Channel& c : cycle)
    text += t.node(c.node).name + "/p" + std::to_string(c.port) + " VL" + std::to_string(c.vl) + " -> ";
  if (!cycle.empty())
    text += "(back to " + t.node(cycle.front().node).name + "/p" + std::to_string(cycle.front().port) + ")";
  return text;
}

std::vector<PortRef> trace_route(const topo::Topology& t, const LidMap& lids, const Routing& routing, Lid src,
                                 Lid dst) {
  const PortRef from = lids.owner(src);
  const PortRef to = lids.owner(dst);
  std::vector<PortRef> hops;
  if (from.node == topo::no_node || to.node == topo::no_node)
    return {};
  PortRef at = from;
  if (t.node(from.node).kind == NodeKind::hca) {
    hops.push_back(from);
    at = t.peer(from.node, from.port);
  }
  for (std::size_t steps = 0; at.node != topo::no_node && steps <= t.node_count(); ++steps) {
    if (at.node == to.node && t.node(at.node).kind == NodeKind::switch_node)
      return hops;
    if (t.node(at.node).kind != NodeKind::switch_node)
      return at == to ? hops : std::vector<PortRef>{};
    const std::vector<std::uint8_t>& lft = routing.lfts[at.node];
    const std::uint8_t port = dst < lft.size() ? lft[dst] : no_path;
    if (port == no_path || port == 0 || port > t.node(at.node).port_count)
      return {};
    hops.push_back({at.node, port});
    at = t.peer(at.node, port);
  }
  return {};
}

} // namespace ib::sm
