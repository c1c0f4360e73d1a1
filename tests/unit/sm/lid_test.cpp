// LID assignment: blocks of 2^LMC per HCA port, aligned; one LID per switch; topology order and OpenSM's order.
#include <catch2/catch.hpp>

#include "models/sm/lid.h"
#include "models/sm/sm_error.h"
#include "tests/support/sm_fabrics.h"

using namespace ib;

namespace {

sm::LidOptions lid_options(unsigned lmc, sm::LidOrder order = sm::LidOrder::topology, topo::PortRef sm_port = {}) {
  sm::LidOptions o;
  o.lmc = lmc;
  o.order = order;
  o.sm_port = sm_port;
  return o;
}

} // namespace

TEST_CASE("sm::assign_lids: topology order gives consecutive LIDs in node order at LMC 0", "[sm][quick]") {
  const topo::Topology t = testing::two_level_tree(2, 1, 2); // leaf0 leaf1 spine0 h0..h3
  const sm::LidMap lids = sm::assign_lids(t, {});
  REQUIRE(lids.max_lid() == 7);
  for (topo::NodeIndex n = 0; n < t.node_count(); ++n) {
    CHECK(lids.base_lid(n, t.node(n).kind == topo::NodeKind::hca ? 1 : 0) == n + 1);
    CHECK(lids.owner(static_cast<sm::Lid>(n + 1)).node == n);
  }
  CHECK(lids.owner(8).node == topo::no_node);
}

TEST_CASE("sm::assign_lids: LMC 2 gives aligned blocks of 4 to HCA ports and one LID to switches", "[sm][quick]") {
  const topo::Topology t = testing::two_level_tree(2, 1, 2);
  const sm::LidMap lids = sm::assign_lids(t, lid_options(2));
  // Switches 1, 2, 3; then h0 aligned up to 4..7, h1 8..11, h2 12..15, h3 16..19.
  CHECK(lids.base_lid(0, 0) == 1);
  CHECK(lids.base_lid(2, 0) == 3);
  CHECK(lids.base_lid(3, 1) == 4);
  CHECK(lids.base_lid(6, 1) == 16);
  CHECK(lids.lid_count(3) == 4);
  CHECK(lids.lid_count(0) == 1);
  CHECK(lids.max_lid() == 19);
  for (sm::Lid l = 16; l <= 19; ++l)
    CHECK(lids.owner(l).node == 6);
}

TEST_CASE("sm::assign_lids: OpenSM order puts the SM port first and then ports by GUID and skipping alignment gaps",
          "[sm][quick]") {
  const topo::Topology t = testing::two_level_tree(2, 1, 2);
  const topo::NodeIndex h2 = *t.find("h2");
  const sm::LidMap lids = sm::assign_lids(t, lid_options(1, sm::LidOrder::opensm, {h2, 1}));
  // The SM port h2 first: 2..3 (LID 1 is not 2-aligned and is lost, as in OpenSM's first fit).
  CHECK(lids.base_lid(h2, 1) == 2);
  // Then OpenSM's GUID table order, which compares GUIDs byte-reversed, so the low bytes lead: leaf0 (..0001),
  // h0 (port ..0101), h1 (..0201), h3 (..0401), leaf1 (..0002), spine0 (..0003).
  CHECK(lids.base_lid(*t.find("leaf0"), 0) == 4);
  CHECK(lids.base_lid(*t.find("h0"), 1) == 6); // 5 lost to alignment
  CHECK(lids.base_lid(*t.find("h1"), 1) == 8);
  CHECK(lids.base_lid(*t.find("h3"), 1) == 10);
  CHECK(lids.base_lid(*t.find("leaf1"), 0) == 12);
  CHECK(lids.base_lid(*t.find("spine0"), 0) == 13);
  CHECK(lids.owner(1).node == topo::no_node);
  CHECK(lids.owner(5).node == topo::no_node);
}

TEST_CASE("sm::assign_lids: the default SM port is the first HCA port in OpenSM GUID order", "[sm][quick]") {
  const topo::Topology t = testing::two_level_tree(2, 1, 2);
  CHECK(sm::default_sm_port(t) == topo::PortRef{*t.find("h0"), 1});
  const sm::LidMap lids = sm::assign_lids(t, lid_options(0, sm::LidOrder::opensm));
  CHECK(lids.base_lid(*t.find("h0"), 1) == 1);
  CHECK(lids.base_lid(*t.find("leaf0"), 0) == 2);
}

TEST_CASE("sm::assign_lids: refuses LMC 8 and an SM port that is neither an HCA port nor a switch's port 0",
          "[sm][quick]") {
  const topo::Topology t = testing::two_level_tree(2, 1, 2);
  CHECK_THROWS_WITH(sm::assign_lids(t, lid_options(8)), "LMC must be 0..7, got 8");
  CHECK_THROWS_WITH(sm::assign_lids(t, lid_options(0, sm::LidOrder::opensm, {0, 1})),
                    "the SM port leaf0/1 is a switch's external port (a switch's SM runs on port 0)");
  // Checked in either order: the SM port also decides where the SM's sweeps start.
  CHECK_THROWS_WITH(sm::assign_lids(t, lid_options(0, sm::LidOrder::topology, {*t.find("h0"), 2})),
                    "the SM port h0/2 does not exist (h0 has ports 1..1)");
}

TEST_CASE("sm::assign_lids: an SM on a switch's port 0 takes LID 1 and one LID whatever the LMC", "[sm][quick]") {
  const topo::Topology t = testing::two_level_tree(2, 1, 2);
  const topo::NodeIndex spine0 = *t.find("spine0");
  const sm::LidMap lids = sm::assign_lids(t, lid_options(1, sm::LidOrder::opensm, {spine0, 0}));
  CHECK(lids.base_lid(spine0, 0) == 1);
  CHECK(lids.lid_count(spine0) == 1);
  // Then the GUID table order: leaf0 at 2, h0 aligned to 4..5 (3 lost), h1 6..7, h2 8..9, h3 10..11, leaf1 12.
  CHECK(lids.base_lid(*t.find("leaf0"), 0) == 2);
  CHECK(lids.base_lid(*t.find("h0"), 1) == 4);
  CHECK(lids.base_lid(*t.find("leaf1"), 0) == 12);
  CHECK(lids.owner(3).node == topo::no_node);
}

TEST_CASE("sm::parse_sm_port: NODE/PORT, a switch alone for its port 0, and what is refused", "[sm][quick]") {
  const topo::Topology t = testing::two_level_tree(2, 1, 2);
  CHECK(sm::parse_sm_port(t, "h1/1") == topo::PortRef{*t.find("h1"), 1});
  CHECK(sm::parse_sm_port(t, "leaf1/0") == topo::PortRef{*t.find("leaf1"), 0});
  CHECK(sm::parse_sm_port(t, "leaf1") == topo::PortRef{*t.find("leaf1"), 0});
  CHECK_THROWS_WITH(sm::parse_sm_port(t, "h1"), "the SM port 'h1' needs a port number: NODE/PORT");
  CHECK_THROWS_WITH(sm::parse_sm_port(t, "x9/1"),
                    "the SM port 'x9/1' names no node of the topology (expected NODE/PORT)");
  CHECK_THROWS_WITH(sm::parse_sm_port(t, "h1/a"), "the SM port 'h1/a': expected NODE/PORT with a port number");
  CHECK_THROWS_WITH(sm::parse_sm_port(t, "leaf1/3"),
                    "the SM port leaf1/3 is a switch's external port (a switch's SM runs on port 0)");
}
