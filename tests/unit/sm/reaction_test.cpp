// The SM's reaction to a fault in time (models/sm/reaction.h), against hand computations from the opensm profile:
// the trap, the heavy sweep's SMP cascade hop by hop, the routing time, the LFT blocks that changed and when each
// lands; the light sweep with its timeouts when traps are off; a link coming back up.
#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "models/sm/reaction.h"
#include "sim/profile.h"
#include "tests/support/sm_fabrics.h"

using namespace ib;
using sim::Time;

namespace {

// Out of line: a table's std::visit inlined into a test body makes GCC 12 warn about alternatives that never run.
[[gnu::noinline]] sm::Params opensm_params() {
  return sim::read_checked_profile(sm::param_table(), sim::load_profile(sim::profile_path("opensm")), {},
                                   &sm::validate);
}

/// Leaf-spine with 2 leaves, 2 spines and a host on each leaf: leaf0 (0), leaf1 (1), spine0 (2), spine1 (3), h0 (4),
/// h1 (5); leaf l port 2 + s to spine s port 1 + l; LIDs 1..6 in that order. The SM runs on h0.
struct Small {
  topo::Topology t = ib::testing::two_level_tree(2, 2, 1);
  sm::SmOptions options = [] {
    sm::SmOptions o;
    o.lids.sm_port = {4, 1};
    return o;
  }();
  sm::Subnet before = sm::run_subnet_manager(t, options);
  std::uint32_t leaf0_spine0 = t.link_at(0, 2);
};

} // namespace

TEST_CASE("sm plan_reaction: a failed spine-leaf link, trap to last LFT block, as computed by hand", "[sm][quick]") {
  const Small s;
  const sm::Params p = opensm_params();
  const sm::FabricChange change{Time::from_ms(12'345), {}, {s.leaf0_spine0}};
  const sm::ReactionPlan plan = sm::plan_reaction(s.t, s.before.lids, s.before.routing, s.options, p, change);
  const auto rtt = [&](unsigned hops) { return sm::smp_round_trip(p, hops); };

  // leaf0's trap reaches h0 in one hop; spine0's would cross the dead link.
  CHECK(plan.detection == sm::Detection::trap);
  const Time detected = p.trap_generation + p.smp_hop_latency + p.smp_receive_overhead;
  CHECK(plan.detected_at == detected);
  CHECK(plan.sweep_started_at == detected);
  // Hop 0: NodeInfo and PortInfo of h0. Then per switch, reached in this order at 1..4 hops (leaf0, spine1 through
  // leaf0's port 3, leaf1, spine0 through leaf1): NodeInfo, SwitchInfo, PortInfo of port 0, then all its ports at
  // once (max_wire_smps 4 holds the 3 of a leaf). h1 (NodeInfo and PortInfo at 4 hops) ends before spine0.
  const Time discovered = detected + rtt(0) * 2 + (rtt(1) + rtt(2) + rtt(3) + rtt(4)) * 4;
  CHECK(plan.discovery_done_at == discovered);
  CHECK(plan.discovery_passes == 1);
  // PortStateChange cleared on leaf0 (1 hop) and spine0 (4 hops) in parallel; then 4 switches x 6 LIDs routed.
  const Time routed = discovered + rtt(4) + p.routing_per_switch_lid * 24;
  CHECK(plan.routing_done_at == routed);

  CHECK(plan.reroute.engine == "minhop");
  CHECK_FALSE(plan.reroute.fell_back);
  CHECK(plan.reroute.check.unrouted_pairs == 0);
  // One block per switch (LIDs 0..6); sent only where the table changed, all at once, landing after the SMP's trip.
  const std::uint8_t hops_of[4] = {1, 3, 4, 2}; // leaf0, leaf1, spine0, spine1
  std::set<topo::NodeIndex> changed;
  for (topo::NodeIndex n = 0; n < 4; ++n)
    if (plan.reroute.routing.lfts[n] != s.before.routing.lfts[n])
      changed.insert(n);
  CHECK(changed.count(0) == 1); // leaf0 no longer uses port 2
  CHECK(changed.count(2) == 1); // nor spine0 port 1
  REQUIRE(plan.lft_updates.size() == changed.size());
  CHECK(plan.blocks_changed == changed.size());
  CHECK(plan.switches_updated == changed.size());
  Time last = Time::zero();
  std::uint8_t farthest = 0;
  for (const sm::LftUpdate& u : plan.lft_updates) {
    INFO(s.t.node(u.switch_node).name);
    CHECK(changed.count(u.switch_node) == 1);
    CHECK(u.block == 0);
    CHECK(u.entries == plan.reroute.routing.lfts[u.switch_node]);
    CHECK(u.at == routed + sm::smp_arrival(p, hops_of[u.switch_node]));
    CHECK(u.at >= last); // in the order they land
    last = u.at;
    farthest = std::max(farthest, hops_of[u.switch_node]);
  }
  CHECK(plan.last_lft_at == routed + sm::smp_arrival(p, 4));
  CHECK(plan.done_at == routed + rtt(farthest));
  CHECK(plan.activations.empty());
  // 2 at hop 0, 6 + 5 + 6 + 5 for the switches, 2 for h1, 2 bits cleared, the blocks.
  CHECK(plan.smps_sent == 28 + changed.size());
  CHECK(plan.smps_lost == 0);
}

TEST_CASE("sm plan_reaction: without traps the next light sweep finds the fault, waiting out the lost SMPs",
          "[sm][quick]") {
  const Small s;
  sm::Params p = opensm_params();
  p.sweep_on_trap = false;
  const sm::FabricChange change{Time::from_ms(12'500), {}, {s.leaf0_spine0}};
  const sm::ReactionPlan plan = sm::plan_reaction(s.t, s.before.lids, s.before.routing, s.options, p, change);
  CHECK(plan.detection == sm::Detection::light_sweep);
  // Sweeps every 10 s from the start of the run: the one at 20 s, 7.5 s after the fault.
  CHECK(plan.detected_at == Time::from_ms(7'500));
  // SwitchInfo to the 4 switches by their earlier routes: spine0 (through leaf0 port 2) and leaf1 (through spine0)
  // cross the dead link and are given up after 1 + 3 retries of 200 ms; the heavy sweep waits for them.
  CHECK(plan.sweep_started_at == Time::from_ms(7'500) + p.transaction_timeout * 4);
  CHECK(plan.smps_lost == 2);
  CHECK(plan.reroute.check.unrouted_pairs == 0);
  CHECK(plan.routing_done_at > plan.discovery_done_at);

  // Neither traps nor periodic sweeps: the SM never notices.
  p.sweep_interval = Time::zero();
  const sm::ReactionPlan never = sm::plan_reaction(s.t, s.before.lids, s.before.routing, s.options, p, change);
  CHECK(never.detection == sm::Detection::never);
  CHECK(never.detected_at == Time::max());
  CHECK(never.lft_updates.empty());
  CHECK(never.smps_sent == 0);
}

TEST_CASE("sm plan_reaction: the link back up restores minhop's tables and its ports go Active after the LFTs",
          "[sm][quick]") {
  const Small s;
  const sm::Params p = opensm_params();
  const sm::ReactionPlan down = sm::plan_reaction(s.t, s.before.lids, s.before.routing, s.options, p,
                                                  {Time::from_ms(1'000), {}, {s.leaf0_spine0}});
  const sm::ReactionPlan up = sm::plan_reaction(s.t, s.before.lids, down.reroute.routing, s.options, p,
                                                {Time::from_ms(2'000), {s.leaf0_spine0}, {}});
  CHECK(up.detection == sm::Detection::trap);
  CHECK(up.reroute.routing.lfts == s.before.routing.lfts);
  // Exactly the blocks the failure changed are written back.
  CHECK(up.blocks_changed == down.blocks_changed);
  // Both ports, after the LFTs, through three passes of SubnSet(PortInfo) (settings, Armed, Active), each as long
  // as the round trip to spine0 (2 hops; leaf0 is at 1).
  REQUIRE(up.activations.size() == 2);
  CHECK(up.activations[0].port == topo::PortRef{0, 2});
  CHECK(up.activations[1].port == topo::PortRef{2, 1});
  const Time last_pass = up.done_at - sm::smp_round_trip(p, 2);
  CHECK(up.activations[0].at == last_pass + sm::smp_arrival(p, 1));
  CHECK(up.activations[1].at == last_pass + sm::smp_arrival(p, 2));
  CHECK(up.activations[0].at > up.last_lft_at);
}

TEST_CASE("sm plan_reaction: only the LFT blocks that changed are sent, with their new entries", "[sm][quick]") {
  const topo::Topology t = ib::testing::two_level_tree(8, 4, 12); // 108 LIDs: 2 blocks per switch
  sm::SmOptions options;
  const sm::Subnet before = sm::run_subnet_manager(t, options);
  const sm::Params p = opensm_params();
  const std::vector<std::uint32_t> down{t.link_at(*t.find("leaf5"), 14)}; // leaf5 - spine1
  const sm::ReactionPlan plan = sm::plan_reaction(t, before.lids, before.routing, options, p, {Time::zero(), {}, down});
  std::set<std::pair<topo::NodeIndex, std::uint32_t>> expected, sent;
  for (topo::NodeIndex n = 0; n < 12; ++n) {
    const auto& now = plan.reroute.routing.lfts[n];
    const auto& was = before.routing.lfts[n];
    REQUIRE(now.size() == 109);
    for (std::uint32_t b = 0; b < 2; ++b) {
      const std::size_t first = b * 64, last = std::min<std::size_t>(109, first + 64);
      if (!std::equal(now.begin() + first, now.begin() + last, was.begin() + first))
        expected.insert({n, b});
    }
  }
  for (const sm::LftUpdate& u : plan.lft_updates) {
    sent.insert({u.switch_node, u.block});
    const auto& now = plan.reroute.routing.lfts[u.switch_node];
    CHECK(u.entries == std::vector<std::uint8_t>(now.begin() + u.block * 64,
                                                 now.begin() + std::min<std::size_t>(109, u.block * 64 + 64)));
    CHECK(u.at > plan.routing_done_at);
    CHECK(u.at <= plan.last_lft_at);
  }
  CHECK(sent == expected);
  CHECK(sent.size() == plan.lft_updates.size()); // each block once
  CHECK(sent.size() < 24);                       // some blocks stay as they were
  CHECK(std::is_sorted(plan.lft_updates.begin(), plan.lft_updates.end(),
                       [](const sm::LftUpdate& a, const sm::LftUpdate& b) { return a.at < b.at; }));
}

TEST_CASE("sm plan_reaction: a failed switch gets no block, and a trap during discovery repeats it", "[sm][quick]") {
  const Small s;
  const sm::Params p = opensm_params();
  const std::vector<std::uint32_t> down = topo::links_of(s.t, 2); // spine0
  const sm::ReactionPlan plan =
      sm::plan_reaction(s.t, s.before.lids, s.before.routing, s.options, p, {Time::from_ms(5), {}, down});
  CHECK(plan.detection == sm::Detection::trap);
  CHECK(plan.detected_at == p.trap_generation + p.smp_hop_latency + p.smp_receive_overhead); // leaf0's
  // leaf1's trap arrives too if leaf1 routes h0's LID over spine1 (port 3): 3 hops, during the first discovery,
  // which OpenSM then runs again.
  const bool leaf1_trap_arrives = s.before.routing.lfts[1][5] == 3;
  CHECK(plan.discovery_passes == (leaf1_trap_arrives ? 2u : 1u));
  CHECK_FALSE(plan.reroute.discovered.reached[2]);
  for (const sm::LftUpdate& u : plan.lft_updates)
    CHECK(u.switch_node != 2);
  CHECK(plan.reroute.routing.lfts[2] == s.before.routing.lfts[2]);
  CHECK(plan.reroute.routing.lfts[0][3] == sm::no_path); // spine0's LID, from leaf0
  CHECK(plan.reroute.check.unrouted_pairs == 2);         // spine0's LID from the two leaves
}

TEST_CASE("sm plan_reaction: an SM on a switch hears its own switch's trap at once and sweeps from port 0",
          "[sm][quick]") {
  Small s;
  s.options.lids.sm_port = {0, 0}; // leaf0's management port
  s.before = sm::run_subnet_manager(s.t, s.options);
  const sm::Params p = opensm_params();
  const sm::FabricChange change{Time::from_ms(1), {}, {s.leaf0_spine0}};
  const sm::ReactionPlan plan = sm::plan_reaction(s.t, s.before.lids, s.before.routing, s.options, p, change);
  const auto rtt = [&](unsigned hops) { return sm::smp_round_trip(p, hops); };
  // The trap of leaf0 crosses no link.
  CHECK(plan.detection == sm::Detection::trap);
  const Time detected = p.trap_generation + p.smp_receive_overhead;
  CHECK(plan.detected_at == detected);
  // Hop 0 is leaf0 as a switch: NodeInfo, SwitchInfo, PortInfo of port 0, then of its 3 ports at once; then
  // NodeInfo through ports 1 (h0) and 3 (spine1) at one hop, and so on.
  CHECK(plan.discovery_done_at > detected + rtt(0) * 4 + rtt(1));
  CHECK(plan.reroute.check.unrouted_pairs == 0);
  CHECK_FALSE(plan.reroute.discovered.sm_port_down);
  CHECK(plan.smps_lost == 0);
  // leaf0's own table is written over no link.
  bool leaf0_updated = false;
  for (const sm::LftUpdate& u : plan.lft_updates)
    if (u.switch_node == 0) {
      leaf0_updated = true;
      CHECK(u.at == plan.routing_done_at + sm::smp_arrival(p, 0));
    }
  CHECK(leaf0_updated);
}

TEST_CASE("sm plan_reaction: with adaptive routing the SM recomputes the groups on the degraded fabric and writes "
          "the AR tables that changed after routing",
          "[sm][quick][adaptive]") {
  // 4 leaves (0..3) of 2 hosts under 4 spines (4..7), hosts 8..15; leaf0 port 3 - spine0 port 1 fails.
  const topo::Topology t = ib::testing::two_level_tree(4, 4, 2);
  sm::SmOptions options;
  options.engine = "ftree";
  options.lids.sm_port = {8, 1};
  const sm::Subnet before = sm::run_subnet_manager(t, options);
  const sm::ArTables ar = sm::tree_groups(t, before.lids, before.routing);
  const std::uint32_t dead = t.link_at(0, 3);
  const sm::Params p = opensm_params();
  const sm::FabricChange change{Time::from_ms(1), {}, {dead}};
  const sm::ReactionPlan plan = sm::plan_reaction(t, before.lids, before.routing, options, p, change, &ar);
  REQUIRE(plan.detection == sm::Detection::trap);
  CHECK(plan.reroute.check.unrouted_pairs == 0);

  // Every group avoids the dead link and starts with the new LFT's port.
  const sm::Routing& next = plan.reroute.routing;
  std::set<topo::NodeIndex> changed;
  for (topo::NodeIndex n = 0; n < 8; ++n) {
    INFO(t.node(n).name);
    REQUIRE(plan.adaptive.group_of_lid[n].size() == before.lids.max_lid() + 1u);
    for (sm::Lid d = 1; d <= before.lids.max_lid(); ++d) {
      const std::uint16_t g = plan.adaptive.group_of_lid[n][d];
      if (g == 0)
        continue;
      const std::vector<std::uint8_t>& ports = plan.adaptive.groups[n][g - 1u];
      CHECK(ports.front() == next.lfts[n][d]);
      for (const std::uint8_t port : ports)
        CHECK(t.link_at(n, port) != dead);
    }
    if (plan.adaptive.group_of_lid[n] != ar.group_of_lid[n] || plan.adaptive.groups[n] != ar.groups[n])
      changed.insert(n);
  }
  // A remote leaf may still send to h0 by the three spines left; before, by all four.
  const sm::Lid h0 = before.lids.base_lid(8, 1);
  REQUIRE(ar.group_of_lid[1][h0] != 0);
  CHECK(ar.groups[1][ar.group_of_lid[1][h0] - 1u].size() == 4);
  REQUIRE(plan.adaptive.group_of_lid[1][h0] != 0);
  CHECK(plan.adaptive.groups[1][plan.adaptive.group_of_lid[1][h0] - 1u].size() == 3);

  // Written exactly where they changed, after routing: with a switch's last LFT block if it got any, else by an
  // SMP of their own behind the blocks.
  CHECK(changed.count(0) == 1);
  CHECK(changed.count(1) == 1);
  REQUIRE(plan.ar_updates.size() == changed.size());
  CHECK(plan.ar_tables_changed == changed.size());
  std::uint64_t own_smps = 0;
  Time last = Time::zero();
  for (const sm::ArUpdate& u : plan.ar_updates) {
    INFO(t.node(u.switch_node).name);
    CHECK(changed.count(u.switch_node) == 1);
    CHECK(u.group_of_lid == plan.adaptive.group_of_lid[u.switch_node]);
    CHECK(u.groups == plan.adaptive.groups[u.switch_node]);
    CHECK(u.at > plan.routing_done_at);
    CHECK(u.at <= plan.last_lft_at);
    CHECK(u.at >= last);
    last = u.at;
    Time last_block = Time::zero();
    for (const sm::LftUpdate& b : plan.lft_updates)
      if (b.switch_node == u.switch_node)
        last_block = std::max(last_block, b.at);
    if (last_block > Time::zero())
      CHECK(u.at == last_block);
    else
      ++own_smps;
  }

  // Without adaptive routing the same reaction writes no AR tables and sends no SMP for them.
  const sm::ReactionPlan without = sm::plan_reaction(t, before.lids, before.routing, options, p, change);
  CHECK(without.ar_updates.empty());
  CHECK(without.ar_tables_changed == 0);
  CHECK(without.routing_done_at == plan.routing_done_at);
  CHECK(without.blocks_changed == plan.blocks_changed);
  CHECK(plan.smps_sent == without.smps_sent + own_smps);

  // The link back: the groups return to what they were, and the AR tables the failure changed are written back.
  const sm::ReactionPlan up =
      sm::plan_reaction(t, before.lids, next, options, p, {Time::from_ms(2), {dead}, {}}, &plan.adaptive);
  CHECK(up.adaptive.group_of_lid == ar.group_of_lid);
  CHECK(up.adaptive.groups == ar.groups);
  CHECK(up.ar_tables_changed == changed.size());
}
