// Internal to the generators: builds a Topology from CommonOptions, resolving the profiles, the link width and
// speed, and naming, numbering and cabling nodes the same way for every generator.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "models/topology/catalog.h"
#include "models/topology/generators.h"
#include "models/topology/topology.h"

namespace ib::topo {

/// Most nodes a generator makes: the GUID scheme numbers nodes in 24 bits; far more than any fabric studied. A fuzz
/// build (tests/fuzz) checks the same limit at a thousandth of it, so that no input takes seconds to generate, route
/// and validate (a million-node torus took minutes and gigabytes there).
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
inline constexpr std::uint64_t max_generated_nodes = 1'000;
#else
inline constexpr std::uint64_t max_generated_nodes = 1'000'000;
#endif

/// The concatenation of `parts` (appending; GCC 12 warns falsely, -Wrestrict bug 105329, on "literal" + string).
std::string cat(std::initializer_list<std::string_view> parts);
/// `prefix` followed by `i`: "h12", "leaf3".
std::string numbered(std::string_view prefix, std::uint64_t i);

/// OptionError on `key` unless `value` >= 1 (counts the JSON reader already range-checks; for direct callers).
void need_positive(std::uint64_t value, std::string_view key);

class Builder {
public:
  /// Resolves the profiles, cables, width and speed; an unusable one is an OptionError on its key.
  Builder(const CommonOptions& options, Catalog& catalog);

  unsigned switch_ports() const { return switch_caps_.port_count; }
  /// OptionError on `key` unless a switch can have `needed` ports; `what` says what needs them.
  void need_switch_ports(std::uint64_t needed, std::string_view key, const std::string& what) const;
  /// OptionError on `key` when `nodes` exceeds max_generated_nodes.
  static void need_node_count(std::uint64_t nodes, std::string_view key);

  NodeIndex add_hca(std::string name);
  NodeIndex add_switch(std::string name, std::vector<std::int32_t> coordinates = {});
  /// Cables port `pa` of `a` to port `pb` of `b`: a host cable if either is an HCA, else a switch cable.
  void connect(NodeIndex a, unsigned pa, NodeIndex b, unsigned pb);

  /// "4x EDR, switch-ib2-edr switches, connectx4-edr hosts": for generated descriptions.
  std::string hardware_text() const;
  Topology take(std::string name, std::string description);

private:
  NodeIndex add(std::string name, NodeKind kind, const NodeCapabilities& caps, const std::string& profile,
                std::vector<std::int32_t> coordinates);

  const CommonOptions& options_;
  NodeCapabilities switch_caps_{};
  NodeCapabilities hca_caps_{};
  link::Width width_{};
  link::Speed speed_{};
  Topology topology_;
};

} // namespace ib::topo
