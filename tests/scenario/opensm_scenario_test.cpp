// A scenario's subnet manager from OpenSM: "routing": "file" replays OpenSM's LFTs on OpenSM's LIDs (guid2lid_file),
// "routing": "opensm" runs the real OpenSM on the scenario's fabric, and "sm_port" puts the SM on an HCA port or a
// switch's port 0. OpenSM's minhop equals ours entry for entry (tests/unit/sm/opensm_golden_test.cpp), so each run
// on OpenSM's tables must give exactly the results of ours.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "models/scenario/opensm_run.h"
#include "models/sm/subnet.h"
#include "models/topology/catalog.h"
#include "models/topology/topology.h"
#include "tests/scenario/cli_harness.h"

using nlohmann::json;
using testing::run_cli;
using testing::source_path;

namespace {

std::string fixture(const std::string& name) {
  return source_path("tests/scenario/data/opensm/" + name);
}

json load(const std::string& path) {
  return json::parse(testing::read_text_file(path));
}

/// The fixture's scenario with its subnet_manager replaced, written where relative paths still resolve.
std::string with_sm(const std::string& name, const json& sm) {
  json s = load(fixture("ft2-file.json"));
  s["subnet_manager"] = sm;
  s["topology"] = fixture("ft2.json");
  return testing::write_temp("opensm_" + name + ".json", s.dump(2));
}

json run_ok(const std::string& path) {
  const auto r = run_cli({"run", path, "--format", "json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

/// The error of a scenario that must be refused.
std::string refused(const std::string& path) {
  const auto r = run_cli({"validate", path});
  CHECK(r.exit_code == 2);
  return r.err;
}

const std::string golden = "tools/opensm/golden/ft2-minhop/";

} // namespace

TEST_CASE("opensm scenario: routing file with OpenSM's guid2lid gives exactly the results of our minhop",
          "[scenario][opensm]") {
  const json replayed = run_ok(fixture("ft2-file.json"));
  const json& sm = replayed.at("config").at("subnet_manager");
  CHECK(sm.at("routing") == "file");
  // Paths relative to the scenario's folder, and the files' digests in the config.
  CHECK(sm.at("lft_file").get<std::string>().ends_with(golden + "opensm-lfts.dump"));
  CHECK(sm.at("guid2lid_file").get<std::string>().ends_with(golden + "guid2lid"));
  CHECK(sm.at("lft_file_digest").get<std::string>().size() == 16);
  CHECK(sm.at("guid2lid_file_digest").get<std::string>().size() == 16);
  // Ours, in OpenSM's LID order from the SM port OpenSM ran on.
  const json ours = run_ok(with_sm("ours", {{"routing", "minhop"}, {"lid_order", "opensm"}, {"sm_port", "h0/1"}}));
  CHECK(ours.at("results") == replayed.at("results"));
}

TEST_CASE("opensm scenario: sm_port on a switch and on an HCA port, and the SM ports refused", "[scenario][opensm]") {
  // OpenSM's run with the SM on leaf0, replayed, against ours with the SM there too.
  const std::string leaf0 = "tools/opensm/golden/ft2-minhop-sm-leaf0/";
  const json replayed = run_ok(with_sm("leaf0_file", {{"routing", "file"},
                                                      {"lft_file", source_path(leaf0 + "opensm-lfts.dump")},
                                                      {"guid2lid_file", source_path(leaf0 + "guid2lid")}}));
  const json ours = run_ok(with_sm("leaf0", {{"lid_order", "opensm"}, {"sm_port", "leaf0"}}));
  CHECK(ours.at("config").at("subnet_manager").at("sm_port") == "leaf0");
  CHECK(ours.at("results") == replayed.at("results"));
  CHECK(run_cli({"validate", with_sm("leaf0_port0", {{"sm_port", "leaf0/0"}})}).exit_code == 0);

  CHECK_THAT(refused(with_sm("sm_external", {{"sm_port", "leaf0/5"}})),
             Catch::Contains("/subnet_manager/sm_port: expected a cabled HCA port as \"node/port\" or a switch's name "
                             "(its port 0), got the SM port leaf0/5 is a switch's external port"));
  CHECK_THAT(refused(with_sm("sm_unknown", {{"sm_port", "nosuch/1"}})),
             Catch::Contains("/subnet_manager/sm_port: expected a cabled HCA port"));
  CHECK_THAT(refused(with_sm("sm_empty", {{"sm_port", ""}})), Catch::Contains("/subnet_manager/sm_port: expected"));
}

TEST_CASE("opensm scenario: routing file and guid2lid_file errors exit 2 naming the key and the file's line",
          "[scenario][opensm]") {
  const std::string lfts = source_path(golden + "opensm-lfts.dump");
  CHECK_THAT(refused(with_sm("no_lft", {{"routing", "file"}})),
             Catch::Contains("/subnet_manager/lft_file: expected with routing \"file\", an LFT dump to replay"));
  CHECK_THAT(refused(with_sm("lft_minhop", {{"routing", "minhop"}, {"lft_file", lfts}})),
             Catch::Contains("/subnet_manager/lft_file: expected no \"lft_file\" unless routing is \"file\""));
  CHECK_THAT(refused(with_sm("engine_minhop", {{"engine", "dfsssp"}})),
             Catch::Contains("/subnet_manager/engine: expected no \"engine\" unless routing is \"opensm\""));
  CHECK_THAT(
      refused(with_sm("g2l_order", {{"guid2lid_file", source_path(golden + "guid2lid")}, {"lid_order", "opensm"}})),
      Catch::Contains("/subnet_manager/lid_order: expected no \"lid_order\" with a guid2lid_file"));
  CHECK_THAT(
      refused(with_sm("lft_missing", {{"routing", "file"}, {"lft_file", "no-such.dump"}})),
      Catch::Contains("/subnet_manager/lft_file: expected an LFT dump of this topology's switches, got file: ") &&
          Catch::Contains("no-such.dump: cannot read the LFT dump"));

  // A guid2lid line that names no port of the fabric: the file and its line.
  std::string g2l = testing::read_text_file(source_path(golden + "guid2lid"));
  g2l.replace(0, g2l.find(' '), "0x0000000000abcdef");
  const std::string bad = testing::write_temp("opensm_bad_guid2lid", g2l);
  CHECK_THAT(refused(with_sm("g2l_bad", {{"routing", "file"}, {"lft_file", lfts}, {"guid2lid_file", bad}})),
             Catch::Contains("/subnet_manager/guid2lid_file: expected OpenSM's guid2lid for this topology"));
  CHECK_THAT(refused(with_sm("g2l_bad2", {{"routing", "file"}, {"lft_file", lfts}, {"guid2lid_file", bad}})),
             Catch::Contains("opensm_bad_guid2lid:1: 0x0000000000abcdef is the GUID of no switch"));

  // A dump missing one switch's table leaves hosts unrouted: refused with the route check's count.
  std::string dump = testing::read_text_file(lfts);
  const std::size_t second = dump.find("Unicast lids", 1);
  dump.erase(0, second);
  const std::string partial = testing::write_temp("opensm_partial.dump", dump);
  CHECK_THAT(refused(with_sm("partial", {{"routing", "file"}, {"lft_file", partial}})),
             Catch::Contains("/subnet_manager/lft_file: expected a routing that reaches every host, got file, which "
                             "leaves "));
  CHECK_THAT(refused(with_sm("opensm_g2l", {{"routing", "opensm"}, {"guid2lid_file", bad}})),
             Catch::Contains("expected no \"guid2lid_file\" with routing \"opensm\""));
}

TEST_CASE("opensm scenario: routing opensm runs the real OpenSM, whose minhop LIDs and LFTs are ours",
          "[scenario][opensm]") {
  ib::topo::ProfileCatalog catalog;
  const ib::topo::Topology t = ib::topo::load_topology(fixture("ft2.json"), catalog);
  for (const char* sm_node : {"h5", "spine1"}) {
    INFO(sm_node);
    const ib::topo::NodeIndex node = *t.find(sm_node);
    ib::scenario::OpenSmRequest request;
    request.engine = "minhop";
    request.sm_port = {node, static_cast<ib::topo::PortNumber>(t.node(node).kind == ib::topo::NodeKind::hca)};
    ib::scenario::OpenSmRun opensm;
    try {
      opensm = ib::scenario::run_opensm(t, request);
    } catch (const ib::scenario::OpenSmError& e) {
      if (e.install.empty())
        FAIL(e.what());
      WARN("skipped: " << e.what() << " (" << e.install << ")");
      return;
    }
    CHECK(opensm.engine_used == "minhop");
    ib::sm::SmOptions theirs;
    theirs.engine = "file";
    theirs.routing.lft_file = opensm.lft_file;
    theirs.lids.guid2lid_file = opensm.guid2lid_file;
    ib::sm::SmOptions ours;
    ours.lids.order = ib::sm::LidOrder::opensm;
    ours.lids.sm_port = request.sm_port;
    const ib::sm::Subnet a = ib::sm::run_subnet_manager(t, theirs);
    const ib::sm::Subnet b = ib::sm::run_subnet_manager(t, ours);
    CHECK(a.lids.base_lid(node, request.sm_port.port) == 1);
    REQUIRE(a.lids.max_lid() == b.lids.max_lid());
    for (ib::topo::NodeIndex n = 0; n < t.node_count(); ++n)
      if (t.node(n).kind == ib::topo::NodeKind::hca)
        CHECK(a.lids.base_lid(n, 1) == b.lids.base_lid(n, 1));
      else
        CHECK(a.routing.lfts[n] == b.routing.lfts[n]);
    const std::string directory = opensm.directory;
    opensm = {};
    CHECK_FALSE(std::filesystem::exists(directory)); // the temporary directory goes with the run
  }

  // End to end: the scenario with routing opensm, against ours with the SM on the same switch.
  const auto r =
      run_cli({"run", with_sm("opensm_minhop", {{"routing", "opensm"}, {"engine", "minhop"}, {"sm_port", "spine1"}}),
               "--format", "json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json replayed = json::parse(r.out);
  CHECK(replayed.at("config").at("subnet_manager").at("engine") == "minhop");
  const json ours = run_ok(with_sm("ours_spine1", {{"lid_order", "opensm"}, {"sm_port", "spine1"}}));
  CHECK(ours.at("results") == replayed.at("results"));
}

TEST_CASE("opensm scenario: routing opensm with an engine that refuses the fabric, and with faults, exits 2",
          "[scenario][opensm]") {
  // ftree with LMC 1: OpenSM falls back to minhop, which the scenario did not ask for.
  const auto fallback =
      run_cli({"validate", with_sm("opensm_ftree_lmc", {{"routing", "opensm"}, {"engine", "ftree"}, {"lmc", 1}})});
  CHECK(fallback.exit_code == 2);
  if (fallback.err.find("apt-get install") == std::string::npos)
    CHECK_THAT(fallback.err, Catch::Contains("/subnet_manager/engine: expected an OpenSM engine that can route this "
                                             "topology, got \"ftree\", which OpenSM replaced by \"minhop\""));
  json s = load(with_sm("opensm_faults", {{"routing", "opensm"}}));
  s["faults"] = json::array({{{"type", "link_down"}, {"at_us", 10}, {"link", "leaf0/5"}}});
  CHECK_THAT(refused(testing::write_temp("opensm_faults2.json", s.dump())),
             Catch::Contains("/subnet_manager/routing: expected an engine of ibnetsim's subnet manager when the "
                             "scenario has faults"));
}

TEST_CASE("opensm scenario: routing opensm without ibsim's client library exits 2 saying what to install",
          "[scenario][opensm]") {
  // UMAD2SIM names the library (as for tools/opensm/run_opensm.sh); a missing one is a missing package.
  ::setenv("UMAD2SIM", "/nonexistent/libumad2sim.so", 1);
  const auto r = run_cli({"validate", with_sm("opensm_missing", {{"routing", "opensm"}})});
  ::unsetenv("UMAD2SIM");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("/subnet_manager/routing: expected OpenSM and ibsim installed (apt-get install "
                                    "opensm ibsim-utils), got libumad2sim.so not found"));
}
