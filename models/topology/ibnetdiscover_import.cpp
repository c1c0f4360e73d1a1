// Reading ibnetdiscover output (infiniband-diags ibnetdiscover.c, dump_topology(): out_switch(), out_ca(),
// out_switch_port(), out_ca_port()) and ibsim net files (ibsim/sim_net.c, parse_netconf()). Blocks look like
//   sysimgguid=0x2c90200487733
//   switchguid=0x2c90200487730(2c90200487730)
//   Switch  36 "S-0002c90200487730"   # "MF0;sw1:SX6036/U1" enhanced port 0 lid 1 lmc 0
//   [1]     "H-0002c903000f3a10"[1](2c903000f3a11)    # "host1 HCA-1" lid 3 4xFDR
//   caguid=0x2c903000f3a10
//   Ca      2 "H-0002c903000f3a10"    # "host1 HCA-1"
//   [1](2c903000f3a11)  "S-0002c90200487730"[1]  # lid 3 lmc 0 "MF0;sw1:SX6036/U1" lid 1 4xFDR
// The file is parsed, turned into a topology document and read by the topology loader, whose errors are moved
// to the line of the node or port they concern.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "models/topology/ibnetdiscover.h"
#include "models/topology/ibnetdiscover_parser.h"

namespace ib::topo {

using nlohmann::json;

namespace {

using ibnetdiscover_detail::Block;
using ibnetdiscover_detail::json_quoted;
using ibnetdiscover_detail::PortLine;

/// One end of a link: a node (index into the blocks) and a port.
struct End {
  std::size_t node;
  unsigned port;
  auto operator<=>(const End&) const = default;
};
/// What the port lines say about one port.
struct Claim {
  End peer;
  unsigned line;    ///< the port line that cabled it
  std::size_t link; ///< index in `links`
  bool listed;      ///< this end's own port line was seen
};
/// A link seen in the file, before the loader reads it.
struct PendingLink {
  End a;
  End b;
  std::optional<link::Width> width;
  std::optional<link::Speed> speed;
  unsigned line;
};
/// A node description as a topology name: letters, digits, '_', '-', '.', ':' kept, runs of anything else one
/// '_', at most 64 characters; empty when nothing is left.
std::string sanitized(std::string_view description) {
  std::string name;
  for (const char c : description) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                      c == '-' || c == '.' || c == ':';
    if (keep) {
      name += c;
    } else if (!name.empty() && name.back() != '_') {
      name += '_';
    }
  }
  while (!name.empty() && name.back() == '_') {
    name.pop_back();
  }
  return name.substr(0, 64);
}

/// The line of the node or link a loader error's pointer ("/nodes/3/ports", "/links/7") is about; 0 if neither.
unsigned line_of(const std::string& pointer, const std::vector<unsigned>& node_lines,
                 const std::vector<unsigned>& link_lines) {
  for (const auto& [prefix, lines] :
       {std::pair{std::string_view("/nodes/"), &node_lines}, std::pair{std::string_view("/links/"), &link_lines}}) {
    if (pointer.starts_with(prefix)) {
      std::size_t index = 0;
      std::from_chars(pointer.data() + prefix.size(), pointer.data() + pointer.size(), index);
      return index < lines->size() ? (*lines)[index] : 0;
    }
  }
  return 0;
}

/// The port count of a node whose file does not give one (a ports report's switches): its profile's, or nullopt
/// when the profile is unknown (the loader reports that). A port beyond it is an error at the first line with it.
std::optional<unsigned> profile_ports(const std::vector<Block>& blocks, std::size_t n, const std::string& profile,
                                      const std::string& file, Catalog& catalog) {
  const Block& b = blocks[n];
  const auto caps = catalog.capabilities(b.kind, profile);
  if (!caps) {
    return std::nullopt;
  }
  const unsigned count = caps->port_count;
  if (b.ports <= count) {
    return count;
  }
  unsigned line = 0;
  unsigned port = b.ports;
  for (const Block& other : blocks) {
    for (const PortLine& p : other.port_lines) {
      const std::optional<unsigned> mine = &other == &b          ? std::optional(p.port)
                                           : p.remote_id == b.id ? std::optional(p.remote_port)
                                                                 : std::nullopt;
      if (mine && *mine > count && (line == 0 || p.line < line)) {
        line = p.line;
        port = *mine;
      }
    }
  }
  const std::string ports = std::to_string(count) + (count == 1 ? " port" : " ports");
  throw LineError(file, line == 0 ? b.line : line,
                  "a port of " + json_quoted(b.id) + " in [1, " + std::to_string(count) + "] (profile " + profile +
                      " has " + ports + ")",
                  "port " + std::to_string(port));
}

/// "2" or "2.5": a length as the cables file would write it.
std::string format_length(double length_m) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", length_m);
  return text;
}

/// What the cables table says of one link; nullopt where it says nothing.
struct CableChoice {
  std::optional<double> length_m;
  std::optional<std::string> cable;
  unsigned line = 0; ///< the row that said it
};

/// Each link's cable from options.cables (rows name an end by node GUID and port; both ends, when given, agree).
std::vector<CableChoice> cable_choices(const std::vector<Block>& blocks, const std::vector<std::string>& names,
                                       const std::map<End, Claim>& claims, std::size_t link_count,
                                       const ImportOptions& options, Catalog& catalog) {
  std::vector<CableChoice> choices(link_count);
  if (!options.cables) {
    return choices;
  }
  const CableTable& table = *options.cables;
  std::unordered_map<std::uint64_t, std::size_t> by_guid;
  for (std::size_t n = 0; n < blocks.size(); ++n) {
    by_guid.emplace(blocks[n].guid, n);
  }
  std::map<End, unsigned> row_of_end;
  for (const CableTable::Row& row : table.rows) {
    const auto node = by_guid.find(row.node_guid);
    if (node == by_guid.end()) {
      throw LineError(table.file, row.line, "node_guid: the node GUID of a node of the fabric",
                      format_guid(row.node_guid));
    }
    const End end{node->second, row.port};
    const auto claim = claims.find(end);
    if (claim == claims.end()) {
      throw LineError(table.file, row.line, "a cabled port of " + names[end.node],
                      "port " + std::to_string(row.port) + ", which has no link");
    }
    if (const auto [first, added] = row_of_end.emplace(end, row.line); !added) {
      throw LineError(table.file, row.line, "each port once",
                      names[end.node] + " port " + std::to_string(row.port) + " again (line " +
                          std::to_string(first->second) + ")");
    }
    if (row.cable && !catalog.is_cable(*row.cable)) {
      std::string list;
      for (const std::string& name : catalog.profile_names("cable")) {
        list += (list.empty() ? "" : ", ") + name;
      }
      throw LineError(table.file, row.line, "cable: a cable profile (" + list + ")", json_quoted(*row.cable));
    }
    CableChoice& choice = choices[claim->second.link];
    // The other end's row, if any, was read first: the two must say the same.
    const auto said = [](const std::optional<double>& length, const std::optional<std::string>& cable) {
      return (length ? format_length(*length) + " m" : std::string("no length")) + ", " +
             (cable ? *cable : std::string("no cable"));
    };
    if ((choice.length_m && row.length_m && *choice.length_m != *row.length_m) ||
        (choice.cable && row.cable && *choice.cable != *row.cable)) {
      throw LineError(table.file, row.line,
                      "what line " + std::to_string(choice.line) + " gives for the other end of this link, " +
                          said(choice.length_m, choice.cable),
                      said(row.length_m, row.cable));
    }
    choice.length_m = choice.length_m ? choice.length_m : row.length_m;
    choice.cable = choice.cable ? choice.cable : row.cable;
    choice.line = row.line;
  }
  return choices;
}

} // namespace

const sim::ParamTable<ImportDefaults>& import_param_table() {
  static const sim::ParamTable<ImportDefaults> table(
      "topo-import",
      {
          {"default_length_m", &ImportDefaults::length_m, "m",
           "cable length of every link --cables does not give (ibnetdiscover does not see cables)", 0.01, 1e6},
          {"default_cable", &ImportDefaults::cable, "text", "cable profile of every link --cables does not give", 0, 0},
      });
  return table;
}

const sim::ProfileModel import_profile_model = sim::profile_model<ImportDefaults, &import_param_table>(
    "topo-import", "what topo import assumes where ibnetdiscover output is silent: cable lengths and types");

std::optional<std::string> inferred_profile(NodeKind kind, link::Speed fastest) {
  const bool sw = kind == NodeKind::switch_node;
  switch (fastest) {
  case link::Speed::sdr:
  case link::Speed::ddr:
  case link::Speed::qdr:
  case link::Speed::fdr10:
  case link::Speed::fdr:
    return sw ? "switchx2-fdr" : "connectx3-fdr";
  case link::Speed::edr:
    return sw ? "switch-ib2-edr" : "connectx4-edr";
  case link::Speed::hdr:
    return sw ? "quantum-hdr" : "connectx6-hdr";
  case link::Speed::ndr:
    return sw ? "quantum2-ndr" : "connectx7-ndr";
  }
  return std::nullopt;
}

ImportResult import_ibnetdiscover(std::string_view text, const std::string& file, const ImportOptions& options,
                                  Catalog& catalog) {
  const ibnetdiscover_detail::ParsedNet parsed = ibnetdiscover_detail::parse(text, file);
  const std::vector<Block>& blocks = parsed.blocks;
  if (blocks.empty()) {
    throw LineError(file, 1, "at least one Switch or Ca block", "none");
  }
  std::unordered_map<std::string, std::size_t> by_id;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (!by_id.emplace(blocks[i].id, i).second) {
      throw LineError(file, blocks[i].line, "a node id not used before",
                      json_quoted(blocks[i].id) + ", already the node at line " +
                          std::to_string(blocks[by_id[blocks[i].id]].line));
    }
  }

  // Links, from either end's port line; both ends, when listed, must agree.
  const auto end_text = [&](End e) { return json_quoted(blocks[e.node].id) + "[" + std::to_string(e.port) + "]"; };
  std::map<End, Claim> claims;
  std::vector<PendingLink> links;
  for (std::size_t n = 0; n < blocks.size(); ++n) {
    for (const PortLine& p : blocks[n].port_lines) {
      const auto remote = by_id.find(p.remote_id);
      if (remote == by_id.end()) {
        throw LineError(file, p.line, "a node id with its own Switch or Ca block", json_quoted(p.remote_id));
      }
      const Block& r = blocks[remote->second];
      if (p.remote_port > r.ports) {
        throw LineError(file, p.line, "a port of " + json_quoted(r.id) + " in [1, " + std::to_string(r.ports) + "]",
                        "port " + std::to_string(p.remote_port));
      }
      const End here{n, p.port};
      const End there{remote->second, p.remote_port};
      const auto mine = claims.find(here);
      if (mine != claims.end()) {
        if (mine->second.listed) {
          throw LineError(file, p.line, "each port listed once",
                          "port " + std::to_string(p.port) + " again (line " + std::to_string(mine->second.line) + ")");
        }
        if (!(mine->second.peer == there)) {
          throw LineError(file, p.line,
                          end_text(mine->second.peer) + ", the peer line " + std::to_string(mine->second.line) +
                              " gives this port",
                          end_text(there));
        }
        PendingLink& l = links[mine->second.link];
        if ((l.width && p.width && *l.width != *p.width) || (l.speed && p.speed && *l.speed != *p.speed)) {
          throw LineError(file, p.line,
                          "the width and speed line " + std::to_string(mine->second.line) + " gives, " +
                              std::string(link::to_string(l.width.value_or(*p.width))) +
                              std::string(link::to_string(l.speed.value_or(*p.speed))),
                          std::string(link::to_string(p.width.value_or(*l.width))) +
                              std::string(link::to_string(p.speed.value_or(*l.speed))));
        }
        l.width = l.width ? l.width : p.width;
        l.speed = l.speed ? l.speed : p.speed;
        mine->second.listed = true;
        continue;
      }
      const auto theirs = claims.find(there);
      if (theirs != claims.end()) {
        throw LineError(file, p.line, "a free port",
                        end_text(there) + ", cabled to " + end_text(theirs->second.peer) + " by line " +
                            std::to_string(theirs->second.line));
      }
      claims.emplace(here, Claim{there, p.line, links.size(), true});
      if (!(here == there)) {
        claims.emplace(there, Claim{here, p.line, links.size(), false});
      }
      links.push_back(PendingLink{here, there, p.width, p.speed, p.line});
    }
  }

  // Names from the node name map, else the descriptions, made unique in file order.
  std::vector<std::string> names(blocks.size());
  std::unordered_set<std::string> taken;
  std::size_t mapped = 0;
  for (std::size_t n = 0; n < blocks.size(); ++n) {
    std::string base;
    if (options.node_names) {
      const auto entry = options.node_names->names.find(blocks[n].guid);
      if (entry != options.node_names->names.end()) {
        base = sanitized(entry->second.name);
        ++mapped;
      }
    }
    if (base.empty()) {
      base = sanitized(blocks[n].description);
    }
    if (base.empty()) {
      base = sanitized(blocks[n].id);
    }
    if (base.empty()) {
      base = blocks[n].kind == NodeKind::switch_node ? "switch" : "hca";
    }
    std::string name = base;
    for (unsigned k = 2; !taken.insert(name).second; ++k) {
      name = base.substr(0, 60) + "_" + std::to_string(k);
    }
    names[n] = std::move(name);
  }

  // Profiles: given, or inferred from the fastest link of each node (of the whole fabric for unlinked nodes).
  const ibnetdiscover_detail::NetDefaults& net = parsed.net;
  std::vector<link::Speed> fastest(blocks.size(), link::Speed::sdr);
  std::vector<bool> linked(blocks.size(), false);
  link::Speed fabric_fastest = link::Speed::sdr;
  for (const PendingLink& l : links) {
    const link::Speed s = l.speed.value_or(net.speed());
    for (const std::size_t n : {l.a.node, l.b.node}) {
      fastest[n] = linked[n] ? std::max(fastest[n], s) : s;
      linked[n] = true;
    }
    fabric_fastest = std::max(fabric_fastest, s);
  }
  std::map<std::tuple<NodeKind, std::string, link::Speed>, unsigned> inferred;
  std::map<std::tuple<NodeKind, std::string, std::uint16_t>, unsigned> by_device; // (kind, profile, devid)
  std::map<std::pair<NodeKind, std::uint16_t>, unsigned> unknown_devices;
  json nodes = json::array();
  std::vector<unsigned> node_lines;
  for (std::size_t n = 0; n < blocks.size(); ++n) {
    const Block& b = blocks[n];
    const bool sw = b.kind == NodeKind::switch_node;
    const std::optional<std::string>& given = sw ? options.switch_profile : options.hca_profile;
    std::string profile;
    std::optional<std::string> known;
    if (!given && b.device_id && *b.device_id != 0) { // ibsim's nodes print devid=0x0: no device at all
      known = catalog.profile_for_device(b.kind, *b.device_id);
      if (!known)
        ++unknown_devices[{b.kind, *b.device_id}];
    }
    if (given) {
      profile = *given;
    } else if (known) {
      // The device says what it is: a ConnectX-5 on EDR links is not taken for a ConnectX-4.
      profile = *known;
      ++by_device[{b.kind, profile, *b.device_id}];
    } else {
      const link::Speed speed = linked[n] ? fastest[n] : fabric_fastest;
      const auto guess = inferred_profile(b.kind, speed);
      if (!guess) {
        throw LineError(file, b.line,
                        std::string("a link speed with a shipped profile (SDR to NDR), or ") +
                            (sw ? "--switch-profile" : "--hca-profile"),
                        std::string(link::to_string(speed)) + " links");
      }
      profile = *guess;
      ++inferred[{b.kind, profile, speed}];
    }
    unsigned ports = b.ports;
    if (b.ports_from_profile) {
      ports = profile_ports(blocks, n, profile, file, catalog).value_or(ports);
    }
    json node = {{"name", names[n]},
                 {"kind", sw ? "switch" : "hca"},
                 {"profile", profile},
                 {"ports", ports},
                 {"guid", format_guid(b.guid)}};
    if (b.system_image_guid != b.guid) {
      node["system_image_guid"] = format_guid(b.system_image_guid);
    }
    std::vector<std::uint64_t> port_guids = default_port_guids(b.kind, b.guid, ports);
    if (sw && b.port0_guid) {
      port_guids[0] = *b.port0_guid;
    }
    for (const auto& [port, guid] : b.port_guids) {
      if (!sw) {
        port_guids[port - 1] = guid;
      }
    }
    for (const PortLine& p : b.port_lines) {
      if (!sw && p.guid) {
        port_guids[p.port - 1] = *p.guid;
      }
    }
    if (port_guids != default_port_guids(b.kind, b.guid, ports)) {
      json guids = json::array();
      for (const std::uint64_t g : port_guids) {
        guids.push_back(format_guid(g));
      }
      node["port_guids"] = std::move(guids);
    }
    nodes.push_back(std::move(node));
    node_lines.push_back(b.line);
  }
  ImportResult result;
  const std::vector<CableChoice> cables = cable_choices(blocks, names, claims, links.size(), options, catalog);
  json link_array = json::array();
  std::vector<unsigned> link_lines;
  for (std::size_t i = 0; i < links.size(); ++i) {
    const PendingLink& l = links[i];
    result.links_with_default_length += cables[i].length_m ? 0 : 1;
    result.links_with_default_cable += cables[i].cable ? 0 : 1;
    link_array.push_back({{"a", names[l.a.node] + "/" + std::to_string(l.a.port)},
                          {"b", names[l.b.node] + "/" + std::to_string(l.b.port)},
                          {"width", std::string(link::to_string(l.width.value_or(net.width())))},
                          {"speed", std::string(link::to_string(l.speed.value_or(net.speed())))},
                          {"length_m", cables[i].length_m.value_or(options.length_m)},
                          {"cable", cables[i].cable.value_or(options.cable)}});
    link_lines.push_back(l.line);
  }
  const sim::JsonDocument doc{file,
                              json{{"name", options.name.empty() ? "imported" : options.name},
                                   {"nodes", std::move(nodes)},
                                   {"links", std::move(link_array)}},
                              ""};
  try {
    result.topology = read_topology(doc, catalog);
  } catch (const LineError&) {
    throw;
  } catch (const sim::InputError& e) {
    if (e.file() != file) {
      throw; // a profile file's own error
    }
    throw LineError(file, line_of(e.json_pointer(), node_lines, link_lines), e.expected(), e.got());
  }
  if (options.node_names) {
    result.notes.push_back(std::to_string(mapped) + " of " + std::to_string(blocks.size()) + " nodes named by " +
                           options.node_names->file + " (the rest by their node descriptions)");
  }
  if (options.cables) {
    result.notes.push_back(std::to_string(links.size() - result.links_with_default_length) + " of " +
                           std::to_string(links.size()) + " link lengths and " +
                           std::to_string(links.size() - result.links_with_default_cable) + " cable profiles from " +
                           options.cables->file);
  }
  const auto nodes_of = [](NodeKind kind, unsigned count) {
    return std::to_string(count) + " " +
           (kind == NodeKind::switch_node ? (count == 1 ? "switch" : "switches") : (count == 1 ? "HCA" : "HCAs"));
  };
  const auto hex = [](std::uint16_t id) {
    char text[8];
    std::snprintf(text, sizeof text, "0x%x", id);
    return std::string(text);
  };
  for (const auto& [key, count] : by_device) {
    const auto& [kind, profile, id] = key;
    result.notes.push_back("profile " + profile + " for " + nodes_of(kind, count) + " of devid " + hex(id) +
                           " (the profile's device_ids; " +
                           (kind == NodeKind::switch_node ? "--switch-profile" : "--hca-profile") + " sets it)");
  }
  for (const auto& [key, count] : unknown_devices) {
    const auto& [kind, id] = key;
    result.notes.push_back("devid " + hex(id) + " (" + nodes_of(kind, count) +
                           ") is in no shipped profile's device_ids: profile inferred from link speed");
  }
  for (const auto& [key, count] : inferred) {
    const auto& [kind, profile, speed] = key;
    result.notes.push_back(
        "profile " + profile + " for " + std::to_string(count) + " " +
        (kind == NodeKind::switch_node ? (count == 1 ? "switch" : "switches") : (count == 1 ? "HCA" : "HCAs")) +
        " whose fastest link is " + std::string(link::to_string(speed)) + " (inferred; " +
        (kind == NodeKind::switch_node ? "--switch-profile" : "--hca-profile") + " sets it)");
  }
  return result;
}

} // namespace ib::topo
