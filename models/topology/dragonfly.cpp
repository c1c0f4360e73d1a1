// Dragonfly (Kim, Dally, Scott, Abts, "Technology-Driven, Highly-Scalable Dragonfly Topology", ISCA 2008).
// Router r of group G is "g<G>r<r>"; its ports are p hosts (1..p), then a-1 local links to the other routers of
// its group in router order, then h global links. Global links use the "consecutive" (absolute) arrangement:
// group G numbers its a·h global ports i = r·h + j (router r, global port j); with R = floor(a·h / (g-1)), port
// i < R·(g-1) goes to the (i mod (g-1))-th group other than G, in round i div (g-1), and lands on that group's
// port numbered the same way for G. Every pair of groups is joined by R links (1 when g = a·h + 1); ports
// i >= R·(g-1) stay free.
#include <string>

#include "models/topology/builder.h"
#include "models/topology/generators.h"

namespace ib::topo {

Topology generate_dragonfly(const DragonflyOptions& o, Catalog& catalog) {
  need_positive(o.routers_per_group, "routers_per_group");
  need_positive(o.hosts_per_router, "hosts_per_router");
  need_positive(o.global_links_per_router, "global_links_per_router");
  const std::uint64_t a = o.routers_per_group;
  const std::uint64_t p = o.hosts_per_router;
  const std::uint64_t h = o.global_links_per_router;
  const std::uint64_t balanced = a * h + 1;
  const std::uint64_t g = o.groups.value_or(static_cast<unsigned>(balanced));
  if (g < 2 || g > balanced) {
    throw OptionError("groups", "an integer in [2, " + std::to_string(balanced) + "] (at most a*h + 1)",
                      std::to_string(g));
  }
  Builder b(o.common, catalog);
  const std::uint64_t routers = g * a;
  const std::uint64_t hosts = routers * p;
  Builder::need_node_count(hosts + routers, "groups");
  b.need_switch_ports(p + (a - 1) + h, "routers_per_group",
                      std::to_string(p) + " hosts + " + std::to_string(a - 1) + " local + " + std::to_string(h) +
                          " global links per router");

  for (std::uint64_t i = 0; i < hosts; ++i) {
    b.add_hca(numbered("h", i));
  }
  const auto router0 = static_cast<NodeIndex>(hosts);
  for (std::uint64_t group = 0; group < g; ++group) {
    for (std::uint64_t r = 0; r < a; ++r) {
      b.add_switch(cat({"g", std::to_string(group), "r", std::to_string(r)}));
    }
  }
  const auto router = [&](std::uint64_t group, std::uint64_t r) {
    return static_cast<NodeIndex>(router0 + group * a + r);
  };

  for (std::uint64_t i = 0; i < hosts; ++i) {
    b.connect(static_cast<NodeIndex>(i), 1, static_cast<NodeIndex>(router0 + i / p), static_cast<unsigned>(i % p + 1));
  }
  // Local: router r's port to router s is p + (index of s among the group's other routers) + 1.
  const auto local_port = [&](std::uint64_t r, std::uint64_t s) {
    return static_cast<unsigned>(p + (s < r ? s : s - 1) + 1);
  };
  for (std::uint64_t group = 0; group < g; ++group) {
    for (std::uint64_t r = 0; r < a; ++r) {
      for (std::uint64_t s = r + 1; s < a; ++s) {
        b.connect(router(group, r), local_port(r, s), router(group, s), local_port(s, r));
      }
    }
  }
  const std::uint64_t others = g - 1;
  const std::uint64_t rounds = a * h / others;
  const auto global_end = [&](std::uint64_t group, std::uint64_t i) {
    return std::pair{router(group, i / h), static_cast<unsigned>(p + (a - 1) + i % h + 1)};
  };
  for (std::uint64_t group = 0; group < g; ++group) {
    for (std::uint64_t i = 0; i < rounds * others; ++i) {
      const std::uint64_t round = i / others;
      const std::uint64_t position = i % others;
      const std::uint64_t target = position < group ? position : position + 1;
      if (target < group) {
        continue; // cabled from the lower-numbered group
      }
      const std::uint64_t back = round * others + (group < target ? group : group - 1);
      const auto [from, from_port] = global_end(group, i);
      const auto [to, to_port] = global_end(target, back);
      b.connect(from, from_port, to, to_port);
    }
  }
  std::string name =
      "dragonfly-a" + std::to_string(a) + "p" + std::to_string(p) + "h" + std::to_string(h) + "g" + std::to_string(g);
  std::string description = "dragonfly, " + std::to_string(g) + " groups of " + std::to_string(a) + " routers, " +
                            std::to_string(p) + " hosts and " + std::to_string(h) +
                            " global links per router, consecutive global arrangement; " + b.hardware_text();
  return b.take(std::move(name), std::move(description));
}

} // namespace ib::topo
