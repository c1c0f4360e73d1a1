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

TEST_CASE("cli topo route: --sm-port on a switch's port 0 gives it LID 1 and refuses its external ports",
          "[cli][quick]") {
  const auto on_switch =
      run_cli({"topo", "route", fat_tree(), "--lid-order", "opensm", "--sm-port", "spine1/0", "--format", "guid2lid"});
  REQUIRE(on_switch.exit_code == 0);
  CHECK_THAT(on_switch.out, Catch::StartsWith("0x0002c90200001600 0x0001 0x0001\n")); // spine1
  // A switch's name alone means its port 0.
  CHECK(run_cli({"topo", "route", fat_tree(), "--lid-order", "opensm", "--sm-port", "spine1", "--format", "guid2lid"})
            .out == on_switch.out);
  const auto external = run_cli({"topo", "check", fat_tree(), "--sm-port", "spine1/3"});
  CHECK(external.exit_code == 2);
  CHECK_THAT(
      external.err,
      Catch::Contains("--sm-port: the SM port spine1/3 is a switch's external port (a switch's SM runs on port 0)"));
  CHECK_THAT(run_cli({"topo", "check", fat_tree(), "--sm-port", "h0/2"}).err,
             Catch::Contains("--sm-port: the SM port h0/2 has no cable"));
  // --sm-port asks for OpenSM's order; in topology order it would change nothing, so asking for both is refused.
  CHECK(run_cli({"topo", "route", fat_tree(), "--sm-port", "spine1/0", "--format", "guid2lid"}).out == on_switch.out);
  const auto both = run_cli({"topo", "route", fat_tree(), "--lid-order", "topology", "--sm-port", "spine1/0"});
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.err, Catch::Contains("--sm-port: the SM's port decides LIDs only in --lid-order opensm"));
}

TEST_CASE("cli topo route: --guid2lid-file with the file engine reproduces OpenSM's dump byte for byte",
          "[cli][quick]") {
  const std::string golden = source_path("tools/opensm/golden/ft2-minhop/");
  const auto r = run_cli({"topo", "route", source_path("tests/scenario/data/opensm/ft2.json"), "--routing", "file",
                          "--lft-file", golden + "opensm-lfts.dump", "--guid2lid-file", golden + "guid2lid"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == testing::read_text_file(golden + "opensm-lfts.dump"));
  const auto g = run_cli({"topo", "route", source_path("tests/scenario/data/opensm/ft2.json"), "--guid2lid-file",
                          golden + "guid2lid", "--format", "guid2lid"});
  CHECK(g.out == testing::read_text_file(golden + "guid2lid"));
}

TEST_CASE("cli topo check: a bad guid2lid file exits 2 naming the file and line", "[cli][quick]") {
  const std::string topology = source_path("tests/scenario/data/opensm/ft2.json");
  const std::string good = testing::read_text_file(source_path("tools/opensm/golden/ft2-minhop/guid2lid"));
  const auto check = [&](const std::string& name, const std::string& text) {
    const auto r = run_cli({"topo", "check", topology, "--guid2lid-file", testing::write_temp(name, text)});
    CHECK(r.exit_code == 2);
    return r.err;
  };
  // Line 2 of the golden file: leaf0 0x0000000000200000 0x0002 0x0002.
  const std::size_t line2 = good.find('\n') + 1;
  const std::size_t line3 = good.find('\n', line2) + 1;
  const std::string head = good.substr(0, line2), tail = good.substr(line3);
  CHECK_THAT(check("g2l_malformed", head + "0x0000000000200000 two 0x2\n" + tail),
             Catch::Contains("g2l_malformed:2: expected '0x<port GUID> <first LID> <last LID>', got "));
  CHECK_THAT(check("g2l_unknown", head + "0x0000000000abcdef 0x2 0x2\n" + tail),
             Catch::Contains("g2l_unknown:2: 0x0000000000abcdef is the GUID of no switch or cabled HCA port"));
  CHECK_THAT(check("g2l_conflict", head + "0x0000000000200000 0x1 0x1\n" + tail),
             Catch::Contains("g2l_conflict:2: LIDs 1..1 overlap those of line 1 (0x0000000000100001)"));
  CHECK_THAT(check("g2l_missing", head + tail), Catch::Contains("g2l_missing: no LIDs for leaf0 (0x0000000000200000)"));
  CHECK_THAT(check("g2l_lmc", head + "0x0000000000200000 0x2 0x3\n" + tail),
             Catch::Contains("g2l_lmc:2: leaf0 (0x0000000000200000) has LIDs 2..3, expected 1 at LMC 0"));
}
