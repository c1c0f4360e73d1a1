// Faults injected into a running fabric (docs/scenario-reference.md, "faults"; docs/models/link-and-switch.md,
// "Faults"): at given instants a link goes down or comes back, a switch fails or returns, or a link gets a bit error
// rate. The injector carries them out on the fabric's ports and switches and lets the subnet manager react as
// models/sm/reaction.h plans it: a trap or a periodic sweep, rediscovery, new routes from the same engine, the LFT
// blocks that changed written one by one as their SMPs land, and the ports of a link that came back made Active,
// the only moment a returning link carries data again; with adaptive routing, the AR tables of the switches whose
// groups changed, as the SM writes them. Reactions to faults that overlap are each planned from
// the SM's view at their own fault and applied in time order.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "models/fabric/fabric.h"
#include "models/sm/reaction.h"
#include "models/sm/sm_params.h"
#include "models/topology/topology.h"
#include "sim/simulator.h"

namespace ib::fabric {

enum class FaultKind : std::uint8_t { link_down, link_up, switch_down, switch_up, bit_errors };
/// The name a scenario's "faults" use: "link_down", "link_up", "switch_down", "switch_up", "bit_errors".
std::string_view to_string(FaultKind kind);

/// One fault at one instant, resolved against the topology (a flap is a series of downs and ups).
struct Fault {
  FaultKind kind = FaultKind::link_down;
  sim::Time at;
  std::uint32_t link = 0;               ///< link_down, link_up, bit_errors: index in topology.links()
  topo::NodeIndex node = topo::no_node; ///< switch_down, switch_up
  double bit_error_rate = 0;            ///< bit_errors: per bit, each direction of the link
};

/// What one fault led to.
struct FaultRecord {
  Fault fault;
  /// The SM's reaction (times after the fault; sim::Time::max() where there was none). Its lft_updates,
  /// ar_updates, adaptive tables and activations are cleared once scheduled; the counts stay.
  sm::ReactionPlan plan;
  bool reacted = false; ///< a fabric change the SM is told of (bit errors change no state it sees)
};

class FaultInjector {
public:
  /// Faults on `fabric`, built from `topology` and routed as `subnet` (by `options`); the SM times its reactions
  /// by `sm_params`. Events go to `self`; dropped packets to `discard`. `adaptive`: the AR tables the switches
  /// were given at the start (nullptr: no adaptive routing). Preconditions: every fault names a link or switch of
  /// `topology`, and faults are in time order.
  FaultInjector(Fabric& fabric, const topo::Topology& topology, const sm::Subnet& subnet, sm::SmOptions options,
                const sm::Params& sm_params, std::vector<Fault> faults, sim::Target self, link::PacketDiscard& discard,
                const sm::ArTables* adaptive = nullptr);

  /// Schedules the faults.
  void start(sim::Simulator& sim);
  void on_event(sim::Simulator& sim, const sim::Event& event);

  /// Every fault carried out so far, in order.
  const std::vector<FaultRecord>& records() const { return records_; }
  /// Whether link `link` is down now (failed itself, or a switch at either end has).
  bool link_down(std::uint32_t link) const { return down_[link] != 0; }

private:
  enum class Kind : std::uint8_t { fault, lft_block, link_active, ar_tables };
  void apply(sim::Simulator& sim, const Fault& fault);
  void take_down(sim::Simulator& sim, std::uint32_t link);
  /// The SM learns of the fabric's change from `before` to the current down links, and its plan is scheduled.
  void react(sim::Simulator& sim, FaultRecord& record, const std::vector<std::uint8_t>& before);
  bool effectively_down(std::uint32_t link) const;

  Fabric& fabric_;
  const topo::Topology& topology_;
  const sm::Subnet& subnet_;
  sm::SmOptions options_;
  sm::Params sm_params_;
  std::vector<Fault> faults_;
  sim::Target self_;
  link::PacketDiscard& discard_;

  sm::Routing sm_view_;                     ///< the tables the SM believes the switches have (after its plans)
  std::vector<std::uint8_t> link_failed_;   ///< per link: a link fault holds it down
  std::vector<std::uint8_t> switch_failed_; ///< per node
  std::vector<std::uint8_t> down_;          ///< per link: down for data now (failed, or not yet made Active)
  std::vector<std::uint8_t> trained_;       ///< per link: physically up again, in Init until the SM activates it
  std::vector<std::uint32_t> activation_;   ///< per link: which reaction last planned to activate it
  std::vector<sm::LftUpdate> updates_;      ///< scheduled LFT blocks, by event handle
  bool adaptive_ = false;                   ///< adaptive routing is on
  sm::ArTables ar_view_;                    ///< the AR tables the SM believes the switches have
  std::vector<sm::ArUpdate> ar_updates_;    ///< scheduled AR tables, by event handle
  std::vector<FaultRecord> records_;
};

} // namespace ib::fabric
