#include "models/fabric/faults.h"

#include <algorithm>
#include <cassert>

namespace ib::fabric {

std::string_view to_string(FaultKind kind) {
  switch (kind) {
  case FaultKind::link_down:
    return "link_down";
  case FaultKind::link_up:
    return "link_up";
  case FaultKind::switch_down:
    return "switch_down";
  case FaultKind::switch_up:
    return "switch_up";
  case FaultKind::bit_errors:
    return "bit_errors";
  }
  return "?";
}

namespace {

/// Bit-error streams are keyed apart from components' (sim::Simulator::rng_for): top bit set, then link and side.
constexpr std::uint64_t bit_error_stream(std::uint32_t link, int side) {
  return (std::uint64_t{1} << 63) | (std::uint64_t{link} << 1) | static_cast<std::uint64_t>(side);
}

} // namespace

FaultInjector::FaultInjector(Fabric& fabric, const topo::Topology& topology, const sm::Subnet& subnet,
                             sm::SmOptions options, const sm::Params& sm_params, std::vector<Fault> faults,
                             sim::Target self, link::PacketDiscard& discard, const sm::ArTables* adaptive)
    : fabric_(fabric), topology_(topology), subnet_(subnet), options_(std::move(options)), sm_params_(sm_params),
      faults_(std::move(faults)), self_(self), discard_(discard), sm_view_(subnet.routing),
      link_failed_(topology.link_count(), 0), switch_failed_(topology.node_count(), 0), down_(topology.link_count(), 0),
      trained_(topology.link_count(), 0), activation_(topology.link_count(), 0), adaptive_(adaptive != nullptr) {
  if (adaptive_)
    ar_view_ = *adaptive;
  assert(std::is_sorted(faults_.begin(), faults_.end(), [](const Fault& a, const Fault& b) { return a.at < b.at; }));
  fabric_.enable_fault_handling(&discard_);
}

void FaultInjector::start(sim::Simulator& sim) {
  for (std::size_t i = 0; i < faults_.size(); ++i)
    sim.schedule(faults_[i].at, self_, static_cast<std::uint8_t>(Kind::fault), static_cast<std::uint32_t>(i));
}

void FaultInjector::on_event(sim::Simulator& sim, const sim::Event& event) {
  switch (static_cast<Kind>(event.kind)) {
  case Kind::fault:
    apply(sim, faults_[event.handle]);
    return;
  case Kind::lft_block: {
    const sm::LftUpdate& update = updates_[event.handle];
    fabric_.switch_of(update.switch_node).set_forwarding_entries(update.block * sm::lft_block_entries, update.entries);
    return;
  }
  case Kind::ar_tables: {
    sm::ArUpdate& update = ar_updates_[event.handle];
    fabric_.switch_of(update.switch_node)
        .update_adaptive_routing(std::move(update.group_of_lid), std::move(update.groups));
    return;
  }
  case Kind::link_active: {
    const std::uint32_t link = event.handle;
    // A later change may have taken the link down again, or planned its activation anew.
    if (event.generation != activation_[link] || effectively_down(link) || !down_[link]) {
      sim.mark_stale();
      return;
    }
    down_[link] = 0;
    trained_[link] = 0;
    const auto& [a, b] = fabric_.links()[link];
    link::link_up(sim, *a, *b);
    return;
  }
  }
}

bool FaultInjector::effectively_down(std::uint32_t link) const {
  const topo::Link& cable = topology_.link(link);
  return link_failed_[link] != 0 || switch_failed_[cable.a.node] != 0 || switch_failed_[cable.b.node] != 0;
}

void FaultInjector::take_down(sim::Simulator& sim, std::uint32_t link) {
  if (down_[link]) {
    // Down for data already: either it never came back, or it trained again and waits in Init for the SM.
    if (trained_[link]) {
      const auto& [a, b] = fabric_.links()[link];
      a->count_link_downed();
      b->count_link_downed();
      trained_[link] = 0;
    }
    return;
  }
  down_[link] = 1;
  const auto& [a, b] = fabric_.links()[link];
  link::link_down(sim, *a, *b);
  const topo::Link& cable = topology_.link(link);
  for (const auto& [end, port] : {std::pair{cable.a, a}, std::pair{cable.b, b}})
    if (topology_.node(end.node).kind == topo::NodeKind::switch_node)
      fabric_.switch_of(end.node).on_link_down(sim, end.port);
    else // an HCA drops the packets it has queued for the port when it looks at it
      port->wake_owner(sim);
}

void FaultInjector::apply(sim::Simulator& sim, const Fault& fault) {
  FaultRecord& record = records_.emplace_back();
  record.fault = fault;
  // What the SM could see before: links down or not yet Active are both absent from its last discovery.
  std::vector<std::uint8_t> before(topology_.link_count());
  for (std::size_t l = 0; l < before.size(); ++l)
    before[l] = effectively_down(static_cast<std::uint32_t>(l)) ? 1 : 0;
  switch (fault.kind) {
  case FaultKind::bit_errors: {
    const auto& [a, b] = fabric_.links()[fault.link];
    a->set_bit_error_rate(fault.bit_error_rate, sim::Rng(sim.seed(), bit_error_stream(fault.link, 0)));
    b->set_bit_error_rate(fault.bit_error_rate, sim::Rng(sim.seed(), bit_error_stream(fault.link, 1)));
    return; // the SM sees no state change (OpenSM would only read the error counters)
  }
  case FaultKind::link_down:
    link_failed_[fault.link] = 1;
    take_down(sim, fault.link);
    break;
  case FaultKind::link_up:
    link_failed_[fault.link] = 0; // trained again, in Init until the SM activates it (link_active)
    if (!effectively_down(fault.link))
      trained_[fault.link] = 1;
    break;
  case FaultKind::switch_down: {
    switch_failed_[fault.node] = 1;
    for (std::uint32_t l = 0; l < topology_.link_count(); ++l) {
      const topo::Link& cable = topology_.link(l);
      if (cable.a.node == fault.node || cable.b.node == fault.node)
        take_down(sim, l);
    }
    // A failed switch loses its tables; when it returns, the SM writes every block again.
    fabric_.switch_of(fault.node).set_forwarding_table({});
    sm_view_.lfts[fault.node].clear();
    if (adaptive_) { // and its AR tables: until the SM writes them again it forwards by the LFT alone
      fabric_.switch_of(fault.node).update_adaptive_routing({}, {});
      ar_view_.group_of_lid[fault.node].clear();
      ar_view_.groups[fault.node].clear();
    }
    break;
  }
  case FaultKind::switch_up:
    switch_failed_[fault.node] = 0;
    for (std::uint32_t l = 0; l < topology_.link_count(); ++l) {
      const topo::Link& cable = topology_.link(l);
      if ((cable.a.node == fault.node || cable.b.node == fault.node) && !effectively_down(l))
        trained_[l] = 1;
    }
    break;
  }
  react(sim, record, before);
}

void FaultInjector::react(sim::Simulator& sim, FaultRecord& record, const std::vector<std::uint8_t>& before) {
  sm::FabricChange change;
  change.at = sim.now();
  for (std::uint32_t l = 0; l < topology_.link_count(); ++l) {
    if (before[l])
      change.down_before.push_back(l);
    if (effectively_down(l))
      change.down_after.push_back(l);
  }
  record.reacted = true;
  record.plan = sm::plan_reaction(topology_, subnet_.lids, sm_view_, options_, sm_params_, change,
                                  adaptive_ ? &ar_view_ : nullptr);
  sm::ReactionPlan& plan = record.plan;
  if (plan.detection == sm::Detection::never)
    return;
  // The SM's tables become its view for the next change, as soon as it has decided them.
  sm_view_.lfts = plan.reroute.routing.lfts; // switches it cannot reach keep what they had
  for (sm::LftUpdate& update : plan.lft_updates) {
    sim.schedule(change.at + update.at, self_, static_cast<std::uint8_t>(Kind::lft_block),
                 static_cast<std::uint32_t>(updates_.size()));
    updates_.push_back(std::move(update));
  }
  if (adaptive_) {
    ar_view_ = std::move(plan.adaptive);
    for (sm::ArUpdate& update : plan.ar_updates) {
      sim.schedule(change.at + update.at, self_, static_cast<std::uint8_t>(Kind::ar_tables),
                   static_cast<std::uint32_t>(ar_updates_.size()));
      ar_updates_.push_back(std::move(update));
    }
  }
  // A link that came back carries data once both its ends are Active.
  std::vector<sim::Time> active_at(topology_.link_count(), sim::Time::zero());
  std::vector<std::uint8_t> ends(topology_.link_count(), 0);
  for (const sm::PortActivation& a : plan.activations) {
    if (topology_.peer(a.port.node, a.port.port).node == topo::no_node)
      continue;
    const std::uint32_t l = topology_.link_at(a.port.node, a.port.port);
    active_at[l] = std::max(active_at[l], a.at);
    ++ends[l];
  }
  for (std::uint32_t l = 0; l < topology_.link_count(); ++l) {
    if (ends[l] < 2 || effectively_down(l) || !down_[l])
      continue;
    ++activation_[l];
    sim.schedule(change.at + active_at[l], self_, static_cast<std::uint8_t>(Kind::link_active), l, activation_[l]);
  }
  plan.lft_updates.clear();
  plan.lft_updates.shrink_to_fit();
  plan.ar_updates.clear();
  plan.ar_updates.shrink_to_fit();
  plan.adaptive = {};
  plan.activations.clear();
  plan.reroute.routing = {};
  plan.reroute.discovered = {};
}

} // namespace ib::fabric
