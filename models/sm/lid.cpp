#include "models/sm/lid.h"

#include <algorithm>
#include <string>

#include "models/sm/sm_error.h"

namespace ib::sm {

using topo::NodeIndex;
using topo::NodeKind;
using topo::PortNumber;
using topo::PortRef;

namespace {

bool cabled(const topo::Topology& t, NodeIndex n, PortNumber p) {
  return t.peer(n, p).node != topo::no_node;
}

/// The GUID OpenSM keys a port by: a switch's node GUID (its port 0), an HCA port's own port GUID.
std::uint64_t port_guid(const topo::Topology& t, PortRef ref) {
  const topo::Node& node = t.node(ref.node);
  return node.kind == NodeKind::switch_node ? node.node_guid : node.port_guids.at(ref.port - 1);
}

/// The LID-bearing ports of the fabric: each switch once (port 0), each cabled HCA port.
std::vector<PortRef> lid_ports(const topo::Topology& t) {
  std::vector<PortRef> ports;
  for (NodeIndex n = 0; n < t.node_count(); ++n) {
    const topo::Node& node = t.node(n);
    if (node.kind == NodeKind::switch_node) {
      ports.push_back({n, 0});
      continue;
    }
    for (unsigned p = 1; p <= node.port_count; ++p) {
      if (cabled(t, n, static_cast<PortNumber>(p)))
        ports.push_back({n, static_cast<PortNumber>(p)});
    }
  }
  return ports;
}

} // namespace

Lid LidMap::base_lid(NodeIndex node, PortNumber port) const {
  return base_[first_port_[node] + (is_switch_[node] ? 0 : port)];
}

unsigned LidMap::lid_count(NodeIndex node) const {
  return is_switch_[node] ? 1u : 1u << lmc_;
}

PortRef LidMap::owner(Lid lid) const {
  return lid < owners_.size() ? owners_[lid] : PortRef{};
}

topo::PortRef default_sm_port(const topo::Topology& topology) {
  std::optional<PortRef> best;
  for (const PortRef& ref : lid_ports(topology)) {
    if (topology.node(ref.node).kind == NodeKind::hca &&
        (!best || opensm_guid_order(port_guid(topology, ref)) < opensm_guid_order(port_guid(topology, *best))))
      best = ref;
  }
  return best.value_or(PortRef{});
}

LidMap assign_lids(const topo::Topology& t, const LidOptions& options) {
  if (options.lmc > 7)
    throw SmError("LMC must be 0..7, got " + std::to_string(options.lmc));
  LidMap map;
  map.lmc_ = options.lmc;
  map.first_port_.resize(t.node_count());
  map.is_switch_.resize(t.node_count());
  std::uint32_t ports = 0;
  for (NodeIndex n = 0; n < t.node_count(); ++n) {
    map.first_port_[n] = ports;
    map.is_switch_[n] = t.node(n).kind == NodeKind::switch_node;
    ports += t.node(n).port_count + 1;
  }
  map.base_.assign(ports, no_lid);

  std::vector<PortRef> order = lid_ports(t);
  if (options.order == LidOrder::opensm) {
    const PortRef sm = options.sm_port.node == topo::no_node ? default_sm_port(t) : options.sm_port;
    if (sm.node != topo::no_node) {
      if (t.node(sm.node).kind != NodeKind::hca || sm.port < 1 || sm.port > t.node(sm.node).port_count ||
          !cabled(t, sm.node, sm.port))
        throw SmError("the SM port " + t.node(sm.node).name + "/" + std::to_string(sm.port) +
                      " is not a cabled HCA port");
    }
    std::sort(order.begin(), order.end(), [&](const PortRef& a, const PortRef& b) {
      const bool a_sm = a == sm;
      const bool b_sm = b == sm;
      if (a_sm != b_sm)
        return a_sm;
      return opensm_guid_order(port_guid(t, a)) < opensm_guid_order(port_guid(t, b));
    });
  }

  // One cursor, as OpenSM's first fit over a fresh subnet's single free range: alignment gaps are skipped.
  std::uint32_t next = 1;
  map.owners_.assign(1, PortRef{});
  for (const PortRef& ref : order) {
    const std::uint32_t count = map.lid_count(ref.node);
    const std::uint32_t base = (next + count - 1) & ~(count - 1);
    if (base + count - 1 > max_unicast_lid)
      throw SmError("the fabric needs more than " + std::to_string(max_unicast_lid) + " unicast LIDs at LMC " +
                    std::to_string(options.lmc));
    map.base_[map.first_port_[ref.node] + ref.port] = static_cast<Lid>(base);
    map.owners_.resize(base + count, PortRef{});
    for (std::uint32_t l = base; l < base + count; ++l)
      map.owners_[l] = ref;
    next = base + count;
  }
  return map;
}

} // namespace ib::sm
