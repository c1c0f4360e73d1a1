// Routing after a fault (models/sm/reroute.h): the fabric the SM's sweep finds, the same engine on it with the LIDs
// it had, minhop when the engine refuses, and every engine's answer for a host cut off (no_path, no throw).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "models/sm/dump.h"
#include "models/sm/reroute.h"
#include "models/sm/sm_error.h"
#include "tests/support/sm_fabrics.h"

using namespace ib;

namespace {

sm::SmOptions options_for(std::string engine, topo::PortRef sm_port = {}) {
  sm::SmOptions o;
  o.engine = std::move(engine);
  o.lids.sm_port = sm_port;
  return o;
}

/// No switch the SM reaches sends anything out of a port whose link is down.
void check_avoids(const topo::Topology& t, const sm::Reroute& r, const std::vector<std::uint32_t>& down) {
  for (const std::uint32_t l : down) {
    for (const topo::PortRef& end : {t.link(l).a, t.link(l).b}) {
      if (t.node(end.node).kind != topo::NodeKind::switch_node || !r.discovered.reached[end.node])
        continue;
      const auto& lft = r.routing.lfts[end.node];
      INFO(t.node(end.node).name << " port " << unsigned{end.port});
      CHECK(std::count(lft.begin(), lft.end(), end.port) == 0);
    }
  }
}

/// Every pair of HCAs the SM reaches is routed, on the fabric as it is now.
void check_hosts_routed(const topo::Topology& t, const sm::LidMap& lids, const sm::Reroute& r) {
  const topo::Topology& now = r.discovered.fabric;
  for (topo::NodeIndex a = 0; a < t.node_count(); ++a) {
    for (topo::NodeIndex b = 0; b < t.node_count(); ++b) {
      if (a == b || t.node(a).kind != topo::NodeKind::hca || t.node(b).kind != topo::NodeKind::hca ||
          !r.discovered.reached[a] || !r.discovered.reached[b])
        continue;
      INFO(t.node(a).name << " -> " << t.node(b).name);
      CHECK(!sm::trace_route(now, lids, r.routing, lids.base_lid(a, 1), lids.base_lid(b, 1)).empty());
    }
  }
}

} // namespace

TEST_CASE("sm reroute: minhop around a failed spine-leaf link, with the LIDs it had", "[sm][quick]") {
  const topo::Topology t = testing::two_level_tree(4, 2, 4);
  const sm::Subnet before = sm::run_subnet_manager(t, options_for("minhop"));
  const topo::NodeIndex leaf0 = *t.find("leaf0");
  const std::vector<std::uint32_t> down{t.link_at(leaf0, 5)}; // leaf0 - spine0
  const sm::Reroute r = sm::reroute(t, before.lids, before.routing, options_for("minhop"), down);
  CHECK(r.engine == "minhop");
  CHECK_FALSE(r.fell_back);
  CHECK(r.refusal.empty());
  CHECK(std::count(r.discovered.reached.begin(), r.discovered.reached.end(), 1) == 22);
  CHECK(r.discovered.fabric.link_count() == t.link_count() - 1);
  CHECK(r.check.unrouted_pairs == 0);
  CHECK(r.check.looping_pairs == 0);
  CHECK(r.check.cycle.empty());
  check_avoids(t, r, down);
  check_hosts_routed(t, before.lids, r);
  // A fault elsewhere leaves some tables as they were.
  CHECK(r.routing.lfts[*t.find("leaf3")] != before.routing.lfts[*t.find("leaf3")]);
  CHECK(r.routing.lfts.size() == before.routing.lfts.size());
}

TEST_CASE("sm reroute: a failed switch is left out, its LID unroutable, its table untouched", "[sm][quick]") {
  const topo::Topology t = testing::two_level_tree(4, 2, 4);
  const sm::Subnet before = sm::run_subnet_manager(t, options_for("minhop"));
  const topo::NodeIndex spine0 = *t.find("spine0");
  const std::vector<std::uint32_t> down = topo::links_of(t, spine0);
  for (const std::string engine : {"minhop", "updn", "ftree", "lash"}) {
    INFO(engine);
    const sm::Reroute r = sm::reroute(t, before.lids, before.routing, options_for(engine), down);
    CHECK(r.engine == engine);
    CHECK_FALSE(r.fell_back);
    CHECK_FALSE(r.discovered.reached[spine0]);
    CHECK(r.routing.lfts[spine0] == before.routing.lfts[spine0]);
    check_avoids(t, r, down);
    check_hosts_routed(t, before.lids, r);
    const sm::Lid lost = before.lids.base_lid(spine0, 0);
    for (const std::string leaf : {"leaf0", "leaf1", "leaf2", "leaf3", "spine1"})
      CHECK(r.routing.lfts[*t.find(leaf)][lost] == sm::no_path);
    // Only the routes to the lost switch's LID fail: from each of the 4 leaves.
    CHECK(r.check.unrouted_pairs == 4);
    CHECK(r.check.looping_pairs == 0);
  }
}

TEST_CASE("sm reroute: a host cut off gets no_path in every engine, without a throw", "[sm][quick]") {
  const topo::Topology tree = testing::two_level_tree(4, 2, 4);
  const topo::Topology mesh = testing::grid({3, 3}, false);
  for (const sm::EngineInfo* info : sm::engines()) {
    const bool on_mesh = info->name == "dor";
    const topo::Topology& t = on_mesh ? mesh : tree;
    INFO(info->name);
    sm::SmOptions o = options_for(std::string(info->name));
    std::string dump_path;
    sm::Subnet before = sm::run_subnet_manager(t, options_for("minhop"));
    if (info->replays_file) {
      // file replays a dump: here the minhop tables before the fault.
      std::ostringstream out;
      sm::write_opensm_lfts(out, t, before.lids, before.routing);
      dump_path =
          (std::filesystem::temp_directory_path() / ("ibnetsim_reroute_" + std::to_string(::getpid()) + ".dump"))
              .string();
      std::ofstream(dump_path) << out.str();
      o.routing.lft_file = dump_path;
    } else {
      before = sm::run_subnet_manager(t, o);
    }
    const topo::NodeIndex cut = *t.find("h5");
    const topo::NodeIndex home = t.peer(cut, 1).node;
    const std::vector<std::uint32_t> down{t.link_at(cut, 1)};
    const sm::Reroute r = sm::reroute(t, before.lids, before.routing, o, down);
    CHECK(r.engine == info->name);
    CHECK_FALSE(r.fell_back);
    CHECK_FALSE(r.discovered.reached[cut]);
    const sm::Lid lost = before.lids.base_lid(cut, 1);
    if (info->replays_file) {
      // The dump knows nothing of the fault: the tables stay as they were, the route to h5 included.
      CHECK(r.routing.lfts == before.routing.lfts);
      std::remove(dump_path.c_str());
      continue;
    }
    for (topo::NodeIndex n = 0; n < t.node_count(); ++n)
      if (t.node(n).kind == topo::NodeKind::switch_node && n != home)
        CHECK(r.routing.lfts[n][lost] == sm::no_path);
    CHECK(r.routing.lfts[home][lost] == sm::no_path);
    check_hosts_routed(t, before.lids, r);
    CHECK(r.check.unrouted_pairs > 0); // the pairs towards h5, as the check counts them
    CHECK(r.check.looping_pairs == 0);
  }
}

TEST_CASE("sm reroute: ftree refuses a tree whose aggregation switch lost its uplinks, and minhop routes it",
          "[sm][quick]") {
  const topo::Topology t = testing::three_level_tree(2);
  const sm::Subnet before = sm::run_subnet_manager(t, options_for("ftree"));
  const topo::NodeIndex agg0 = *t.find("agg0");
  const std::vector<std::uint32_t> down{t.link_at(agg0, 3), t.link_at(agg0, 4)};
  const sm::Reroute r = sm::reroute(t, before.lids, before.routing, options_for("ftree"), down);
  CHECK(r.fell_back);
  CHECK(r.engine == "minhop");
  CHECK(r.routing.engine == "minhop");
  CHECK_THAT(r.refusal, Catch::Contains("ftree: not a fat tree: switch agg0 has no link upwards"));
  CHECK(r.check.unrouted_pairs == 0);
  CHECK(r.check.looping_pairs == 0);
  check_avoids(t, r, down);
  check_hosts_routed(t, before.lids, r);
}

TEST_CASE("sm reroute: lash needing more layers than the VLs falls back to minhop", "[sm][quick]") {
  const topo::Topology t = testing::grid({6}, true); // a ring of 6 switches: lash needs 3 layers
  sm::SmOptions o = options_for("lash");
  const sm::Subnet before = sm::run_subnet_manager(t, o);
  o.routing.data_vls = 2;
  const sm::Reroute r = sm::reroute(t, before.lids, before.routing, o, {});
  CHECK(r.fell_back);
  CHECK(r.engine == "minhop");
  CHECK_THAT(r.refusal, Catch::Contains("lash needs more than 2 layers"));
}

TEST_CASE("sm reroute: an island cut off from the SM keeps its tables, and the SM's own link down changes nothing",
          "[sm][quick]") {
  const topo::Topology t = testing::two_level_tree(2, 1, 2);
  const sm::Subnet before = sm::run_subnet_manager(t, options_for("minhop"));
  const topo::NodeIndex leaf1 = *t.find("leaf1");
  const topo::NodeIndex h0 = *t.find("h0");
  // leaf1's only uplink: leaf1 with h2 and h3 form an island the SM (on h0) cannot see.
  const std::vector<std::uint32_t> down{t.link_at(leaf1, 3)};
  const sm::Reroute r = sm::reroute(t, before.lids, before.routing, options_for("minhop", {h0, 1}), down);
  CHECK_FALSE(r.discovered.reached[leaf1]);
  CHECK_FALSE(r.discovered.reached[*t.find("h2")]);
  CHECK(topo::links_of(r.discovered.fabric, leaf1).empty()); // the island's own links are unseen too
  CHECK(r.routing.lfts[leaf1] == before.routing.lfts[leaf1]);
  CHECK(r.routing.lfts[*t.find("leaf0")][before.lids.base_lid(*t.find("h3"), 1)] == sm::no_path);

  const std::vector<std::uint32_t> own{t.link_at(h0, 1)};
  const sm::Reroute blind = sm::reroute(t, before.lids, before.routing, options_for("minhop", {h0, 1}), own);
  CHECK(blind.discovered.sm_port_down);
  CHECK(blind.routing.lfts == before.routing.lfts);
  CHECK_THROWS_AS(sm::reroute(t, before.lids, before.routing, options_for("ospf"), {}), sm::SmError);
}

TEST_CASE("sm reroute: an SM on a switch sweeps from the switch and its port 0 is never down", "[sm][quick]") {
  const topo::Topology t = testing::two_level_tree(2, 1, 2);
  const topo::NodeIndex leaf1 = *t.find("leaf1");
  sm::SmOptions options = options_for("minhop", {leaf1, 0});
  options.lids.order = sm::LidOrder::opensm;
  const sm::Subnet before = sm::run_subnet_manager(t, options);
  CHECK(before.lids.base_lid(leaf1, 0) == 1);
  // leaf1's only uplink down: the SM inside leaf1 still sees leaf1, h2 and h3, and nothing beyond.
  const std::vector<std::uint32_t> down{t.link_at(leaf1, 3)};
  const sm::Reroute r = sm::reroute(t, before.lids, before.routing, options, down);
  CHECK_FALSE(r.discovered.sm_port_down);
  CHECK(r.discovered.reached[leaf1]);
  CHECK(r.discovered.reached[*t.find("h2")]);
  CHECK(r.discovered.reached[*t.find("h3")]);
  CHECK_FALSE(r.discovered.reached[*t.find("leaf0")]);
  CHECK(r.routing.lfts[leaf1][before.lids.base_lid(*t.find("h3"), 1)] != sm::no_path);
}
