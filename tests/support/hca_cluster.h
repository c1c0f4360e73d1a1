// Small clusters for HCA and verbs tests: hosts h1..hN on one switch (or back to back), routed by the subnet
// manager, with programs written in the test. Also the boilerplate of connecting RC/UC/UD QP pairs.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/host/cluster.h"
#include "models/sm/subnet.h"
#include "models/topology/catalog.h"
#include "models/topology/topology.h"
#include "sim/json_reader.h"

namespace ib::testing {

/// `hosts` HCAs of `hca_profile` on one switch of `switch_profile` (2 m copper, the profiles' common speed).
inline topo::Topology star_topology(unsigned hosts, const std::string& hca_profile = "connectx4-edr",
                                    const std::string& switch_profile = "switch-ib2-edr",
                                    const std::string& speed = "EDR") {
  std::string text = R"({"name": "star", "link_defaults": {"width": "4x", "speed": ")" + speed +
                     R"(", "length_m": 2, "cable": "copper-dac"}, "nodes": [)";
  text += R"({"name": "s1", "kind": "switch", "profile": ")" + switch_profile + R"("})";
  for (unsigned i = 1; i <= hosts; ++i)
    text += R"(, {"name": "h)" + std::to_string(i) + R"(", "kind": "hca", "profile": ")" + hca_profile + R"("})";
  text += R"(], "links": [)";
  for (unsigned i = 1; i <= hosts; ++i)
    text += (i > 1 ? ", " : "") + std::string(R"({"a": "h)") + std::to_string(i) + R"(/1", "b": "s1/)" +
            std::to_string(i) + R"("})";
  text += "]}";
  topo::ProfileCatalog catalog;
  return topo::read_topology(sim::parse_json_text("star.json", text), catalog);
}

/// Two HCAs cabled back to back (no switch).
inline topo::Topology pair_topology(const std::string& hca_profile = "connectx4-edr", const std::string& speed = "EDR",
                                    double length_m = 2) {
  const std::string text = R"({"name": "pair", "link_defaults": {"width": "4x", "speed": ")" + speed +
                           R"(", "length_m": )" + std::to_string(length_m) +
                           R"(, "cable": "copper-dac"}, "nodes": [{"name": "h1", "kind": "hca", "profile": ")" +
                           hca_profile + R"("}, {"name": "h2", "kind": "hca", "profile": ")" + hca_profile +
                           R"("}], "links": [{"a": "h1/1", "b": "h2/1"}]})";
  topo::ProfileCatalog catalog;
  return topo::read_topology(sim::parse_json_text("pair.json", text), catalog);
}

/// A topology, its subnet and a cluster over them, kept together (the cluster refers to the other two).
struct TestCluster {
  explicit TestCluster(topo::Topology t, host::ClusterOptions options = {})
      : topology(std::move(t)), subnet(sm::run_subnet_manager(topology, sm::SmOptions{})),
        cluster(std::make_unique<host::Cluster>(topology, subnet, options)) {}
  host::Cluster& operator*() { return *cluster; }
  host::Cluster* operator->() { return cluster.get(); }

  topo::Topology topology;
  sm::Subnet subnet;
  std::unique_ptr<host::Cluster> cluster;
};

/// Where a program's QP is, for its peer to connect to.
struct QpAddress {
  std::uint16_t lid = 0;
  std::uint32_t qpn = 0;
};

/// RTR/RTS attributes towards `peer`, perftest's defaults otherwise.
inline verbs::QpAttr attr_to(QpAddress peer, verbs::Mtu mtu = verbs::Mtu::mtu4096) {
  verbs::QpAttr a;
  a.dest_lid = peer.lid;
  a.dest_qpn = peer.qpn;
  a.path_mtu = mtu;
  return a;
}

/// Cluster options for tests of content: host memory keeps its bytes.
inline host::ClusterOptions verifying() {
  host::ClusterOptions o;
  o.verify_contents = true;
  return o;
}

/// Completions polled until `count` have come or `within` has passed.
inline std::vector<verbs::WorkCompletion> collect(host::Context& ctx, std::uint32_t cq, std::size_t count,
                                                  sim::Time within) {
  const sim::Time deadline = ctx.now() + within;
  std::vector<verbs::WorkCompletion> got;
  std::array<verbs::WorkCompletion, 16> wc{};
  while (got.size() < count) {
    const int n = ctx.wait_cq(cq, wc, deadline);
    if (n <= 0)
      break;
    got.insert(got.end(), wc.begin(), wc.begin() + n);
  }
  return got;
}

/// Fills `size` bytes at `address` with a pattern keyed on `seed` (different at every offset of a buffer).
inline void fill(pcie::HostMemory& memory, std::uint64_t address, std::uint32_t size, std::uint8_t seed) {
  std::vector<std::uint8_t> bytes(size);
  for (std::uint32_t i = 0; i < size; ++i)
    bytes[i] = static_cast<std::uint8_t>(seed + i * 7 + (i >> 8));
  memory.write(address, bytes);
}
inline std::vector<std::uint8_t> bytes_at(pcie::HostMemory& memory, std::uint64_t address, std::uint32_t size) {
  std::vector<std::uint8_t> bytes(size);
  memory.read(address, bytes);
  return bytes;
}

} // namespace ib::testing
