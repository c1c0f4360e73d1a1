// Fat trees and leaf-spine fabrics. Port convention: a leaf's ports 1..H go to its hosts in host order, then its
// uplinks follow in upper-switch order (parallel links adjacent); an upper switch's down ports go to the switches
// below in their index order, then its own uplinks. Nodes are created hosts first, then switches level by level.
#include <string>

#include "models/topology/builder.h"
#include "models/topology/generators.h"

namespace ib::topo {

namespace {

/// Adds `count` nodes named prefix0.. and returns the first index (they are consecutive).
NodeIndex add_switches(Builder& b, std::string_view prefix, std::uint64_t count) {
  const NodeIndex first = static_cast<NodeIndex>(b.add_switch(numbered(prefix, 0)));
  for (std::uint64_t i = 1; i < count; ++i) {
    b.add_switch(numbered(prefix, i));
  }
  return first;
}

} // namespace

Topology generate_fat_tree(const FatTreeOptions& o, Catalog& catalog) {
  if (o.levels != 2 && o.levels != 3) {
    throw OptionError("levels", "2 or 3", std::to_string(o.levels));
  }
  need_positive(o.k, "k");
  need_positive(o.hosts_per_leaf.value_or(1), "hosts_per_leaf");
  need_positive(o.uplinks_per_leaf.value_or(1), "uplinks_per_leaf");
  const std::uint64_t k = o.k;
  const std::uint64_t hosts_per_leaf = o.hosts_per_leaf.value_or(o.k);
  const std::uint64_t uplinks = o.uplinks_per_leaf.value_or(o.k);
  const std::string_view leaf_key = o.hosts_per_leaf ? "hosts_per_leaf" : o.uplinks_per_leaf ? "uplinks_per_leaf" : "k";
  Builder b(o.common, catalog);
  // Level 1 has k leaves per pod and k pods (one pod when levels = 2); level 2 has `uplinks` switches per pod;
  // level 3 (levels = 3) has `uplinks` groups of k cores, core (u, j) serving position u of every pod.
  const std::uint64_t pods = o.levels == 2 ? 1 : k;
  const std::uint64_t leaves = k * pods;
  const std::uint64_t middles = uplinks * pods;
  const std::uint64_t cores = o.levels == 3 ? uplinks * k : 0;
  const std::uint64_t hosts = leaves * hosts_per_leaf;
  Builder::need_node_count(hosts + leaves + middles + cores, leaf_key);
  b.need_switch_ports(hosts_per_leaf + uplinks, leaf_key,
                      std::to_string(hosts_per_leaf) + " hosts + " + std::to_string(uplinks) + " uplinks per leaf");
  b.need_switch_ports(o.levels == 2 ? k : 2 * k, "k",
                      o.levels == 2 ? std::to_string(k) + " leaves per spine"
                                    : std::to_string(k) + " down + " + std::to_string(k) + " up per spine");

  for (std::uint64_t h = 0; h < hosts; ++h) {
    b.add_hca(numbered("h", h));
  }
  const NodeIndex leaf0 = add_switches(b, "leaf", leaves);
  const NodeIndex middle0 = add_switches(b, "spine", middles);
  const NodeIndex core0 = cores > 0 ? add_switches(b, "core", cores) : 0;

  for (std::uint64_t h = 0; h < hosts; ++h) {
    b.connect(static_cast<NodeIndex>(h), 1, static_cast<NodeIndex>(leaf0 + h / hosts_per_leaf),
              static_cast<unsigned>(h % hosts_per_leaf + 1));
  }
  for (std::uint64_t l = 0; l < leaves; ++l) {
    const std::uint64_t pod = l / k;
    const std::uint64_t position = l % k;
    for (std::uint64_t j = 0; j < uplinks; ++j) {
      b.connect(static_cast<NodeIndex>(leaf0 + l), static_cast<unsigned>(hosts_per_leaf + j + 1),
                static_cast<NodeIndex>(middle0 + pod * uplinks + j), static_cast<unsigned>(position + 1));
    }
  }
  for (std::uint64_t m = 0; cores > 0 && m < middles; ++m) {
    const std::uint64_t pod = m / uplinks;
    const std::uint64_t u = m % uplinks;
    for (std::uint64_t j = 0; j < k; ++j) {
      b.connect(static_cast<NodeIndex>(middle0 + m), static_cast<unsigned>(k + j + 1),
                static_cast<NodeIndex>(core0 + u + uplinks * j), static_cast<unsigned>(pod + 1));
    }
  }

  const bool full = hosts_per_leaf == k && uplinks == k;
  std::string name = "fat-tree-k" + std::to_string(k) + "-n" + std::to_string(o.levels);
  if (!full) {
    name += "-h" + std::to_string(hosts_per_leaf) + "u" + std::to_string(uplinks);
  }
  std::string description = std::to_string(o.levels) + "-level fat tree, k = " + std::to_string(k);
  if (!full) {
    description +=
        ", " + std::to_string(hosts_per_leaf) + " hosts and " + std::to_string(uplinks) + " uplinks per leaf";
  }
  description += ": " + std::to_string(hosts) + " hosts, " + std::to_string(leaves + middles + cores) + " switches; " +
                 b.hardware_text();
  return b.take(std::move(name), std::move(description));
}

Topology generate_leaf_spine(const LeafSpineOptions& o, Catalog& catalog) {
  need_positive(o.leaves, "leaves");
  need_positive(o.spines, "spines");
  need_positive(o.hosts_per_leaf, "hosts_per_leaf");
  need_positive(o.parallel_links, "parallel_links");
  Builder b(o.common, catalog);
  const std::uint64_t leaves = o.leaves;
  const std::uint64_t spines = o.spines;
  const std::uint64_t per_leaf = o.hosts_per_leaf;
  const std::uint64_t parallel = o.parallel_links;
  const std::uint64_t hosts = leaves * per_leaf;
  Builder::need_node_count(hosts + leaves + spines, "leaves");
  b.need_switch_ports(per_leaf + spines * parallel, "hosts_per_leaf",
                      std::to_string(per_leaf) + " hosts + " + std::to_string(spines * parallel) + " uplinks per leaf");
  b.need_switch_ports(leaves * parallel, "leaves", std::to_string(leaves * parallel) + " downlinks per spine");

  for (std::uint64_t h = 0; h < hosts; ++h) {
    b.add_hca(numbered("h", h));
  }
  const NodeIndex leaf0 = add_switches(b, "leaf", leaves);
  const NodeIndex spine0 = add_switches(b, "spine", spines);
  for (std::uint64_t h = 0; h < hosts; ++h) {
    b.connect(static_cast<NodeIndex>(h), 1, static_cast<NodeIndex>(leaf0 + h / per_leaf),
              static_cast<unsigned>(h % per_leaf + 1));
  }
  for (std::uint64_t l = 0; l < leaves; ++l) {
    for (std::uint64_t s = 0; s < spines; ++s) {
      for (std::uint64_t q = 0; q < parallel; ++q) {
        b.connect(static_cast<NodeIndex>(leaf0 + l), static_cast<unsigned>(per_leaf + s * parallel + q + 1),
                  static_cast<NodeIndex>(spine0 + s), static_cast<unsigned>(l * parallel + q + 1));
      }
    }
  }
  std::string name = "leaf-spine-" + std::to_string(leaves) + "x" + std::to_string(spines);
  std::string description = "leaf-spine, " + std::to_string(leaves) + " leaves of " + std::to_string(per_leaf) +
                            " hosts, " + std::to_string(spines) + " spines, " + std::to_string(parallel) +
                            " link(s) per leaf-spine pair; " + b.hardware_text();
  return b.take(std::move(name), std::move(description));
}

} // namespace ib::topo
