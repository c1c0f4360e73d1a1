// `ibnetsim topo check` and `ibnetsim topo route` end to end: exit codes, the verdict lines, the dump formats, and
// the errors for bad options and refused fabrics.
#include <catch2/catch.hpp>

#include "tests/scenario/cli_harness.h"

using testing::run_cli;
using testing::source_path;

namespace {

std::string torus() {
  return source_path("topologies/examples/torus-4x4.json");
}
std::string fat_tree() {
  return source_path("topologies/examples/ft2-16.json");
}

} // namespace

TEST_CASE("cli topo check: a torus routed by minhop on one VL has a credit loop and exits 3", "[cli][quick]") {
  const auto r = run_cli({"topo", "check", torus(), "--routing", "minhop", "--vls", "1"});
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.out, Catch::Contains("routing       minhop, 1 of 1 VLs used\n"));
  CHECK_THAT(r.out, Catch::Contains("routes        all arrive, 0 unrouted, 0 looping"));
  CHECK_THAT(r.out, Catch::Contains("credit loops  FOUND"));
}

TEST_CASE("cli topo check: dor with datelines and updn route the torus without loops and exit 0", "[cli][quick]") {
  const auto dor = run_cli({"topo", "check", torus(), "--routing", "dor"});
  CHECK(dor.exit_code == 0);
  CHECK_THAT(dor.out, Catch::Contains("routing       dor, 2 of 8 VLs used\n"));
  CHECK_THAT(dor.out, Catch::Contains("credit loops  none"));
  const auto updn = run_cli({"topo", "check", torus(), "--routing", "updn", "--vls", "1", "--roots", "sw_0_0"});
  CHECK(updn.exit_code == 0);
  CHECK_THAT(updn.out, Catch::Contains("credit loops  none"));
}

TEST_CASE("cli topo check: ftree on a fat tree passes and on a torus is refused with exit 2", "[cli][quick]") {
  const auto ok = run_cli({"topo", "check", fat_tree(), "--routing", "ftree"});
  CHECK(ok.exit_code == 0);
  CHECK_THAT(ok.out, Catch::Contains("longest 4 hops"));
  const auto refused = run_cli({"topo", "check", torus(), "--routing", "ftree"});
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Catch::StartsWith("ibnetsim topo check: ftree: not a fat tree: the link "));
  CHECK_THAT(refused.err, !Catch::Contains("--routing arg"));
}

TEST_CASE("cli topo check: bad options exit 2 naming the option", "[cli][quick]") {
  CHECK_THAT(run_cli({"topo", "check", fat_tree(), "--routing", "ospf"}).err,
             Catch::Contains("unknown routing engine 'ospf'; engines: minhop, updn, ftree, dor, lash, file"));
  CHECK_THAT(run_cli({"topo", "check", fat_tree(), "--lmc", "9"}).err, Catch::Contains("--lmc: expected 0..7, got 9"));
  CHECK_THAT(run_cli({"topo", "check", fat_tree(), "--roots", "nosuch"}).err,
             Catch::Contains("--roots: no node named 'nosuch' in the topology"));
  CHECK_THAT(run_cli({"topo", "check", fat_tree(), "--lid-order", "random"}).err,
             Catch::Contains("--lid-order: expected topology or opensm, got 'random'"));
  CHECK(run_cli({"topo", "check"}).exit_code == 2);
  CHECK(run_cli({"topo", "check", "no-such-file.json"}).exit_code == 2);
}

TEST_CASE("cli topo route: the three formats, and the file engine replays the dump", "[cli][quick]") {
  const auto lfts = run_cli({"topo", "route", fat_tree(), "--routing", "updn", "--lid-order", "opensm"});
  REQUIRE(lfts.exit_code == 0);
  CHECK_THAT(lfts.out, Catch::StartsWith("Unicast lids [0-"));
  CHECK_THAT(lfts.out, Catch::Contains(" lids dumped\n"));
  const auto dump = run_cli({"topo", "route", fat_tree(), "--format", "dump_lfts"});
  CHECK_THAT(dump.out, Catch::Contains("  Lid  Out   Destination\n"));
  CHECK_THAT(dump.out, Catch::Contains(" valid lids dumped \n"));
  const auto guid2lid = run_cli({"topo", "route", fat_tree(), "--format", "guid2lid"});
  CHECK_THAT(guid2lid.out, Catch::StartsWith("0x"));
  const std::string saved = testing::write_temp("sm_cli_lfts.dump", lfts.out);
  const auto replay =
      run_cli({"topo", "check", fat_tree(), "--routing", "file", "--lft-file", saved, "--lid-order", "opensm"});
  CHECK(replay.exit_code == 0);
  CHECK_THAT(replay.out, Catch::Contains("routing       file"));
  CHECK(run_cli({"topo", "route", fat_tree(), "--format", "xml"}).exit_code == 2);
}
