// ibnetdiscover import and export, and ibsim net files: a hand-written sample in the real tool's format, real
// outputs of ibnetdiscover on fabrics served by ibsim (tools/opensm/golden/<net>-minhop/ibnetdiscover.txt, made by
// tools/opensm/make_golden.sh from tools/opensm/netfiles/<net>.net), the net files themselves, errors at their
// line, and export/import round trips.
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "models/topology/catalog.h"
#include "models/topology/generators.h"
#include "models/topology/ibnetdiscover.h"
#include "models/topology/topology.h"
#include "sim/errors.h"

namespace topo = ib::topo;
using topo::NodeKind;

namespace {

const std::string sample = R"(#
# Topology file: generated on Tue Mar  3 10:00:00 2020
#
# Initiated from node 0002c903000f3a10 port 0002c903000f3a11

vendid=0x2c9
devid=0xc738
sysimgguid=0x2c90200487733
switchguid=0x2c90200487730(2c90200487730)
Switch	36 "S-0002c90200487730"		# "MF0;sw-a:SX6036/U1" enhanced port 0 lid 1 lmc 0
[1]	"H-0002c903000f3a10"[1](2c903000f3a11) 		# "node01 HCA-1" lid 3 4xFDR
[2]	"H-0002c903000f3b20"[1](2c903000f3b21) 		# "node02 HCA-1" lid 5 4xFDR
[35]	"S-0002c90200487830"[35]		# "MF0;sw-b:SX6036/U1" lid 2 4xFDR
[36]	"S-0002c90200487830"[36]		# "MF0;sw-b:SX6036/U1" lid 2 4xFDR

vendid=0x2c9
devid=0xc738
sysimgguid=0x2c90200487833
switchguid=0x2c90200487830(2c90200487830)
Switch	36 "S-0002c90200487830"		# "MF0;sw-b:SX6036/U1" enhanced port 0 lid 2 lmc 0
[1]	"H-0002c903000f3a10"[2](2c903000f3a12) 		# "node01 HCA-1" lid 4 4xFDR
[35]	"S-0002c90200487730"[35]		# "MF0;sw-a:SX6036/U1" lid 1 4xFDR
[36]	"S-0002c90200487730"[36]		# "MF0;sw-a:SX6036/U1" lid 1 4xFDR

vendid=0x2c9
devid=0x1003
sysimgguid=0x2c903000f3a13
caguid=0x2c903000f3a10
Ca	2 "H-0002c903000f3a10"		# "node01 HCA-1"
[1](2c903000f3a11) 	"S-0002c90200487730"[1]		# lid 3 lmc 0 "MF0;sw-a:SX6036/U1" lid 1 4xFDR
[2](2c903000f3a12) 	"S-0002c90200487830"[1]		# lid 4 lmc 0 "MF0;sw-b:SX6036/U1" lid 2 4xFDR

vendid=0x2c9
devid=0x1003
sysimgguid=0x2c903000f3b23
caguid=0x2c903000f3b20
Ca	2 "H-0002c903000f3b20"		# "node02 HCA-1"
[1](2c903000f3b21) 	"S-0002c90200487730"[2]		# lid 5 lmc 0 "MF0;sw-a:SX6036/U1" lid 1 4xFDR
)";

/// "ft2.net" is the ibsim net file tools/opensm/netfiles/ft2.net; "ft2.ibnetdiscover.txt" is what ibnetdiscover
/// printed on that fabric, kept with the OpenSM golden run: tools/opensm/golden/ft2-minhop/ibnetdiscover.txt.
std::string data(const std::string& name) {
  const std::string suffix = ".ibnetdiscover.txt";
  const std::string path =
      name.ends_with(suffix)
          ? "/tools/opensm/golden/" + name.substr(0, name.size() - suffix.size()) + "-minhop/ibnetdiscover.txt"
          : "/tools/opensm/netfiles/" + name;
  std::ifstream file(std::string(IBNETSIM_SOURCE_DIR) + path);
  REQUIRE(file);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

topo::ImportOptions options() {
  return topo::ImportOptions{std::nullopt, std::nullopt, 2, "copper-dac", "imported"};
}

topo::ImportResult import(const std::string& text, const topo::ImportOptions& o = options()) {
  topo::ProfileCatalog catalog;
  return topo::import_ibnetdiscover(text, "net.txt", o, catalog);
}

std::string import_error(const std::string& text, const topo::ImportOptions& o = options()) {
  try {
    (void)import(text, o);
  } catch (const sim::InputError& e) {
    return e.what();
  }
  return "";
}

/// The graph independent of node order: each node's fields by name, and each link's ends and rate.
std::set<std::string> graph(const topo::Topology& t) {
  std::set<std::string> items;
  for (const topo::Node& n : t.nodes()) {
    std::string guids;
    for (const std::uint64_t g : n.port_guids) {
      guids += ' ';
      guids += topo::format_guid(g);
    }
    items.insert("node " + n.name + " " + std::string(topo::to_string(n.kind)) + " " + n.profile + " " +
                 std::to_string(n.port_count) + " " + topo::format_guid(n.node_guid) + " " +
                 topo::format_guid(n.system_image_guid) + guids);
  }
  for (const topo::Link& l : t.links()) {
    std::string a = t.node(l.a.node).name + "/" + std::to_string(l.a.port);
    std::string b = t.node(l.b.node).name + "/" + std::to_string(l.b.port);
    items.insert("link " + std::min(a, b) + " " + std::max(a, b) + " " + std::string(ib::link::to_string(l.width)) +
                 std::string(ib::link::to_string(l.speed)) + " " + std::to_string(l.length_m) + " " + l.cable);
  }
  return items;
}

/// The cabling only, with switch and host names mapped by `rename`.
std::set<std::string> cabling(const topo::Topology& t, const std::function<std::string(const std::string&)>& rename) {
  std::set<std::string> items;
  for (const topo::Link& l : t.links()) {
    const std::string a = rename(t.node(l.a.node).name) + "/" + std::to_string(l.a.port);
    const std::string b = rename(t.node(l.b.node).name) + "/" + std::to_string(l.b.port);
    items.insert(std::min(a, b) + " " + std::max(a, b));
  }
  return items;
}

} // namespace

TEST_CASE("topology::import_ibnetdiscover: a cluster's output", "[topology][quick]") {
  const topo::ImportResult r = import(sample);
  const topo::Topology& t = r.topology;
  CHECK(t.name == "imported");
  REQUIRE(t.node_count() == 4);
  REQUIRE(t.link_count() == 5);
  const topo::Node& sw = t.node(0);
  CHECK(sw.name == "MF0_sw-a:SX6036_U1");
  CHECK(sw.kind == NodeKind::switch_node);
  CHECK(sw.port_count == 36);
  CHECK(sw.node_guid == 0x2c90200487730u);
  CHECK(sw.system_image_guid == 0x2c90200487733u);
  CHECK(sw.profile == "switchx2-fdr");
  const topo::Node& ca = t.node(2);
  CHECK(ca.name == "node01_HCA-1");
  CHECK(ca.kind == NodeKind::hca);
  CHECK(ca.port_count == 2);
  CHECK(ca.profile == "connectx3-fdr");
  CHECK(ca.port_guids == std::vector<std::uint64_t>{0x2c903000f3a11u, 0x2c903000f3a12u});
  CHECK(t.peer(2, 2) == topo::PortRef{1, 1});
  CHECK(t.peer(0, 36) == topo::PortRef{1, 36});
  CHECK(t.link(0).width == ib::link::Width::x4);
  CHECK(t.link(0).speed == ib::link::Speed::fdr);
  CHECK(t.link(0).length_m == 2);
  CHECK(t.link(0).cable == "copper-dac");
  CHECK(r.notes == std::vector<std::string>{
                       "profile connectx3-fdr for 2 HCAs whose fastest link is FDR (inferred; --hca-profile sets it)",
                       "profile switchx2-fdr for 2 switches whose fastest link is FDR (inferred; --switch-profile "
                       "sets it)"});
  auto given = options();
  given.switch_profile = "switch-ib2-edr";
  given.hca_profile = "connectx4-edr";
  given.length_m = 3;
  CHECK(import_error(sample, given) == "net.txt:29: expected at most 1 port (profile connectx4-edr has 1 port), got "
                                       "number 2");
  given.hca_profile = "connectx3-fdr";
  const topo::ImportResult chosen = import(sample, given);
  CHECK(chosen.notes.empty());
  CHECK(chosen.topology.node(0).profile == "switch-ib2-edr");
  CHECK(chosen.topology.link(4).length_m == 3);
}

TEST_CASE("topology::inferred_profile: each speed's generation of switch and HCA, NDR included", "[topology][quick]") {
  using ib::link::Speed;
  CHECK(topo::inferred_profile(NodeKind::switch_node, Speed::fdr) == "switchx2-fdr");
  CHECK(topo::inferred_profile(NodeKind::hca, Speed::edr) == "connectx4-edr");
  CHECK(topo::inferred_profile(NodeKind::switch_node, Speed::hdr) == "quantum-hdr");
  CHECK(topo::inferred_profile(NodeKind::switch_node, Speed::ndr) == "quantum2-ndr");
  CHECK(topo::inferred_profile(NodeKind::hca, Speed::ndr) == "connectx7-ndr");
}

TEST_CASE("topology::import_ibnetdiscover: grouped output (ibnetdiscover -g) with external port numbers",
          "[topology][quick]") {
  const std::string grouped = R"(#
# Topology file: generated on Tue Mar  3 10:00:00 2020
#
# Initiated from node 0002c903000f3a10 port 0002c903000f3a11

Chassis 1 (guid 0x2c90200487733)

# Spine Nodes
vendid=0x2c9
devid=0xb924
sysimgguid=0x2c90200487733		# Chassis 1 (ISR9024)
switchguid=0x2c90200487730(2c90200487730)	# ISR9024 Spine 1 Chip 1
Switch	24 "S-0002c90200487730"		# "ISR9024 Spine 1" enhanced port 0 lid 1 lmc 0
[1][ext 1]	"H-0002c903000f3a10"[1](2c903000f3a11) 		# "node01 HCA-1" lid 3 4xDDR

# Line Nodes
# Chassis Switches

# Chassis CAs

Non-Chassis Nodes

vendid=0x2c9
devid=0x6282
sysimgguid=0x2c903000f3a13
caguid=0x2c903000f3a10
Ca	2 "H-0002c903000f3a10"		# "node01 HCA-1"
[1](2c903000f3a11) 	"S-0002c90200487730"[1][ext 1]		# lid 3 lmc 0 "ISR9024 Spine 1" lid 1 4xDDR
)";
  const topo::Topology t = import(grouped).topology;
  REQUIRE(t.node_count() == 2);
  REQUIRE(t.link_count() == 1);
  CHECK(t.node(0).name == "ISR9024_Spine_1");
  CHECK(t.node(0).port_count == 24);
  CHECK(t.node(0).system_image_guid == 0x2c90200487733u);
  CHECK(t.link(0).speed == ib::link::Speed::ddr);
  CHECK(t.node(1).profile == "connectx3-fdr");
}

TEST_CASE("topology::import_ibnetdiscover: ibnetdiscover on ibsim gives the net file's fabric", "[topology][quick]") {
  for (const std::string net : {"ft2", "ft3", "mesh3x3", "ring6"}) {
    INFO(net);
    const topo::Topology discovered = import(data(net + ".ibnetdiscover.txt")).topology;
    CHECK(graph(discovered) == graph(import(data(net + ".net")).topology));
  }
  const topo::Topology discovered = import(data("ft2.ibnetdiscover.txt")).topology;
  CHECK(discovered.node_count() == 16 + 6);
  CHECK(discovered.link_count() == 16 + 8);
  // ibsim's GUIDs: switches from 0x200000 in file order, HCAs from 0x100000 stepping by ports + 1.
  const topo::Node& leaf3 = discovered.node(*discovered.find("leaf3"));
  CHECK(leaf3.node_guid == 0x200003u);
  const topo::Node& h13 = discovered.node(*discovered.find("h13"));
  CHECK(h13.node_guid == 0x10001au);
  CHECK(h13.port_guids == std::vector<std::uint64_t>{0x10001bu});
  CHECK(discovered.link(0).speed == ib::link::Speed::edr);
  CHECK(discovered.node(0).profile == "switch-ib2-edr");
}

TEST_CASE("topology::import_ibnetdiscover: the mesh and ring OpenSM's dor runs on are the generator's",
          "[topology][quick]") {
  topo::ProfileCatalog catalog;
  const topo::CommonOptions edr{"switch-ib2-edr", "connectx4-edr", std::nullopt, std::nullopt, 2, "copper-dac", 2,
                                "copper-dac"};
  const auto same = [](const std::string& n) { return n; };
  // ibsim's swI sits at x = I % 3, y = I / 3 (tools/opensm/netfiles/gen_netfiles.py).
  const auto mesh_name = [](const std::string& name) {
    if (name.rfind("sw_", 0) != 0) {
      return name;
    }
    return "sw" + std::to_string(std::stoi(name.substr(5, 1)) * 3 + std::stoi(name.substr(3, 1)));
  };
  const topo::Topology mesh = topo::generate_grid({edr, {3, 3}, 1, false}, catalog);
  CHECK(cabling(mesh, mesh_name) == cabling(import(data("mesh3x3.ibnetdiscover.txt")).topology, same));
  const auto ring_name = [](const std::string& name) {
    return name.rfind("sw_", 0) == 0 ? "sw" + name.substr(3) : name;
  };
  const topo::Topology ring = topo::generate_grid({edr, {6}, 1, true}, catalog);
  CHECK(cabling(ring, ring_name) == cabling(import(data("ring6.ibnetdiscover.txt")).topology, same));
}

TEST_CASE("topology::export_ibnetdiscover: import gives the same graph back", "[topology][quick]") {
  topo::ProfileCatalog catalog;
  const std::string examples = std::string(IBNETSIM_SOURCE_DIR) + "/topologies/examples/";
  const topo::Topology fdr = topo::load_topology(examples + "fdr-pair.json", catalog);
  const std::string text = topo::export_ibnetdiscover(fdr);
  CHECK(text.find("switchguid=0x2c90200a1b200(2c90200a1b200)\nSwitch\t36 \"S-0002c90200a1b200\"\t\t# \"sw-a\" base "
                  "port 0 lid 0 lmc 0\n[1]\t\"H-0002c90100000100\"[1](2c90100000101) \t\t# \"node01\" lid 0 4xFDR\n") !=
        std::string::npos);
  CHECK(text.find("Ca\t2 \"H-0002c90300a1b2c0\"\t\t# \"storage\"\n[1](2c90300a1b2c1) \t\"S-0002c90200a1b200\"[2]\t\t# "
                  "lid 0 lmc 0 \"sw-a\" lid 0 4xFDR\n") != std::string::npos);
  // Inferred profiles (FDR) are the file's, so only cables differ: fibre 5 m between the switches.
  std::set<std::string> expected = graph(fdr);
  std::set<std::string> back = graph(import(text).topology);
  CHECK(back.size() == expected.size());
  std::set<std::string> only_expected;
  for (const std::string& item : expected) {
    if (back.count(item) == 0) {
      only_expected.insert(item);
    }
  }
  CHECK(only_expected == std::set<std::string>{"link sw-a/35 sw-b/35 4xFDR 5.000000 fibre",
                                               "link sw-a/36 sw-b/36 4xFDR 5.000000 fibre"});

  const topo::CommonOptions hdr{"quantum-hdr", "connectx6-hdr", std::nullopt, std::nullopt, 2, "copper-dac", 2,
                                "copper-dac"};
  for (const topo::Topology& t : {topo::generate_dragonfly({hdr, 3, 2, 2, std::nullopt}, catalog),
                                  topo::generate_grid({hdr, {3, 3}, 2, true}, catalog)}) {
    INFO(t.name);
    CHECK(graph(import(topo::export_ibnetdiscover(t)).topology) == graph(t));
    CHECK(graph(import(topo::export_ibsim_net(t)).topology) == graph(t));
  }
}

TEST_CASE("topology::export_ibsim_net: node GUIDs set explicitly before each node", "[topology][quick]") {
  topo::ProfileCatalog catalog;
  const topo::CommonOptions edr{"switch-ib2-edr", "connectx4-edr", std::nullopt, std::nullopt, 2, "copper-dac", 10,
                                "fibre"};
  const topo::Topology t = topo::generate_leaf_spine({edr, 2, 1, 1, 1}, catalog);
  const std::string net = topo::export_ibsim_net(t);
  CHECK(net.find("\nswitchguid=0x2c90200000300\nSwitch\t36 \"leaf0\"\n[1]\t\"h0\"[1]\t\t# \"h0\" lid 0 4xEDR\n[2]\t"
                 "\"spine0\"[1]\t\t# \"spine0\" lid 0 4xEDR\n") != std::string::npos);
  CHECK(net.find("\ncaguid=0x2c90100000100\nHca\t1 \"h0\"\n[1]\t\"leaf0\"[1]\t\t# lid 0 lmc 0 \"leaf0\" lid 0 "
                 "4xEDR\n") != std::string::npos);
  CHECK(net.find("cannot reproduce") == std::string::npos);
  // Switches first, as ibnetdiscover lists them; the first HCA is where ibsim attaches the SM by default.
  CHECK(net.find("Switch") < net.find("Hca"));
}

TEST_CASE("topology::import_ibnetdiscover: bad lines name the file and line", "[topology][quick]") {
  const auto replaced = [](std::string text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  std::string text;
  std::string message;
  SECTION("a remote node without a block") {
    text = replaced(sample, "[2]\t\"H-0002c903000f3b20\"[1]", "[2]\t\"H-00000000deadbeef\"[1]");
    message = "net.txt:12: expected a node id with its own Switch or Ca block, got \"H-00000000deadbeef\"";
  }
  SECTION("a port beyond the node's count") {
    text = replaced(sample, "[36]\t\"S-0002c90200487830\"[36]", "[37]\t\"S-0002c90200487830\"[36]");
    message = "net.txt:14: expected a port of \"S-0002c90200487730\" in [1, 36], got port 37";
  }
  SECTION("a speed the simulator does not know") {
    text = replaced(sample, "lid 5 4xFDR", "lid 5 4x???");
    message = "net.txt:12: expected a link width and speed such as 4xEDR (widths 1x, 2x, 4x, 8x, 12x; speeds SDR to "
              "NDR), got \"4x???\"";
  }
  SECTION("two ends that disagree") {
    text = replaced(sample, "[36]\t\"S-0002c90200487730\"[36]", "[36]\t\"S-0002c90200487730\"[34]");
    message = "net.txt:23: expected \"S-0002c90200487730\"[36], the peer line 14 gives this port, got "
              "\"S-0002c90200487730\"[34]";
  }
  SECTION("a line of no known kind") {
    text =
        replaced(sample, "devid=0x1003\nsysimgguid=0x2c903000f3b23", "devid=0x1003\nhello\nsysimgguid=0x2c903000f3b23");
    message = "net.txt:35: expected a Switch, Ca or port line, a comment, or a vendid=, devid=, sysimgguid=, "
              "switchguid= or caguid= line, got \"hello\"";
  }
  SECTION("a router") {
    text = sample + "\nrtguid=0x10\nRt\t1 \"R-0000000000000010\"\t\t# \"gw\"\n";
    message = "net.txt:41: expected a Switch or Ca node (routers are not modelled), got "
              "\"Rt\\t1 \\\"R-0000000000000010\\\"\\t\\t# \\\"gw\\\"\"";
  }
  SECTION("a port line outside a block") {
    text = replaced(sample, "vendid=0x2c9\ndevid=0x1003\nsysimgguid=0x2c903000f3a13",
                    "[1]\t\"S-0002c90200487730\"[1]\nvendid=0x2c9\ndevid=0x1003\nsysimgguid=0x2c903000f3a13");
    message =
        "net.txt:25: expected a port line inside a Switch or Ca block, got \"[1]\\t\\\"S-0002c90200487730\\\"[1]\"";
  }
  SECTION("a duplicate GUID, found by the loader, at the node's line") {
    text = replaced(sample, "caguid=0x2c903000f3b20", "caguid=0x2c903000f3a10");
    message = "net.txt:37: expected a GUID no other node or port has, got 0x0002c903000f3a10, already the node GUID of "
              "\"node01_HCA-1\"";
  }
  SECTION("a host with no path, found by the loader, at the node's line") {
    text = sample + "\ncaguid=0x77\nCa\t1 \"H-0000000000000077\"\t\t# \"lonely\"\n";
    message = "net.txt:41: expected a host with a path to \"node01_HCA-1\" (only switches forward), got host "
              "\"lonely\" with no path to it";
  }
  SECTION("an empty file") {
    text = "# nothing\n";
    message = "net.txt:1: expected at least one Switch or Ca block, got none";
  }
  CHECK(import_error(text) == message);
  auto hca = options();
  hca.hca_profile = "connectx3-fdr";
  const std::string edr_link =
      replaced(replaced(sample, "lid 5 4xFDR", "lid 5 4xEDR"), "lid 5 lmc 0 \"MF0;sw-a:SX6036/U1\" lid 1 4xFDR",
               "lid 5 lmc 0 \"MF0;sw-a:SX6036/U1\" lid 1 4xEDR");
  CHECK(import_error(edr_link, hca) ==
        "net.txt:12: expected a speed that node02_HCA-1 (profile connectx3-fdr) supports: SDR, DDR, QDR, FDR10, FDR, "
        "got string \"EDR\"");
}
