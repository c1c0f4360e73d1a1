// A fabric's wiring as a graph (docs/topology-reference.md): nodes (HCAs and switches) with numbered ports, and
// full-duplex links between ports with a width, a speed, a length and a cable profile. It is what topology files,
// generators and ibnetdiscover imports produce, what the subnet manager routes and what models/fabric instantiates. It
// holds no simulation state. Port numbers are IB's: 1..port_count; a switch's port 0 is its management port and is
// never cabled. Topology files are read strictly (topologies/schema/topology.schema.json, topologies/README.md).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/link/link_rate.h"
#include "sim/json_reader.h"

namespace ib::topo {

using NodeIndex = std::uint32_t;
using PortNumber = std::uint8_t;
inline constexpr NodeIndex no_node = ~NodeIndex{0};
/// Largest port count a node may declare: IB port numbers are 8 bits and 255 is OpenSM's "no path".
inline constexpr unsigned max_port_count = 254;

enum class NodeKind : std::uint8_t { hca, switch_node };
std::string_view to_string(NodeKind kind); ///< "hca", "switch"

struct Node {
  std::string name; ///< unique in the topology: "h0", "leaf3", "spine1"
  NodeKind kind;
  std::string profile;             ///< hardware profile name (topologies/hardware/<profile>.json)
  unsigned port_count;             ///< physical ports, numbered 1..port_count (1..max_port_count)
  std::uint64_t node_guid;         ///< unique, never 0
  std::uint64_t system_image_guid; ///< equal to node_guid unless imported otherwise
  /// Port GUIDs: a switch has one (index 0, port 0, equal to node_guid); an HCA has one per port (index p - 1).
  std::vector<std::uint64_t> port_guids;
  /// Position in a mesh or torus (generators set it; dor uses it to find datelines); empty otherwise.
  std::vector<std::int32_t> coordinates;
  link::WidthSet widths; ///< link widths its ports support (from its profile)
  link::SpeedSet speeds; ///< link speeds its ports support (from its profile)
  friend bool operator==(const Node&, const Node&) = default;
};

struct PortRef {
  NodeIndex node = no_node;
  PortNumber port = 0;
  friend bool operator==(const PortRef&, const PortRef&) = default;
};

struct Link {
  PortRef a;
  PortRef b;
  link::Width width;
  link::Speed speed;
  double length_m;   ///< cable length; propagation delay is length × the cable profile's ns/m
  std::string cable; ///< cable profile name ("copper-dac", "fibre")
  friend bool operator==(const Link&, const Link&) = default;
};

/// Dimensions of a mesh or torus, recorded by the generator so routing engines need not guess them.
struct GridShape {
  std::vector<std::uint32_t> extents; ///< switches per dimension
  bool torus = false;                 ///< wraparound links in every dimension
  friend bool operator==(const GridShape&, const GridShape&) = default;
};

class Topology {
public:
  /// Adds a node; its name must be new (checked by the loader, asserted here). Returns its index.
  NodeIndex add_node(Node node);
  /// Cables two free ports. Preconditions (the loader reports them as input errors): both ports exist and are free.
  std::uint32_t add_link(Link link);

  std::size_t node_count() const { return nodes_.size(); }
  std::size_t link_count() const { return links_.size(); }
  const Node& node(NodeIndex n) const { return nodes_[n]; }
  const Link& link(std::uint32_t l) const { return links_[l]; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Link>& links() const { return links_; }
  /// The node named `name`, in O(1) on average.
  std::optional<NodeIndex> find(std::string_view name) const;

  /// The port cabled to (node, port), or a PortRef with node == no_node when the port is free.
  PortRef peer(NodeIndex node, PortNumber port) const;
  /// Index of the link on (node, port); only valid when peer() is connected.
  std::uint32_t link_at(NodeIndex node, PortNumber port) const;

  /// The file's "name" and one-line "description" (generators and imports make them up).
  std::string name;
  std::string description;
  /// Set by mesh/torus generators and carried through JSON; absent otherwise.
  std::optional<GridShape> grid;

  /// Same nodes, links (in order), name, description and grid.
  friend bool operator==(const Topology& x, const Topology& y) {
    return x.nodes_ == y.nodes_ && x.links_ == y.links_ && x.name == y.name && x.description == y.description &&
           x.grid == y.grid;
  }

private:
  struct Attachment {
    PortRef peer;
    std::uint32_t link = 0;
  };
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<std::uint32_t> first_port_; ///< per node: index of its port 0 in ports_
  std::vector<Attachment> ports_;         ///< per node, ports 0..port_count
  std::unordered_map<std::string, NodeIndex> by_name_;
};

/// The fabric with the links `down` (indices into topology.links(); repeats allowed) taken out: the same nodes in the
/// same order, so node indices, GUIDs and LIDs stay, and the other links in their original order (their indices
/// shift down past each removed one). A failed switch is all its links down (links_of). Name, description and grid
/// are kept. Precondition: every index is below link_count().
Topology without_links(const Topology& topology, std::span<const std::uint32_t> down);
/// The indices of the links cabled to `node`, ascending.
std::vector<std::uint32_t> links_of(const Topology& topology, NodeIndex node);

/// The deterministic GUID scheme for nodes without an explicit "guid": OUI 0x0002c9 (bits 63..40), kind 0x01 HCA
/// or 0x02 switch (bits 39..32), node index + 1 (bits 31..8), zero (bits 7..0, room for HCA port GUIDs).
std::uint64_t default_node_guid(NodeKind kind, NodeIndex index);
/// Port GUIDs as ibsim assigns them: a switch's port 0 = node GUID; an HCA's port p = node GUID + p.
std::vector<std::uint64_t> default_port_guids(NodeKind kind, std::uint64_t node_guid, unsigned port_count);
/// "0x0002c90200000100": 16 hex digits.
std::string format_guid(std::uint64_t guid);

class Catalog;

/// Loads and checks the topology file at `path`: every error is a sim::InputError naming the file and the JSON
/// pointer of the offending value (unknown nodes, ports used twice or out of range, widths or speeds an end
/// cannot run, hosts without a path to the others, unknown keys, wrong types). Profiles come from `catalog`.
Topology load_topology(const std::string& path, Catalog& catalog);
/// As load_topology(), for a parsed document (a "generator" block is expanded).
Topology read_topology(const sim::JsonDocument& doc, Catalog& catalog);
/// The topology as a file that reads back equal: explicit GUIDs, every link field written out.
nlohmann::json to_json(const Topology& topology);
/// to_json() as text, one node or link per line, keys in the schema's order; ends with a newline.
std::string to_json_text(const Topology& topology);

} // namespace ib::topo
