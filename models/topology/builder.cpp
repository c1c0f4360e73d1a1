#include "models/topology/builder.h"

#include <bit>
#include <utility>

#include <nlohmann/json.hpp>

namespace ib::topo {

namespace {

std::string json_quoted(std::string_view s) {
  return nlohmann::json(std::string(s)).dump();
}

std::string listed(Catalog& catalog, std::string text, std::string_view model) {
  std::string names;
  for (const std::string& name : catalog.profile_names(model)) {
    names += (names.empty() ? "" : ", ") + name;
  }
  return names.empty() ? text : text + " (" + names + ")";
}

NodeCapabilities node_profile(Catalog& catalog, NodeKind kind, const std::string& profile, std::string_view key) {
  if (const auto caps = catalog.capabilities(kind, profile)) {
    return *caps;
  }
  const std::string what = catalog.describe(profile);
  throw OptionError(std::string(key),
                    listed(catalog, kind == NodeKind::hca ? "an hca profile" : "a switch profile",
                           kind == NodeKind::hca ? "hca" : "switch"),
                    "string " + json_quoted(profile) + ", " + (what.empty() ? "no such profile" : what));
}

void check_cable(Catalog& catalog, const std::string& cable, std::string_view key) {
  if (!catalog.is_cable(cable)) {
    const std::string what = catalog.describe(cable);
    throw OptionError(std::string(key), listed(catalog, "a cable profile", "cable"),
                      "string " + json_quoted(cable) + ", " + (what.empty() ? "no such profile" : what));
  }
}

void check_length(double length_m, std::string_view key) {
  if (!(length_m > 0 && length_m <= 1e6)) {
    throw OptionError(std::string(key), "a length in metres, > 0 and <= 1000000",
                      "number " + nlohmann::json(length_m).dump());
  }
}

/// The chosen or the highest member of `common` (enum order is width and speed order); OptionError if none.
template <class Value, class Set>
Value pick(std::optional<Value> chosen, Set common, Set (*bit)(Value), std::string_view key,
           const std::string& expected, std::string (*describe)(Set)) {
  if (chosen) {
    if (!(common & bit(*chosen))) {
      throw OptionError(std::string(key), expected + ": " + describe(common),
                        "string " + json_quoted(link::to_string(*chosen)));
    }
    return *chosen;
  }
  if (common == 0) {
    throw OptionError(std::string(key), expected, "none in common");
  }
  return static_cast<Value>(std::bit_width(static_cast<unsigned>(common)) - 1);
}

} // namespace

std::string cat(std::initializer_list<std::string_view> parts) {
  std::string text;
  for (const std::string_view part : parts) {
    text += part;
  }
  return text;
}

std::string numbered(std::string_view prefix, std::uint64_t i) {
  return cat({prefix, std::to_string(i)});
}

void need_positive(std::uint64_t value, std::string_view key) {
  if (value < 1) {
    throw OptionError(std::string(key), "an integer >= 1", std::to_string(value));
  }
}

OptionError::OptionError(std::string key, std::string expected, std::string got)
    : sim::InputError("generator", "/" + key, std::move(expected), std::move(got)), key_(std::move(key)) {}

Builder::Builder(const CommonOptions& options, Catalog& catalog) : options_(options) {
  switch_caps_ = node_profile(catalog, NodeKind::switch_node, options.switch_profile, "switch_profile");
  hca_caps_ = node_profile(catalog, NodeKind::hca, options.hca_profile, "hca_profile");
  check_length(options.host_length_m, "host_length_m");
  check_cable(catalog, options.host_cable, "host_cable");
  check_length(options.switch_length_m, "switch_length_m");
  check_cable(catalog, options.switch_cable, "switch_cable");
  const std::string both = options.switch_profile + " and " + options.hca_profile;
  width_ = pick<link::Width, link::WidthSet>(options.width, switch_caps_.widths & hca_caps_.widths, link::width_bit,
                                             "width", "a width both " + both + " support", describe_widths);
  speed_ = pick<link::Speed, link::SpeedSet>(options.speed, switch_caps_.speeds & hca_caps_.speeds, link::speed_bit,
                                             "speed", "a speed both " + both + " support", describe_speeds);
}

void Builder::need_switch_ports(std::uint64_t needed, std::string_view key, const std::string& what) const {
  if (needed > switch_caps_.port_count) {
    throw OptionError(std::string(key),
                      "at most " + std::to_string(switch_caps_.port_count) + " ports per switch (profile " +
                          options_.switch_profile + ")",
                      std::to_string(needed) + " ports: " + what);
  }
}

void Builder::need_node_count(std::uint64_t nodes, std::string_view key) {
  if (nodes > max_generated_nodes) {
    throw OptionError(std::string(key), "at most " + std::to_string(max_generated_nodes) + " nodes",
                      std::to_string(nodes) + " nodes");
  }
}

NodeIndex Builder::add(std::string name, NodeKind kind, const NodeCapabilities& caps, const std::string& profile,
                       std::vector<std::int32_t> coordinates) {
  Node node{};
  node.name = std::move(name);
  node.kind = kind;
  node.profile = profile;
  node.port_count = caps.port_count;
  node.node_guid = default_node_guid(kind, static_cast<NodeIndex>(topology_.node_count()));
  node.system_image_guid = node.node_guid;
  node.port_guids = default_port_guids(kind, node.node_guid, caps.port_count);
  node.coordinates = std::move(coordinates);
  node.widths = caps.widths;
  node.speeds = caps.speeds;
  return topology_.add_node(std::move(node));
}

NodeIndex Builder::add_hca(std::string name) {
  return add(std::move(name), NodeKind::hca, hca_caps_, options_.hca_profile, {});
}

NodeIndex Builder::add_switch(std::string name, std::vector<std::int32_t> coordinates) {
  return add(std::move(name), NodeKind::switch_node, switch_caps_, options_.switch_profile, std::move(coordinates));
}

void Builder::connect(NodeIndex a, unsigned pa, NodeIndex b, unsigned pb) {
  const bool host_link = topology_.node(a).kind == NodeKind::hca || topology_.node(b).kind == NodeKind::hca;
  topology_.add_link(Link{PortRef{a, static_cast<PortNumber>(pa)}, PortRef{b, static_cast<PortNumber>(pb)}, width_,
                          speed_, host_link ? options_.host_length_m : options_.switch_length_m,
                          host_link ? options_.host_cable : options_.switch_cable});
}

std::string Builder::hardware_text() const {
  return std::string(link::to_string(width_)) + " " + std::string(link::to_string(speed_)) + ", " +
         options_.switch_profile + " switches, " + options_.hca_profile + " hosts";
}

Topology Builder::take(std::string name, std::string description) {
  topology_.name = std::move(name);
  topology_.description = std::move(description);
  return std::move(topology_);
}

} // namespace ib::topo
