#include "models/sm/reaction.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <queue>

namespace ib::sm {

using sim::Time;
using topo::NodeIndex;
using topo::NodeKind;
using topo::PortNumber;
using topo::PortRef;

namespace {

constexpr std::uint8_t not_found = 255;

/// What an SMP asks, for the discovery that reacts to its answer.
enum class Attribute : std::uint8_t { node_info, switch_info, port_info, lft_block, ar_tables, port_state };

struct Smp {
  Attribute attribute;
  NodeIndex node;        ///< node_info: the node it goes out of; otherwise its target
  PortNumber port;       ///< node_info: the port it goes out by; port_info, port_state: the target port
  std::uint8_t hops;     ///< links between the SM and the target
  bool lost = false;     ///< its directed route crosses a dead link: never answered
  std::uint32_t tag = 0; ///< caller's index (the LFT or AR update it carries)
};

/// The SM's VL15 send queue (osm_vl15intf.c): SMPs go out in the order they are posted, at most max_wire_smps
/// outstanding; an answered one frees its slot when OpenSM has processed the response, and an unanswered one
/// after transaction_timeout, once per send (transaction_retries resends).
class Wire {
public:
  explicit Wire(const Params& params) : params_(params) {}

  void post(const Smp& smp) { pending_.push_back(smp); }

  /// Sends from `start` until every SMP posted, before or by `on_done`, is answered or given up; returns when the
  /// last one was. on_done(smp, sent_at) runs when OpenSM has processed its response (not for a lost SMP).
  Time run(Time start, const std::function<void(const Smp&, Time)>& on_done) {
    Time now = start;
    std::size_t head = 0;
    struct InFlight {
      Time done;
      std::uint64_t order;
      Time sent;
      Smp smp;
      bool operator>(const InFlight& o) const { return done != o.done ? done > o.done : order > o.order; }
    };
    std::priority_queue<InFlight, std::vector<InFlight>, std::greater<>> in_flight;
    while (true) {
      while (in_flight.size() < params_.max_wire_smps && head < pending_.size()) {
        const Smp smp = pending_[head++];
        const std::uint64_t sends = smp.lost ? params_.transaction_retries + 1u : 1u;
        sent_ += sends;
        lost_ += smp.lost;
        const Time done = smp.lost ? now + params_.transaction_timeout * static_cast<std::int64_t>(sends)
                                   : now + smp_round_trip(params_, smp.hops);
        in_flight.push({done, order_++, now, smp});
      }
      if (in_flight.empty())
        break;
      const InFlight next = in_flight.top();
      in_flight.pop();
      now = next.done;
      if (!next.smp.lost)
        on_done(next.smp, next.sent);
    }
    pending_.clear();
    return now;
  }

  std::uint64_t sent() const { return sent_; }
  std::uint64_t lost() const { return lost_; }

private:
  const Params& params_;
  std::vector<Smp> pending_;
  std::uint64_t order_ = 0;
  std::uint64_t sent_ = 0;
  std::uint64_t lost_ = 0;
};

/// What a heavy sweep's discovery found: each node's directed route (its hop count and the port of the node
/// before it that it was first reached through), and when the last SMP was answered.
struct Sweep {
  std::vector<std::uint8_t> hops;
  std::vector<PortRef> reached_from; ///< the (node, port) whose link first led to it; none for the SM's HCA
  Time end;
};

/// OpenSM's discovery (osm_state_mgr.c do_sweep with the NodeInfo, SwitchInfo and PortInfo receivers) on `fabric`
/// from `sm`, every node already known: hop 0 (the SM's own NodeInfo and PortInfo), then hop 1 and the cascade it
/// starts. A switch found for the first time in this sweep gets SwitchInfo, then PortInfo of port 0, then of all
/// its ports; each port with a link, except the one it was reached by, gets a NodeInfo through it. An HCA answers
/// a NodeInfo with a PortInfo of the port reached. Nodes known from earlier sweeps need no NodeDescription.
Sweep discover_by_smps(const topo::Topology& fabric, PortRef sm, Wire& wire, Time start) {
  Sweep sweep;
  sweep.hops.assign(fabric.node_count(), not_found);
  sweep.reached_from.assign(fabric.node_count(), PortRef{});
  std::vector<PortNumber> entry_port(fabric.node_count(), 0);
  sweep.hops[sm.node] = 0;
  const auto on_done = [&](const Smp& smp, Time) {
    switch (smp.attribute) {
    case Attribute::node_info: {
      if (smp.hops == 0) { // the SM's own node; a switch's is then discovered as any switch, from its port 0
        if (fabric.node(sm.node).kind == NodeKind::switch_node)
          wire.post({Attribute::switch_info, sm.node, 0, 0});
        else
          wire.post({Attribute::port_info, sm.node, sm.port, 0});
        return;
      }
      const PortRef target = fabric.peer(smp.node, smp.port);
      if (target.node == topo::no_node)
        return;
      const bool first = sweep.hops[target.node] == not_found;
      if (first) {
        sweep.hops[target.node] = smp.hops;
        sweep.reached_from[target.node] = {smp.node, smp.port};
        entry_port[target.node] = target.port;
      }
      if (fabric.node(target.node).kind == NodeKind::hca)
        wire.post({Attribute::port_info, target.node, target.port, smp.hops});
      else if (first)
        wire.post({Attribute::switch_info, target.node, 0, smp.hops});
      return;
    }
    case Attribute::switch_info:
      wire.post({Attribute::port_info, smp.node, 0, smp.hops});
      return;
    case Attribute::port_info:
      if (fabric.node(smp.node).kind != NodeKind::switch_node)
        return;
      if (smp.port == 0) {
        for (unsigned p = 1; p <= fabric.node(smp.node).port_count; ++p)
          wire.post({Attribute::port_info, smp.node, static_cast<PortNumber>(p), smp.hops});
      } else if (smp.port != entry_port[smp.node] && fabric.peer(smp.node, smp.port).node != topo::no_node &&
                 smp.hops + 1 < not_found) {
        wire.post({Attribute::node_info, smp.node, smp.port, static_cast<std::uint8_t>(smp.hops + 1)});
      }
      return;
    case Attribute::lft_block:
    case Attribute::ar_tables:
    case Attribute::port_state:
      return;
    }
  };
  wire.post({Attribute::node_info, sm.node, 0, 0});
  Time now = wire.run(start, on_done);
  if (fabric.peer(sm.node, sm.port).node != topo::no_node) {
    wire.post({Attribute::node_info, sm.node, sm.port, 1});
    now = wire.run(now, on_done);
  }
  sweep.end = now;
  return sweep;
}

/// Switches in OpenSM's switch-table order (cl_qmap keyed by GUID in network order).
std::vector<NodeIndex> switches_in_guid_order(const topo::Topology& t) {
  std::vector<NodeIndex> out;
  for (NodeIndex n = 0; n < t.node_count(); ++n)
    if (t.node(n).kind == NodeKind::switch_node)
      out.push_back(n);
  std::sort(out.begin(), out.end(), [&](NodeIndex a, NodeIndex b) {
    return opensm_guid_order(t.node(a).node_guid) < opensm_guid_order(t.node(b).node_guid);
  });
  return out;
}

std::vector<std::uint8_t> link_mask(std::size_t links, const std::vector<std::uint32_t>& indices) {
  std::vector<std::uint8_t> mask(links, 0);
  for (const std::uint32_t l : indices)
    mask[l] = 1;
  return mask;
}

/// When the switch `from`'s Trap 128 reaches the SM: LID-routed by the tables the switches hold, over the links
/// still up. nullopt when it meets a dead link, a missing entry or a loop.
std::optional<Time> trap_arrival(const topo::Topology& up, const Routing& current, Lid sm_lid, PortRef sm,
                                 NodeIndex from, const Params& params) {
  NodeIndex at = from;
  for (unsigned hops = 1; hops <= up.node_count(); ++hops) {
    if (at == sm.node) // an SM on a switch: the trap reached the switch it runs in
      return params.trap_generation + params.smp_hop_latency * (hops - 1) + params.smp_receive_overhead;
    if (at >= current.lfts.size() || sm_lid >= current.lfts[at].size())
      return std::nullopt;
    const std::uint8_t port = current.lfts[at][sm_lid];
    if (port == 0 || port == no_path || port > up.node(at).port_count)
      return std::nullopt;
    const PortRef next = up.peer(at, port);
    if (next.node == topo::no_node)
      return std::nullopt;
    if (next == sm)
      return params.trap_generation + params.smp_hop_latency * hops + params.smp_receive_overhead;
    if (up.node(next.node).kind != NodeKind::switch_node)
      return std::nullopt;
    at = next.node;
  }
  return std::nullopt;
}

} // namespace

ReactionPlan plan_reaction(const topo::Topology& topology, const LidMap& lids, const Routing& current,
                           const SmOptions& options, const Params& params, const FabricChange& change,
                           const ArTables* current_ar) {
  ReactionPlan plan;
  plan.reroute = reroute(topology, lids, current, options, change.down_after);
  if (current_ar != nullptr)
    plan.adaptive = *current_ar;
  const PortRef sm = sm_port_of(topology, options);
  if (plan.reroute.discovered.sm_port_down)
    return plan; // OpenSM configures nothing until its own port is back

  const std::vector<std::uint8_t> was_down = link_mask(topology.link_count(), change.down_before);
  const std::vector<std::uint8_t> is_down = link_mask(topology.link_count(), change.down_after);
  std::vector<std::uint32_t> went_down, came_up;
  for (std::uint32_t l = 0; l < topology.link_count(); ++l) {
    if (is_down[l] && !was_down[l])
      went_down.push_back(l);
    if (was_down[l] && !is_down[l])
      came_up.push_back(l);
  }
  // Switches that saw one of their ports change state: they raise PortStateChange and send Trap 128.
  std::vector<std::uint8_t> state_changed(topology.node_count(), 0);
  for (const auto* list : {&went_down, &came_up})
    for (const std::uint32_t l : *list)
      for (const PortRef& end : {topology.link(l).a, topology.link(l).b})
        if (topology.node(end.node).kind == NodeKind::switch_node)
          state_changed[end.node] = 1;

  Wire wire(params);
  // Detection: the first trap to arrive, else the next light sweep.
  const topo::Topology up = topo::without_links(topology, change.down_after);
  std::vector<Time> traps; // when each trap that arrives is processed, earliest first
  if (params.sweep_on_trap) {
    const Lid sm_lid = lids.base_lid(sm.node, sm.port);
    for (NodeIndex n = 0; n < topology.node_count(); ++n) {
      if (!state_changed[n])
        continue;
      if (const std::optional<Time> at = trap_arrival(up, current, sm_lid, sm, n, params))
        traps.push_back(*at);
    }
    std::sort(traps.begin(), traps.end());
  }
  Time sweep_start;
  if (!traps.empty()) {
    plan.detection = Detection::trap;
    plan.detected_at = traps.front();
    sweep_start = traps.front();
  } else {
    if (params.sweep_interval <= Time::zero())
      return plan;
    const std::int64_t interval = params.sweep_interval.ps();
    const Time next_sweep = Time::from_ps((change.at.ps() / interval + 1) * interval) - change.at;
    // The light sweep reads SwitchInfo of every switch the previous sweep found, by the directed route it found it
    // by (osm_state_mgr.c state_mgr_light_sweep_start); a route over a link now down is never answered.
    const Discovered before = discover(topology, sm, change.down_before);
    Wire quiet(params);
    const Sweep previous = discover_by_smps(before.fabric, sm, quiet, Time::zero());
    bool seen = false;
    for (const NodeIndex s : switches_in_guid_order(topology)) {
      if (!before.reached[s])
        continue;
      bool dead = false;
      for (NodeIndex n = s; n != sm.node && !dead;) {
        const PortRef from = previous.reached_from[n];
        dead = is_down[topology.link_at(from.node, from.port)];
        n = from.node;
      }
      seen = seen || dead || state_changed[s];
      wire.post({Attribute::switch_info, s, 0, previous.hops[s], dead});
    }
    if (!seen)
      return plan;
    plan.detection = Detection::light_sweep;
    plan.detected_at = next_sweep;
    sweep_start = wire.run(next_sweep, [](const Smp&, Time) {});
  }
  plan.sweep_started_at = sweep_start;

  // Heavy sweep: discovery of the fabric as it is now. A trap processed while it runs asks for another sweep, so
  // OpenSM discovers again before going on (do_sweep: repeat_discovery); traps before the sweep are absorbed by it.
  const topo::Topology& fabric = plan.reroute.discovered.fabric;
  Sweep sweep = discover_by_smps(fabric, sm, wire, sweep_start);
  plan.discovery_passes = 1;
  for (Time flags_cleared = sweep_start;;) {
    const bool trapped =
        std::any_of(traps.begin(), traps.end(), [&](Time t) { return t > flags_cleared && t <= sweep.end; });
    if (!trapped)
      break;
    flags_cleared = sweep.end;
    sweep = discover_by_smps(fabric, sm, wire, sweep.end);
    ++plan.discovery_passes;
  }
  plan.discovery_done_at = sweep.end;
  const std::vector<NodeIndex> switches = switches_in_guid_order(topology);
  const auto reached = [&](NodeIndex n) { return sweep.hops[n] != not_found; };

  // Clear the PortStateChange bits (osm_reset_switch_state_change_bit), then wait.
  for (const NodeIndex s : switches)
    if (state_changed[s] && reached(s))
      wire.post({Attribute::switch_info, s, 0, sweep.hops[s]});
  const Time bits_cleared = wire.run(sweep.end, [](const Smp&, Time) {});

  // Routing: a modelled CPU time, proportional to the (switch, LID) pairs the engine fills.
  std::int64_t switches_routed = 0;
  for (const NodeIndex s : switches)
    switches_routed += reached(s);
  plan.routing_done_at = bits_cleared + params.routing_per_switch_lid * (switches_routed * lids.max_lid());

  // LFT distribution: block by block across the switches (ucast_mgr_pipeline_fwd_tbl), only blocks that differ
  // from what the switch holds.
  const Routing& next = plan.reroute.routing;
  std::size_t table_size = 0;
  for (const NodeIndex s : switches)
    table_size = std::max(table_size, next.lfts[s].size());
  const std::size_t blocks = (table_size + lft_block_entries - 1) / lft_block_entries;
  std::vector<LftUpdate> updates;
  std::vector<std::uint8_t> updated(topology.node_count(), 0);
  for (std::size_t b = 0; b < blocks; ++b) {
    for (const NodeIndex s : switches) {
      if (!reached(s))
        continue;
      const std::vector<std::uint8_t>& lft = next.lfts[s];
      const std::size_t first = b * lft_block_entries;
      if (first >= lft.size())
        continue;
      const std::size_t last = std::min(lft.size(), first + lft_block_entries);
      // A table shorter than the block (lost, e.g. by a reboot) differs from it.
      const bool same =
          s < current.lfts.size() && current.lfts[s].size() >= last &&
          std::equal(lft.begin() + static_cast<std::ptrdiff_t>(first), lft.begin() + static_cast<std::ptrdiff_t>(last),
                     current.lfts[s].begin() + static_cast<std::ptrdiff_t>(first));
      if (same)
        continue;
      updated[s] = 1;
      wire.post({Attribute::lft_block, s, 0, sweep.hops[s], false, static_cast<std::uint32_t>(updates.size())});
      updates.push_back({s, Time::zero(), static_cast<std::uint32_t>(b),
                         std::vector<std::uint8_t>(lft.begin() + static_cast<std::ptrdiff_t>(first),
                                                   lft.begin() + static_cast<std::ptrdiff_t>(last))});
    }
  }
  // Adaptive routing: the TREE groups again, on the fabric as discovered and its new routes; a switch whose AR
  // tables differ from what it holds gets them whole. One with new LFT blocks takes them as its last block lands
  // (the vendor MADs that carry them are not timed apart); one without, by one more SMP behind the blocks.
  std::vector<ArUpdate> ar_updates;
  if (current_ar != nullptr) {
    ArTables next_ar = tree_groups(fabric, lids, next);
    for (const NodeIndex s : switches) {
      const bool known = s < current_ar->groups.size();
      if (!reached(s)) { // the SM cannot write it: it keeps its tables
        next_ar.group_of_lid[s] = known ? current_ar->group_of_lid[s] : std::vector<std::uint16_t>{};
        next_ar.groups[s] = known ? current_ar->groups[s] : std::vector<std::vector<std::uint8_t>>{};
        continue;
      }
      if (known && next_ar.group_of_lid[s] == current_ar->group_of_lid[s] && next_ar.groups[s] == current_ar->groups[s])
        continue;
      if (!updated[s])
        wire.post({Attribute::ar_tables, s, 0, sweep.hops[s], false, static_cast<std::uint32_t>(ar_updates.size())});
      ar_updates.push_back({s, Time::zero(), next_ar.group_of_lid[s], next_ar.groups[s]});
    }
    plan.adaptive = std::move(next_ar);
  }
  const Time lfts_done = wire.run(plan.routing_done_at, [&](const Smp& smp, Time sent) {
    (smp.attribute == Attribute::ar_tables ? ar_updates[smp.tag].at : updates[smp.tag].at) =
        sent + smp_arrival(params, smp.hops);
  });
  plan.last_lft_at = plan.routing_done_at;
  std::vector<Time> last_block_at(ar_updates.empty() ? 0 : topology.node_count(), Time::zero());
  for (const LftUpdate& u : updates) {
    plan.last_lft_at = std::max(plan.last_lft_at, u.at);
    if (!last_block_at.empty())
      last_block_at[u.switch_node] = std::max(last_block_at[u.switch_node], u.at);
  }
  for (ArUpdate& a : ar_updates) {
    if (updated[a.switch_node])
      a.at = last_block_at[a.switch_node];
    plan.last_lft_at = std::max(plan.last_lft_at, a.at);
  }
  std::stable_sort(ar_updates.begin(), ar_updates.end(),
                   [](const ArUpdate& a, const ArUpdate& b) { return a.at < b.at; });
  plan.ar_tables_changed = static_cast<std::uint32_t>(ar_updates.size());
  plan.ar_updates = std::move(ar_updates);
  std::stable_sort(updates.begin(), updates.end(), [](const LftUpdate& a, const LftUpdate& b) { return a.at < b.at; });
  plan.blocks_changed = updates.size();
  plan.lft_updates = std::move(updates);
  for (const NodeIndex s : switches)
    plan.switches_updated += updated[s];

  // Links that came up: both ports through the link manager's three passes (osm_link_mgr.c): their settings,
  // then Armed, then Active, each pass waited for. Ports in node-GUID order, as OpenSM walks its node table.
  std::vector<PortRef> new_ports;
  for (const std::uint32_t l : came_up)
    for (const PortRef& end : {topology.link(l).a, topology.link(l).b})
      if (reached(end.node) && fabric.peer(end.node, end.port).node != topo::no_node)
        new_ports.push_back(end);
  std::sort(new_ports.begin(), new_ports.end(), [&](const PortRef& a, const PortRef& b) {
    const std::uint64_t ga = opensm_guid_order(topology.node(a.node).node_guid);
    const std::uint64_t gb = opensm_guid_order(topology.node(b.node).node_guid);
    return ga != gb ? ga < gb : a.port < b.port;
  });
  Time now = lfts_done;
  for (int pass = 0; pass < 3; ++pass) {
    for (const PortRef& port : new_ports)
      wire.post({Attribute::port_state, port.node, port.port, sweep.hops[port.node]});
    now = wire.run(now, [&](const Smp& smp, Time sent) {
      if (pass == 2)
        plan.activations.push_back({{smp.node, smp.port}, sent + smp_arrival(params, smp.hops)});
    });
  }
  std::stable_sort(plan.activations.begin(), plan.activations.end(),
                   [](const PortActivation& a, const PortActivation& b) { return a.at < b.at; });
  plan.done_at = now;
  plan.smps_sent = wire.sent();
  plan.smps_lost = wire.lost();
  return plan;
}

} // namespace ib::sm
