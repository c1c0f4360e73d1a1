// Routing after a fabric change (docs/models/subnet-manager.md, "Reaction to faults"): the fabric as OpenSM's heavy
// sweep finds it once links are down, routed again by the same engine with the same options and the LIDs already
// handed out (OpenSM keeps a known port's LID: its guid2lid cache). An engine that refuses the degraded fabric is
// replaced by minhop, as OpenSM falls back to its default engine (osm_ucast_mgr.c, osm_ucast_mgr_process). Pure:
// no simulated time here; models/sm/reaction.h times what it changes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "models/sm/subnet.h"

namespace ib::sm {

/// The fabric as the SM's sweep discovers it.
struct Discovered {
  /// Every node of the full topology, in its order (indices, GUIDs and LIDs stay), with only the links the SM
  /// discovers: its own port's link and every link of a switch it reaches through switches. HCAs do not forward
  /// SMPs, so a sweep never passes through one. Nodes it does not reach keep no link, as if absent.
  topo::Topology fabric;
  std::vector<std::uint8_t> reached; ///< per node: 1 if the sweep finds it
  bool sm_port_down = false;         ///< the SM's own port has no link: it finds nothing beyond its HCA
};

/// The port the SM runs on: options.lids.sm_port, or OpenSM's default (default_sm_port) when none is given.
topo::PortRef sm_port_of(const topo::Topology& topology, const SmOptions& options);

/// What a sweep from `sm_port` finds when the links `down` (indices into topology.links()) are down.
Discovered discover(const topo::Topology& topology, topo::PortRef sm_port, std::span<const std::uint32_t> down);

struct Reroute {
  Discovered discovered;
  /// The tables after the change: the engine's for every switch the SM reaches; a switch it does not reach keeps
  /// its table from `current` (the SM cannot write it). Unreachable LIDs have no_path.
  Routing routing;
  /// `routing` checked on the discovered fabric: routes to LIDs the SM lost count as unrouted pairs.
  RouteCheck check;
  std::string engine;     ///< the engine whose routing it is (Routing::engine)
  bool fell_back = false; ///< options.engine refused the fabric and minhop routed it
  std::string refusal;    ///< why options.engine refused (the SmError's text); empty when it did not
};

/// Routes the fabric with the links `down` down, as OpenSM's sweep after the change would: options.engine first,
/// then minhop if it refuses (an SmError, or more VLs than options.routing.data_vls). `current` holds the tables
/// the switches have now. The file engine replays its dump again, so its routes do not avoid the fault. When the
/// SM's own port is down nothing is routed: `routing` is `current`. Throws SmError for an unknown engine.
Reroute reroute(const topo::Topology& topology, const LidMap& lids, const Routing& current, const SmOptions& options,
                std::span<const std::uint32_t> down);

} // namespace ib::sm
