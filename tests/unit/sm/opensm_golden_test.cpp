// Our subnet manager against the real OpenSM 3.3.23, on the runs saved in tools/opensm/golden (regenerate them with
// tools/opensm/make_golden.sh; the live cross-check in tests/validation reruns OpenSM where it is installed).
// In OpenSM's LID order the LIDs are equal. minhop, updn and dor follow OpenSM's unicast manager, ftree and lash
// follow OpenSM's engines: all must give the same LFTs entry for entry (ftree including the entries it leaves
// unset), and lash the same path SLs and number of layers. Every case also checks hop counts and balance.
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "tests/support/opensm_compare.h"
#include "tests/validation/opensm_sl_compare.h"

namespace {

std::string golden(const std::string& name) {
  return std::string(IBNETSIM_SOURCE_DIR) + "/tools/opensm/golden/" + name;
}

/// `deadlock_free`: whether the engine promises no credit loop on this fabric (minhop on a mesh or ring does not).
void check_same_routes(const std::string& name, bool same_lfts, bool deadlock_free = true) {
  INFO(name);
  const ib::testing::OpenSmComparison c = ib::testing::compare_with_opensm(golden(name));
  for (const std::string& note : c.notes)
    UNSCOPED_INFO(note);
  REQUIRE(c.lids > 0);
  CHECK(c.lid_mismatches == 0);
  CHECK(c.routes > 0);
  CHECK(c.hop_mismatches == 0);
  CHECK(c.balance_difference <= 1);
  if (same_lfts)
    CHECK(c.lft_mismatches == 0);
  CHECK(c.ours.check.unrouted_pairs == 0);
  CHECK(c.ours.check.looping_pairs == 0);
  CHECK(c.ours.check.cycle.empty() == deadlock_free);
}

} // namespace

TEST_CASE("OpenSM golden: minhop gives OpenSM's LIDs and LFTs on fat trees - a mesh and a ring", "[sm][opensm]") {
  check_same_routes("ft2-minhop", true);
  check_same_routes("ft3-minhop", true);
  check_same_routes("ft2u-minhop", true);
  check_same_routes("dfly-minhop", true, false);
  check_same_routes("torus4x4-minhop", true, false);
  // On a mesh and a ring minhop is not deadlock-free, in OpenSM as here: the same tables, with a credit loop.
  check_same_routes("mesh3x3-minhop", true, false);
  check_same_routes("ring6-minhop", true, false);
}

TEST_CASE("OpenSM golden: minhop and updn with LMC 1 give OpenSM's LIDs and LFTs", "[sm][opensm]") {
  check_same_routes("ft2-minhop-lmc1", true);
  check_same_routes("ft2-updn-lmc1", true);
}

TEST_CASE("OpenSM golden: updn gives OpenSM's LFTs with automatic and given roots", "[sm][opensm]") {
  for (const char* name : {"ft2-updn", "ft3-updn", "mesh3x3-updn", "ring6-updn"})
    check_same_routes(name, true);
}

TEST_CASE("OpenSM golden: dor gives OpenSM's LFTs on a mesh and a ring", "[sm][opensm]") {
  check_same_routes("mesh3x3-dor", true);
  // The imported ring carries no grid coordinates, so dor adds no datelines: OpenSM's dor tables and its loop.
  check_same_routes("ring6-dor", true, false);
}

TEST_CASE("OpenSM golden: ftree gives OpenSM's LFTs on 2- and 3-level fat trees and on uneven multi-link leaves",
          "[sm][opensm]") {
  // Every entry, switch LIDs and the entries OpenSM leaves unset (between roots) included.
  check_same_routes("ft2-ftree", true);
  check_same_routes("ft3-ftree", true);
  check_same_routes("ft2u-ftree", true);
}

TEST_CASE("OpenSM golden: lash gives OpenSM's LFTs - path SLs and layer count", "[sm][opensm]") {
  // Fat trees need one layer (ft2) or three (ft3, after OpenSM's random balancing), the ring three, the torus and
  // the dragonfly two; every PathRecord's SL must be OpenSM's.
  for (const char* name : {"ft2-lash", "ft3-lash", "mesh3x3-lash", "ring6-lash", "torus4x4-lash", "dfly-lash"}) {
    check_same_routes(name, true);
    INFO(name);
    const ib::testing::OpenSmComparison c = ib::testing::compare_with_opensm(golden(name));
    const ib::testing::SlComparison s = ib::testing::compare_path_sls(golden(name), c);
    for (const std::string& note : s.notes)
      UNSCOPED_INFO(note);
    CHECK(s.paths > 0);
    CHECK(s.sl_mismatches == 0);
    CHECK(s.their_layers == static_cast<int>(s.our_layers));
  }
}

TEST_CASE("OpenSM golden: with the SM on a switch's port 0 the LIDs and LFTs are OpenSM's", "[sm][opensm]") {
  // The SM's switch takes LID 1 (one LID: base port 0, whatever the LMC), the rest follow in GUID-table order.
  check_same_routes("ft2-minhop-sm-leaf0", true);
  check_same_routes("ft2-updn-lmc1-sm-spine1", true);
  check_same_routes("ft3-minhop-sm-core2", true);
  check_same_routes("ft3-updn-sm-agg5", true);
  check_same_routes("mesh3x3-dor-sm-sw4", true);
  check_same_routes("ring6-minhop-sm-sw3", true, false);
}
