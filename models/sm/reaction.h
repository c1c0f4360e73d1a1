// How long the subnet manager takes to react to a fabric change, and what it writes when
// (docs/models/subnet-manager.md, "Reaction to faults"). OpenSM's reaction, step by step: a switch whose port changed
// state sends Trap 128 to the SM, which starts a heavy sweep at once (sweep_on_trap); without a trap the next periodic
// light sweep reads every switch's SwitchInfo, sees the PortStateChange bit (or an SMP lost on a dead path) and then
// sweeps. The heavy sweep rediscovers the fabric by directed-route SMPs (NodeInfo, SwitchInfo, PortInfo), at most
// max_wire_smps outstanding, each a round trip that grows with its hop count, and again if a trap came meanwhile;
// clears the switches' PortStateChange bits; reroutes (models/sm/reroute.h) in a modelled CPU time; sends the LFT
// blocks that changed as SubnSet(LinearForwardingTable), block by block across the switches as osm_ucast_mgr.c
// pipelines them, and with adaptive routing the AR tables of each switch whose AR groups changed; and, for a link
// that came up, moves both its ports Init -> Armed -> Active by SubnSet(PortInfo). Each step waits for the previous
// one's SMPs, as OpenSM's state manager does (wait_for_pending_transactions). Pure and deterministic: the simulator
// schedules the plan.
#pragma once

#include <cstdint>
#include <vector>

#include "models/sm/adaptive.h"
#include "models/sm/reroute.h"
#include "models/sm/sm_params.h"
#include "sim/time.h"

namespace ib::sm {

/// One change of the fabric: the set of links down before and after it (indices into the full topology's links;
/// a failed switch is all its links, topo::links_of). Links in `down_before` only came up; in `down_after` only,
/// went down.
struct FabricChange {
  sim::Time at; ///< since the start of the run, where periodic sweeps fall on multiples of sweep_interval
  std::vector<std::uint32_t> down_before;
  std::vector<std::uint32_t> down_after;
};

/// Entries per LinearForwardingTable block (IBA vol 1 §14.2.5.10: 64 ports per SubnSet).
inline constexpr std::uint32_t lft_block_entries = 64;

/// One LFT block the SM writes.
struct LftUpdate {
  topo::NodeIndex switch_node;
  sim::Time at;        ///< after FabricChange::at: the switch's SMA has written the block; it forwards by it from then
  std::uint32_t block; ///< the block covers LIDs lft_block_entries * block onwards
  std::vector<std::uint8_t> entries; ///< its new entries, one per LID from the block's first (at most 64)
};

/// One switch's AR tables (its AR group table and AR LFT, sm::tree_groups), rewritten whole.
struct ArUpdate {
  topo::NodeIndex switch_node;
  sim::Time at; ///< after FabricChange::at: the switch routes adaptively by them from then
  std::vector<std::uint16_t> group_of_lid;
  std::vector<std::vector<std::uint8_t>> groups;
};

/// A port of a link that came up, made Active by the SM.
struct PortActivation {
  topo::PortRef port;
  sim::Time at; ///< after FabricChange::at: its SMA applied SubnSet(PortInfo: Active); it carries data from then
};

enum class Detection : std::uint8_t {
  trap,        ///< a Trap 128 reached the SM (sweep_on_trap)
  light_sweep, ///< the next periodic light sweep found the change
  never,       ///< no trap arrived and no periodic sweep sees it (or the SM's own port is down): no reaction
};

struct ReactionPlan {
  Detection detection = Detection::never;
  // Times after FabricChange::at; sim::Time::max() when there is no reaction.
  sim::Time detected_at = sim::Time::max();       ///< the trap processed, or the light sweep started
  sim::Time sweep_started_at = sim::Time::max();  ///< the heavy sweep starts
  sim::Time discovery_done_at = sim::Time::max(); ///< its last discovery SMP answered
  sim::Time routing_done_at = sim::Time::max();   ///< new tables computed; LFT blocks start to go out
  sim::Time last_lft_at = sim::Time::max();       ///< last block or AR table applied (else routing_done_at)
  sim::Time done_at = sim::Time::max();           ///< the reaction's last SMP answered
  std::uint32_t discovery_passes = 0;             ///< discoveries run: one more for each trap arriving during one
  std::uint64_t smps_sent = 0;                    ///< SMPs sent, resends included
  std::uint64_t smps_lost = 0;                    ///< SMPs given up unanswered (a light sweep over a dead path)
  std::uint64_t blocks_changed = 0;               ///< LFT blocks sent (== lft_updates.size())
  std::uint32_t switches_updated = 0;             ///< switches that got at least one block
  std::uint32_t ar_tables_changed = 0;            ///< switches whose AR tables were rewritten (== ar_updates.size())
  Reroute reroute;                                ///< the routing after the change, engine and fallback included
  std::vector<LftUpdate> lft_updates;             ///< by `at`, then in the order they were sent
  std::vector<PortActivation> activations;        ///< each reached end of every link that came up, by `at`
  /// With adaptive routing: the AR tables after the change (TREE groups on the discovered fabric with the new
  /// routes; a switch the SM does not reach keeps its own), and those of the switches where they changed, by `at`.
  ArTables adaptive;
  std::vector<ArUpdate> ar_updates;
};

/// The SM's reaction to `change`. `current` holds the tables the switches have before it (a switch that lost its
/// table, e.g. rebooted, has an empty one and gets every block). `current_ar`, with adaptive routing on, holds the
/// AR tables the switches have (nullptr: AR off, none planned): the SM recomputes the TREE groups after routing
/// and rewrites a switch's AR tables where they changed, as NVIDIA's SM does by vendor MADs after the LFTs. A
/// switch whose LFT changed gets them as its last block lands; one whose LFT did not, by one more SMP queued
/// behind the LFT blocks. Throws SmError for an unknown engine.
ReactionPlan plan_reaction(const topo::Topology& topology, const LidMap& lids, const Routing& current,
                           const SmOptions& options, const Params& params, const FabricChange& change,
                           const ArTables* current_ar = nullptr);

} // namespace ib::sm
