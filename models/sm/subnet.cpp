#include "models/sm/subnet.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ostream>

#include "models/sm/sm_error.h"

namespace ib::sm {

Subnet run_subnet_manager(const topo::Topology& topology, const SmOptions& options) {
  const EngineInfo* info = find_engine(options.engine);
  if (info == nullptr) {
    std::string names;
    for (std::string_view n : engine_names())
      names += (names.empty() ? "" : ", ") + std::string(n);
    throw SmError("unknown routing engine '" + options.engine + "'; engines: " + names);
  }
  LidMap lids = assign_lids(topology, options.lids);
  Routing routing = info->make()->route({topology, lids, options.routing});
  routing.engine = info->name;
  if (routing.vls_needed > options.routing.data_vls)
    throw SmError(options.engine + " needs " + std::to_string(routing.vls_needed) + " VLs, the fabric runs " +
                  std::to_string(options.routing.data_vls));
  RouteCheck check = check_routes(topology, lids, routing, options.routing.data_vls);
  return {std::move(lids), std::move(routing), std::move(check)};
}

void write_guid2lid(std::ostream& out, const topo::Topology& t, const LidMap& lids) {
  std::vector<std::pair<std::uint64_t, topo::PortRef>> ports;
  for (topo::NodeIndex n = 0; n < t.node_count(); ++n) {
    const topo::Node& node = t.node(n);
    if (node.kind == topo::NodeKind::switch_node) {
      ports.push_back({node.node_guid, {n, 0}});
      continue;
    }
    for (unsigned p = 1; p <= node.port_count; ++p)
      if (lids.base_lid(n, static_cast<topo::PortNumber>(p)) != no_lid)
        ports.push_back({node.port_guids.at(p - 1), {n, static_cast<topo::PortNumber>(p)}});
  }
  std::sort(ports.begin(), ports.end(), [&](const auto& a, const auto& b) {
    return lids.base_lid(a.second.node, a.second.port) < lids.base_lid(b.second.node, b.second.port);
  });
  for (const auto& [guid, ref] : ports) {
    const unsigned base = lids.base_lid(ref.node, ref.port);
    char line[64];
    std::snprintf(line, sizeof line, "0x%016" PRIx64 " 0x%04x 0x%04x\n", guid, base,
                  base + lids.lid_count(ref.node) - 1);
    out << line;
  }
}

} // namespace ib::sm
