// `ibnetsim topo` end to end: help, bad options (exit 2 with usage), bad topology files (exit 2 with file, JSON
// pointer and expectation), generation to stdout and files (byte-identical runs), show, import and export.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "tests/scenario/cli_harness.h"

using testing::run_cli;
using testing::source_path;

namespace {

/// A path in the temp directory, unique to this process.
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("ibnetsim_topo_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

std::string slurp(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

const std::string small = R"({
  "name": "small",
  "link_defaults": {"width": "4x", "speed": "EDR", "length_m": 2, "cable": "copper-dac"},
  "nodes": [
    {"name": "h0", "kind": "hca", "profile": "connectx4-edr"},
    {"name": "h1", "kind": "hca", "profile": "connectx4-edr"},
    {"name": "leaf0", "kind": "switch", "profile": "switch-ib2-edr"},
    {"name": "leaf1", "kind": "switch", "profile": "switch-ib2-edr"}
  ],
  "links": [
    {"a": "h0/1", "b": "leaf0/1"},
    {"a": "h1/1", "b": "leaf1/1"},
    {"a": "leaf0/2", "b": "leaf1/2"},
    {"a": "leaf0/3", "b": "leaf1/3"}
  ]
})";

/// `small` with the first occurrence of `from` replaced by `to`.
std::string small_with(const std::string& from, const std::string& to) {
  std::string text = small;
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("cli topo: help at every level", "[cli][quick]") {
  const auto top = run_cli({"--help"});
  CHECK_THAT(top.out, Catch::Contains("topo SUBCOMMAND"));
  const auto topo = run_cli({"topo", "--help"});
  CHECK(topo.exit_code == 0);
  CHECK_THAT(topo.out, Catch::Contains("gen TYPE") && Catch::Contains("import FILE") &&
                           Catch::Contains("export FILE --format") && Catch::Contains("show FILE"));
  for (const char* sub : {"import", "export", "show"}) {
    DYNAMIC_SECTION(sub << " --help") {
      const auto r = run_cli({"topo", sub, "--help"});
      CHECK(r.exit_code == 0);
      CHECK_THAT(r.out, Catch::Contains(std::string("ibnetsim topo ") + sub));
    }
  }
  const auto gen = run_cli({"topo", "gen", "--help"});
  CHECK(gen.exit_code == 0);
  CHECK_THAT(gen.out, Catch::Contains("fat-tree") && Catch::Contains("leaf-spine") && Catch::Contains("dragonfly") &&
                          Catch::Contains("torus") && Catch::Contains("mesh"));
  const auto fat = run_cli({"topo", "gen", "fat-tree", "--help"});
  CHECK(fat.exit_code == 0);
  CHECK_THAT(fat.out, Catch::Contains("--hosts-per-leaf") && Catch::Contains("--uplinks-per-leaf") &&
                          Catch::Contains("(default switch-ib2-edr)"));
}

TEST_CASE("cli topo: bad options exit 2 with the message and the usage", "[cli][quick]") {
  const std::string topology = source_path("topologies/examples/ft2-16.json");
  struct Case {
    std::vector<std::string> args;
    std::string message;
    std::string usage;
  };
  const std::vector<Case> cases = {
      {{"topo"}, "ibnetsim topo: topo needs a SUBCOMMAND\n", "usage: ibnetsim topo SUBCOMMAND"},
      {{"topo", "fly"}, "ibnetsim topo: unknown subcommand 'fly'\n", "usage: ibnetsim topo SUBCOMMAND"},
      {{"topo", "gen"}, "ibnetsim topo gen: gen needs a TYPE\n", "usage: ibnetsim topo gen TYPE"},
      {{"topo", "gen", "hypercube"}, "ibnetsim topo gen: unknown generator type 'hypercube'\n", "fat-tree"},
      {{"topo", "gen", "fat-tree", "--levels", "2"}, "ibnetsim topo gen: --k is required\n", "--hosts-per-leaf"},
      {{"topo", "gen", "fat-tree", "--k", "four", "--levels", "2"},
       "ibnetsim topo gen: --k: expected an integer in [1, 127], got string \"four\"\n",
       "--hosts-per-leaf"},
      {{"topo", "gen", "fat-tree", "--k", "19", "--levels", "3"},
       "ibnetsim topo gen: --k: expected at most 36 ports per switch (profile switch-ib2-edr), got 38 ports: 19 hosts "
       "+ 19 uplinks per leaf\n",
       "--uplinks-per-leaf"},
      {{"topo", "gen", "fat-tree", "--k", "4", "--levels", "2", "--switch-profile", "fibre"},
       "ibnetsim topo gen: --switch-profile: expected a switch profile (quantum-hdr, quantum2-ndr, switch-ib2-edr, "
       "switchx2-fdr), "
       "got string \"fibre\", a cable profile\n",
       "--switch-profile"},
      {{"topo", "gen", "torus", "--dims", "4xx4", "--hosts-per-switch", "1"},
       "ibnetsim topo gen: --dims: expected an array of 1 to 3 elements, got string \"4xx4\"\n",
       "--dims"},
      {{"topo", "gen", "mesh", "--dims", "4x4", "--hosts-per-switch", "1", "--host-length-m", "0"},
       "ibnetsim topo gen: --host-length-m: expected a length in metres, > 0 and <= 1000000, got number 0\n",
       "--dims"},
      {{"topo", "gen", "leaf-spine", "--leaves", "2", "--bogus", "1"},
       "ibnetsim topo gen: unrecognised option '--bogus'\n",
       "--parallel-links"},
      {{"topo", "import"}, "ibnetsim topo import: import needs an ibnetdiscover FILE\n", "--switch-profile"},
      {{"topo", "import", "x.txt", "--cable", "quantum-hdr"},
       "ibnetsim topo import: --cable: expected a cable profile (copper-dac, fibre), got 'quantum-hdr'\n",
       "--cable"},
      {{"topo", "import", "x.txt", "--hca-profile", "quantum-hdr"},
       "ibnetsim topo import: --hca-profile: expected an hca profile (connect-ib-fdr, connectx3-fdr, connectx4-edr, "
       "connectx5-edr, connectx6-hdr, connectx7-ndr), got 'quantum-hdr', a switch profile\n",
       "--cable"},
      {{"topo", "import", "x.txt", "--length-m", "-1"},
       "ibnetsim topo import: --length-m: expected a length in metres, > 0 and <= 1000000, got '-1'\n",
       "--cable"},
      {{"topo", "export", topology},
       "ibnetsim topo export: --format expects ibnetdiscover or ibsim, got ''\n",
       "--format"},
      {{"topo", "export", topology, "--format", "dot"},
       "ibnetsim topo export: --format expects ibnetdiscover or ibsim, got 'dot'\n",
       "--format"},
      {{"topo", "show"}, "ibnetsim topo show: show needs a topology FILE\n", "ibnetsim topo show FILE"},
      {{"topo", "show", topology, topology},
       "ibnetsim topo show: unexpected argument '" + topology + "'\n",
       "ibnetsim topo show FILE"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION("ibnetsim " << c.args.size() << " args, expects: " << c.message) {
      const auto r = run_cli(c.args);
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Catch::StartsWith(c.message) && Catch::Contains(c.usage));
      CHECK(r.out.empty());
    }
  }
}

TEST_CASE("cli topo: bad topology files exit 2 naming the file and the JSON pointer", "[cli][quick]") {
  struct Case {
    std::string label;
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"unknown_node", small_with("\"b\": \"leaf1/1\"", "\"b\": \"leaf9/1\""),
       ":/links/1/b: expected the name of a node in /nodes, got unknown node \"leaf9\" in \"leaf9/1\""},
      {"port_twice", small_with("\"b\": \"leaf1/1\"", "\"b\": \"leaf0/1\""),
       ":/links/1/b: expected a free port, got leaf0/1, already cabled at /links/0/b"},
      {"port_range", small_with("\"leaf0/3\"", "\"leaf0/37\""),
       ":/links/3/a: expected a port of leaf0 in [1, 36], got port 37"},
      {"width",
       small_with("{\"a\": \"leaf0/3\", \"b\": \"leaf1/3\"}",
                  "{\"a\": \"leaf0/3\", \"b\": \"leaf1/3\", \"width\": \"8x\"}"),
       ":/links/3/width: expected a width that leaf0 (profile switch-ib2-edr) supports: 1x, 4x, got string \"8x\""},
      {"unreachable", small_with("{\"a\": \"h1/1\", \"b\": \"leaf1/1\"},", ""),
       ":/nodes/1: expected a host with a path to \"h0\" (only switches forward), got host \"h1\" with no path to it"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.label) {
      const std::string path = write(c.label + ".json", c.text);
      for (const char* sub : {"show", "export"}) {
        std::vector<std::string> args = {"topo", sub, path};
        if (std::string(sub) == "export") {
          args.insert(args.end(), {"--format", "ibsim"});
        }
        const auto r = run_cli(args);
        CHECK(r.exit_code == 2);
        CHECK(r.err == "ibnetsim: error: " + path + c.message + "\n");
      }
      std::filesystem::remove(path);
    }
  }
  const std::string missing = temp_path("missing.json");
  const auto r = testing::run_executable("topo show " + missing, temp_path("missing"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains(missing));
  for (const char* suffix : {".out", ".err"}) {
    std::filesystem::remove(temp_path("missing") + suffix);
  }
}

TEST_CASE("cli topo gen: stdout and -o agree, runs are byte-identical, defaults are stated", "[cli][quick]") {
  const std::vector<std::string> args = {"topo",      "gen",
                                         "dragonfly", "--routers-per-group",
                                         "3",         "--hosts-per-router",
                                         "2",         "--global-links-per-router",
                                         "2",         "--groups",
                                         "5"};
  const auto first = run_cli(args);
  const auto second = run_cli(args);
  CHECK(first.exit_code == 0);
  CHECK(first.out == second.out);
  CHECK(first.err == "ibnetsim topo gen: defaults used: --switch-profile switch-ib2-edr, --hca-profile connectx4-edr, "
                     "--host-length-m 2, --host-cable copper-dac, --switch-length-m 10, --switch-cable fibre\n");
  const std::string path = temp_path("dragonfly.json");
  std::vector<std::string> to_file = args;
  to_file.insert(to_file.end(), {"-o", path, "--name", "df"});
  const auto written = run_cli(to_file);
  CHECK(written.exit_code == 0);
  CHECK(written.out.empty());
  std::string expected = first.out;
  expected.replace(expected.find("dragonfly-a3p2h2g5"), 18, "df");
  CHECK(slurp(path) == expected);
  const auto shown = run_cli({"topo", "show", path});
  CHECK(shown.exit_code == 0);
  CHECK_THAT(shown.out, Catch::Contains("hosts     30 (connectx4-edr 30)\nswitches  15 (switch-ib2-edr 15)\n"));
  std::filesystem::remove(path);
}

TEST_CASE("cli topo gen: the shipped generated examples are what their commands write", "[cli][quick]") {
  // Regenerate with: ibnetsim topo gen fat-tree --k 4 --levels 2 --name ft2-16 -o topologies/examples/ft2-16.json
  //                  ibnetsim topo gen torus --dims 4x4 --hosts-per-switch 1 --name torus-4x4 -o .../torus-4x4.json
  const auto ft = run_cli({"topo", "gen", "fat-tree", "--k", "4", "--levels", "2", "--name", "ft2-16"});
  CHECK(ft.out == slurp(source_path("topologies/examples/ft2-16.json")));
  const auto torus =
      run_cli({"topo", "gen", "torus", "--dims", "4x4", "--hosts-per-switch", "1", "--name", "torus-4x4"});
  CHECK(torus.out == slurp(source_path("topologies/examples/torus-4x4.json")));
}

TEST_CASE("cli topo show: a summary of counts, ports, rates, cables and grid", "[cli][quick]") {
  const std::string path = source_path("topologies/examples/ft2-16.json");
  const auto r = run_cli({"topo", "show", path});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "topology  ft2-16: 2-level fat tree, k = 4: 16 hosts, 8 switches; 4x EDR, switch-ib2-edr switches, "
                 "connectx4-edr hosts\n"
                 "file      " +
                     path +
                     "\n"
                     "hosts     16 (connectx4-edr 16)\n"
                     "switches  8 (switch-ib2-edr 8)\n"
                     "links     32 (16 to hosts, 16 between switches)\n"
                     "ports     64 of 320 cabled (hosts 16 of 32, switches 48 of 288)\n"
                     "rates     4x EDR 32\n"
                     "cables    copper-dac 16 (32 m), fibre 16 (160 m)\n"
                     "grid      none\n");
  const auto torus = run_cli({"topo", "show", source_path("topologies/examples/torus-4x4.json")});
  CHECK_THAT(torus.out, Catch::EndsWith("grid      4x4 torus\n"));
}

TEST_CASE("cli topo import and export: ibnetdiscover round trip and ibsim net files", "[cli][quick]") {
  const std::string discovered = source_path("tools/opensm/golden/ft2-minhop/ibnetdiscover.txt");
  const std::string imported = temp_path("ft2.json");
  const auto r = run_cli({"topo", "import", discovered, "-o", imported, "--name", "ft2"});
  CHECK(r.exit_code == 0);
  CHECK(r.err == "ibnetsim topo import: defaults used: --length-m 2, --cable copper-dac\n"
                 "ibnetsim topo import: profile connectx4-edr for 16 HCAs whose fastest link is EDR (inferred; "
                 "--hca-profile sets it)\n"
                 "ibnetsim topo import: profile switch-ib2-edr for 6 switches whose fastest link is EDR (inferred; "
                 "--switch-profile sets it)\n");
  const auto shown = run_cli({"topo", "show", imported});
  CHECK_THAT(shown.out,
             Catch::Contains("hosts     16 (connectx4-edr 16)\nswitches  6 (switch-ib2-edr 6)\nlinks     24"));
  // Export and import again: the same file.
  const std::string exported = temp_path("ft2.ibnetdiscover");
  CHECK(run_cli({"topo", "export", imported, "--format", "ibnetdiscover", "-o", exported}).exit_code == 0);
  const auto again = run_cli({"topo", "import", exported, "--name", "ft2"});
  CHECK(again.exit_code == 0);
  // The export lists switches first, as ibnetdiscover does, and so does ibsim's output the first import read.
  CHECK(again.out == slurp(imported));
  const auto net = run_cli({"topo", "export", imported, "--format", "ibsim"});
  CHECK(net.exit_code == 0);
  CHECK_THAT(net.out, Catch::Contains("\nswitchguid=0x200003\nSwitch\t36 \"leaf3\"\n[1]\t\"h12\"[1]\t\t# \"h12\" lid 0 "
                                      "4xEDR\n"));
  // A bad line: exit 2 with the file and line.
  const std::string bad = write("bad.txt", "Switch\t36 \"S-1\"\n[40]\t\"S-1\"[1]\n");
  const auto error = run_cli({"topo", "import", bad});
  CHECK(error.exit_code == 2);
  CHECK(error.err == "ibnetsim: error: " + bad + ":2: expected a port of \"S-1\" in [1, 36], got port 40\n");
  for (const std::string& path : {imported, exported, bad}) {
    std::filesystem::remove(path);
  }
}

TEST_CASE("cli topo import: a live mlx5 fabric with a node name map and a cables table", "[cli][quick]") {
  const std::string data = source_path("tests/unit/topology/data/");
  const auto r = run_cli({"topo", "import", data + "mlx5-edr.ibnetdiscover.txt", "--node-name-map",
                          data + "mlx5-edr.node-name-map", "--cables", data + "mlx5-edr.cables.csv"});
  CHECK(r.exit_code == 0);
  CHECK(r.err == "ibnetsim topo import: defaults used: --length-m 2, --cable copper-dac\n"
                 "ibnetsim topo import: 4 of 5 nodes named by " +
                     data +
                     "mlx5-edr.node-name-map (the rest by their node descriptions)\n"
                     "ibnetsim topo import: 3 of 5 link lengths and 3 cable profiles from " +
                     data +
                     "mlx5-edr.cables.csv\n"
                     "ibnetsim topo import: profile connectx4-edr for 3 HCAs of devid 0x1013 (the profile's "
                     "device_ids; --hca-profile sets it)\n"
                     "ibnetsim topo import: profile switch-ib2-edr for 2 switches of devid 0xcf08 (the profile's "
                     "device_ids; --switch-profile sets it)\n");
  CHECK_THAT(r.out, Catch::StartsWith("{\n  \"name\": \"mlx5-edr.ibnetdiscover\",\n"));
  CHECK_THAT(r.out, Catch::Contains("{\"name\": \"cn001\", \"kind\": \"hca\", \"profile\": \"connectx4-edr\", "
                                    "\"ports\": 1, \"guid\": \"0x98039b0300a1b2c0\", \"port_guids\": "
                                    "[\"0x98039b0300a1b2c0\"]}"));
  CHECK_THAT(r.out, Catch::Contains("{\"a\": \"leaf-1_rack_3/35\", \"b\": \"leaf-2_rack_3/35\", \"width\": \"4x\", "
                                    "\"speed\": \"EDR\", \"length_m\": 30, \"cable\": \"fibre\"}"));
  // The same fabric as a ports report (ibnetdiscover -p): the same nodes and links.
  const auto report = run_cli({"topo", "import", data + "mlx5-edr.ports.txt", "--node-name-map",
                               data + "mlx5-edr.node-name-map", "--cables", data + "mlx5-edr.cables.csv"});
  CHECK(report.exit_code == 0);
  CHECK_THAT(report.out, Catch::Contains("{\"a\": \"leaf-1_rack_3/35\", \"b\": \"leaf-2_rack_3/35\", \"width\": "
                                         "\"4x\", \"speed\": \"EDR\", \"length_m\": 30, \"cable\": \"fibre\"}"));
  // Every link given: no default is stated.
  const std::string all = write("all.csv", "node_guid,port,length_m,cable\n0x248a0703005e1f40,1,2,copper-dac\n"
                                           "0x248a0703005e1f40,2,2,copper-dac\n0x248a0703005e1f40,35,9,fibre\n"
                                           "0x248a0703005e1f40,36,9,fibre\n0x248a0703005e2a80,1,2,copper-dac\n");
  const auto every = run_cli({"topo", "import", data + "mlx5-edr.ibnetdiscover.txt", "--cables", all});
  CHECK(every.exit_code == 0);
  CHECK(every.err.find("defaults used") == std::string::npos);
  // Bad side files: exit 2 with their file and line.
  const std::string bad_map = write("bad.map", "0x10 \"ok\"\n0x11 \"open\n");
  const auto map_error = run_cli({"topo", "import", data + "mlx5-edr.ibnetdiscover.txt", "--node-name-map", bad_map});
  CHECK(map_error.exit_code == 2);
  CHECK(map_error.err == "ibnetsim: error: " + bad_map +
                             ":2: expected a name in double quotes, then nothing but a # comment, got \"0x11 "
                             "\\\"open\"\n");
  const std::string bad_cables = write("bad.csv", "node_guid,port,length_m,cable\n0x248a0703005e1f40,7,2,fibre\n");
  const auto cable_error = run_cli({"topo", "import", data + "mlx5-edr.ibnetdiscover.txt", "--cables", bad_cables});
  CHECK(cable_error.exit_code == 2);
  CHECK(cable_error.err == "ibnetsim: error: " + bad_cables +
                               ":2: expected a cabled port of MF0_leaf1:MSB7800_U1, got port 7, which has "
                               "no link\n");
  const auto missing = run_cli({"topo", "import", data + "mlx5-edr.ibnetdiscover.txt", "--cables", "/nonexistent.csv"});
  CHECK(missing.exit_code == 2);
  for (const std::string& path : {all, bad_map, bad_cables}) {
    std::filesystem::remove(path);
  }
}

TEST_CASE("cli topo gen: a 3-level fat tree of 8000 hosts", "[cli][quick]") {
  const std::string path = temp_path("ft8k.json");
  const auto r = run_cli({"topo", "gen", "fat-tree", "--k", "20", "--levels", "3", "--switch-profile", "quantum-hdr",
                          "--hca-profile", "connectx6-hdr", "-o", path});
  CHECK(r.exit_code == 0);
  // Loading it back is covered by the unit tests; here the file's head and size.
  const std::string text = slurp(path);
  CHECK_THAT(text,
             Catch::StartsWith("{\n  \"name\": \"fat-tree-k20-n3\",\n  \"description\": \"3-level fat tree, k = 20: "
                               "8000 hosts, 1200 switches; 4x HDR, quantum-hdr switches, connectx6-hdr hosts\""));
  CHECK(std::count(text.begin(), text.end(), '\n') == 1 + 2 + 1 + 9200 + 2 + 24000 + 2);
  std::filesystem::remove(path);
}
