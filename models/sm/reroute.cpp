#include "models/sm/reroute.h"

#include <cassert>

#include "models/sm/sm_error.h"

namespace ib::sm {

using topo::NodeIndex;
using topo::NodeKind;
using topo::PortNumber;
using topo::PortRef;

topo::PortRef sm_port_of(const topo::Topology& topology, const SmOptions& options) {
  return options.lids.sm_port.node != topo::no_node ? options.lids.sm_port : default_sm_port(topology);
}

Discovered discover(const topo::Topology& topology, PortRef sm_port, std::span<const std::uint32_t> down) {
  assert(sm_port.node < topology.node_count());
  const topo::Topology up = topo::without_links(topology, down);
  Discovered out;
  out.reached.assign(topology.node_count(), 0);
  out.reached[sm_port.node] = 1;
  // Breadth first through switches only: an HCA answers the SM but does not forward its SMPs.
  std::vector<NodeIndex> queue;
  // An SM on a switch's port 0 is inside the switch: its first hop is the switch itself, always up.
  const bool on_switch = topology.node(sm_port.node).kind == NodeKind::switch_node;
  const PortRef first = on_switch ? PortRef{} : up.peer(sm_port.node, sm_port.port);
  out.sm_port_down = !on_switch && first.node == topo::no_node;
  if (on_switch) {
    queue.push_back(sm_port.node);
  } else if (!out.sm_port_down) {
    out.reached[first.node] = 1;
    if (up.node(first.node).kind == NodeKind::switch_node)
      queue.push_back(first.node);
  }
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const NodeIndex s = queue[head];
    for (unsigned p = 1; p <= up.node(s).port_count; ++p) {
      const PortRef peer = up.peer(s, static_cast<PortNumber>(p));
      if (peer.node == topo::no_node || out.reached[peer.node])
        continue;
      out.reached[peer.node] = 1;
      if (up.node(peer.node).kind == NodeKind::switch_node)
        queue.push_back(peer.node);
    }
  }
  // Links the SM does not see: those not touching a reached switch, except its own port's.
  std::vector<std::uint32_t> unseen(down.begin(), down.end());
  for (std::uint32_t l = 0; l < topology.link_count(); ++l) {
    const topo::Link& link = topology.link(l);
    const auto reached_switch = [&](const PortRef& end) {
      return out.reached[end.node] && topology.node(end.node).kind == NodeKind::switch_node;
    };
    const bool own = link.a == sm_port || link.b == sm_port;
    if (!reached_switch(link.a) && !reached_switch(link.b) && !own)
      unseen.push_back(l);
  }
  out.fabric = topo::without_links(topology, unseen);
  return out;
}

namespace {

/// One engine's attempt; empty `refusal` when it routed.
struct Attempt {
  Routing routing;
  std::string refusal;
};

Attempt try_engine(const EngineInfo& info, const topo::Topology& fabric, const LidMap& lids,
                   const RoutingOptions& options) {
  Attempt a;
  try {
    a.routing = info.make()->route({fabric, lids, options});
    a.routing.engine = info.name;
    if (a.routing.vls_needed > options.data_vls)
      a.refusal = std::string(info.name) + " needs " + std::to_string(a.routing.vls_needed) + " VLs, the fabric runs " +
                  std::to_string(options.data_vls);
  } catch (const SmError& e) {
    a.refusal = e.what();
  }
  return a;
}

} // namespace

Reroute reroute(const topo::Topology& topology, const LidMap& lids, const Routing& current, const SmOptions& options,
                std::span<const std::uint32_t> down) {
  const EngineInfo* info = find_engine(options.engine);
  if (info == nullptr)
    throw SmError("unknown routing engine '" + options.engine + "'");
  Reroute out;
  out.discovered = discover(topology, sm_port_of(topology, options), down);
  const topo::Topology& fabric = out.discovered.fabric;
  if (out.discovered.sm_port_down) {
    // OpenSM finds its port down, drops what it knew and waits for it to come back (osm_state_mgr.c, do_sweep).
    out.routing = current;
    out.engine = current.engine;
  } else {
    Attempt attempt = try_engine(*info, fabric, lids, options.routing);
    if (!attempt.refusal.empty()) {
      out.refusal = std::move(attempt.refusal);
      const EngineInfo* fallback = find_engine(default_engine);
      attempt = try_engine(*fallback, fabric, lids, options.routing);
      if (!attempt.refusal.empty())
        throw SmError("minhop refuses the fabric after " + out.refusal + ": " + attempt.refusal);
      out.fell_back = true;
    }
    out.routing = std::move(attempt.routing);
    out.engine = out.routing.engine;
    // The SM writes only the switches it reaches; the others keep what they hold.
    for (NodeIndex n = 0; n < topology.node_count(); ++n) {
      if (topology.node(n).kind != NodeKind::switch_node || out.discovered.reached[n])
        continue;
      out.routing.lfts[n] = n < current.lfts.size() ? current.lfts[n] : std::vector<std::uint8_t>{};
      if (n < out.routing.sl_to_vl.size())
        out.routing.sl_to_vl[n] = n < current.sl_to_vl.size() ? current.sl_to_vl[n] : std::vector<SlToVl>{};
    }
  }
  out.check = check_routes(fabric, lids, out.routing, options.routing.data_vls);
  return out;
}

} // namespace ib::sm
