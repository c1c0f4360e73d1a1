// The credit-loop check (docs/models/subnet-manager.md): the channel dependency graph of the routed fabric, per VL
// (Dally & Seitz: a deadlock-free routing has an acyclic one). A channel is one direction of a switch-to-switch link on
// one VL; a route that arrives on channel A and leaves on channel B makes B's credits a wait of A's, an edge A -> B.
// Routes come from the LFTs, their SL from the routing's path SLs and each hop's VL from its SL2VL. Links to HCAs close
// no loop (HCAs do not forward) and are left out. The same walk finds routes that end nowhere (no LFT entry) or go
// round in circles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/sm/routing.h"

namespace ib::sm {

struct Channel {
  topo::NodeIndex node;  ///< the switch the channel leaves
  topo::PortNumber port; ///< by this port
  std::uint8_t vl;
  friend bool operator==(const Channel&, const Channel&) = default;
};

struct RouteCheck {
  std::uint64_t channels = 0;     ///< channels some route uses
  std::uint64_t dependencies = 0; ///< distinct edges of the dependency graph
  std::vector<Channel> cycle;     ///< one credit loop, in order (the first channel depends on the last); empty if none
  std::uint64_t unrouted_pairs = 0;  ///< (source switch, destination LID) routes that hit a missing LFT entry
  std::uint64_t looping_pairs = 0;   ///< routes that revisit a switch
  std::vector<std::string> problems; ///< the first few unrouted or looping routes, described
  unsigned max_hops = 0;             ///< longest route, in switch-to-switch links plus the two HCA links
};

/// Walks the route from every switch with an HCA to every LID and builds the dependency graph. `data_vls` is what
/// the default SL2VL reduces VLs modulo.
RouteCheck check_routes(const topo::Topology& topology, const LidMap& lids, const Routing& routing, unsigned data_vls);

/// "leaf0/p13 VL0 -> spine1/p2 VL0 -> ... -> (back to leaf0/p13 VL0)".
std::string describe_cycle(const topo::Topology& topology, const std::vector<Channel>& cycle);

/// The route from the HCA port owning `src` to `dst`, as the ports it leaves by (the source HCA's port first);
/// empty when it does not arrive.
std::vector<topo::PortRef> trace_route(const topo::Topology& topology, const LidMap& lids, const Routing& routing,
                                       Lid src, Lid dst);

} // namespace ib::sm
