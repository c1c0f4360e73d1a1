// Topology to JSON: every GUID and link field written out, so the file reads back to an equal Topology.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "models/topology/topology.h"

namespace ib::topo {

using nlohmann::json;

namespace {

/// An object's members in the order written.
using Fields = std::vector<std::pair<std::string_view, json>>;

/// A whole number of metres as an integer ("2", not "2.0"); otherwise the shortest text that reads back exactly.
json length_json(double length_m) {
  if (std::floor(length_m) == length_m && std::fabs(length_m) < 9.0e15) {
    return static_cast<std::int64_t>(length_m);
  }
  return length_m;
}

Fields node_fields(const Node& node) {
  Fields f = {{"name", node.name},
              {"kind", std::string(to_string(node.kind))},
              {"profile", node.profile},
              {"ports", node.port_count},
              {"guid", format_guid(node.node_guid)}};
  if (node.system_image_guid != node.node_guid) {
    f.emplace_back("system_image_guid", format_guid(node.system_image_guid));
  }
  if (node.port_guids != default_port_guids(node.kind, node.node_guid, node.port_count)) {
    json guids = json::array();
    for (const std::uint64_t g : node.port_guids) {
      guids.push_back(format_guid(g));
    }
    f.emplace_back("port_guids", std::move(guids));
  }
  if (!node.coordinates.empty()) {
    f.emplace_back("coordinates", node.coordinates);
  }
  return f;
}

Fields link_fields(const Topology& t, const Link& link) {
  const auto end = [&](PortRef p) { return t.node(p.node).name + "/" + std::to_string(p.port); };
  return {{"a", end(link.a)},
          {"b", end(link.b)},
          {"width", std::string(link::to_string(link.width))},
          {"speed", std::string(link::to_string(link.speed))},
          {"length_m", length_json(link.length_m)},
          {"cable", link.cable}};
}

json grid_json(const GridShape& grid) {
  return json{{"extents", grid.extents}, {"torus", grid.torus}};
}

json object_of(const Fields& fields) {
  json object = json::object();
  for (const auto& [key, value] : fields) {
    object[std::string(key)] = value;
  }
  return object;
}

/// {"key": value, ...} on one line, in the fields' order.
std::string inline_object(const Fields& fields) {
  std::string text = "{";
  for (std::size_t i = 0; i < fields.size(); ++i) {
    text += (i == 0 ? "" : ", ") + json(std::string(fields[i].first)).dump() + ": " + fields[i].second.dump();
  }
  return text + "}";
}

} // namespace

json to_json(const Topology& t) {
  json out = json::object();
  out["name"] = t.name;
  if (!t.description.empty()) {
    out["description"] = t.description;
  }
  json nodes = json::array();
  for (const Node& node : t.nodes()) {
    nodes.push_back(object_of(node_fields(node)));
  }
  json links = json::array();
  for (const Link& link : t.links()) {
    links.push_back(object_of(link_fields(t, link)));
  }
  out["nodes"] = std::move(nodes);
  out["links"] = std::move(links);
  if (t.grid) {
    out["grid"] = grid_json(*t.grid);
  }
  return out;
}

std::string to_json_text(const Topology& t) {
  std::string text = "{\n  \"name\": " + json(t.name).dump() + ",\n";
  if (!t.description.empty()) {
    text += "  \"description\": " + json(t.description).dump() + ",\n";
  }
  text += "  \"nodes\": [\n";
  for (std::size_t i = 0; i < t.node_count(); ++i) {
    text += "    " + inline_object(node_fields(t.nodes()[i])) + (i + 1 < t.node_count() ? ",\n" : "\n");
  }
  text += "  ],\n  \"links\": [\n";
  for (std::size_t i = 0; i < t.link_count(); ++i) {
    text += "    " + inline_object(link_fields(t, t.links()[i])) + (i + 1 < t.link_count() ? ",\n" : "\n");
  }
  text += "  ]";
  if (t.grid) {
    text += ",\n  \"grid\": " + inline_object({{"extents", t.grid->extents}, {"torus", t.grid->torus}});
  }
  return text + "\n}\n";
}

} // namespace ib::topo
