// Adaptive routing groups (docs/models/subnet-manager.md, "Adaptive routing"): what an AR-capable SM programs
// besides the LFTs. NVIDIA's SM gives each switch an AR LFT (DLID -> AR group) and a table of AR groups (port sets);
// the switch picks one port of the group per packet by the ports' load. ibnetsim builds the TREE grouping of NVIDIA's
// ar_updn and ar_ftree: for each switch and destination LID, the ports on a path as short as the static route's.
#pragma once

#include <cstdint>
#include <vector>

#include "models/sm/lid.h"
#include "models/sm/routing.h"
#include "models/topology/topology.h"

namespace ib::sm {

struct ArTables {
  /// Per node (empty for an HCA): per DLID, 1 + the index of its AR group in `groups`; 0: no group, the LFT's port.
  std::vector<std::vector<std::uint16_t>> group_of_lid;
  /// Per node: its AR groups, each the ports a packet may take, the static (LFT) port first, then in port order.
  std::vector<std::vector<std::vector<std::uint8_t>>> groups;
};

/// The TREE grouping on `routing`'s static routes: for switch s and an HCA's LID d whose static route from s takes h
/// switch-to-switch and final hops, every cabled port p that (a) leads to the HCA owning d, or to a switch whose
/// static route to d takes h - 1 hops, and (b) goes the same way as the static port: up, down or level, by the
/// switches' distance from the nearest HCA. Every path an AR switch may then take is as short as the static one and
/// is made of the static routes' own up*/down* steps, so the static routes' freedom from credit loops carries over
/// on fat trees. A DLID with a single such port gets no group.
ArTables tree_groups(const topo::Topology& topology, const LidMap& lids, const Routing& routing);

} // namespace ib::sm
