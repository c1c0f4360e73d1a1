// file (OpenSM's osm_ucast_file.c): LFTs replayed from a dump, so any routing OpenSM computed can run here.
// Switches are matched by GUID; a line naming a port GUID is moved to that port's LID here (remap_lid), so a dump
// taken under another LID assignment still lands on the right destinations. Switches the dump does not mention,
// and LIDs it leaves out, have no route: the route check reports them.
#include <fstream>
#include <unordered_map>

#include "models/sm/dump.h"
#include "models/sm/sm_error.h"

namespace ib::sm {
namespace {

class FileEngine : public Engine {
public:
  Routing route(const RoutingInput& input) override {
    const topo::Topology& t = input.topology;
    const std::string& path = input.options.lft_file;
    if (path.empty())
      throw SmError("the file engine needs an LFT dump to read (--lft-file)");
    std::ifstream in(path);
    if (!in)
      throw SmError(path + ": cannot read the LFT dump");
    const std::vector<DumpedLft> tables = read_lft_dump(in, path);

    std::unordered_map<std::uint64_t, topo::NodeIndex> switch_by_guid;
    std::unordered_map<std::uint64_t, topo::PortRef> port_by_guid;
    for (topo::NodeIndex n = 0; n < t.node_count(); ++n) {
      const topo::Node& node = t.node(n);
      if (node.kind == topo::NodeKind::switch_node) {
        switch_by_guid[node.node_guid] = n;
        port_by_guid[node.node_guid] = {n, 0};
      } else {
        for (unsigned p = 1; p <= node.port_count; ++p)
          port_by_guid[node.port_guids.at(p - 1)] = {n, static_cast<topo::PortNumber>(p)};
      }
    }
    Routing routing;
    routing.lfts.assign(t.node_count(), {});
    const std::size_t size = std::size_t{input.lids.max_lid()} + 1;
    for (topo::NodeIndex n = 0; n < t.node_count(); ++n)
      if (t.node(n).kind == topo::NodeKind::switch_node)
        routing.lfts[n].assign(size, no_path);
    for (const DumpedLft& table : tables) {
      const auto sw = switch_by_guid.find(table.switch_guid);
      if (sw == switch_by_guid.end())
        continue; // as OpenSM: a switch this fabric lacks is skipped
      std::vector<std::uint8_t>& lft = routing.lfts[sw->second];
      for (const DumpedLft::Entry& e : table.entries) {
        if (e.port > t.node(sw->second).port_count)
          throw SmError(path + ": switch " + t.node(sw->second).name + " has no port " + std::to_string(e.port));
        Lid lid = e.lid;
        if (e.port_guid != 0) {
          const auto port = port_by_guid.find(e.port_guid);
          if (port != port_by_guid.end()) {
            const Lid base = input.lids.base_lid(port->second.node, port->second.port);
            const unsigned count = input.lids.lid_count(port->second.node);
            if (lid < base || lid >= base + count)
              lid = static_cast<Lid>(base + (lid & (count - 1)));
          }
        }
        if (lid < size)
          lft[lid] = e.port;
      }
    }
    return routing;
  }
};

} // namespace

extern const EngineInfo file_engine{
    "file", "LFTs replayed from an opensm-lfts.dump or dump_lfts output (RoutingOptions::lft_file)", true,
    [] { return std::unique_ptr<Engine>(std::make_unique<FileEngine>()); }};

} // namespace ib::sm
