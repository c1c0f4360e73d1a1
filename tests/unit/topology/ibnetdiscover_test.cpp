// ibnetdiscover import and export, and ibsim net files: a hand-written sample in the real tool's format, real
// outputs of ibnetdiscover on fabrics served by ibsim (tools/opensm/golden/<net>-minhop/ibnetdiscover.txt, made by
// tools/opensm/make_golden.sh from tools/opensm/netfiles/<net>.net), the net files themselves, errors at their
// line, and export/import round trips.
#include <algorithm>
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

/// A hand-written fixture in tests/unit/topology/data/, made from ibnetdiscover(8)'s description of its output.
std::string fixture(const std::string& name) {
  std::ifstream file(std::string(IBNETSIM_SOURCE_DIR) + "/tests/unit/topology/data/" + name);
  REQUIRE(file);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

topo::ImportOptions options() {
  return topo::ImportOptions{std::nullopt, std::nullopt, 2, "copper-dac", "imported", std::nullopt, std::nullopt};
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

TEST_CASE("topology::import_ibnetdiscover: devid= picks the profile whose device_ids list it, before link speed",
          "[topology][quick]") {
  // The sample's FDR fabric with its HCAs' devid changed.
  const auto with_hca_devid = [](const std::string& devid) {
    std::string text = sample;
    for (std::size_t at = 0; (at = text.find("devid=0x1003", at)) != std::string::npos;)
      text.replace(at, 12, "devid=" + devid);
    return text;
  };
  // A ConnectX-5 (15b3:1017) is a connectx5-edr whatever its links run at.
  const topo::ImportResult cx5 = import(with_hca_devid("0x1017"));
  CHECK(cx5.topology.node(2).profile == "connectx5-edr");
  CHECK(cx5.notes.front() ==
        "profile connectx5-edr for 2 HCAs of devid 0x1017 (the profile's device_ids; --hca-profile sets it)");
  // A device no profile knows: the link speed decides, and the note says so.
  const topo::ImportResult unknown = import(with_hca_devid("0x1234"));
  CHECK(unknown.topology.node(2).profile == "connectx3-fdr");
  CHECK(std::find(unknown.notes.begin(), unknown.notes.end(),
                  "devid 0x1234 (2 HCAs) is in no shipped profile's device_ids: profile inferred from link speed") !=
        unknown.notes.end());
  // ibsim's nodes print devid=0x0: no device, no note.
  const topo::ImportResult none = import(with_hca_devid("0x0"));
  CHECK(none.topology.node(2).profile == "connectx3-fdr");
  for (const std::string& note : none.notes)
    CHECK(note.find("devid 0x0") == std::string::npos);
  // NodeInfo.DeviceID has 16 bits.
  CHECK_THAT(import_error(with_hca_devid("0x10170")),
             Catch::Contains("expected a 16-bit device ID (NodeInfo.DeviceID), got \"devid=0x10170\""));
}

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
  // The devid= lines say what each node is.
  CHECK(r.notes == std::vector<std::string>{
                       "profile connectx3-fdr for 2 HCAs of devid 0x1003 (the profile's device_ids; --hca-profile "
                       "sets it)",
                       "profile switchx2-fdr for 2 switches of devid 0xc738 (the profile's device_ids; "
                       "--switch-profile sets it)"});
  auto given = options();
  given.switch_profile = "switch-ib2-edr";
  given.hca_profile = "connectx4-edr";
  given.length_m = 3;
  // ConnectX-4 comes dual-port too (MCX456A), so the Ca 2 blocks fit; a third port does not.
  CHECK(import(sample, given).topology.node(2).port_count == 2);
  std::string three = sample;
  three.replace(three.find("Ca\t2 \"H-0002c903000f3a10\""), 4, "Ca\t3");
  CHECK(import_error(three, given) == "net.txt:29: expected at most 2 ports (profile connectx4-edr has 2 ports), got "
                                      "number 3");
  given.hca_profile = "connectx3-fdr";
  const topo::ImportResult chosen = import(sample, given);
  CHECK(chosen.notes.empty());
  CHECK(chosen.topology.node(0).profile == "switch-ib2-edr");
  CHECK(chosen.topology.link(4).length_m == 3);
}

TEST_CASE("topology::import_ibnetdiscover: mlx5 HCAs, whose port 1 has the node GUID", "[topology][quick]") {
  const topo::Topology t = import(fixture("mlx5-edr.ibnetdiscover.txt")).topology;
  REQUIRE(t.node_count() == 5);
  REQUIRE(t.link_count() == 5);
  const topo::Node& node01 = t.node(*t.find("node01_mlx5_0"));
  CHECK(node01.node_guid == 0x98039b0300a1b2c0u);
  CHECK(node01.port_guids.at(0) == 0x98039b0300a1b2c0u);
  CHECK(node01.profile == "connectx4-edr");
  CHECK(t.node(*t.find("MF0_leaf1:MSB7800_U1")).node_guid == 0x248a0703005e1f40u);
  // A GUID of another node on a port is still refused.
  std::string text = fixture("mlx5-edr.ibnetdiscover.txt");
  const std::string from = "[1](98039b0300a1b2d8) \t\"S-248a0703005e1f40\"[2]";
  text.replace(text.find(from), from.size(), "[1](98039b0300a1b2c0) \t\"S-248a0703005e1f40\"[2]");
  CHECK(import_error(text) == "net.txt:36: expected a GUID no other node or port has, got 0x98039b0300a1b2c0, "
                              "already the node GUID of \"node01_mlx5_0\"");
}

TEST_CASE("topology::import_ibnetdiscover: a live HDR fabric, grouped, with dual-port HCAs and odd descriptions",
          "[topology][quick]") {
  const topo::ImportResult r = import(fixture("grouped-hdr.ibnetdiscover.txt"));
  const topo::Topology& t = r.topology;
  REQUIRE(t.node_count() == 4);
  REQUIRE(t.link_count() == 5);
  // Quotes, '#' and UTF-8 inside a description; enhanced and base port 0 on the Switch lines.
  CHECK(t.node(0).name == "MF0_leaf_A_1:MQM8700_U1");
  CHECK(t.node(0).profile == "quantum-hdr");
  CHECK(t.node(0).port_count == 40);
  CHECK(t.node(1).name == "spine");
  CHECK(t.node(1).node_guid == 0x1070fd0300113340u);
  // Both ports of a ConnectX-6 cabled; another with port 2 free.
  const topo::Node& gpu = t.node(2);
  CHECK(gpu.name == "gpu01_train_1_mlx5_0");
  CHECK(gpu.profile == "connectx6-hdr");
  CHECK(gpu.port_count == 2);
  CHECK(gpu.port_guids == std::vector<std::uint64_t>{0xb8cef603000a1b20u, 0xb8cef603000a1b21u});
  CHECK(t.peer(2, 1) == topo::PortRef{0, 1});
  CHECK(t.peer(2, 2) == topo::PortRef{0, 2});
  CHECK(t.node(3).name == "n_ud-02_n_code");
  CHECK(t.peer(3, 2).node == topo::no_node);
  CHECK(t.link(0).speed == ib::link::Speed::hdr);
}

TEST_CASE("topology::import_ibnetdiscover: a port beyond the profile's count, and ends that disagree",
          "[topology][quick]") {
  const auto replaced = [](std::string text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  const std::string hdr = fixture("grouped-hdr.ibnetdiscover.txt");
  // A Switch line with more ports than its profile: at its line.
  CHECK(import_error(replaced(hdr, "Switch\t40 \"S-1070fd0300113340\"", "Switch\t48 \"S-1070fd0300113340\"")) ==
        "net.txt:30: expected at most 40 ports (profile quantum-hdr has 40 ports), got number 48");
  // A Ca with more ports than its profile.
  CHECK(import_error(replaced(hdr, "Ca\t2 \"H-b8cef603000a1c40\"", "Ca\t4 \"H-b8cef603000a1c40\"")) ==
        "net.txt:46: expected at most 2 ports (profile connectx6-hdr has 2 ports), got number 4");
  // The two ends of a link with different widths or speeds.
  CHECK(import_error(replaced(hdr, "[40]\t\"S-1070fd0300112230\"[40]\t\t# \"MF0;leaf \"A\" #1:MQM8700/U1\" lid 1 4xHDR",
                              "[40]\t\"S-1070fd0300112230\"[40]\t\t# \"MF0;leaf \"A\" #1:MQM8700/U1\" lid 1 2xHDR")) ==
        "net.txt:32: expected the width and speed line 24 gives, 4xHDR, got 2xHDR");
  CHECK(import_error(replaced(hdr, "lid 4 lmc 0 \"MF0;leaf \"A\" #1:MQM8700/U1\" lid 1 4xHDR",
                              "lid 4 lmc 0 \"MF0;leaf \"A\" #1:MQM8700/U1\" lid 1 4xEDR")) ==
        "net.txt:40: expected the width and speed line 21 gives, 4xHDR, got 4xEDR");
}

TEST_CASE("topology::import_ibnetdiscover: names from a node name map, cables from a cables table",
          "[topology][quick]") {
  auto o = options();
  o.node_names = topo::parse_node_name_map(fixture("mlx5-edr.node-name-map"), "map");
  o.cables = topo::parse_cable_table(fixture("mlx5-edr.cables.csv"), "cables.csv");
  const topo::ImportResult r = import(fixture("mlx5-edr.ibnetdiscover.txt"), o);
  const topo::Topology& t = r.topology;
  std::vector<std::string> names;
  for (const topo::Node& n : t.nodes()) {
    names.push_back(n.name);
  }
  CHECK(names == std::vector<std::string>{"leaf-1_rack_3", "leaf-2_rack_3", "cn001", "cn002", "node03_mlx5_0"});
  REQUIRE(t.link_count() == 5);
  const auto cable = [&](std::uint32_t l) {
    return std::to_string(t.link(l).length_m).substr(0, 4) + " " + t.link(l).cable;
  };
  CHECK(cable(0) == "1.50 copper-dac"); // from the HCA's end
  CHECK(cable(1) == "3.00 copper-dac"); // the length from the table, the cable --cable's
  CHECK(cable(2) == "30.0 fibre");      // both ends given, alike
  CHECK(cable(3) == "2.00 fibre");
  CHECK(cable(4) == "2.00 copper-dac"); // not in the table
  CHECK(r.links_with_default_length == 2);
  CHECK(r.links_with_default_cable == 2);
  CHECK(r.notes.at(0) == "4 of 5 nodes named by map (the rest by their node descriptions)");
  CHECK(r.notes.at(1) == "3 of 5 link lengths and 3 cable profiles from cables.csv");
}

TEST_CASE("topology::parse_node_name_map and parse_cable_table: bad lines name the file and line",
          "[topology][quick]") {
  const auto map_error = [](const std::string& text) {
    try {
      (void)topo::parse_node_name_map(text, "map");
    } catch (const sim::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(map_error("# ok\n0x10 \"a\"\nxyz \"b\"\n") ==
        "map:3: expected a node GUID and its name, as in 0x0008f10400411a08 \"SW1 (Rack 3)\", got \"xyz \\\"b\\\"\"");
  CHECK(map_error("0x10 \"a\" b\n") == "map:1: expected a name in double quotes, then nothing but a # comment, got "
                                       "\"0x10 \\\"a\\\" b\"");
  CHECK(map_error("0x10 \"a\"\n0x10 \"b\"\n") ==
        "map:2: expected each GUID once, got 0x0000000000000010 again (line 1)");
  CHECK(map_error("0x10\n") == "map:1: expected a node GUID and its name, as in 0x0008f10400411a08 \"SW1 (Rack 3)\", "
                               "got \"0x10\"");
  const auto cable_error = [](const std::string& text) {
    try {
      (void)topo::parse_cable_table(text, "c.csv");
    } catch (const sim::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(cable_error("guid,port,length_m,cable\n") ==
        "c.csv:1: expected a header line node_guid,port,length_m,cable (each column once, any order), got "
        "\"guid,port,length_m,cable\"");
  CHECK(cable_error("# none\n") == "c.csv:1: expected a header line node_guid,port,length_m,cable, got no header");
  CHECK(cable_error("port,node_guid,cable,length_m\n1,0x10,fibre,-3\n") ==
        "c.csv:2: expected length_m: a length in metres, > 0 and <= 1000000, or nothing, got \"-3\"");
  CHECK(cable_error("node_guid,port,length_m,cable\n0x10,0,2,fibre\n") ==
        "c.csv:2: expected port: a port number in [1, 254], got \"0\"");
  CHECK(cable_error("node_guid,port,length_m,cable\n0x10,1,2\n") ==
        "c.csv:2: expected 4 comma-separated cells (node_guid,port,length_m,cable), got 3 in \"0x10,1,2\"");
  // Rows the fabric contradicts, on import.
  const auto import_with = [](const std::string& cables) {
    auto o = options();
    o.cables = topo::parse_cable_table("node_guid,port,length_m,cable\n" + cables, "c.csv");
    return import_error(fixture("mlx5-edr.ibnetdiscover.txt"), o);
  };
  CHECK(import_with("0x77,1,2,fibre\n") ==
        "c.csv:2: expected node_guid: the node GUID of a node of the fabric, got 0x0000000000000077");
  CHECK(import_with("0x248a0703005e1f40,3,2,fibre\n") ==
        "c.csv:2: expected a cabled port of MF0_leaf1:MSB7800_U1, got port 3, which has no link");
  CHECK(import_with("0x248a0703005e1f40,1,2,optical\n") ==
        "c.csv:2: expected cable: a cable profile (copper-dac, fibre), got \"optical\"");
  CHECK(import_with("0x248a0703005e1f40,35,20,fibre\n0x248a0703005e2a80,35,30,fibre\n") ==
        "c.csv:3: expected what line 2 gives for the other end of this link, 20 m, fibre, got 30 m, fibre");
  CHECK(import_with("0x248a0703005e1f40,35,20,fibre\n0x248a0703005e1f40,35,20,fibre\n") ==
        "c.csv:3: expected each port once, got MF0_leaf1:MSB7800_U1 port 35 again (line 2)");
}

TEST_CASE("topology::import_ibnetdiscover: a ports report (ibnetdiscover -p) gives the same fabric",
          "[topology][quick]") {
  const topo::ImportResult r = import(fixture("mlx5-edr.ports.txt"));
  CHECK(graph(r.topology) == graph(import(fixture("mlx5-edr.ibnetdiscover.txt")).topology));
  CHECK(r.topology.node(*r.topology.find("MF0_leaf1:MSB7800_U1")).port_count == 36); // the profile's
  // mlx4 numbering (port p = node GUID + p): one dual-port CA, named by its lowest port's GUID; one port per line.
  const std::string mlx4 =
      "# ibnetdiscover -p\n"
      "CA    12  1 0x0002c903000f3a11 4x FDR - SW     1  7 0x0002c90200487730 ( 'node01 HCA-1' - 'sw a' )\n"
      "CA    13  2 0x0002c903000f3a12 4x FDR - SW     1  8 0x0002c90200487730 ( 'node01 HCA-1' - 'sw a' )\n"
      "CA    14  1 0x0002c903000f3b21 4x FDR - SW     1  9 0x0002c90200487730 ( 'it's \"odd\" # - ok' - 'sw a' )\n";
  const topo::Topology t = import(mlx4).topology;
  REQUIRE(t.node_count() == 3);
  REQUIRE(t.link_count() == 3);
  CHECK(t.node(0).name == "node01_HCA-1");
  CHECK(t.node(0).port_count == 2);
  CHECK(t.node(0).node_guid == 0x2c903000f3a11u);
  CHECK(t.node(0).port_guids == std::vector<std::uint64_t>{0x2c903000f3a11u, 0x2c903000f3a12u});
  CHECK(t.node(1).name == "sw_a");
  CHECK(t.node(1).kind == NodeKind::switch_node);
  CHECK(t.node(1).profile == "switchx2-fdr");
  CHECK(t.node(2).name == "it_s_odd_-_ok");
  CHECK(t.peer(0, 2) == topo::PortRef{1, 8});
  // Errors at their lines.
  CHECK(import_error(mlx4 +
                     "CA    15  1 0x0002c903000f3c31 4x FDR - SW     1 37 0x0002c90200487730 ( 'x' - 'sw a' )\n") ==
        "net.txt:5: expected a port of \"S-0002c90200487730\" in [1, 36] (profile switchx2-fdr has 36 ports), got "
        "port 37");
  CHECK(import_error(mlx4 + "SW     1  7 0x0002c90200487730 4x EDR - CA    12  1 0x0002c903000f3a11 ( 'sw a' - "
                            "'node01 HCA-1' )\n") ==
        "net.txt:5: expected the width and speed line 2 gives, 4xFDR, got 4xEDR");
  CHECK(import_error(mlx4 + "CA    15  1 0x0002c903000f3c31 4x FDR - SW     1 10 ( 'x' - 'sw a' )\n") ==
        "net.txt:5: expected a ports report line: type, LID, port in [1, 254] and port GUID, as in CA 134 1 "
        "0x7cfe9003003b4bde 4x EDR - SW 1719 10 0x7cfe9003009ce5b0 ( 'a' - 'b' ), got \"CA    15  1 "
        "0x0002c903000f3c31 4x FDR - SW     1 10 ( 'x' - 'sw a' )\"");
  CHECK(import_error(mlx4 + "CA    15  1 0x0002c903000f3c31 4x FDR - SW     1 10 0x0002c90200487730\n") ==
        "net.txt:5: expected the node descriptions in parentheses, as in ( 'o0001 HCA-1' - 'ib-i1l1s01' ), got "
        "\"CA    15  1 0x0002c903000f3c31 4x FDR - SW     1 10 0x0002c90200487730\"");
  CHECK(import_error(mlx4 + "Switch 36 \"S-1\"\n") ==
        "net.txt:5: expected a ports report line (ibnetdiscover -p): CA or SW, LID, port, GUID, width, speed, the "
        "remote port and the descriptions, got \"Switch 36 \\\"S-1\\\"\"");
  CHECK(import_error(mlx4 +
                     "RT     9  1 0x0002c903000f3c31 4x FDR - SW     1 10 0x0002c90200487730 ( 'r' - 'sw a' )\n") ==
        "net.txt:5: expected a CA or SW port (routers are not modelled), got \"RT     9  1 0x0002c903000f3c31 4x FDR - "
        "SW     1 10 0x0002c90200487730 ( 'r' - 'sw a' )\"");
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
  CHECK(net.find("\ncaguid=0x2c90100000100\nHca\t2 \"h0\"\n[1]\t\"leaf0\"[1]\t\t# lid 0 lmc 0 \"leaf0\" lid 0 "
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
  hca.switch_profile = "switch-ib2-edr"; // its devid says SwitchX, which would refuse the EDR link first
  const std::string edr_link =
      replaced(replaced(sample, "lid 5 4xFDR", "lid 5 4xEDR"), "lid 5 lmc 0 \"MF0;sw-a:SX6036/U1\" lid 1 4xFDR",
               "lid 5 lmc 0 \"MF0;sw-a:SX6036/U1\" lid 1 4xEDR");
  CHECK(import_error(edr_link, hca) ==
        "net.txt:12: expected a speed that node02_HCA-1 (profile connectx3-fdr) supports: SDR, DDR, QDR, FDR10, FDR, "
        "got string \"EDR\"");
}
