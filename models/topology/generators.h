// Topology generators (docs/topology-reference.md): fat trees (k-ary n-trees with optional leaf oversubscription),
// leaf-spine, dragonfly, and 2D/3D (or 1D) torus and mesh. Each is deterministic: the same options give the same nodes,
// names, GUIDs, ports and links in the same order. Port conventions (topologies/README.md): hosts take a leaf's first
// ports, then uplinks follow in upper-switch order; a grid switch's dimension d uses ports 2d+1 (towards +) and 2d+2
// (towards -), as OpenSM's dor engine expects, and its hosts the ports after them. Every switch gets its profile's port
// count; an option that needs more ports is an OptionError naming that option.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/link/link_rate.h"
#include "models/topology/catalog.h"
#include "models/topology/topology.h"
#include "sim/errors.h"
#include "sim/json_reader.h"

namespace ib::topo {

/// Options every generator takes: profiles, and the links' width, speed, lengths and cables.
struct CommonOptions {
  std::string switch_profile;
  std::string hca_profile;
  std::optional<link::Width> width; ///< absent: the widest both profiles support
  std::optional<link::Speed> speed; ///< absent: the fastest both profiles support
  double host_length_m;             ///< host-to-switch cables
  std::string host_cable;
  double switch_length_m; ///< switch-to-switch cables
  std::string switch_cable;
};

/// k-ary n-tree (Petrini & Vanneschi 1997) for n = 2 or 3: k^n hosts, n·k^(n-1) switches of 2k ports. With
/// hosts_per_leaf H and uplinks_per_leaf U (both default k), each leaf has H hosts and U uplinks (H:U
/// oversubscription) and the levels above shrink to U/k of their switches (XGFT(n; H,k,..; 1,U,k,..)).
struct FatTreeOptions {
  CommonOptions common;
  unsigned k;
  unsigned levels;
  std::optional<unsigned> hosts_per_leaf;
  std::optional<unsigned> uplinks_per_leaf;
};

/// `leaves` leaves of `hosts_per_leaf` hosts, each joined to each of `spines` spines by `parallel_links` links.
struct LeafSpineOptions {
  CommonOptions common;
  unsigned leaves;
  unsigned spines;
  unsigned hosts_per_leaf;
  unsigned parallel_links;
};

/// Dragonfly (Kim et al., ISCA 2008): groups of a routers joined all-to-all, p hosts and h global links per
/// router, g groups (default a·h + 1, every pair of groups joined once); global links in the "consecutive"
/// (absolute) arrangement: a group's global link i goes to the (i mod (g-1))-th other group.
struct DragonflyOptions {
  CommonOptions common;
  unsigned routers_per_group;
  unsigned hosts_per_router;
  unsigned global_links_per_router;
  std::optional<unsigned> groups;
};

/// A mesh or torus of switches with `dims` extents (1 to 3 dimensions, x first) and hosts on each switch.
struct GridOptions {
  CommonOptions common;
  std::vector<unsigned> dims;
  unsigned hosts_per_switch;
  bool torus;
};

/// A generator option that cannot work (too many ports for the profile, an unknown profile, a width the profiles
/// do not share). `key` is the option's JSON key; the file reader and the CLI say where it came from.
class OptionError : public sim::InputError {
public:
  OptionError(std::string key, std::string expected, std::string got);
  const std::string& key() const { return key_; }

private:
  std::string key_;
};

Topology generate_fat_tree(const FatTreeOptions& options, Catalog& catalog);
Topology generate_leaf_spine(const LeafSpineOptions& options, Catalog& catalog);
Topology generate_dragonfly(const DragonflyOptions& options, Catalog& catalog);
Topology generate_grid(const GridOptions& options, Catalog& catalog);

/// How a generator parameter is written: a count (integer), a length in metres, a name, a width ("4x"), a
/// speed ("EDR") or extents (a JSON array [4, 4, 4]; "4x4x4" on the command line).
enum class ParamKind { count, length_m, text, width, speed, extents };

/// One parameter of a generator, shared by the topology file's "generator" block and `ibnetsim topo gen`
/// (option --key-with-dashes).
struct GeneratorParam {
  std::string_view key;
  ParamKind kind;
  bool required;                ///< in a file; the command line fills `cli_default` when set
  std::string_view cli_default; ///< the command line's stated default ("" = none)
  std::string_view meaning;
  unsigned min = 0; ///< range of a count
  unsigned max = 0;
};

struct GeneratorType {
  std::string_view name; ///< "fat-tree", "leaf-spine", "dragonfly", "torus", "mesh"
  std::string_view summary;
  std::vector<GeneratorParam> params; ///< "type" excluded
};

/// Every generator and its parameters, the type's own first, then the common ones.
const std::vector<GeneratorType>& generator_types();

/// Reads a generator block ({"type": "fat-tree", "k": 4, ...}) strictly and generates it. Errors, OptionErrors
/// included, are InputErrors at the block's file and the offending key's pointer.
Topology generate(sim::JsonObjectReader& block, Catalog& catalog);

} // namespace ib::topo
