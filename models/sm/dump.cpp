#include "models/sm/dump.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "models/sm/sm_error.h"

namespace ib::sm {

using topo::NodeIndex;
using topo::NodeKind;

namespace {

std::string hex(std::uint64_t value, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*" PRIx64, digits, value);
  return buf;
}

std::string port_guid_of(const topo::Topology& t, const topo::PortRef& ref) {
  const topo::Node& n = t.node(ref.node);
  return hex(n.kind == NodeKind::switch_node ? n.node_guid : n.port_guids.at(ref.port - 1), 16);
}

/// ib_get_node_type_str.
const char* type_name(NodeKind kind) {
  return kind == NodeKind::switch_node ? "Switch" : "Channel Adapter";
}

std::vector<NodeIndex> switches_by_guid(const topo::Topology& t) {
  std::vector<NodeIndex> switches;
  for (NodeIndex n = 0; n < t.node_count(); ++n)
    if (t.node(n).kind == NodeKind::switch_node)
      switches.push_back(n);
  std::sort(switches.begin(), switches.end(), [&](NodeIndex a, NodeIndex b) {
    return opensm_guid_order(t.node(a).node_guid) < opensm_guid_order(t.node(b).node_guid);
  });
  return switches;
}

} // namespace

void write_opensm_lfts(std::ostream& out, const topo::Topology& t, const LidMap& lids, const Routing& routing) {
  for (NodeIndex s : switches_by_guid(t)) {
    const std::vector<std::uint8_t>& lft = routing.lfts[s];
    const unsigned max_lid = lids.max_lid();
    out << "Unicast lids [0-" << max_lid << "] of switch Lid " << lids.base_lid(s, 0) << " guid 0x"
        << hex(t.node(s).node_guid, 16) << " ('" << t.node(s).name << "'):\n";
    for (unsigned lid = 0; lid <= max_lid; ++lid) {
      const std::uint8_t port = lid < lft.size() ? lft[lid] : no_path;
      if (port > t.node(s).port_count)
        continue;
      char head[32];
      std::snprintf(head, sizeof head, "0x%04x %03u # ", lid, port);
      out << head;
      const topo::PortRef owner = lids.owner(static_cast<Lid>(lid));
      if (owner.node != topo::no_node)
        out << type_name(t.node(owner.node).kind) << " portguid 0x" << port_guid_of(t, owner) << ": '"
            << t.node(owner.node).name << "'";
      else
        out << "unknown node and type";
      out << "\n";
    }
    out << max_lid << " lids dumped\n";
  }
}

void write_dump_lfts(std::ostream& out, const topo::Topology& t, const LidMap& lids, const Routing& routing) {
  for (NodeIndex s : switches_by_guid(t)) {
    const std::vector<std::uint8_t>& lft = routing.lfts[s];
    const unsigned max_lid = lids.max_lid();
    char top[32];
    std::snprintf(top, sizeof top, "0x%x", max_lid);
    out << "Unicast lids [0x0-" << top << "] of switch Lid " << lids.base_lid(s, 0) << " guid 0x"
        << hex(t.node(s).node_guid, 16) << " (" << t.node(s).name << "):\n"
        << "  Lid  Out   Destination\n"
        << "       Port     Info \n";
    unsigned valid = 0;
    for (unsigned lid = 1; lid <= max_lid; ++lid) {
      const std::uint8_t port = lid < lft.size() ? lft[lid] : no_path;
      if (port > t.node(s).port_count)
        continue;
      const topo::PortRef owner = lids.owner(static_cast<Lid>(lid));
      char head[32];
      std::snprintf(head, sizeof head, "0x%04x %03u : ", lid, port);
      out << head;
      if (owner.node != topo::no_node)
        out << "(" << type_name(t.node(owner.node).kind) << " portguid 0x" << port_guid_of(t, owner) << ": '"
            << t.node(owner.node).name << "')";
      else
        out << "(unknown node and type)";
      out << "\n";
      ++valid;
    }
    out << valid << " valid lids dumped \n";
  }
}

std::vector<DumpedLft> read_lft_dump(std::istream& in, const std::string& file_label) {
  std::vector<DumpedLft> tables;
  std::string line;
  unsigned line_number = 0;
  const auto fail = [&](const std::string& what) {
    throw SmError(file_label + ":" + std::to_string(line_number) + ": " + what + ": '" + line + "'");
  };
  while (std::getline(in, line)) {
    ++line_number;
    const std::size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#')
      continue;
    const char* p = line.c_str() + start;
    if (line.compare(start, 15, "Multicast mlids") == 0)
      fail("a multicast dump, not unicast LFTs");
    if (line.compare(start, 12, "Unicast lids") == 0) {
      const std::size_t at = line.find(" guid 0x");
      if (at == std::string::npos)
        fail("expected ' guid 0x<switch GUID>' in the switch line");
      char* end = nullptr;
      const std::uint64_t guid = std::strtoull(line.c_str() + at + 8, &end, 16);
      if (end == line.c_str() + at + 8 || (*end != '\0' && *end != ' ' && *end != '\t'))
        fail("cannot read the switch GUID");
      tables.push_back({guid, {}});
      continue;
    }
    if (line.compare(start, 2, "0x") != 0)
      continue; // headers and summary lines
    if (tables.empty())
      fail("a route before any 'Unicast lids' switch line");
    char* end = nullptr;
    const unsigned long lid = std::strtoul(p + 2, &end, 16);
    if (end == p + 2 || (*end != ' ' && *end != '\t') || lid > max_unicast_lid)
      fail("cannot read the LID");
    const char* port_text = end;
    while (*port_text == ' ' || *port_text == '\t')
      ++port_text;
    const unsigned long port = std::strtoul(port_text, &end, 10);
    if (end == port_text || (*end != '\0' && *end != ' ' && *end != '\t' && *end != '\r') || port > 254)
      fail("cannot read the port");
    std::uint64_t port_guid = 0;
    const std::size_t at = line.find(" portguid 0x");
    if (at != std::string::npos)
      port_guid = std::strtoull(line.c_str() + at + 12, nullptr, 16);
    tables.back().entries.push_back({static_cast<Lid>(lid), static_cast<std::uint8_t>(port), port_guid});
  }
  return tables;
}

} // namespace ib::sm
