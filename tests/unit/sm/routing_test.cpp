// Routing engines and the credit-loop check on small fabrics with known answers: every host reaches every LID by
// a shortest path, routes spread evenly over equal ports, a ring or torus routed without VLs has a credit loop,
// and updn, dor with datelines and lash remove it; ftree refuses what is not a fat tree; dumps replay exactly.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "models/sm/credit_loops.h"
#include "models/sm/dump.h"
#include "models/sm/routing.h"
#include "models/sm/sm_error.h"
#include "tests/support/sm_fabrics.h"

using namespace ib;

namespace {

sm::RoutingOptions with_vls(unsigned vls, std::vector<topo::NodeIndex> roots = {}) {
  sm::RoutingOptions o;
  o.data_vls = vls;
  o.roots = std::move(roots);
  return o;
}

struct Routed {
  sm::LidMap lids;
  sm::Routing routing;
  sm::RouteCheck check;
};

Routed route(const topo::Topology& t, std::string_view engine, sm::RoutingOptions options = {},
             sm::LidOptions lid_options = {}) {
  sm::LidMap lids = sm::assign_lids(t, lid_options);
  auto e = sm::make_engine(engine);
  REQUIRE(e != nullptr);
  sm::Routing routing = e->route({t, lids, options});
  sm::RouteCheck check = sm::check_routes(t, lids, routing, options.data_vls);
  return {std::move(lids), std::move(routing), std::move(check)};
}

/// Switch-to-switch hops of the route between two HCA ports.
std::size_t switch_hops(const topo::Topology& t, const Routed& r, topo::NodeIndex a, topo::NodeIndex b) {
  const auto path = sm::trace_route(t, r.lids, r.routing, r.lids.base_lid(a, 1), r.lids.base_lid(b, 1));
  REQUIRE(path.size() >= 2);
  return path.size() - 2; // the source HCA's port and the last switch's port to b are not switch-to-switch
}

/// Routes to HCA LIDs leaving each (switch, port).
std::map<std::pair<topo::NodeIndex, unsigned>, unsigned> routes_per_port(const topo::Topology& t, const Routed& r) {
  std::map<std::pair<topo::NodeIndex, unsigned>, unsigned> count;
  for (topo::NodeIndex n = 0; n < t.node_count(); ++n) {
    if (t.node(n).kind != topo::NodeKind::switch_node)
      continue;
    for (sm::Lid lid = 1; lid <= r.lids.max_lid(); ++lid) {
      const topo::PortRef owner = r.lids.owner(lid);
      if (owner.node != topo::no_node && t.node(owner.node).kind == topo::NodeKind::hca)
        ++count[{n, r.routing.lfts[n][lid]}];
    }
  }
  return count;
}

void check_all_routed(const sm::RouteCheck& check) {
  INFO((check.problems.empty() ? std::string() : check.problems.front()));
  CHECK(check.unrouted_pairs == 0);
  CHECK(check.looping_pairs == 0);
}

} // namespace

TEST_CASE("sm minhop: a leaf-spine is fully routed by shortest paths and spread evenly over the spines",
          "[sm][quick]") {
  const topo::Topology t = testing::two_level_tree(4, 2, 4);
  const Routed r = route(t, "minhop");
  check_all_routed(r.check);
  CHECK(r.check.cycle.empty());
  CHECK(switch_hops(t, r, *t.find("h0"), *t.find("h1")) == 0);
  CHECK(switch_hops(t, r, *t.find("h0"), *t.find("h15")) == 2);
  CHECK(r.check.max_hops == 4);
  // Each leaf sends the 12 hosts of other leaves up its 2 spine ports: 6 each.
  const auto count = routes_per_port(t, r);
  for (unsigned l = 0; l < 4; ++l) {
    const topo::NodeIndex leaf = *t.find(testing::numbered("leaf", l));
    CHECK(count.at({leaf, 5}) == 6);
    CHECK(count.at({leaf, 6}) == 6);
  }
}

TEST_CASE("sm minhop: a ring with one VL has a credit loop - updn and dor with datelines and lash remove it",
          "[sm][quick]") {
  const topo::Topology ring = testing::grid({6}, true);
  const Routed minhop = route(ring, "minhop", with_vls(1));
  check_all_routed(minhop.check);
  REQUIRE_FALSE(minhop.check.cycle.empty());
  // The loop runs round the ring in one direction: 6 channels, one per switch.
  CHECK(minhop.check.cycle.size() == 6);

  const Routed updn = route(ring, "updn", with_vls(1, {0}));
  check_all_routed(updn.check);
  CHECK(updn.check.cycle.empty());

  const Routed dor_one_vl = route(ring, "dor", with_vls(1));
  CHECK_FALSE(dor_one_vl.check.cycle.empty());
  const Routed dor = route(ring, "dor", with_vls(2));
  check_all_routed(dor.check);
  CHECK(dor.check.cycle.empty());
  CHECK(dor.routing.vls_needed == 2);

  const Routed lash = route(ring, "lash", with_vls(8));
  check_all_routed(lash.check);
  CHECK(lash.check.cycle.empty());
  CHECK(lash.routing.vls_needed >= 2);
  // LASH routes by shortest paths: at most 3 switch hops round a 6-ring.
  CHECK(lash.check.max_hops <= 3 + 2);
}

TEST_CASE("sm dor: a 4x4 torus is deadlock-free with 2 VLs and a 3x3 mesh with one - routes go in dimension order",
          "[sm][quick]") {
  const topo::Topology torus = testing::grid({4, 4}, true);
  CHECK_FALSE(route(torus, "minhop", with_vls(1)).check.cycle.empty());
  const Routed dor = route(torus, "dor", with_vls(2));
  check_all_routed(dor.check);
  CHECK(dor.check.cycle.empty());

  const topo::Topology mesh = testing::grid({3, 3}, false);
  const Routed mesh_dor = route(mesh, "dor", with_vls(1));
  check_all_routed(mesh_dor.check);
  CHECK(mesh_dor.check.cycle.empty());
  // h0 at (0,0) to h8 at (2,2): along dimension 0 first (ports 2), then dimension 1 (ports 4).
  const auto path = sm::trace_route(mesh, mesh_dor.lids, mesh_dor.routing, mesh_dor.lids.base_lid(*mesh.find("h0"), 1),
                                    mesh_dor.lids.base_lid(*mesh.find("h8"), 1));
  REQUIRE(path.size() == 6);
  CHECK(path[1].port == 2);
  CHECK(path[2].port == 2);
  CHECK(path[3].port == 4);
  CHECK(path[4].port == 4);
}

TEST_CASE("sm updn: roots found as OpenSM finds them are the spines - routes are shortest and loop-free",
          "[sm][quick]") {
  const topo::Topology t = testing::three_level_tree(2);
  const Routed r = route(t, "updn");
  check_all_routed(r.check);
  CHECK(r.check.cycle.empty());
  CHECK(switch_hops(t, r, *t.find("h0"), *t.find("h7")) == 4);
  CHECK(switch_hops(t, r, *t.find("h0"), *t.find("h2")) == 2);
}

TEST_CASE("sm ftree: 2- and 3-level fat trees routed minimally with routes balanced within one", "[sm][quick]") {
  for (const topo::Topology& t : {testing::two_level_tree(4, 4, 4), testing::three_level_tree(4)}) {
    const Routed r = route(t, "ftree");
    check_all_routed(r.check);
    CHECK(r.check.cycle.empty());
    const Routed shortest = route(t, "minhop");
    CHECK(r.check.max_hops == shortest.check.max_hops);
    // Every switch's up ports carry the same number of routes, within one.
    const auto count = routes_per_port(t, r);
    for (topo::NodeIndex n = 0; n < t.node_count(); ++n) {
      if (t.node(n).kind != topo::NodeKind::switch_node)
        continue;
      unsigned lo = ~0u, hi = 0;
      const unsigned half = t.node(n).port_count / 2;
      for (unsigned p = half + 1; p <= t.node(n).port_count; ++p) {
        const auto it = count.find({n, p});
        const unsigned c = it == count.end() ? 0 : it->second;
        if (t.peer(n, static_cast<topo::PortNumber>(p)).node == topo::no_node)
          continue;
        lo = std::min(lo, c);
        hi = std::max(hi, c);
      }
      if (hi > 0)
        CHECK(hi - lo <= 1);
    }
  }
}

TEST_CASE("sm ftree: refuses a ring and naming the link that breaks the ranks", "[sm][quick]") {
  const topo::Topology ring = testing::grid({4}, true);
  const sm::LidMap lids = sm::assign_lids(ring, {});
  CHECK_THROWS_WITH(sm::make_engine("ftree")->route({ring, lids, {}}),
                    Catch::StartsWith("ftree: not a fat tree: the link sw0/1 - sw3 joins switches of the same rank 0"));
}

TEST_CASE("sm minhop with LMC 1: a host's two LIDs leave a leaf by different spines", "[sm][quick]") {
  const topo::Topology t = testing::two_level_tree(2, 2, 2);
  sm::LidOptions lmc1;
  lmc1.lmc = 1;
  const Routed r = route(t, "minhop", {}, lmc1);
  check_all_routed(r.check);
  const topo::NodeIndex leaf0 = *t.find("leaf0");
  const topo::NodeIndex h3 = *t.find("h3");
  const sm::Lid base = r.lids.base_lid(h3, 1);
  CHECK(r.routing.lfts[leaf0][base] != r.routing.lfts[leaf0][base + 1]);
}

TEST_CASE("sm dumps: opensm-lfts.dump and dump_lfts output replay exactly through the file engine", "[sm][quick]") {
  const topo::Topology t = testing::three_level_tree(2);
  const Routed r = route(t, "updn");
  for (int format = 0; format < 2; ++format) {
    std::ostringstream out;
    (format == 0 ? sm::write_opensm_lfts : sm::write_dump_lfts)(out, t, r.lids, r.routing);
    const std::string path =
        (std::filesystem::temp_directory_path() /
         ("ibnetsim_sm_dump_test_" + std::to_string(::getpid()) + "_" + std::to_string(format) + ".txt"))
            .string();
    {
      std::ofstream file(path);
      file << out.str();
    }
    sm::RoutingOptions options;
    options.lft_file = path;
    const Routed replay = route(t, "file", options);
    CHECK(replay.routing.lfts == r.routing.lfts);
    std::remove(path.c_str());
  }
  std::ostringstream out;
  sm::write_opensm_lfts(out, t, r.lids, r.routing);
  CHECK_THAT(out.str(), Catch::StartsWith("Unicast lids [0-"));
  CHECK_THAT(out.str(), Catch::Contains(" # Channel Adapter portguid 0x0002c90300000101: 'h0'\n"));
}

TEST_CASE("sm check_routes: a missing entry and a forwarding loop are reported", "[sm][quick]") {
  const topo::Topology t = testing::two_level_tree(2, 1, 1);
  Routed r = route(t, "minhop");
  const topo::NodeIndex leaf0 = *t.find("leaf0");
  const topo::NodeIndex spine = *t.find("spine0");
  const sm::Lid h1 = r.lids.base_lid(*t.find("h1"), 1);
  r.routing.lfts[spine][h1] = sm::no_path;
  sm::RouteCheck broken = sm::check_routes(t, r.lids, r.routing, 1);
  CHECK(broken.unrouted_pairs == 1);
  REQUIRE(broken.problems.size() == 1);
  CHECK(broken.problems[0] == "from leaf0 to LID " + std::to_string(h1) + " (h1): spine0 has no LFT entry");
  r.routing.lfts[spine][h1] = 1; // back down to leaf0, which sends it up again
  broken = sm::check_routes(t, r.lids, r.routing, 1);
  CHECK(broken.looping_pairs == 1);
  (void)leaf0;
}

TEST_CASE("sm engines: unknown names give nullptr and the list is stable", "[sm][quick]") {
  CHECK(sm::make_engine("nosuch") == nullptr);
  CHECK(sm::engine_names() == std::vector<std::string_view>{"minhop", "updn", "ftree", "dor", "lash", "file"});
}
