// Meshes and tori of 1 to 3 dimensions. Switch "sw_x[_y[_z]]" sits at coordinates (x, y, z), x varying fastest
// in node order. Dimension d uses ports 2d+1 and 2d+2 on every switch: port 2d+1 is cabled to the + neighbour's
// port 2d+2 (so 2d+2 faces -). OpenSM's dor engine needs exactly this: each dimension "consistently use[s] the
// same pair of ports, one port on one end of the cable, and the other port on the other end" (opensm(8), "DOR
// Routing Algorithm"), and it orders dimensions by port number, lowest first (osm_switch_recommend_path() takes
// the lowest min-hop port), so x is routed first. A mesh leaves an edge switch's outward port free; a torus wraps
// (an extent of 2 gives two parallel links). Hosts use ports 2·dims+1 .. 2·dims+hosts_per_switch.
#include <string>

#include "models/topology/builder.h"
#include "models/topology/generators.h"

namespace ib::topo {

Topology generate_grid(const GridOptions& o, Catalog& catalog) {
  if (o.dims.empty() || o.dims.size() > 3) {
    throw OptionError("dims", "1 to 3 extents", std::to_string(o.dims.size()) + " extents");
  }
  std::uint64_t switches = 1;
  for (const unsigned extent : o.dims) {
    if (extent < 2 || extent > 65535) {
      throw OptionError("dims", "extents in [2, 65535]", std::to_string(extent));
    }
    switches *= extent;
    Builder::need_node_count(switches, "dims");
  }
  need_positive(o.hosts_per_switch, "hosts_per_switch");
  Builder b(o.common, catalog);
  const std::uint64_t dimensions = o.dims.size();
  const std::uint64_t per_switch = o.hosts_per_switch;
  const std::uint64_t hosts = switches * per_switch;
  Builder::need_node_count(hosts + switches, "hosts_per_switch");
  b.need_switch_ports(2 * dimensions + per_switch, "hosts_per_switch",
                      std::to_string(2 * dimensions) + " grid ports + " + std::to_string(per_switch) + " hosts");

  for (std::uint64_t i = 0; i < hosts; ++i) {
    b.add_hca(numbered("h", i));
  }
  const auto switch0 = static_cast<NodeIndex>(hosts);
  std::vector<std::int32_t> at(dimensions, 0);
  for (std::uint64_t s = 0; s < switches; ++s) {
    std::uint64_t rest = s;
    std::string name = "sw";
    for (std::uint64_t d = 0; d < dimensions; ++d) {
      at[d] = static_cast<std::int32_t>(rest % o.dims[d]);
      rest /= o.dims[d];
      name += cat({"_", std::to_string(at[d])});
    }
    b.add_switch(std::move(name), at);
  }
  for (std::uint64_t i = 0; i < hosts; ++i) {
    b.connect(static_cast<NodeIndex>(i), 1, static_cast<NodeIndex>(switch0 + i / per_switch),
              static_cast<unsigned>(2 * dimensions + i % per_switch + 1));
  }
  for (std::uint64_t s = 0; s < switches; ++s) {
    std::uint64_t stride = 1;
    for (std::uint64_t d = 0; d < dimensions; ++d) {
      const std::uint64_t extent = o.dims[d];
      const std::uint64_t c = s / stride % extent;
      if (c + 1 < extent || o.torus) {
        const std::uint64_t next = c + 1 < extent ? s + stride : s - c * stride;
        b.connect(static_cast<NodeIndex>(switch0 + s), static_cast<unsigned>(2 * d + 1),
                  static_cast<NodeIndex>(switch0 + next), static_cast<unsigned>(2 * d + 2));
      }
      stride *= extent;
    }
  }
  std::string shape;
  for (const unsigned extent : o.dims) {
    shape += cat({shape.empty() ? "" : "x", std::to_string(extent)});
  }
  const std::string kind = o.torus ? "torus" : "mesh";
  Topology t = b.take(cat({kind, "-", shape}),
                      cat({std::to_string(dimensions), "D ", kind, " ", shape, ", ", std::to_string(per_switch),
                           per_switch == 1 ? " host" : " hosts", " per switch; ", b.hardware_text()}));
  t.grid = GridShape{std::vector<std::uint32_t>(o.dims.begin(), o.dims.end()), o.torus};
  return t;
}

} // namespace ib::topo
