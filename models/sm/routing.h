// Routing engines (docs/models/subnet-manager.md): each fills a Routing (the LFT of every switch, the SL of every path
// and the SL2VL of every switch output) from the topology and its LIDs. One small interface, one engine per file, as in
// OpenSM (osm_ucast_<name>.c). Engines that cannot route a fabric throw SmError saying why.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/link/sl_to_vl.h"
#include "models/sm/lid.h"
#include "models/topology/topology.h"

namespace ib::sm {

/// LFT entry for "no route" (OpenSM's OSM_NO_PATH).
inline constexpr std::uint8_t no_path = 255;

struct RoutingOptions {
  std::vector<topo::NodeIndex> roots; ///< updn, ftree: root switches; empty = detected automatically
  std::string lft_file;               ///< file: an opensm-lfts.dump (or dump_lfts output) to replay
  unsigned data_vls = 8;              ///< VLs every switch-to-switch link runs (engines using VLs stay below it)
};

struct RoutingInput {
  const topo::Topology& topology;
  const LidMap& lids;
  const RoutingOptions& options;
};

/// An SL -> VL table of one switch output port.
using SlToVl = link::SlToVl;

struct Routing {
  std::string engine;
  /// Per node: a switch's LFT indexed by DLID (port, 0 = itself, no_path), empty for an HCA.
  std::vector<std::vector<std::uint8_t>> lfts;
  /// Per switch pair (switch_ordinal(source's switch) * switch_count + destination's): the SL a path uses, as
  /// the SM's PathRecords give it. Empty: SL 0 for every path.
  std::vector<std::uint8_t> path_sl_by_switch;
  /// Per node, per output port: SL2VL. Empty (or an empty entry): VL = SL mod the port's VLs (OpenSM's default).
  std::vector<std::vector<SlToVl>> sl_to_vl;
  /// VLs the routing relies on to be deadlock-free (1 when it uses none).
  unsigned vls_needed = 1;
};

/// Switches in node order, and each node's switch ordinal (HCAs: that of the switch they are cabled to, on their
/// first cabled port; -1 when none).
struct SwitchIndex {
  std::vector<topo::NodeIndex> switches;
  std::vector<std::int32_t> ordinal_of_node;
  explicit SwitchIndex(const topo::Topology& topology);
};

class Engine {
public:
  virtual ~Engine() = default;
  virtual Routing route(const RoutingInput& input) = 0;
};

/// One routing engine as the SM offers it, like an entry of OpenSM's routing_modules[]: defined once, in the
/// engine's own file, and listed once in engines(). The CLI's --routing, a scenario's subnet_manager/routing, the
/// JSON Schema's enum and the documentation all come from (or are checked against) that list.
struct EngineInfo {
  std::string_view name;        ///< OpenSM's name: --routing, a scenario's "routing", Routing::engine
  std::string_view description; ///< one line, for help texts
  bool replays_file;            ///< routes from an LFT dump (RoutingOptions::lft_file), not from the topology
  std::unique_ptr<Engine> (*make)();
};

/// The engine the SM runs when none is named: OpenSM's default (minhop).
inline constexpr std::string_view default_engine = "minhop";

/// Every engine, in the order the CLI lists them.
std::span<const EngineInfo* const> engines();
/// The engine called `name`; nullptr for none.
const EngineInfo* find_engine(std::string_view name);
/// find_engine(name)->make(); nullptr for an unknown name.
std::unique_ptr<Engine> make_engine(std::string_view name);
/// The engines' names, in engines() order.
const std::vector<std::string_view>& engine_names();

/// The SL of the path from `src` to `dst` (LIDs of cabled ports).
std::uint8_t path_sl(const Routing& routing, const SwitchIndex& index, const LidMap& lids, Lid src, Lid dst);

/// VL of SL `sl` leaving `node` by `out_port`, when the port runs `port_vls` data VLs.
std::uint8_t output_vl(const Routing& routing, topo::NodeIndex node, topo::PortNumber out_port, std::uint8_t sl,
                       unsigned port_vls);

} // namespace ib::sm
