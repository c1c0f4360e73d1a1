// The subnet manager's run at time zero (docs/models/subnet-manager.md): LIDs, then the routing engine, then the route
// and credit-loop check, which runs after every routing. What the CLI's `topo check` and `topo route` print, and what
// the fabric programs into its switches.
#pragma once

#include <string>
#include <vector>

#include "models/sm/credit_loops.h"
#include "models/sm/lid.h"
#include "models/sm/routing.h"

namespace ib::sm {

struct SmOptions {
  std::string engine = std::string(default_engine);
  LidOptions lids;
  RoutingOptions routing;
};

struct Subnet {
  LidMap lids;
  Routing routing;
  RouteCheck check;
  /// True when every pair is routed without loops or credit loops.
  bool sound() const { return check.unrouted_pairs == 0 && check.looping_pairs == 0 && check.cycle.empty(); }
};

/// Throws SmError for an unknown engine or one that refuses the fabric.
Subnet run_subnet_manager(const topo::Topology& topology, const SmOptions& options);

/// OpenSM's guid2lid file: "0x<port GUID> 0x<base LID> 0x<last LID>" per LID-bearing port, in LID order.
void write_guid2lid(std::ostream& out, const topo::Topology& topology, const LidMap& lids);

} // namespace ib::sm
