#include "models/topology/topology.h"

#include <algorithm>
#include <cassert>
#include <cinttypes>
#include <cstdio>
#include <utility>

namespace ib::topo {

std::string_view to_string(NodeKind kind) {
  switch (kind) {
  case NodeKind::hca:
    return "hca";
  case NodeKind::switch_node:
    return "switch";
  }
  return "?";
}

NodeIndex Topology::add_node(Node node) {
  assert(node.port_count >= 1 && node.port_count <= max_port_count);
  const auto index = static_cast<NodeIndex>(nodes_.size());
  [[maybe_unused]] const bool added = by_name_.emplace(node.name, index).second;
  assert(added && "node names are unique");
  first_port_.push_back(static_cast<std::uint32_t>(ports_.size()));
  ports_.resize(ports_.size() + node.port_count + 1);
  nodes_.push_back(std::move(node));
  return index;
}

std::uint32_t Topology::add_link(Link link) {
  assert(link.a.node < nodes_.size() && link.b.node < nodes_.size());
  assert(link.a.port >= 1 && link.a.port <= nodes_[link.a.node].port_count);
  assert(link.b.port >= 1 && link.b.port <= nodes_[link.b.node].port_count);
  assert(!(link.a == link.b));
  Attachment& a = ports_[first_port_[link.a.node] + link.a.port];
  Attachment& b = ports_[first_port_[link.b.node] + link.b.port];
  assert(a.peer.node == no_node && b.peer.node == no_node && "ports are free");
  const auto index = static_cast<std::uint32_t>(links_.size());
  a = Attachment{link.b, index};
  b = Attachment{link.a, index};
  links_.push_back(std::move(link));
  return index;
}

std::optional<NodeIndex> Topology::find(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) {
    return std::nullopt;
  }
  return it->second;
}

PortRef Topology::peer(NodeIndex node, PortNumber port) const {
  assert(node < nodes_.size() && port <= nodes_[node].port_count);
  return ports_[first_port_[node] + port].peer;
}

std::uint32_t Topology::link_at(NodeIndex node, PortNumber port) const {
  assert(peer(node, port).node != no_node);
  return ports_[first_port_[node] + port].link;
}

Topology without_links(const Topology& topology, std::span<const std::uint32_t> down) {
  std::vector<std::uint8_t> is_down(topology.link_count(), 0);
  for (const std::uint32_t l : down) {
    assert(l < topology.link_count());
    is_down[l] = 1;
  }
  Topology out;
  out.name = topology.name;
  out.description = topology.description;
  out.grid = topology.grid;
  for (const Node& node : topology.nodes()) {
    out.add_node(node);
  }
  for (std::uint32_t l = 0; l < topology.link_count(); ++l) {
    if (!is_down[l]) {
      out.add_link(topology.link(l));
    }
  }
  return out;
}

std::vector<std::uint32_t> links_of(const Topology& topology, NodeIndex node) {
  std::vector<std::uint32_t> links;
  for (unsigned p = 1; p <= topology.node(node).port_count; ++p) {
    if (topology.peer(node, static_cast<PortNumber>(p)).node != no_node) {
      links.push_back(topology.link_at(node, static_cast<PortNumber>(p)));
    }
  }
  std::sort(links.begin(), links.end());
  return links;
}

std::uint64_t default_node_guid(NodeKind kind, NodeIndex index) {
  // 0x0002c9 is Mellanox's IEEE OUI, the prefix real ConnectX and Switch-IB GUIDs carry (ibnetdiscover outputs).
  constexpr std::uint64_t oui = 0x0002c9;
  const std::uint64_t kind_code = kind == NodeKind::hca ? 0x01 : 0x02;
  assert(index + 1u < (1u << 24));
  return oui << 40 | kind_code << 32 | (static_cast<std::uint64_t>(index) + 1) << 8;
}

std::vector<std::uint64_t> default_port_guids(NodeKind kind, std::uint64_t node_guid, unsigned port_count) {
  if (kind == NodeKind::switch_node) {
    return {node_guid};
  }
  std::vector<std::uint64_t> guids(port_count);
  for (unsigned p = 1; p <= port_count; ++p) {
    guids[p - 1] = node_guid + p;
  }
  return guids;
}

std::string format_guid(std::uint64_t guid) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016" PRIx64, guid);
  return text;
}

} // namespace ib::topo
