#include "models/sm/ucast_mgr.h"

#include <algorithm>
#include <cassert>

namespace ib::sm::detail {

using topo::NodeIndex;
using topo::NodeKind;
using topo::PortNumber;
using topo::PortRef;

SwitchGraph::SwitchGraph(const topo::Topology& t, const SwitchIndex& index)
    : count(static_cast<std::uint32_t>(index.switches.size())) {
  unsigned widest = 0;
  for (NodeIndex n : index.switches)
    widest = std::max(widest, t.node(n).port_count);
  stride = widest + 1;
  port_count.resize(count);
  neighbour.assign(std::size_t{count} * stride, -1);
  cabled.assign(std::size_t{count} * stride, 0);
  peer_port.assign(std::size_t{count} * stride, 0);
  for (std::uint32_t s = 0; s < count; ++s) {
    const NodeIndex n = index.switches[s];
    port_count[s] = static_cast<std::uint8_t>(t.node(n).port_count);
    for (unsigned p = 1; p <= t.node(n).port_count; ++p) {
      const PortRef peer = t.peer(n, static_cast<PortNumber>(p));
      if (peer.node == topo::no_node)
        continue;
      cabled[s * stride + p] = 1;
      peer_port[s * stride + p] = peer.port;
      if (t.node(peer.node).kind == NodeKind::switch_node)
        neighbour[s * stride + p] = index.ordinal_of_node[peer.node];
    }
  }
}

void ShortestHops::fill(std::uint32_t destination, std::vector<std::uint8_t>& row, std::vector<std::uint8_t>& least) {
  const SwitchGraph& g = graph_;
  least.assign(g.count, unreachable);
  row.assign(std::size_t{g.count} * g.stride, unreachable);
  queue_.clear();
  least[destination] = 0;
  queue_.push_back(destination);
  for (std::size_t head = 0; head < queue_.size(); ++head) {
    const std::uint32_t s = queue_[head];
    for (unsigned p = 1; p <= g.port_count[s]; ++p) {
      const std::int32_t n = g.at(s, p);
      if (n >= 0 && least[n] == unreachable && least[s] + 1 < unreachable) {
        least[n] = static_cast<std::uint8_t>(least[s] + 1);
        queue_.push_back(static_cast<std::uint32_t>(n));
      }
    }
  }
  row[std::size_t{destination} * g.stride] = 0;
  for (std::uint32_t s = 0; s < g.count; ++s) {
    for (unsigned p = 1; p <= g.port_count[s]; ++p) {
      const std::int32_t n = g.at(s, p);
      if (n >= 0 && least[n] != unreachable && least[n] + 1 < unreachable)
        row[std::size_t{s} * g.stride + p] = static_cast<std::uint8_t>(least[n] + 1);
    }
  }
}

std::vector<PortRef> opensm_port_order(const topo::Topology& t, const SwitchIndex& index) {
  std::vector<PortRef> order;
  std::vector<std::uint8_t> listed_hca_port; // per (node, port) of HCAs, flat by node
  std::vector<std::uint32_t> first(t.node_count() + 1, 0);
  for (NodeIndex n = 0; n < t.node_count(); ++n)
    first[n + 1] = first[n] + t.node(n).port_count + 1;
  listed_hca_port.assign(first.back(), 0);

  // sort_ports_by_switch_load: switches by HCA links, most first; a stable sort keeps switch-GUID order on ties.
  std::vector<NodeIndex> switches = index.switches;
  std::sort(switches.begin(), switches.end(),
            [&](NodeIndex a, NodeIndex b) { return t.node(a).node_guid < t.node(b).node_guid; });
  const auto hca_links = [&](NodeIndex s) {
    unsigned links = 0;
    for (unsigned p = 1; p <= t.node(s).port_count; ++p) {
      const PortRef peer = t.peer(s, static_cast<PortNumber>(p));
      links += peer.node != topo::no_node && t.node(peer.node).kind == NodeKind::hca;
    }
    return links;
  };
  std::vector<unsigned> load(t.node_count(), 0);
  for (NodeIndex s : switches)
    load[s] = hca_links(s);
  std::stable_sort(switches.begin(), switches.end(), [&](NodeIndex a, NodeIndex b) { return load[a] > load[b]; });
  for (NodeIndex s : switches) {
    for (unsigned p = 1; p <= t.node(s).port_count; ++p) {
      const PortRef peer = t.peer(s, static_cast<PortNumber>(p));
      if (peer.node == topo::no_node || t.node(peer.node).kind != NodeKind::hca)
        continue;
      if (!listed_hca_port[first[peer.node] + peer.port]) {
        listed_hca_port[first[peer.node] + peer.port] = 1;
        order.push_back(peer);
      }
    }
  }
  // add_port_to_order_list: the rest in OpenSM's port-GUID table order.
  std::vector<std::pair<std::uint64_t, PortRef>> rest;
  for (NodeIndex n = 0; n < t.node_count(); ++n) {
    const topo::Node& node = t.node(n);
    if (node.kind == NodeKind::switch_node) {
      rest.push_back({opensm_guid_order(node.node_guid), {n, 0}});
      continue;
    }
    for (unsigned p = 1; p <= node.port_count; ++p) {
      if (!listed_hca_port[first[n] + p] && t.peer(n, static_cast<PortNumber>(p)).node != topo::no_node)
        rest.push_back({opensm_guid_order(node.port_guids.at(p - 1)), {n, static_cast<PortNumber>(p)}});
    }
  }
  std::sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& entry : rest)
    order.push_back(entry.second);
  return order;
}

namespace {

/// What OpenSM's per-port priv list records with LMC > 0: which remote nodes (and, for dor, ports) this
/// destination's LIDs already leave towards, and how many of them each.
struct RemoteUse {
  NodeIndex node;
  PortNumber port;
  std::uint32_t forwarded_to;
};

class SwitchRouter {
public:
  SwitchRouter(const RoutingInput& in, const SwitchGraph& g, const UcastOptions& options)
      : t_(in.topology), g_(g), options_(options), lmc_(in.lids.lmc()) {}

  /// osm_switch_recommend_path for LID `lid` of destination `dest` (whose switch is `dest_switch`), at switch s.
  std::uint8_t recommend(std::uint32_t s, NodeIndex sw_node, const PortRef& dest, std::int32_t dest_switch,
                         unsigned start_from, const std::uint8_t* row, std::uint8_t least,
                         const std::vector<std::uint32_t>& counts, const std::vector<RemoteUse>* used) const {
    if (t_.node(dest.node).kind == NodeKind::switch_node) {
      if (dest.node == sw_node)
        return 0;
    } else {
      const PortRef attached = t_.peer(dest.node, dest.port);
      if (attached.node == topo::no_node || t_.node(attached.node).kind != NodeKind::switch_node)
        return no_path;
      if (attached.node == sw_node)
        return attached.port;
    }
    if (dest_switch < 0 || least == unreachable)
      return no_path;
    const unsigned num_ports = g_.port_count[s] + 1u;
    const bool for_lmc = lmc_ > 0 && used != nullptr;
    std::uint32_t least_paths = ~0u, least_other_sys = ~0u, least_other_nodes = ~0u, least_forwarded_to = ~0u;
    std::uint8_t best = 0, best_other_sys = 0, best_other_node = 0;
    bool found = false;
    NodeIndex first_remote = topo::no_node;
    static const RemoteUse none{topo::no_node, 0, 0};
    for (unsigned i = start_from; i < start_from + num_ports; ++i) {
      const unsigned p = i % num_ports;
      if (p == 0 || row[p] != least || !g_.cabled[s * g_.stride + p])
        continue;
      const std::uint32_t count = counts[p];
      const RemoteUse* remote = nullptr;
      const PortRef peer = t_.peer(sw_node, static_cast<PortNumber>(p));
      if (options_.dor) {
        if (first_remote == topo::no_node)
          first_remote = peer.node;
        else if (peer.node != first_remote)
          continue;
        if (for_lmc) {
          remote = &none;
          for (const RemoteUse& r : *used)
            if (r.node == peer.node && r.port == peer.port) {
              remote = &r;
              break;
            }
        }
      } else if (for_lmc) {
        const topo::Node& peer_node = t_.node(peer.node);
        for (const RemoteUse& r : *used)
          if (t_.node(r.node).system_image_guid == peer_node.system_image_guid) {
            remote = &r;
            break;
          }
        if (remote == nullptr) {
          if (count < least_other_sys) {
            least_other_sys = count;
            best_other_sys = static_cast<std::uint8_t>(p);
            least_forwarded_to = 0;
          }
        } else {
          remote = nullptr;
          for (const RemoteUse& r : *used)
            if (t_.node(r.node).node_guid == peer_node.node_guid) {
              remote = &r;
              break;
            }
          if (remote == nullptr && count < least_other_nodes) {
            least_other_nodes = count;
            best_other_node = static_cast<std::uint8_t>(p);
            least_forwarded_to = 0;
          }
        }
      }
      if (count < least_paths) {
        found = true;
        best = static_cast<std::uint8_t>(p);
        least_paths = count;
        if (for_lmc && remote != nullptr && remote->forwarded_to < least_forwarded_to)
          least_forwarded_to = remote->forwarded_to;
      } else if (for_lmc && remote != nullptr && count == least_paths && remote->forwarded_to < least_forwarded_to) {
        least_forwarded_to = remote->forwarded_to;
        best = static_cast<std::uint8_t>(p);
      }
    }
    if (!found)
      return no_path;
    if (for_lmc && best != 0) {
      if (best_other_sys != 0)
        best = best_other_sys;
      else if (best_other_node != 0)
        best = best_other_node;
    }
    return best;
  }

  /// find_and_add_remote_sys, then forwarded_to++.
  void note_use(NodeIndex sw_node, std::uint8_t port, std::vector<RemoteUse>& used) const {
    const PortRef peer = t_.peer(sw_node, port);
    for (RemoteUse& r : used) {
      if (r.node == peer.node && (!options_.dor || r.port == peer.port)) {
        ++r.forwarded_to;
        return;
      }
    }
    used.push_back({peer.node, peer.port, 1});
  }

private:
  const topo::Topology& t_;
  const SwitchGraph& g_;
  const UcastOptions& options_;
  unsigned lmc_;
};

} // namespace

void build_lfts(const RoutingInput& in, const SwitchIndex& index, const SwitchGraph& g, HopSource& hops,
                const UcastOptions& options, Routing& routing) {
  const topo::Topology& t = in.topology;
  const LidMap& lids = in.lids;
  routing.lfts.assign(t.node_count(), {});
  for (NodeIndex n : index.switches)
    routing.lfts[n].assign(std::size_t{lids.max_lid()} + 1, no_path);
  const std::vector<PortRef> order = opensm_port_order(t, index);
  std::vector<std::vector<std::uint32_t>> counts(g.count);
  for (std::uint32_t s = 0; s < g.count; ++s)
    counts[s].assign(g.stride, 0);
  // With LMC > 0, each (switch, destination port) remembers where its earlier LIDs went.
  std::vector<std::vector<RemoteUse>> used;
  if (lids.lmc() > 0)
    used.resize(std::size_t{g.count} * order.size());

  SwitchRouter router(in, g, options);
  std::vector<std::uint8_t> row;
  std::vector<std::uint8_t> least;
  std::int32_t row_of = -1;
  const unsigned lids_per_port = 1u << lids.lmc();
  // OpenSM walks switch by switch; each switch's choices depend only on its own counters, so walking destination
  // by destination with the switches inside gives the same tables while computing each hop row once.
  for (unsigned offset = 0; offset < lids_per_port; ++offset) {
    for (std::size_t d = 0; d < order.size(); ++d) {
      const PortRef& dest = order[d];
      if (offset >= lids.lid_count(dest.node))
        continue;
      const Lid lid = static_cast<Lid>(lids.base_lid(dest.node, dest.port) + offset);
      const bool dest_is_switch = t.node(dest.node).kind == NodeKind::switch_node;
      std::int32_t dest_switch = -1;
      if (dest_is_switch) {
        dest_switch = index.ordinal_of_node[dest.node];
      } else {
        const PortRef attached = t.peer(dest.node, dest.port);
        if (attached.node != topo::no_node && t.node(attached.node).kind == NodeKind::switch_node)
          dest_switch = index.ordinal_of_node[attached.node];
      }
      if (dest_switch >= 0 && dest_switch != row_of) {
        hops.fill(static_cast<std::uint32_t>(dest_switch), row, least);
        row_of = dest_switch;
      }
      for (std::uint32_t s = 0; s < g.count; ++s) {
        const NodeIndex sw_node = index.switches[s];
        std::vector<std::uint8_t>& lft = routing.lfts[sw_node];
        unsigned start_from = 1;
        if (offset > 0 && !options.dor)
          start_from = lft[lid - 1] + 1u;
        std::vector<RemoteUse>* list = used.empty() ? nullptr : &used[s * order.size() + d];
        const std::uint8_t port = dest_switch < 0
                                      ? no_path
                                      : router.recommend(s, sw_node, dest, dest_switch, start_from,
                                                         &row[std::size_t{s} * g.stride], least[s], counts[s], list);
        lft[lid] = port;
        if (port != no_path && !dest_is_switch) {
          ++counts[s][port];
          if (port > 0 && list != nullptr)
            router.note_use(sw_node, port, *list);
        }
      }
    }
  }
}

} // namespace ib::sm::detail
