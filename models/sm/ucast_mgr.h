// OpenSM's unicast manager (osm_ucast_mgr.c, osm_switch.c), shared by the engines that route by hop counts
// (minhop, updn, dor): destinations are taken in OpenSM's port order, and each switch sends each LID out of the
// least-hop port that carries the fewest routes so far (lowest port number on ties); with LMC > 0 it prefers
// ports towards systems and nodes that the destination's other LIDs do not use yet; dor keeps to the first
// least-hop neighbour (lowest port, i.e. lowest dimension) and balances only over parallel links to it. Routes to
// switch LIDs are not counted (port_profile_switch_nodes off). Internal to models/sm.
#pragma once

#include <cstdint>
#include <vector>

#include "models/sm/routing.h"

namespace ib::sm::detail {

inline constexpr std::uint8_t unreachable = 255;

/// The switch-to-switch wiring by switch ordinal, flat: entry s * stride + p for port p of switch s.
struct SwitchGraph {
  explicit SwitchGraph(const topo::Topology& topology, const SwitchIndex& index);
  std::uint32_t count = 0;
  std::uint32_t stride = 0;             ///< largest port count + 1
  std::vector<std::uint8_t> port_count; ///< per switch
  std::vector<std::int32_t> neighbour;  ///< switch ordinal behind each port; -1: an HCA or nothing
  std::vector<std::uint8_t> cabled;     ///< 1 if the port is cabled (to anything)
  std::vector<std::uint8_t> peer_port;  ///< the port number at the other end of each cabled port
  std::int32_t at(std::uint32_t s, unsigned p) const { return neighbour[s * stride + p]; }
};

/// Hop counts towards one destination switch: row[s * stride + p] = hops from switch s through port p (p = 0:
/// 0 at the destination itself), unreachable when p does not lead there; least[s] = the minimum over s's ports.
class HopSource {
public:
  virtual ~HopSource() = default;
  virtual void fill(std::uint32_t destination, std::vector<std::uint8_t>& row, std::vector<std::uint8_t>& least) = 0;
};

/// Hop counts of plain shortest paths (one BFS per destination): min-hop's and dor's.
class ShortestHops : public HopSource {
public:
  explicit ShortestHops(const SwitchGraph& graph) : graph_(graph) {}
  void fill(std::uint32_t destination, std::vector<std::uint8_t>& row, std::vector<std::uint8_t>& least) override;

private:
  const SwitchGraph& graph_;
  std::vector<std::uint32_t> queue_;
};

/// OpenSM's order of destination ports: HCA ports grouped by their switch (switches with most HCA links first,
/// then in OpenSM's switch-GUID order, each in port order), then every other LID-bearing port in OpenSM's GUID
/// order (opensm_guid_order).
std::vector<topo::PortRef> opensm_port_order(const topo::Topology& topology, const SwitchIndex& index);

struct UcastOptions {
  bool dor = false;
};

/// Fills routing.lfts for every switch.
void build_lfts(const RoutingInput& input, const SwitchIndex& index, const SwitchGraph& graph, HopSource& hops,
                const UcastOptions& options, Routing& routing);

} // namespace ib::sm::detail
