#include "models/sm/lid.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <unordered_map>

#include "models/sm/sm_error.h"

namespace ib::sm {

using topo::NodeIndex;
using topo::NodeKind;
using topo::PortNumber;
using topo::PortRef;

namespace {

bool cabled(const topo::Topology& t, NodeIndex n, PortNumber p) {
  return t.peer(n, p).node != topo::no_node;
}

/// The GUID OpenSM keys a port by: a switch's node GUID (its port 0), an HCA port's own port GUID.
std::uint64_t port_guid(const topo::Topology& t, PortRef ref) {
  const topo::Node& node = t.node(ref.node);
  return node.kind == NodeKind::switch_node ? node.node_guid : node.port_guids.at(ref.port - 1);
}

/// The LID-bearing ports of the fabric: each switch once (port 0), each cabled HCA port.
std::vector<PortRef> lid_ports(const topo::Topology& t) {
  std::vector<PortRef> ports;
  for (NodeIndex n = 0; n < t.node_count(); ++n) {
    const topo::Node& node = t.node(n);
    if (node.kind == NodeKind::switch_node) {
      ports.push_back({n, 0});
      continue;
    }
    for (unsigned p = 1; p <= node.port_count; ++p) {
      if (cabled(t, n, static_cast<PortNumber>(p)))
        ports.push_back({n, static_cast<PortNumber>(p)});
    }
  }
  return ports;
}

std::string hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::string port_name(const topo::Topology& t, PortRef ref) {
  return t.node(ref.node).name + (t.node(ref.node).kind == NodeKind::switch_node ? "" : "/" + std::to_string(ref.port));
}

} // namespace

std::vector<Guid2LidLine> read_guid2lid(std::istream& in, const std::string& file_label) {
  std::vector<Guid2LidLine> lines;
  std::string text;
  for (unsigned number = 1; std::getline(in, text); ++number) {
    const std::size_t start = text.find_first_not_of(" \t\r");
    if (start == std::string::npos || text[start] == '#')
      continue;
    const auto fail = [&](const std::string& what) {
      return SmError(file_label + ":" + std::to_string(number) + ": " + what + ", got '" + text + "'");
    };
    // Three numbers as OpenSM's strtoull(..., 0) reads them, nothing after but blanks.
    std::uint64_t values[3];
    const char* p = text.c_str() + start;
    for (std::uint64_t& value : values) {
      while (*p == ' ' || *p == '\t')
        ++p;
      char* end = nullptr;
      errno = 0;
      value = std::strtoull(p, &end, 0);
      if (end == p || *p == '-' || *p == '+' || errno == ERANGE ||
          (*end != '\0' && *end != ' ' && *end != '\t' && *end != '\r'))
        throw fail("expected '0x<port GUID> <first LID> <last LID>'");
      p = end;
    }
    while (*p == ' ' || *p == '\t' || *p == '\r')
      ++p;
    if (*p != '\0')
      throw fail("expected '0x<port GUID> <first LID> <last LID>' and nothing after");
    if (values[0] == 0)
      throw fail("GUID 0 names no port");
    if (values[1] == 0 || values[1] > values[2] || values[2] > max_unicast_lid)
      throw fail("expected a LID range first <= last within 1.." + std::to_string(max_unicast_lid));
    lines.push_back({values[0], static_cast<unsigned>(values[1]), static_cast<unsigned>(values[2]), number});
  }
  return lines;
}

Lid LidMap::base_lid(NodeIndex node, PortNumber port) const {
  return base_[first_port_[node] + (is_switch_[node] ? 0 : port)];
}

unsigned LidMap::lid_count(NodeIndex node) const {
  return is_switch_[node] ? 1u : 1u << lmc_;
}

PortRef LidMap::owner(Lid lid) const {
  return lid < owners_.size() ? owners_[lid] : PortRef{};
}

topo::PortRef default_sm_port(const topo::Topology& topology) {
  std::optional<PortRef> best;
  for (const PortRef& ref : lid_ports(topology)) {
    if (topology.node(ref.node).kind == NodeKind::hca &&
        (!best || opensm_guid_order(port_guid(topology, ref)) < opensm_guid_order(port_guid(topology, *best))))
      best = ref;
  }
  return best.value_or(PortRef{});
}

std::string sm_port_problem(const topo::Topology& t, PortRef port) {
  if (port.node >= t.node_count())
    return "the SM port names no node of the topology";
  const topo::Node& node = t.node(port.node);
  const std::string name = node.name + "/" + std::to_string(port.port);
  if (node.kind == NodeKind::switch_node)
    return port.port == 0 ? "" : "the SM port " + name + " is a switch's external port (a switch's SM runs on port 0)";
  if (port.port < 1 || port.port > node.port_count)
    return "the SM port " + name + " does not exist (" + node.name + " has ports 1.." +
           std::to_string(node.port_count) + ")";
  return cabled(t, port.node, port.port) ? "" : "the SM port " + name + " has no cable";
}

PortRef parse_sm_port(const topo::Topology& t, const std::string& text) {
  const std::size_t slash = text.rfind('/');
  const std::string name = text.substr(0, slash);
  const std::optional<NodeIndex> node = t.find(name);
  if (!node)
    throw SmError("the SM port '" + text + "' names no node of the topology (expected NODE/PORT)");
  PortRef port{*node, 0};
  if (slash == std::string::npos) {
    if (t.node(*node).kind != NodeKind::switch_node)
      throw SmError("the SM port '" + text + "' needs a port number: NODE/PORT");
  } else {
    const std::string number = text.substr(slash + 1);
    if (number.empty() || number.size() > 3 || number.find_first_not_of("0123456789") != std::string::npos)
      throw SmError("the SM port '" + text + "': expected NODE/PORT with a port number");
    const unsigned long value = std::stoul(number);
    if (value > 255)
      throw SmError("the SM port '" + text + "': port numbers are 0..255");
    port.port = static_cast<PortNumber>(value);
  }
  if (const std::string problem = sm_port_problem(t, port); !problem.empty())
    throw SmError(problem);
  return port;
}

namespace {

/// The base LID of each LID-bearing port from OpenSM's guid2lid file, checked as OpenSM's lid_mgr_validate_db would
/// keep them, and complete. `map` gives the LID counts.
std::vector<std::pair<PortRef, unsigned>> lids_from_guid2lid(const topo::Topology& t, const LidOptions& options,
                                                             const LidMap& map) {
  const std::string& path = options.guid2lid_file;
  std::ifstream in(path);
  if (!in)
    throw SmError(path + ": cannot read the guid2lid file");
  const std::vector<Guid2LidLine> lines = read_guid2lid(in, path);
  std::unordered_map<std::uint64_t, PortRef> port_by_guid;
  for (const PortRef& ref : lid_ports(t))
    port_by_guid[port_guid(t, ref)] = ref;
  std::unordered_map<std::uint64_t, unsigned> line_of_guid;
  std::map<unsigned, const Guid2LidLine*> by_first; // to find overlaps
  std::vector<std::pair<PortRef, unsigned>> out;
  for (const Guid2LidLine& line : lines) {
    const std::string where = path + ":" + std::to_string(line.line) + ": ";
    const auto port = port_by_guid.find(line.guid);
    if (port == port_by_guid.end())
      throw SmError(where + hex(line.guid) + " is the GUID of no switch or cabled HCA port of the topology");
    if (const auto [it, fresh] = line_of_guid.emplace(line.guid, line.line); !fresh)
      throw SmError(where + hex(line.guid) + " has LIDs already, on line " + std::to_string(it->second));
    const PortRef ref = port->second;
    const unsigned count = map.lid_count(ref.node);
    if (line.last - line.first + 1 != count || (line.first & (count - 1)) != 0)
      throw SmError(where + port_name(t, ref) + " (" + hex(line.guid) + ") has LIDs " + std::to_string(line.first) +
                    ".." + std::to_string(line.last) + ", expected " + std::to_string(count) +
                    (count > 1 ? " aligned" : "") + " at LMC " + std::to_string(options.lmc) +
                    (t.node(ref.node).kind == NodeKind::hca ? " (does the LMC match the file's?)" : ""));
    const auto next = by_first.lower_bound(line.first);
    const Guid2LidLine* clash = nullptr;
    if (next != by_first.end() && next->second->first <= line.last)
      clash = next->second;
    else if (next != by_first.begin() && std::prev(next)->second->last >= line.first)
      clash = std::prev(next)->second;
    if (clash != nullptr)
      throw SmError(where + "LIDs " + std::to_string(line.first) + ".." + std::to_string(line.last) +
                    " overlap those of line " + std::to_string(clash->line) + " (" + hex(clash->guid) + ")");
    by_first[line.first] = &line;
    out.push_back({ref, line.first});
  }
  for (const PortRef& ref : lid_ports(t)) // in node order, so that the first port missing is the one named
    if (!line_of_guid.contains(port_guid(t, ref)))
      throw SmError(path + ": no LIDs for " + port_name(t, ref) + " (" + hex(port_guid(t, ref)) + ")");
  return out;
}

} // namespace

LidMap assign_lids(const topo::Topology& t, const LidOptions& options) {
  if (options.lmc > 7)
    throw SmError("LMC must be 0..7, got " + std::to_string(options.lmc));
  LidMap map;
  map.lmc_ = options.lmc;
  map.first_port_.resize(t.node_count());
  map.is_switch_.resize(t.node_count());
  std::uint32_t ports = 0;
  for (NodeIndex n = 0; n < t.node_count(); ++n) {
    map.first_port_[n] = ports;
    map.is_switch_[n] = t.node(n).kind == NodeKind::switch_node;
    ports += t.node(n).port_count + 1;
  }
  map.base_.assign(ports, no_lid);
  if (options.sm_port.node != topo::no_node) {
    if (const std::string problem = sm_port_problem(t, options.sm_port); !problem.empty())
      throw SmError(problem);
  }

  map.owners_.assign(1, PortRef{});
  if (!options.guid2lid_file.empty()) {
    for (const auto& [ref, base] : lids_from_guid2lid(t, options, map)) {
      const unsigned count = map.lid_count(ref.node);
      map.base_[map.first_port_[ref.node] + ref.port] = static_cast<Lid>(base);
      if (map.owners_.size() < base + count)
        map.owners_.resize(base + count, PortRef{});
      for (unsigned l = base; l < base + count; ++l)
        map.owners_[l] = ref;
    }
    return map;
  }

  std::vector<PortRef> order = lid_ports(t);
  if (options.order == LidOrder::opensm) {
    const PortRef sm = options.sm_port.node == topo::no_node ? default_sm_port(t) : options.sm_port;
    std::sort(order.begin(), order.end(), [&](const PortRef& a, const PortRef& b) {
      const bool a_sm = a == sm;
      const bool b_sm = b == sm;
      if (a_sm != b_sm)
        return a_sm;
      return opensm_guid_order(port_guid(t, a)) < opensm_guid_order(port_guid(t, b));
    });
  }

  // One cursor, as OpenSM's first fit over a fresh subnet's single free range: alignment gaps are skipped.
  std::uint32_t next = 1;
  for (const PortRef& ref : order) {
    const std::uint32_t count = map.lid_count(ref.node);
    const std::uint32_t base = (next + count - 1) & ~(count - 1);
    if (base + count - 1 > max_unicast_lid)
      throw SmError("the fabric needs more than " + std::to_string(max_unicast_lid) + " unicast LIDs at LMC " +
                    std::to_string(options.lmc));
    map.base_[map.first_port_[ref.node] + ref.port] = static_cast<Lid>(base);
    map.owners_.resize(base + count, PortRef{});
    for (std::uint32_t l = base; l < base + count; ++l)
      map.owners_[l] = ref;
    next = base + count;
  }
  return map;
}

} // namespace ib::sm
