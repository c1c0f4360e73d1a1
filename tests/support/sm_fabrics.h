// Small fabrics built directly through topo::Topology for the subnet-manager tests, independent of the topology
// file format and generators: two- and three-level fat trees (k-ary n-trees), rings, meshes and tori, with
// deterministic GUIDs (switches 0x0002c90200000000 + n, HCAs 0x0002c90300000000 + 0x100 * n, port p at + p).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/topology/topology.h"
#include "tests/support/names.h"

namespace ib::testing {

class FabricBuilder {
public:
  ib::topo::NodeIndex add_switch(const std::string& name, unsigned ports, std::vector<std::int32_t> coordinates = {}) {
    const std::uint64_t guid = 0x0002c90200000000ull + ++switches_;
    return topology.add_node({name,
                              ib::topo::NodeKind::switch_node,
                              "switch-ib2-edr",
                              ports,
                              guid,
                              guid,
                              {guid},
                              std::move(coordinates),
                              all_widths,
                              all_speeds});
  }
  ib::topo::NodeIndex add_hca(const std::string& name, unsigned ports = 1) {
    const std::uint64_t guid = 0x0002c90300000000ull + 0x100 * ++hcas_;
    std::vector<std::uint64_t> port_guids;
    for (unsigned p = 1; p <= ports; ++p)
      port_guids.push_back(guid + p);
    return topology.add_node(
        {name, ib::topo::NodeKind::hca, "connectx4-edr", ports, guid, guid, port_guids, {}, all_widths, all_speeds});
  }
  void connect(ib::topo::NodeIndex a, unsigned pa, ib::topo::NodeIndex b, unsigned pb) {
    topology.add_link({{a, static_cast<ib::topo::PortNumber>(pa)},
                       {b, static_cast<ib::topo::PortNumber>(pb)},
                       ib::link::Width::x4,
                       ib::link::Speed::edr,
                       2.0,
                       "copper-dac"});
  }
  ib::topo::Topology topology;

private:
  static constexpr ib::link::WidthSet all_widths = 0x1f;
  static constexpr ib::link::SpeedSet all_speeds = 0xff;
  std::uint64_t switches_ = 0;
  std::uint64_t hcas_ = 0;
};

/// Leaf-spine: `leaves` leaves with `hosts` hosts each (ports 1..hosts), each leaf cabled once to every spine
/// (leaf port hosts + 1 + s, spine port 1 + l). Nodes: leaves, spines, then hosts.
inline ib::topo::Topology two_level_tree(unsigned leaves, unsigned spines, unsigned hosts) {
  FabricBuilder b;
  std::vector<ib::topo::NodeIndex> leaf, spine;
  for (unsigned l = 0; l < leaves; ++l)
    leaf.push_back(b.add_switch(numbered("leaf", l), hosts + spines));
  for (unsigned s = 0; s < spines; ++s)
    spine.push_back(b.add_switch(numbered("spine", s), leaves));
  for (unsigned l = 0; l < leaves; ++l)
    for (unsigned h = 0; h < hosts; ++h)
      b.connect(b.add_hca(numbered("h", l * hosts + h)), 1, leaf[l], h + 1);
  for (unsigned l = 0; l < leaves; ++l)
    for (unsigned s = 0; s < spines; ++s)
      b.connect(leaf[l], hosts + 1 + s, spine[s], l + 1);
  return std::move(b.topology);
}

/// A k-ary 3-tree (Petrini & Vanneschi): k^3 hosts, 3 k^2 switches of 2k ports. Pod p has k edge and k
/// aggregation switches; edge e of pod p serves hosts (p k + e) k ..; aggregation a of every pod connects to core
/// switches a k .. a k + k - 1.
inline ib::topo::Topology three_level_tree(unsigned k) {
  FabricBuilder b;
  std::vector<ib::topo::NodeIndex> edge, agg, core;
  for (unsigned i = 0; i < k * k; ++i)
    edge.push_back(b.add_switch(numbered("edge", i), 2 * k));
  for (unsigned i = 0; i < k * k; ++i)
    agg.push_back(b.add_switch(numbered("agg", i), 2 * k));
  for (unsigned i = 0; i < k * k; ++i)
    core.push_back(b.add_switch(numbered("core", i), 2 * k));
  for (unsigned e = 0; e < k * k; ++e)
    for (unsigned h = 0; h < k; ++h)
      b.connect(b.add_hca(numbered("h", e * k + h)), 1, edge[e], h + 1);
  for (unsigned p = 0; p < k; ++p)
    for (unsigned e = 0; e < k; ++e)
      for (unsigned a = 0; a < k; ++a)
        b.connect(edge[p * k + e], k + 1 + a, agg[p * k + a], e + 1);
  for (unsigned p = 0; p < k; ++p)
    for (unsigned a = 0; a < k; ++a)
      for (unsigned c = 0; c < k; ++c)
        b.connect(agg[p * k + a], k + 1 + c, core[a * k + c], p + 1);
  return std::move(b.topology);
}

/// A mesh or torus of switches with `extents`, one host each. Dimension d uses ports 2d + 1 (towards -) and
/// 2d + 2 (towards +); the host is on port 2 dims + 1. Switch i has coordinates i in mixed radix, dimension 0
/// fastest. Sets topology.grid.
inline ib::topo::Topology grid(std::vector<unsigned> extents, bool torus) {
  FabricBuilder b;
  const unsigned dims = static_cast<unsigned>(extents.size());
  unsigned count = 1;
  for (unsigned e : extents)
    count *= e;
  std::vector<ib::topo::NodeIndex> sw;
  std::vector<std::vector<std::int32_t>> coords;
  for (unsigned i = 0; i < count; ++i) {
    std::vector<std::int32_t> c;
    for (unsigned d = 0, rest = i; d < dims; rest /= extents[d], ++d)
      c.push_back(static_cast<std::int32_t>(rest % extents[d]));
    coords.push_back(c);
    sw.push_back(b.add_switch(numbered("sw", i), 2 * dims + 1, c));
  }
  const auto index_of = [&](std::vector<std::int32_t> c) {
    unsigned i = 0;
    for (unsigned d = dims; d-- > 0;)
      i = i * extents[d] + static_cast<unsigned>(c[d]);
    return i;
  };
  for (unsigned i = 0; i < count; ++i) {
    for (unsigned d = 0; d < dims; ++d) {
      std::vector<std::int32_t> c = coords[i];
      if (static_cast<unsigned>(c[d]) + 1 < extents[d]) {
        ++c[d];
      } else if (torus && extents[d] > 2) {
        c[d] = 0;
      } else {
        continue;
      }
      b.connect(sw[i], 2 * d + 2, sw[index_of(c)], 2 * d + 1);
    }
  }
  for (unsigned i = 0; i < count; ++i)
    b.connect(b.add_hca(numbered("h", i)), 1, sw[i], 2 * dims + 1);
  std::vector<std::uint32_t> shape(extents.begin(), extents.end());
  b.topology.grid = ib::topo::GridShape{shape, torus};
  return std::move(b.topology);
}

} // namespace ib::testing
