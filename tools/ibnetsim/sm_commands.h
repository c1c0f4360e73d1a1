// `ibnetsim topo check` and `ibnetsim topo route`: the subnet manager (models/sm) run on a topology file.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace cli {

/// LIDs, routing, then the route and credit-loop check; exit 0 when every route arrives and no credit loop
/// exists, 3 when one does not, 2 on bad input.
int command_topo_check(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// Writes the LFTs (opensm-lfts.dump or dump_lfts style) or the guid2lid table.
int command_topo_route(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

} // namespace cli
