// Topology files: a valid file loads, every rejected input names the file, the JSON pointer, what was expected
// and what was found, the writer's output reads back equal, the schema lists exactly the keys the loader accepts,
// and the shipped examples load.
#include <algorithm>
#include <filesystem>
#include <set>

#include <catch2/catch.hpp>

#include "models/topology/catalog.h"
#include "models/topology/generators.h"
#include "models/topology/topology.h"
#include "sim/errors.h"
#include "sim/json_reader.h"

namespace topo = ib::topo;
using nlohmann::json;

namespace {

const json base = json::parse(R"({
  "name": "t", "description": "two hosts on two switches",
  "link_defaults": {"width": "4x", "speed": "EDR", "length_m": 2, "cable": "copper-dac"},
  "nodes": [
    {"name": "h0", "kind": "hca", "profile": "connectx4-edr"},
    {"name": "h1", "kind": "hca", "profile": "connectx4-edr"},
    {"name": "leaf0", "kind": "switch", "profile": "switch-ib2-edr"},
    {"name": "leaf1", "kind": "switch", "profile": "switch-ib2-edr", "ports": 8}
  ],
  "links": [
    {"a": "h0/1", "b": "leaf0/1"},
    {"a": "h1/1", "b": "leaf1/1"},
    {"a": "leaf0/9", "b": "leaf1/8", "length_m": 10, "cable": "fibre"}
  ]
})");

topo::Topology read(const json& doc) {
  topo::ProfileCatalog catalog;
  return topo::read_topology(sim::JsonDocument{"t.json", doc, ""}, catalog);
}

/// The message of the InputError reading `doc` raises; "" if it reads.
std::string error_of(const json& doc) {
  try {
    (void)read(doc);
  } catch (const sim::InputError& e) {
    return e.what();
  }
  return "";
}

/// The keys the loader accepts in the object at `pointer`, from the error an unknown key there raises.
std::set<std::string> accepted_keys(json doc, const std::string& pointer) {
  doc[json::json_pointer(pointer)]["zz_unknown"] = 1;
  const std::string message = error_of(doc);
  const std::string lead = "expected one of the keys ";
  const std::size_t from = message.find(lead);
  const std::size_t to = message.find(", got unknown key \"zz_unknown\"");
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  std::set<std::string> keys;
  std::string list = message.substr(from + lead.size(), to - from - lead.size()) + ", ";
  for (std::size_t at = 0; at < list.size();) {
    const std::size_t comma = list.find(", ", at);
    keys.insert(list.substr(at, comma - at));
    at = comma + 2;
  }
  return keys;
}

std::set<std::string> property_names(const json& object_schema) {
  std::set<std::string> names;
  for (const auto& [key, value] : object_schema.at("properties").items()) {
    names.insert(key);
  }
  return names;
}

json schema() {
  return sim::load_json_file(std::string(IBNETSIM_SOURCE_DIR) + "/topologies/schema/topology.schema.json").root;
}

} // namespace

TEST_CASE("topology::read_topology: a valid file", "[topology][quick]") {
  const topo::Topology t = read(base);
  CHECK(t.name == "t");
  CHECK(t.description == "two hosts on two switches");
  REQUIRE(t.node_count() == 4);
  REQUIRE(t.link_count() == 3);
  const topo::Node& leaf1 = t.node(3);
  CHECK(leaf1.port_count == 8);
  CHECK(t.node(2).port_count == 36); // the profile's
  CHECK(t.node(0).port_count == 2);  // the profile's: port 2 is not cabled
  CHECK(t.node(0).node_guid == topo::default_node_guid(topo::NodeKind::hca, 0));
  CHECK(t.node(0).port_guids == std::vector<std::uint64_t>{t.node(0).node_guid + 1, t.node(0).node_guid + 2});
  CHECK(leaf1.port_guids == std::vector<std::uint64_t>{leaf1.node_guid});
  CHECK(t.node(2).system_image_guid == t.node(2).node_guid);
  const topo::Link& isl = t.link(2);
  CHECK(isl.a == topo::PortRef{2, 9});
  CHECK(isl.b == topo::PortRef{3, 8});
  CHECK(isl.length_m == 10);
  CHECK(isl.cable == "fibre");
  CHECK(t.link(0).width == ib::link::Width::x4);
  CHECK(t.link(0).speed == ib::link::Speed::edr);
  CHECK(t.link(0).cable == "copper-dac");
  CHECK(t.peer(3, 8) == topo::PortRef{2, 9});
  CHECK_FALSE(t.grid.has_value());
}

TEST_CASE("topology::read_topology: explicit GUIDs, coordinates and grid", "[topology][quick]") {
  json doc = base;
  doc["nodes"][2]["guid"] = "0x0002C90200487730";
  doc["nodes"][2]["system_image_guid"] = "0x2c90200487733";
  doc["nodes"][0]["ports"] = 1;
  doc["nodes"][0]["port_guids"] = {"0x77"};
  doc["nodes"][2]["coordinates"] = {0, 1};
  doc["grid"] = {{"extents", {2, 2}}, {"torus", false}};
  const topo::Topology t = read(doc);
  CHECK(t.node(2).node_guid == 0x0002c90200487730u);
  CHECK(t.node(2).system_image_guid == 0x2c90200487733u);
  CHECK(t.node(0).port_guids == std::vector<std::uint64_t>{0x77});
  CHECK(t.node(2).coordinates == std::vector<std::int32_t>{0, 1});
  REQUIRE(t.grid.has_value());
  CHECK(t.grid->extents == std::vector<std::uint32_t>{2, 2});
  CHECK_FALSE(t.grid->torus);
}

TEST_CASE("topology::read_topology: an HCA port may have its own node's GUID (mlx5), no other", "[topology][quick]") {
  json doc = base;
  doc["nodes"][0]["guid"] = "0x98039b0300a1b2c0";
  doc["nodes"][0]["ports"] = 1;
  doc["nodes"][0]["port_guids"] = {"0x98039b0300a1b2c0"};
  const topo::Topology t = read(doc);
  CHECK(t.node(0).node_guid == 0x98039b0300a1b2c0u);
  CHECK(t.node(0).port_guids == std::vector<std::uint64_t>{0x98039b0300a1b2c0u});
  // Another node's GUID, or the node GUID on two ports, is still a duplicate.
  doc["nodes"][1]["ports"] = 1;
  doc["nodes"][1]["port_guids"] = {"0x98039b0300a1b2c0"};
  CHECK(error_of(doc) == "t.json:/nodes/1/port_guids/0: expected a GUID no other node or port has, got "
                         "0x98039b0300a1b2c0, already the node GUID of \"h0\"");
  doc["nodes"][1].erase("port_guids");
  doc["nodes"][0]["profile"] = "connectx3-fdr";
  doc["nodes"][0]["ports"] = 2;
  doc["nodes"][0]["port_guids"] = {"0x98039b0300a1b2c0", "0x98039b0300a1b2c0"};
  doc["links"][0]["speed"] = "FDR";
  CHECK(error_of(doc) == "t.json:/nodes/0/port_guids/1: expected a GUID no other node or port has, got "
                         "0x98039b0300a1b2c0, already the node GUID of this node");
}

TEST_CASE("topology::read_topology: each rejected input names the file, the pointer and the problem",
          "[topology][quick]") {
  json doc = base;
  std::string message;
  SECTION("unknown node in a link") {
    doc["links"][1]["b"] = "spine9/1";
    message = "t.json:/links/1/b: expected the name of a node in /nodes, got unknown node \"spine9\" in \"spine9/1\"";
  }
  SECTION("port used twice") {
    doc["links"][1]["b"] = "leaf0/1";
    message = "t.json:/links/1/b: expected a free port, got leaf0/1, already cabled at /links/0/b";
  }
  SECTION("both ends on one port") {
    doc["links"][1]["b"] = "h1/1";
    message = "t.json:/links/1/b: expected a free port, got h1/1, already cabled at /links/1/a";
  }
  SECTION("port 0") {
    doc["links"][0]["b"] = "leaf0/0";
    message = "t.json:/links/0/b: expected a port of leaf0 in [1, 36], got port 0";
  }
  SECTION("port beyond the node's port count") {
    doc["links"][2]["b"] = "leaf1/9";
    message = "t.json:/links/2/b: expected a port of leaf1 in [1, 8], got port 9";
  }
  SECTION("malformed NODE/PORT") {
    doc["links"][0]["b"] = "leaf0";
    message = "t.json:/links/0/b: expected \"NODE/PORT\": a node's name, '/' and a port number, got string \"leaf0\"";
  }
  SECTION("a width one end cannot run") {
    doc["links"][2]["width"] = "12x";
    message = "t.json:/links/2/width: expected a width that leaf0 (profile switch-ib2-edr) supports: 1x, 4x, got "
              "string \"12x\"";
  }
  SECTION("a default speed one end cannot run") {
    doc["nodes"][1]["profile"] = "connectx3-fdr";
    message = "t.json:/links/1: expected a speed that h1 (profile connectx3-fdr) supports: SDR, DDR, QDR, FDR10, FDR, "
              "got string \"EDR\" (from /link_defaults/speed)";
  }
  SECTION("a host with no path to the others") {
    doc["links"].erase(2);
    message = "t.json:/nodes/1: expected a host with a path to \"h0\" (only switches forward), got host \"h1\" with no "
              "path to it";
  }
  SECTION("hosts do not forward") {
    doc["nodes"][0]["profile"] = "connectx3-fdr";
    doc["nodes"][1]["profile"] = "connectx3-fdr";
    doc["nodes"].push_back({{"name", "h2"}, {"kind", "hca"}, {"profile", "connectx3-fdr"}});
    doc["links"].push_back({{"a", "h0/2"}, {"b", "h2/1"}, {"speed", "FDR"}}); // h2 hangs on h0: reachable
    doc["links"][1]["speed"] = "FDR";
    doc["links"][0]["speed"] = "FDR";
    doc["nodes"].push_back({{"name", "h3"}, {"kind", "hca"}, {"profile", "connectx3-fdr"}});
    doc["links"].push_back({{"a", "h2/2"}, {"b", "h3/1"}, {"speed", "FDR"}}); // h3 only behind h2
    message = "t.json:/nodes/5: expected a host with a path to \"h0\" (only switches forward), got host \"h3\" with no "
              "path to it";
  }
  SECTION("unknown key in a link") {
    doc["links"][0]["colour"] = "red";
    message = "t.json:/links/0/colour: expected one of the keys a, b, width, speed, length_m, cable, got unknown key "
              "\"colour\"";
  }
  SECTION("wrong type") {
    doc["nodes"][3]["ports"] = "8";
    message = "t.json:/nodes/3/ports: expected an integer in [1, 254], got string \"8\"";
  }
  SECTION("more ports than the profile") {
    doc["nodes"][3]["ports"] = 40;
    message = "t.json:/nodes/3/ports: expected at most 36 ports (profile switch-ib2-edr has 36 ports), got number 40";
  }
  SECTION("a profile of another model") {
    doc["nodes"][2]["profile"] = "fibre";
    message = "t.json:/nodes/2/profile: expected a switch profile (quantum-hdr, quantum2-ndr, switch-ib2-edr, "
              "switchx2-fdr), got "
              "string \"fibre\", a cable profile";
  }
  SECTION("no such profile") {
    doc["nodes"][0]["profile"] = "connectx9";
    message = "t.json:/nodes/0/profile: expected an hca profile (connect-ib-fdr, connectx3-fdr, connectx4-edr, "
              "connectx5-edr, connectx6-hdr, connectx7-ndr), got string \"connectx9\", no such profile";
  }
  SECTION("unknown kind") {
    doc["nodes"][0]["kind"] = "router";
    message = "t.json:/nodes/0/kind: expected one of \"hca\", \"switch\", got string \"router\"";
  }
  SECTION("duplicate name") {
    doc["nodes"][1]["name"] = "h0";
    message = "t.json:/nodes/1/name: expected a name no other node has, got \"h0\", already the name of /nodes/0";
  }
  SECTION("name with a character links cannot carry") {
    doc["nodes"][1]["name"] = "h/1";
    message = "t.json:/nodes/1/name: expected a name of at most 64 letters, digits, '_', '-', '.' or ':', got "
              "\"h/1\"";
  }
  SECTION("duplicate node GUID") {
    doc["nodes"][0]["guid"] = "0x10";
    doc["nodes"][2]["guid"] = "0x10";
    message = "t.json:/nodes/2/guid: expected a GUID no other node or port has, got 0x0000000000000010, already the "
              "node GUID of \"h0\"";
  }
  SECTION("node GUID equal to another node's port GUID") {
    doc["nodes"][0]["guid"] = "0x10";
    doc["nodes"][1]["guid"] = "0x11";
    message = "t.json:/nodes/1/guid: expected a GUID no other node or port has, got 0x0000000000000011, already the "
              "GUID of port 1 of \"h0\"";
  }
  SECTION("malformed GUID") {
    doc["nodes"][0]["guid"] = "12";
    message = "t.json:/nodes/0/guid: expected a GUID: \"0x\" and 1 to 16 hex digits, not 0, got string \"12\"";
  }
  SECTION("GUID 0") {
    doc["nodes"][0]["guid"] = "0x0";
    message = "t.json:/nodes/0/guid: expected a GUID: \"0x\" and 1 to 16 hex digits, not 0, got string \"0x0\"";
  }
  SECTION("wrong number of port GUIDs") {
    doc["nodes"][2]["port_guids"] = {"0x1", "0x2"};
    message = "t.json:/nodes/2/port_guids: expected an array of exactly 1 element, got array of 2";
  }
  SECTION("a link field in neither the link nor link_defaults") {
    doc["link_defaults"].erase("cable");
    message = "t.json:/links/0: expected a cable profile (key \"cable\" here or in /link_defaults), got nothing";
  }
  SECTION("zero length") {
    doc["links"][2]["length_m"] = 0;
    message = "t.json:/links/2/length_m: expected a length in metres, > 0 and <= 1000000, got number 0";
  }
  SECTION("a cable that is not a cable profile") {
    doc["links"][2]["cable"] = "quantum-hdr";
    message = "t.json:/links/2/cable: expected a cable profile (copper-dac, fibre), got string \"quantum-hdr\", a "
              "switch profile";
  }
  SECTION("bad link_defaults value") {
    doc["link_defaults"]["speed"] = "XDR";
    message = "t.json:/link_defaults/speed: expected one of \"SDR\", \"DDR\", \"QDR\", \"FDR10\", \"FDR\", \"EDR\", "
              "\"HDR\", \"NDR\", got string \"XDR\"";
  }
  SECTION("unknown top-level key") {
    doc["switches"] = json::array();
    message = "t.json:/switches: expected one of the keys $schema, name, description, generator, link_defaults, nodes, "
              "links, grid, got unknown key \"switches\"";
  }
  SECTION("nodes beside a generator") {
    doc["generator"] = {{"type", "mesh"}};
    message = "t.json:/link_defaults: expected no \"link_defaults\" beside \"generator\" (the generator makes the "
              "fabric), got key \"link_defaults\"";
  }
  SECTION("coordinates outside the grid") {
    doc["nodes"][2]["coordinates"] = {0, 2};
    doc["grid"] = {{"extents", {2, 2}}, {"torus", false}};
    message = "t.json:/nodes/2/coordinates: expected 2 coordinates within /grid/extents [2, 2], got [0, 2]";
  }
  SECTION("no nodes") {
    doc["nodes"] = json::array();
    doc["links"] = json::array();
    message = "t.json:/nodes: expected an array of at least 1 element, got array of 0";
  }
  CHECK(error_of(doc) == message);
}

TEST_CASE("topology::to_json: the written file reads back equal", "[topology][quick]") {
  json doc = base;
  doc["nodes"][2]["guid"] = "0x0002c90200487730";
  doc["nodes"][2]["system_image_guid"] = "0x2c90200487733";
  doc["nodes"][0]["ports"] = 1;
  doc["nodes"][0]["port_guids"] = {"0x77"};
  doc["nodes"][3]["coordinates"] = {1};
  doc["grid"] = {{"extents", {2}}, {"torus", true}};
  doc["links"][2]["length_m"] = 2.75;
  const topo::Topology t = read(doc);
  const json written = topo::to_json(t);
  CHECK(written.at("links").at(2).at("length_m") == 2.75);
  CHECK(written.at("links").at(0).at("length_m").is_number_integer());
  CHECK(written.at("nodes").at(2).at("guid") == "0x0002c90200487730");
  CHECK_FALSE(written.at("nodes").at(1).contains("port_guids")); // the default is not written
  CHECK(read(written) == t);
  const std::string text = topo::to_json_text(t);
  CHECK(json::parse(text) == written);
  CHECK(read(json::parse(text)) == t);
  CHECK(text.find("\n    {\"name\": \"h0\", \"kind\": \"hca\", \"profile\": \"connectx4-edr\", \"ports\": 1, ") !=
        std::string::npos);
}

TEST_CASE("topology::read_topology: a generator block is expanded", "[topology][quick]") {
  const json doc = json::parse(R"({
    "name": "small", "description": "from a generator",
    "generator": {"type": "leaf-spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 3,
                  "switch_profile": "quantum-hdr", "hca_profile": "connectx6-hdr",
                  "host_length_m": 1, "host_cable": "copper-dac", "switch_length_m": 20, "switch_cable": "fibre"}
  })");
  const topo::Topology t = read(doc);
  CHECK(t.name == "small");
  CHECK(t.description == "from a generator");
  CHECK(t.node_count() == 6 + 4);
  CHECK(t.link_count() == 6 + 4);
  CHECK(t.link(0).speed == ib::link::Speed::hdr);
  CHECK(t.link(0).length_m == 1);
  CHECK(t.link(9).length_m == 20);

  json bad = doc;
  SECTION("an option the profile cannot carry names the block's key") {
    bad["generator"]["hosts_per_leaf"] = 39;
    CHECK(error_of(bad) == "t.json:/generator/hosts_per_leaf: expected at most 40 ports per switch (profile "
                           "quantum-hdr), got 41 ports: 39 hosts + 2 uplinks per leaf");
  }
  SECTION("a missing parameter") {
    bad["generator"].erase("spines");
    CHECK(error_of(bad) == "t.json:/generator/spines: expected an integer in [1, 254] (required key \"spines\"), got "
                           "nothing");
  }
  SECTION("a parameter of another type") {
    bad["generator"]["k"] = 4;
    CHECK(error_of(bad) ==
          "t.json:/generator/k: expected one of the keys type, leaves, spines, hosts_per_leaf, parallel_links, "
          "switch_profile, hca_profile, width, speed, host_length_m, host_cable, switch_length_m, switch_cable, got "
          "unknown key \"k\"");
  }
  SECTION("a speed the profiles do not share") {
    bad["generator"]["hca_profile"] = "connectx3-fdr";
    bad["generator"]["speed"] = "HDR";
    CHECK(error_of(bad) == "t.json:/generator/speed: expected a speed both quantum-hdr and connectx3-fdr support: SDR, "
                           "DDR, QDR, FDR, got string \"HDR\"");
  }
  SECTION("an unknown type") {
    bad["generator"]["type"] = "hypercube";
    CHECK(error_of(bad) == "t.json:/generator/type: expected one of \"fat-tree\", \"leaf-spine\", \"dragonfly\", "
                           "\"torus\", \"mesh\", got string \"hypercube\"");
  }
}

TEST_CASE("topology schema: lists exactly the keys the loader accepts", "[topology][quick]") {
  const json s = schema();
  const json& defs = s.at("$defs");
  CHECK(accepted_keys(base, "") == property_names(s));
  CHECK(accepted_keys(base, "/nodes/0") == property_names(defs.at("node")));
  CHECK(accepted_keys(base, "/links/0") == property_names(defs.at("link")));
  CHECK(accepted_keys(base, "/link_defaults") == property_names(defs.at("link_defaults")));
  json with_grid = base;
  with_grid["grid"] = {{"extents", {2}}, {"torus", false}};
  CHECK(accepted_keys(with_grid, "/grid") == property_names(defs.at("grid")));

  // Generators: the loader's keys, the shared parameter table and the schema agree, required keys included.
  const json minimal = {
      {"fat-tree", {{"k", 2}, {"levels", 2}}},
      {"leaf-spine", {{"leaves", 2}, {"spines", 1}, {"hosts_per_leaf", 1}}},
      {"dragonfly", {{"routers_per_group", 2}, {"hosts_per_router", 1}, {"global_links_per_router", 1}}},
      {"torus", {{"dims", {3}}, {"hosts_per_switch", 1}}},
      {"mesh", {{"dims", {3}}, {"hosts_per_switch", 1}}}};
  std::set<std::string> schema_types;
  for (const json& rule : defs.at("generator").at("allOf")) {
    schema_types.insert(rule.at("if").at("properties").at("type").at("const").get<std::string>());
  }
  std::set<std::string> table_types;
  for (const topo::GeneratorType& type : topo::generator_types()) {
    INFO(type.name);
    table_types.insert(std::string(type.name));
    json block = minimal.at(std::string(type.name));
    block["type"] = type.name;
    const json common = {
        {"switch_profile", "switch-ib2-edr"}, {"hca_profile", "connectx4-edr"}, {"host_length_m", 2},
        {"host_cable", "copper-dac"},         {"switch_length_m", 10},          {"switch_cable", "fibre"}};
    block.update(common);
    const json doc = {{"name", "g"}, {"generator", block}};
    CHECK(error_of(doc).empty());
    std::set<std::string> table_keys = {"type"};
    std::set<std::string> table_required = {"type"};
    for (const topo::GeneratorParam& p : type.params) {
      table_keys.insert(std::string(p.key));
      if (p.required) {
        table_required.insert(std::string(p.key));
      }
    }
    CHECK(accepted_keys(doc, "/generator") == table_keys);
    for (const json& rule : defs.at("generator").at("allOf")) {
      if (rule.at("if").at("properties").at("type").at("const") == type.name) {
        CHECK(property_names(rule.at("then")) == table_keys);
        const auto required = rule.at("then").at("required").get<std::vector<std::string>>();
        CHECK(std::set<std::string>(required.begin(), required.end()) == table_required);
      }
    }
  }
  CHECK(schema_types == table_types);
  const auto enumerated = defs.at("generator").at("properties").at("type").at("enum").get<std::vector<std::string>>();
  CHECK(std::set<std::string>(enumerated.begin(), enumerated.end()) == table_types);
}

TEST_CASE("topology examples: every file in topologies/examples loads", "[topology][quick]") {
  const std::filesystem::path dir = std::filesystem::path(IBNETSIM_SOURCE_DIR) / "topologies" / "examples";
  std::set<std::string> names;
  topo::ProfileCatalog catalog;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") {
      continue;
    }
    INFO(entry.path().string());
    const topo::Topology t = topo::load_topology(entry.path().string(), catalog);
    CHECK(t.name == entry.path().stem().string());
    names.insert(t.name);
  }
  CHECK(names.count("ft2-16") == 1);
  CHECK(names.count("torus-4x4") == 1);
  CHECK(names.count("fdr-pair") == 1);
  const topo::Topology ft = topo::load_topology((dir / "ft2-16.json").string(), catalog);
  CHECK(ft.node_count() == 16 + 8);
  CHECK(ft.link_count() == 32);
  CHECK(ft.node(0).profile == "connectx4-edr");
  CHECK(ft.node(16).profile == "switch-ib2-edr");
  const topo::Topology torus = topo::load_topology((dir / "torus-4x4.json").string(), catalog);
  REQUIRE(torus.grid.has_value());
  CHECK(torus.grid->torus);
  CHECK(torus.link_count() == 16 + 32);
}
