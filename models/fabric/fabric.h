// A running fabric built from a topology and its subnet manager's result (docs/models/link-and-switch.md): one
// sw::Switch per switch node with the parameters of its profile, every cable as a link of its width, speed and
// cable profile's propagation delay, and the SM's tables programmed into every switch (LFTs, and SL2VL where the
// routing sets it). HCA ports belong to whatever sits behind them (the HCA model; a packet source and sink in
// tests), which the caller supplies through HcaPorts. The fabric owns the switches and routes their events.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "models/hca/params.h"
#include "models/link/link.h"
#include "models/sm/adaptive.h"
#include "models/sm/subnet.h"
#include "models/switch/switch.h"
#include "models/topology/topology.h"
#include "sim/profile.h"
#include "sim/simulator.h"

namespace ib::fabric {

/// Whatever sits behind the HCA ports.
class HcaPorts {
public:
  virtual ~HcaPorts() = default;
  /// The port of HCA `node`'s port `port`, bound by the callee to its owner, for the fabric to cable. `base_lid`
  /// is the port's first LID; `params` come from the node's HCA profile.
  virtual link::Port& hca_port(topo::NodeIndex node, topo::PortNumber port, sm::Lid base_lid,
                               const hca::Params& params) = 0;
};

/// The IB port configuration of an HCA of `params` (its receive buffer, VLs and flow-control cadence).
link::PortConfig hca_port_config(const hca::Params& params);

class Fabric {
public:
  /// Builds everything. Switch events go to Target{switch_type, switch ordinal}. Profiles are read with the
  /// run's `profiles` overrides; ones that do not read or validate: sim::InputError about the profile file.
  Fabric(sim::Simulator& sim, link::PacketPool& pool, sim::ComponentType switch_type, const topo::Topology& topology,
         const sm::Subnet& subnet, HcaPorts& hcas, const sim::ProfileOverrides& profiles = {});

  std::size_t switch_count() const { return switches_.size(); }
  /// The switch of node `node` (a switch node).
  sw::Switch& switch_of(topo::NodeIndex node) { return switches_[static_cast<std::size_t>(ordinal_[node])]; }
  void on_switch_event(sim::Simulator& sim, const sim::Event& event) { switch_at_[event.index]->on_event(sim, event); }
  void prefetch_switch_event(const sim::Event& event) const { switch_at_[event.index]->prefetch(event); }
  void prefetch_switch_event_near(const sim::Event& event) const { switch_at_[event.index]->prefetch_near(event); }

  /// Faults may happen: switches drop packets for down ports or no route (counted) into `discard` instead of
  /// reporting them as routing errors (models/fabric/faults.h).
  void enable_fault_handling(link::PacketDiscard* discard) {
    for (sw::Switch& s : switches_)
      s.set_fault_handling(discard);
  }
  /// The SM's congestion control setting, the same for every switch (OpenSM sends one SwitchCongestionSetting).
  void set_congestion_control(const link::cc::SwitchSetting& setting) {
    for (sw::Switch& s : switches_)
      s.set_congestion_control(setting);
  }
  /// The SM's adaptive routing tables (sm::tree_groups), switch by switch.
  void set_adaptive_routing(const sm::ArTables& tables);
  /// Every cabled port pair, in topology link order, for counters and faults.
  const std::vector<std::pair<link::Port*, link::Port*>>& links() const { return links_; }
  /// Credit conservation on every link and buffer accounting in every switch; when `quiescent`, also that no
  /// packet is left in the fabric. "" when all hold.
  std::string check_invariants(bool quiescent) const;
  /// A credit deadlock now: a cycle of switch outputs, each with packets waiting on a VL and nothing leaving,
  /// whose next hop's waiting head packet needs the next output of the cycle. "" when there is none, else the
  /// cycle as "leaf0/5 VL0 -> spine0/2 VL0 -> ... -> (back to leaf0/5 VL0)".
  std::string find_credit_deadlock() const;

private:
  std::deque<sw::Switch> switches_;    ///< stable addresses: ports are bound to their switch
  std::vector<sw::Switch*> switch_at_; ///< the same, for dispatch without a deque's two-level lookup
  std::vector<std::int32_t> ordinal_;
  struct PortPeer {
    std::int32_t switch_ordinal = -1; ///< the switch at the other end; -1 for an HCA or nothing
    std::uint8_t port = 0;
  };
  std::vector<std::vector<PortPeer>> peers_; ///< per switch ordinal, per port number
  std::vector<std::string> switch_names_;    ///< per switch ordinal
  std::vector<std::pair<link::Port*, link::Port*>> links_;
};

} // namespace ib::fabric
