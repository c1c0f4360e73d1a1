// Strict reading of topology files (topologies/schema/topology.schema.json): every error names the file and the
// JSON pointer of the offending value, what was expected and what was found.
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <utility>

#include "models/topology/catalog.h"
#include "models/topology/generators.h"
#include "models/topology/topology.h"
#include "sim/errors.h"

namespace ib::topo {

using nlohmann::json;

namespace {

constexpr double max_length_m = 1e6; // link::propagation_delay's precondition

struct LinkDefaults {
  std::optional<link::Width> width;
  std::optional<link::Speed> speed;
  std::optional<double> length_m;
  std::optional<std::string> cable;
};

/// Who holds a GUID: a node (port < 0) or one of its ports.
struct GuidOwner {
  NodeIndex node;
  int port;
};

std::string json_quoted(std::string_view s) {
  return json(std::string(s)).dump();
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) {
    text += (text.empty() ? "" : ", ") + item;
  }
  return text;
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.' || c == ':';
}

/// The GUID in `text` ("0x" and 1 to 16 hex digits, not 0), or nullopt.
std::optional<std::uint64_t> parse_guid(std::string_view text) {
  if (text.size() < 3 || text.size() > 18 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  for (char c : text.substr(2)) {
    const int digit = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : -1;
    if (digit < 0) {
      return std::nullopt;
    }
    value = value << 4 | static_cast<std::uint64_t>(digit);
  }
  return value == 0 ? std::nullopt : std::optional(value);
}

constexpr std::string_view guid_expectation = "a GUID: \"0x\" and 1 to 16 hex digits, not 0";

class Reader {
public:
  Reader(const sim::JsonDocument& doc, Catalog& catalog)
      : file_(doc.file), base_(doc.pointer), root_(doc.root), catalog_(catalog) {}

  Topology read() {
    sim::JsonObjectReader root(file_, root_, base_);
    root.optional_string("$schema");
    const std::string name = root.required_string("name");
    const std::string description = root.optional_string("description").value_or("");
    if (root.has("generator")) {
      for (const std::string_view key : {"link_defaults", "nodes", "links", "grid"}) {
        if (root.has(key)) {
          throw sim::InputError(file_, root.pointer_to(key),
                                "no " + json_quoted(key) + " beside \"generator\" (the generator makes the fabric)",
                                "key " + json_quoted(key));
        }
        root.skip(key);
      }
      sim::JsonObjectReader block = root.required_object("generator");
      topology_ = generate(block, catalog_);
      root.finish();
    } else {
      root.skip("generator");
      if (auto defaults = root.optional_object("link_defaults")) {
        read_link_defaults(*defaults);
      }
      read_nodes(root.required_array("nodes", 1, std::numeric_limits<std::size_t>::max()), root.pointer_to("nodes"));
      read_links(root.required_array("links", 0, std::numeric_limits<std::size_t>::max()), root.pointer_to("links"));
      if (auto grid = root.optional_object("grid")) {
        read_grid(*grid);
      }
      root.finish();
      check_hosts_connected();
    }
    topology_.name = name;
    topology_.description = description;
    return std::move(topology_);
  }

private:
  [[noreturn]] void fail(std::string pointer, std::string expected, std::string got) const {
    throw sim::InputError(file_, std::move(pointer), std::move(expected), std::move(got));
  }

  // ---- link_defaults ----------------------------------------------------------------------------------------

  void read_link_defaults(sim::JsonObjectReader& r) {
    defaults_.width = read_width(r);
    defaults_.speed = read_speed(r);
    defaults_.length_m = read_length(r);
    defaults_.cable = read_cable(r);
    r.finish();
  }

  static std::optional<link::Width> read_width(sim::JsonObjectReader& r) {
    const auto text = r.optional_enum("width", {"1x", "2x", "4x", "8x", "12x"});
    return text ? link::parse_width(*text) : std::nullopt;
  }

  static std::optional<link::Speed> read_speed(sim::JsonObjectReader& r) {
    const auto text = r.optional_enum("speed", {"SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR"});
    return text ? link::parse_speed(*text) : std::nullopt;
  }

  std::optional<double> read_length(sim::JsonObjectReader& r) const {
    const auto length =
        r.optional_double("length_m", std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max());
    if (length && !(*length > 0 && *length <= max_length_m)) {
      fail(r.pointer_to("length_m"), "a length in metres, > 0 and <= 1000000",
           sim::describe_json_value(r.value().at("length_m")));
    }
    return length;
  }

  std::optional<std::string> read_cable(sim::JsonObjectReader& r) {
    auto cable = r.optional_string("cable");
    if (cable && !catalog_.is_cable(*cable)) {
      const std::string what = catalog_.describe(*cable);
      fail(r.pointer_to("cable"), with_names("a cable profile", "cable"),
           "string " + json_quoted(*cable) + ", " + (what.empty() ? "no such profile" : what));
    }
    return cable;
  }

  /// "a switch profile (quantum-hdr, switch-ib2-edr)", or without the list when the catalog has none.
  std::string with_names(std::string text, std::string_view model) {
    const std::vector<std::string> names = catalog_.profile_names(model);
    return names.empty() ? text : text + " (" + joined(names) + ")";
  }

  // ---- nodes ------------------------------------------------------------------------------------------------

  void read_nodes(const json& nodes, const std::string& pointer) {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      read_node(nodes[i], sim::json_pointer_append(pointer, i));
    }
  }

  void read_node(const json& value, const std::string& pointer) {
    sim::JsonObjectReader r(file_, value, pointer);
    Node node{};
    node.name = r.required_string("name");
    if (node.name.size() > 64 || !std::all_of(node.name.begin(), node.name.end(), is_name_char)) {
      fail(r.pointer_to("name"), "a name of at most 64 letters, digits, '_', '-', '.' or ':'", json_quoted(node.name));
    }
    if (const auto other = topology_.find(node.name)) {
      fail(r.pointer_to("name"), "a name no other node has",
           json_quoted(node.name) + ", already the name of " + sim::json_pointer_append(base_ + "/nodes", *other));
    }
    const std::string kind = r.required_enum("kind", {"hca", "switch"});
    node.kind = kind == "hca" ? NodeKind::hca : NodeKind::switch_node;
    node.profile = r.required_string("profile");
    const std::optional<NodeCapabilities> caps = catalog_.capabilities(node.kind, node.profile);
    if (!caps) {
      const std::string what = catalog_.describe(node.profile);
      fail(r.pointer_to("profile"), with_names((node.kind == NodeKind::hca ? "an " : "a ") + kind + " profile", kind),
           "string " + json_quoted(node.profile) + ", " + (what.empty() ? "no such profile" : what));
    }
    node.widths = caps->widths;
    node.speeds = caps->speeds;
    node.port_count = caps->port_count;
    if (const auto ports = r.optional_uint("ports", 1, max_port_count)) {
      if (*ports > caps->port_count) {
        const std::string count = std::to_string(caps->port_count) + (caps->port_count == 1 ? " port" : " ports");
        fail(r.pointer_to("ports"), "at most " + count + " (profile " + node.profile + " has " + count + ")",
             "number " + std::to_string(*ports));
      }
      node.port_count = static_cast<unsigned>(*ports);
    }
    const NodeIndex index = static_cast<NodeIndex>(topology_.node_count());
    node.node_guid = read_guid(r, "guid").value_or(default_node_guid(node.kind, index));
    node.system_image_guid = read_guid(r, "system_image_guid").value_or(node.node_guid);
    node.port_guids = read_port_guids(r, node);
    node.coordinates = read_coordinates(r);
    r.finish();
    claim_guid(node.node_guid, GuidOwner{index, -1}, r.has("guid") ? r.pointer_to("guid") : pointer);
    // One port may share its own node's GUID: a switch's port 0 always does, and on ConnectX-4 and later (mlx5)
    // an HCA's port 1 does too. A second port with it is still refused.
    bool node_guid_shared = false;
    for (std::size_t p = 0; p < node.port_guids.size(); ++p) {
      const int port = node.kind == NodeKind::switch_node ? 0 : static_cast<int>(p) + 1;
      if (node.port_guids[p] == node.node_guid && !node_guid_shared) {
        node_guid_shared = true;
        continue;
      }
      claim_guid(node.port_guids[p], GuidOwner{index, port},
                 r.has("port_guids") ? sim::json_pointer_append(r.pointer_to("port_guids"), p) : pointer);
    }
    node_pointers_.push_back(pointer);
    topology_.add_node(std::move(node));
  }

  std::optional<std::uint64_t> read_guid(sim::JsonObjectReader& r, std::string_view key) const {
    const auto text = r.optional_string(key);
    if (!text) {
      return std::nullopt;
    }
    const auto guid = parse_guid(*text);
    if (!guid) {
      fail(r.pointer_to(key), std::string(guid_expectation), "string " + json_quoted(*text));
    }
    return guid;
  }

  std::vector<std::uint64_t> read_port_guids(sim::JsonObjectReader& r, const Node& node) const {
    const std::size_t count = node.kind == NodeKind::switch_node ? 1 : node.port_count;
    const json* array = r.optional_array("port_guids", count, count);
    if (array == nullptr) {
      return default_port_guids(node.kind, node.node_guid, node.port_count);
    }
    std::vector<std::uint64_t> guids;
    for (std::size_t i = 0; i < array->size(); ++i) {
      const json& item = (*array)[i];
      const auto guid = item.is_string() ? parse_guid(item.get<std::string>()) : std::nullopt;
      if (!guid) {
        fail(sim::json_pointer_append(r.pointer_to("port_guids"), i), std::string(guid_expectation),
             sim::describe_json_value(item));
      }
      guids.push_back(*guid);
    }
    return guids;
  }

  std::vector<std::int32_t> read_coordinates(sim::JsonObjectReader& r) const {
    const json* array = r.optional_array("coordinates", 1, 3);
    std::vector<std::int32_t> coordinates;
    if (array == nullptr) {
      return coordinates;
    }
    for (std::size_t i = 0; i < array->size(); ++i) {
      const json& item = (*array)[i];
      if (!item.is_number_integer() || item.get<std::int64_t>() < 0 || item.get<std::int64_t>() > 65535) {
        fail(sim::json_pointer_append(r.pointer_to("coordinates"), i), "an integer in [0, 65535]",
             sim::describe_json_value(item));
      }
      coordinates.push_back(item.get<std::int32_t>());
    }
    return coordinates;
  }

  void claim_guid(std::uint64_t guid, GuidOwner owner, const std::string& pointer) {
    const auto [it, added] = guids_.emplace(guid, owner);
    if (added) {
      return;
    }
    const GuidOwner& first = it->second;
    // The node being read is not in topology_ yet.
    const std::string first_name =
        first.node < topology_.node_count() ? json_quoted(topology_.node(first.node).name) : "this node";
    const std::string holder = first.port < 0 ? "the node GUID of " + first_name
                                              : "the GUID of port " + std::to_string(first.port) + " of " + first_name;
    fail(pointer, "a GUID no other node or port has", format_guid(guid) + ", already " + holder);
  }

  // ---- links ------------------------------------------------------------------------------------------------

  void read_links(const json& links, const std::string& pointer) {
    for (std::size_t i = 0; i < links.size(); ++i) {
      read_link(links[i], sim::json_pointer_append(pointer, i));
    }
  }

  void read_link(const json& value, const std::string& pointer) {
    sim::JsonObjectReader r(file_, value, pointer);
    Link link{};
    link.a = read_end(r, "a");
    link.b = read_end(r, "b");
    const auto width = read_width(r);
    const auto speed = read_speed(r);
    const auto length = read_length(r);
    const auto cable = read_cable(r);
    r.finish();
    check_free(r, "a", link.a);
    if (link.a == link.b) {
      fail(r.pointer_to("b"), "a free port", port_text(link.b) + ", already cabled at " + r.pointer_to("a"));
    }
    check_free(r, "b", link.b);
    link.width = *need(width, defaults_.width, pointer, "width", "a width");
    link.speed = *need(speed, defaults_.speed, pointer, "speed", "a speed");
    link.length_m = *need(length, defaults_.length_m, pointer, "length_m", "a length in metres");
    link.cable = *need(cable, defaults_.cable, pointer, "cable", "a cable profile");
    for (const PortRef end : {link.a, link.b}) {
      const Node& node = topology_.node(end.node);
      if (!(node.widths & link::width_bit(link.width))) {
        fail(width ? r.pointer_to("width") : pointer,
             "a width that " + node.name + " (profile " + node.profile + ") supports: " + describe_widths(node.widths),
             value_text(width.has_value(), "width", link::to_string(link.width)));
      }
      if (!(node.speeds & link::speed_bit(link.speed))) {
        fail(speed ? r.pointer_to("speed") : pointer,
             "a speed that " + node.name + " (profile " + node.profile + ") supports: " + describe_speeds(node.speeds),
             value_text(speed.has_value(), "speed", link::to_string(link.speed)));
      }
    }
    topology_.add_link(std::move(link));
  }

  /// `own` if the link has the key, else the link_defaults value; neither: an error at the link.
  template <class T>
  const std::optional<T>& need(const std::optional<T>& own, const std::optional<T>& fallback,
                               const std::string& pointer, std::string_view key, std::string_view what) const {
    if (own) {
      return own;
    }
    if (fallback) {
      return fallback;
    }
    fail(pointer, std::string(what) + " (key " + json_quoted(key) + " here or in " + base_ + "/link_defaults)",
         "nothing");
  }

  std::string value_text(bool in_link, std::string_view key, std::string_view value) const {
    return "string " + json_quoted(value) +
           (in_link ? "" : " (from " + base_ + "/link_defaults/" + std::string(key) + ")");
  }

  std::string port_text(PortRef ref) const { return topology_.node(ref.node).name + "/" + std::to_string(ref.port); }

  PortRef read_end(sim::JsonObjectReader& r, std::string_view key) const {
    const std::string text = r.required_string(key);
    const std::size_t slash = text.rfind('/');
    const std::string_view port_text =
        slash == std::string::npos ? std::string_view() : std::string_view(text).substr(slash + 1);
    const bool digits = !port_text.empty() && port_text.size() <= 3 &&
                        std::all_of(port_text.begin(), port_text.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (slash == std::string::npos || slash == 0 || !digits) {
      fail(r.pointer_to(key), "\"NODE/PORT\": a node's name, '/' and a port number", "string " + json_quoted(text));
    }
    const std::string name = text.substr(0, slash);
    const auto node = topology_.find(name);
    if (!node) {
      fail(r.pointer_to(key), "the name of a node in /nodes",
           "unknown node " + json_quoted(name) + " in " + json_quoted(text));
    }
    const unsigned port = static_cast<unsigned>(std::stoul(std::string(port_text)));
    const unsigned port_count = topology_.node(*node).port_count;
    if (port < 1 || port > port_count) {
      fail(r.pointer_to(key), "a port of " + name + " in [1, " + std::to_string(port_count) + "]",
           "port " + std::to_string(port));
    }
    return PortRef{*node, static_cast<PortNumber>(port)};
  }

  void check_free(const sim::JsonObjectReader& r, std::string_view key, PortRef end) const {
    if (topology_.peer(end.node, end.port).node == no_node) {
      return;
    }
    const std::uint32_t other = topology_.link_at(end.node, end.port);
    const std::string where = sim::json_pointer_append(sim::json_pointer_append(base_ + "/links", other),
                                                       topology_.link(other).a == end ? "a" : "b");
    fail(r.pointer_to(key), "a free port", port_text(end) + ", already cabled at " + where);
  }

  // ---- grid and connectivity --------------------------------------------------------------------------------

  void read_grid(sim::JsonObjectReader& r) {
    GridShape grid;
    const json& extents = r.required_array("extents", 1, 3);
    for (std::size_t i = 0; i < extents.size(); ++i) {
      const json& e = extents[i];
      if (!e.is_number_integer() || e.get<std::int64_t>() < 1 || e.get<std::int64_t>() > 65535) {
        fail(sim::json_pointer_append(r.pointer_to("extents"), i), "an integer in [1, 65535]",
             sim::describe_json_value(e));
      }
      grid.extents.push_back(e.get<std::uint32_t>());
    }
    grid.torus = r.required_bool("torus");
    r.finish();
    for (NodeIndex n = 0; n < topology_.node_count(); ++n) {
      const std::vector<std::int32_t>& c = topology_.node(n).coordinates;
      bool inside = c.empty() || c.size() == grid.extents.size();
      for (std::size_t d = 0; inside && d < c.size(); ++d) {
        inside = static_cast<std::uint32_t>(c[d]) < grid.extents[d];
      }
      if (!inside) {
        fail(node_pointers_[n] + "/coordinates",
             std::to_string(grid.extents.size()) + " coordinates within /grid/extents " + list_text(grid.extents),
             list_text(c));
      }
    }
    topology_.grid = std::move(grid);
  }

  template <class T>
  static std::string list_text(const std::vector<T>& values) {
    std::string text = "[";
    for (std::size_t i = 0; i < values.size(); ++i) {
      text += (i == 0 ? "" : ", ") + std::to_string(values[i]);
    }
    return text + "]";
  }

  /// Every host reaches the first host; only switches forward (a host-to-host cable joins just those two).
  void check_hosts_connected() const {
    const auto& nodes = topology_.nodes();
    const auto first = std::find_if(nodes.begin(), nodes.end(), [](const Node& n) { return n.kind == NodeKind::hca; });
    if (first == nodes.end()) {
      return;
    }
    const auto start = static_cast<NodeIndex>(first - nodes.begin());
    std::vector<bool> reached(nodes.size(), false);
    std::vector<NodeIndex> frontier = {start};
    reached[start] = true;
    while (!frontier.empty()) {
      const NodeIndex n = frontier.back();
      frontier.pop_back();
      if (n != start && nodes[n].kind == NodeKind::hca) {
        continue;
      }
      for (unsigned p = 1; p <= nodes[n].port_count; ++p) {
        const PortRef peer = topology_.peer(n, static_cast<PortNumber>(p));
        if (peer.node != no_node && !reached[peer.node]) {
          reached[peer.node] = true;
          frontier.push_back(peer.node);
        }
      }
    }
    for (NodeIndex n = start + 1; n < nodes.size(); ++n) {
      if (nodes[n].kind == NodeKind::hca && !reached[n]) {
        fail(node_pointers_[n], "a host with a path to " + json_quoted(nodes[start].name) + " (only switches forward)",
             "host " + json_quoted(nodes[n].name) + " with no path to it");
      }
    }
  }

  const std::string& file_;
  const std::string& base_; ///< the root's pointer in file_ ("" unless inline in a scenario)
  const json& root_;
  Catalog& catalog_;
  Topology topology_;
  LinkDefaults defaults_;
  std::unordered_map<std::uint64_t, GuidOwner> guids_;
  std::vector<std::string> node_pointers_;
};

} // namespace

Topology read_topology(const sim::JsonDocument& doc, Catalog& catalog) {
  return Reader(doc, catalog).read();
}

Topology load_topology(const std::string& path, Catalog& catalog) {
  return read_topology(sim::load_json_file(path), catalog);
}

} // namespace ib::topo
