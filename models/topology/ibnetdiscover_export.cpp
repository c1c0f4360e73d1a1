// Writing ibnetdiscover output (the layout of infiniband-diags ibnetdiscover.c, without vendid/devid lines, whose
// values the topology does not know, and with every LID 0) and ibsim net files.
#include <cinttypes>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>

#include "models/topology/ibnetdiscover.h"

namespace ib::topo {

namespace {

std::string hex(std::uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "%" PRIx64, v);
  return text;
}

/// The concatenation of `parts`, by appending (GCC 12's -Wrestrict misfires on "literal" + std::string).
std::string cat(std::initializer_list<std::string_view> parts) {
  std::string text;
  for (const std::string_view part : parts) {
    text += part;
  }
  return text;
}

/// ibnetdiscover's node id: "S-" or "H-" and the node GUID in 16 hex digits.
std::string node_id(const Node& n) {
  char text[24];
  std::snprintf(text, sizeof text, "%c-%016" PRIx64, n.kind == NodeKind::switch_node ? 'S' : 'H', n.node_guid);
  return text;
}

std::string link_type(const Link& l) {
  return std::string(link::to_string(l.width)) + std::string(link::to_string(l.speed));
}

/// The nodes in ibnetdiscover's order: switches, then CAs, each in topology order.
std::vector<NodeIndex> listing_order(const Topology& t) {
  std::vector<NodeIndex> order;
  for (const NodeKind kind : {NodeKind::switch_node, NodeKind::hca}) {
    for (NodeIndex n = 0; n < t.node_count(); ++n) {
      if (t.node(n).kind == kind) {
        order.push_back(n);
      }
    }
  }
  return order;
}

} // namespace

std::string export_ibnetdiscover(const Topology& t) {
  std::string out = cat({"#\n# Topology file: written by ibnetsim from topology \"", t.name,
                         "\" (LIDs are not assigned: every lid is 0)\n#\n"});
  for (const NodeIndex n : listing_order(t)) {
    const Node& node = t.node(n);
    const bool sw = node.kind == NodeKind::switch_node;
    const std::string ports = std::to_string(node.port_count);
    out += cat({"\nsysimgguid=0x", hex(node.system_image_guid), "\n"});
    if (sw) {
      out += cat({"switchguid=0x", hex(node.node_guid), "(", hex(node.port_guids[0]), ")\n"});
      out += cat({"Switch\t", ports, " \"", node_id(node), "\"\t\t# \"", node.name, "\" base port 0 lid 0 lmc 0\n"});
    } else {
      out += cat({"caguid=0x", hex(node.node_guid), "\n"});
      out += cat({"Ca\t", ports, " \"", node_id(node), "\"\t\t# \"", node.name, "\"\n"});
    }
    for (unsigned p = 1; p <= node.port_count; ++p) {
      const PortRef peer = t.peer(n, static_cast<PortNumber>(p));
      if (peer.node == no_node) {
        continue;
      }
      const Node& remote = t.node(peer.node);
      const Link& link = t.link(t.link_at(n, static_cast<PortNumber>(p)));
      const bool remote_ca = remote.kind == NodeKind::hca;
      const std::string remote_guid = remote_ca ? cat({"(", hex(remote.port_guids[peer.port - 1]), ") "}) : "";
      const std::string remote_port = std::to_string(peer.port);
      if (sw) {
        out += cat({"[", std::to_string(p), "]\t\"", node_id(remote), "\"[", remote_port, "]", remote_guid, "\t\t# \"",
                    remote.name, "\" lid 0 ", link_type(link), "\n"});
      } else {
        out += cat({"[", std::to_string(p), "](", hex(node.port_guids[p - 1]), ") \t\"", node_id(remote), "\"[",
                    remote_port, "]", remote_ca ? " " : "", remote_guid, "\t\t# lid 0 lmc 0 \"", remote.name,
                    "\" lid 0 ", link_type(link), "\n"});
      }
    }
  }
  return out;
}

std::string export_ibsim_net(const Topology& t) {
  std::string out = cat({"# ibsim net file for topology \"", t.name, "\", written by ibnetsim.\n"});
  out += "# The switchguid=/caguid= line before each node sets its node GUID; ibsim derives the port\n"
         "# GUIDs (switch port 0 = node GUID, HCA port p = node GUID + p). \"lid 0 4xEDR\" at the end of\n"
         "# a port line enables that width and speed on the port.\n";
  std::string differing;
  for (const Node& node : t.nodes()) {
    if (node.port_guids != default_port_guids(node.kind, node.node_guid, node.port_count)) {
      differing += cat({differing.empty() ? "" : ", ", node.name});
    }
  }
  if (!differing.empty()) {
    out += cat({"# Port GUIDs ibsim cannot reproduce (they are not derived as above): ", differing, "\n"});
  }
  for (const NodeIndex n : listing_order(t)) {
    const Node& node = t.node(n);
    const bool sw = node.kind == NodeKind::switch_node;
    out += "\n";
    if (node.system_image_guid != node.node_guid) {
      out += cat({"sysimgguid=0x", hex(node.system_image_guid), "\n"});
    }
    out += cat({sw ? "switchguid=0x" : "caguid=0x", hex(node.node_guid), "\n"});
    out += cat({sw ? "Switch\t" : "Hca\t", std::to_string(node.port_count), " \"", node.name, "\"\n"});
    for (unsigned p = 1; p <= node.port_count; ++p) {
      const PortRef peer = t.peer(n, static_cast<PortNumber>(p));
      if (peer.node == no_node) {
        continue;
      }
      const Node& remote = t.node(peer.node);
      const Link& link = t.link(t.link_at(n, static_cast<PortNumber>(p)));
      out += cat({"[", std::to_string(p), "]\t\"", remote.name, "\"[", std::to_string(peer.port), "]\t\t# ",
                  sw ? "" : "lid 0 lmc 0 ", "\"", remote.name, "\" lid 0 ", link_type(link), "\n"});
    }
  }
  return out;
}

} // namespace ib::topo
