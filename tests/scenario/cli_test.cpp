// The ibnetsim command line end to end: help and version, option errors, bad scenario input (exit 2 with file,
// JSON pointer and expectation), invariant violations (exit 3) and byte-identical reports.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <spawn.h>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/data_dir.h"
#include "tests/scenario/cli_harness.h"

using testing::run_cli;
using testing::source_path;

namespace {
const std::string default_scenario = source_path("scenarios/phold.json"); // the kernel alone: fast and exact
// Keeps CLI tests fast: the default scenario over 2 µs of simulated time.
const std::vector<std::string> short_run = {"--set", "/duration_us=2"};

/// The rest of the line of `text` that starts with "  KEY " (a row of a parameter listing), or "" if none does.
std::string line_of(const std::string& text, const std::string& key) {
  const std::string start = "\n  " + key + " ";
  const std::size_t at = text.find(start);
  if (at == std::string::npos)
    return "";
  const std::size_t from = at + start.size() - 1;
  return text.substr(from, text.find('\n', from) - from);
}

std::vector<std::string> args(std::initializer_list<std::string> head, const std::vector<std::string>& tail = {}) {
  std::vector<std::string> all(head);
  all.insert(all.end(), tail.begin(), tail.end());
  return all;
}

const std::string valid_scenario = R"({
  "name": "t", "seed": 1, "duration_us": 1,
  "workload": {"type": "phold", "lp_count": 4, "initial_events_per_lp": 1, "lookahead_ns": 1,
               "mean_extra_delay_ns": 5, "remote_fraction": 0.5, "program_count": 0,
               "program_every_events": 0, "program_compute_ns": 0}
})";
} // namespace

TEST_CASE("cli: --help and --version at every level", "[cli][quick]") {
  SECTION("top level") {
    const auto r = run_cli({"--help"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("run SCENARIO") && Catch::Contains("validate") && Catch::Contains("params"));
  }
  SECTION("version") {
    const auto r = run_cli({"--version"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::StartsWith("ibnetsim 0."));
  }
  for (const char* command : {"run", "validate", "params", "sweep", "compare"}) {
    DYNAMIC_SECTION(command << " --help") {
      const auto r = run_cli({command, "--help"});
      CHECK(r.exit_code == 0);
      CHECK_THAT(r.out, Catch::Contains(std::string("ibnetsim ") + command));
    }
  }
}

TEST_CASE("cli: bad options exit 2 with a message", "[cli][quick]") {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{}, "usage: ibnetsim"},
      {{"fly"}, "unknown command 'fly'"},
      {{"run"}, "run needs a SCENARIO file"},
      {{"run", default_scenario, "--bogus"}, "unrecognised option '--bogus'"},
      {{"run", default_scenario, "--format", "xml"}, "--format expects table, json, csv or long-csv, got 'xml'"},
      {{"run", default_scenario, "--seed", "-4"}, "--seed expects an unsigned 64-bit integer, got '-4'"},
      {{"run", default_scenario, "--seed"}, "the required argument for option '--seed' is missing"},
      {{"run", default_scenario, "extra"}, "unexpected argument 'extra'"},
      {{"params", "warp"}, "unknown model 'warp'"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION("ibnetsim " << (c.args.empty() ? "" : c.args[0]) << " ... expects: " << c.message) {
      const auto r = run_cli(c.args);
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Catch::Contains(c.message));
    }
  }
}

TEST_CASE("cli: bad scenario input exits 2 naming the file, the JSON pointer and the expectation", "[cli][quick]") {
  struct Case {
    std::string name;
    std::string text;
    std::vector<std::string> extra;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"unknown_key", valid_scenario, {"--set", "/speed=3"}, ":/speed: expected one of the keys"},
      {"unknown_nested_key",
       valid_scenario,
       {"--set", "/workload/lp_cuont=3"},
       ":/workload/lp_cuont: expected one of the keys type, lp_count"},
      {"wrong_type",
       valid_scenario,
       {"--set", "/workload/lp_count=\"many\""},
       ":/workload/lp_count: expected an integer in [1, 16777216], got string \"many\""},
      {"out_of_range",
       valid_scenario,
       {"--set", "/workload/remote_fraction=1.5"},
       ":/workload/remote_fraction: expected a number in [0, 1], got number 1.5"},
      {"missing_key", R"({"name": "t", "seed": 1, "workload": {"type": "phold"}})", {}, ":/duration_us: expected"},
      {"bad_enum", valid_scenario, {"--set", "/workload/type=hold"}, ":/workload/type: expected one of"},
      {"inconsistent",
       valid_scenario,
       {"--set", "/workload/program_count=2"},
       ":/workload/program_every_events: expected a value above 0 exactly when program_count is above 0"},
      {"malformed", "{\"name\": \"t\",\n  \"seed\": 1,,\n}", {}, ": expected valid JSON, got parse error at line 2"},
      {"bad_override_path",
       valid_scenario,
       {"--set", "/workload/lp_count/deep=1"},
       "--set:/workload/lp_count/deep: expected an existing object or array"},
      {"override_creates_unknown_key",
       valid_scenario,
       {"--set", "/nowhere/deep=1"},
       ":/nowhere: expected one of the keys"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      const std::string path = testing::write_temp("cli_bad_" + c.name + ".json", c.text);
      const auto r = run_cli(args({"run", path}, c.extra));
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Catch::Contains(c.message));
      if (c.name != "bad_override_path")
        CHECK_THAT(r.err, Catch::Contains(path + ":"));
    }
  }
  SECTION("a file that does not exist") {
    const auto r = run_cli({"run", "no/such/scenario.json"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("no/such/scenario.json:/: expected a readable file"));
  }
}

TEST_CASE("cli: a violated invariant stops the run with exit 3 and names it", "[cli][quick]") {
  const auto r =
      run_cli(args({"run", default_scenario, "--set", "/workload/self_test={\"drop_event_number\": 500}"}, short_run));
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.err,
             Catch::Contains("invariant violated [event-conservation] phold") && Catch::Contains("events_handled=500"));
}

TEST_CASE("cli: the same scenario and seed give byte-identical reports", "[cli][quick]") {
  const auto first = run_cli(args({"run", default_scenario, "--format", "json"}, short_run));
  const auto second = run_cli(args({"run", default_scenario, "--format", "json"}, short_run));
  REQUIRE(first.exit_code == 0);
  CHECK(first.out == second.out);
  CHECK_THAT(first.out, Catch::Contains("\"events_handled\""));
  const auto reseeded = run_cli(args({"run", default_scenario, "--format", "json", "--seed", "2"}, short_run));
  REQUIRE(reseeded.exit_code == 0);
  CHECK(reseeded.out != first.out);
}

TEST_CASE("cli: run writes table, json and csv, and --out FILE.json", "[cli][quick]") {
  SECTION("table, with timing for people") {
    const auto r = run_cli(args({"run", default_scenario}, short_run));
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out,
               Catch::Contains("results") && Catch::Contains("events_handled") && Catch::Contains("wall_time_s"));
  }
  SECTION("csv: a header and one row with the same number of columns, metrics by their names") {
    const auto r = run_cli(args({"run", default_scenario, "--format", "csv"}, short_run));
    CHECK(r.exit_code == 0);
    const auto newline = r.out.find('\n');
    const std::string header = r.out.substr(0, newline);
    const std::string row = r.out.substr(newline + 1);
    CHECK_THAT(header, Catch::StartsWith("scenario,seed,config_digest,simulated_time_us,events_handled,"));
    CHECK(std::count(header.begin(), header.end(), ',') == std::count(row.begin(), row.end(), ','));
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 2);
  }
  SECTION("long-csv: metric, entity and value, one row per figure") {
    const auto r = run_cli(args({"run", default_scenario, "--format", "long-csv"}, short_run));
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out,
               Catch::StartsWith("metric,entity,value\nsimulated_time_us,,") && Catch::Contains("\nevents_handled,,"));
  }
  SECTION("--out with --quiet prints nothing and writes the JSON report") {
    const std::string out_path = testing::scratch_path("cli_out.json");
    std::remove(out_path.c_str());
    const auto r = run_cli(args({"run", default_scenario, "--quiet", "--out", out_path}, short_run));
    CHECK(r.exit_code == 0);
    CHECK(r.out.empty());
    std::ifstream file(out_path);
    std::stringstream text;
    text << file.rdbuf();
    CHECK_THAT(text.str(), Catch::Contains("\"config_digest\"") && !Catch::Contains("wall_time_s"));
  }
  SECTION("--timing adds the performance section to JSON") {
    const auto r = run_cli(args({"run", default_scenario, "--format", "json", "--timing"}, short_run));
    CHECK_THAT(r.out, Catch::Contains("\"kernel_events_per_second\"") && Catch::Contains("\"peak_rss_mib\""));
  }
}

TEST_CASE("cli: run --events counts events by part of the model and per message", "[cli][quick]") {
  const std::string lat = source_path("scenarios/experiments/write_lat.json");
  const auto r = run_cli({"run", lat, "--set", "/workloads/0/iterations=200", "--events", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out);
  const auto& results = report["results"];
  const auto& by = results["kernel_events_by_part"];
  const auto& parts = by["parts"];
  CHECK(by["messages"].get<std::uint64_t>() == results["pcie"]["messages_sent"].get<std::uint64_t>());
  // Every dispatched event belongs to exactly one part; the buses' deferred events are counted apart.
  std::uint64_t dispatched = 0;
  for (const char* part : {"programs", "pcie", "hca", "hca_ports", "switches", "faults"})
    dispatched += parts[part]["events"].get<std::uint64_t>();
  CHECK(dispatched == results["kernel_events_dispatched"].get<std::uint64_t>());
  CHECK(parts["pcie_deferred"]["events"].get<std::uint64_t>() > 0);
  CHECK(parts["programs"]["events"].get<std::uint64_t>() >= results["program_wakeups"].get<std::uint64_t>());
  CHECK(parts["switches"]["events"].get<std::uint64_t>() > 0); // one switch between the hosts
  const double per = parts["hca_ports"]["per_message"].get<double>();
  CHECK(per == Approx(static_cast<double>(parts["hca_ports"]["events"].get<std::uint64_t>()) /
                      static_cast<double>(by["messages"].get<std::uint64_t>())));
  const auto table = run_cli({"run", lat, "--set", "/workloads/0/iterations=200", "--events"});
  CHECK_THAT(table.out, Catch::Contains("events per message (") && Catch::Contains("pcie_deferred"));
  const auto phold = run_cli({"run", default_scenario, "--events"});
  CHECK(phold.exit_code == 2);
  CHECK_THAT(phold.err, Catch::Contains("--events needs a fabric scenario"));
}

TEST_CASE("cli: a sending program wakes about twice per message: the CPU time after a post or poll is owed",
          "[cli][quick]") {
  // Per message a pattern's program wakes for the completion, and sleeps its poll and the next post's WQE build in
  // one; the MMIO stores it still owes overlap its wait for the next completion. Sleeping each cost apart took 3.83
  // wake-ups per message here.
  const nlohmann::json s = {
      {"name", "perm16"},
      {"seed", 1},
      {"topology", source_path("topologies/examples/ft2-16.json")},
      {"subnet_manager", {{"routing", "ftree"}}},
      {"workloads", {{{"type", "permutation"}, {"size_bytes", 4096}, {"messages", 200}, {"tx_depth", 16}}}}};
  const std::string path = testing::write_temp("perm16_events.json", s.dump());
  const auto r = run_cli({"run", path, "--events", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out);
  const auto& by = report["results"]["kernel_events_by_part"];
  CHECK(by["messages"] == 3200);
  CHECK(by["parts"]["programs"]["per_message"].get<double>() < 2.1);
  CHECK(by["parts"]["programs"]["per_message"].get<double>() > 1.8);
  // The same instants as with every cost slept apart (this run's figures then, to the picosecond; taken again when
  // completions into the HCA, advertised infinite, stopped returning credits by UpdateFC DLLPs upstream).
  const auto& results = report["results"]["workloads"]["permutation"]["results"];
  CHECK(results["message_latency"]["t_min_us"] == 2.572252);
  CHECK(results["message_latency"]["t_typical_us"] == 10.22776);
  CHECK(results["message_latency"]["t_max_us"] == 19.488544);
  CHECK(results["aggregate_gbps"].get<double>() == Approx(698.0681218238371).epsilon(1e-12));
}

TEST_CASE("cli: a perftest's table has perftest's own header, and --counters adds perfquery's port counters",
          "[cli][quick]") {
  const std::string lat = source_path("scenarios/experiments/write_lat.json");
  SECTION("the latency header is perftest's, word for word, and each row has its nine figures") {
    const auto r = run_cli({"run", lat, "--set", "/workloads/0/iterations=200"});
    REQUIRE(r.exit_code == 0);
    const std::string header = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
                               "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n";
    const std::size_t at = r.out.find(header);
    REQUIRE(at != std::string::npos);
    std::istringstream row(r.out.substr(at + header.size(), r.out.find('\n', at + header.size()) - at - header.size()));
    std::vector<double> figures;
    for (double x = 0; row >> x;)
      figures.push_back(x);
    REQUIRE(figures.size() == 9);
    CHECK(figures[0] == 8);   // #bytes
    CHECK(figures[1] == 200); // #iterations
    CHECK(figures[2] <= figures[4]);
    CHECK(figures[4] <= figures[3]);
    CHECK(figures[6] >= 0); // t_stdev
  }
  SECTION("--counters: a row per active port with PortXmitWait in ticks of the tick shown") {
    const auto r = run_cli({"run", source_path("scenarios/default.json"), "--counters"});
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("port counters (perfquery's names") && Catch::Contains("PortXmitWait") &&
                          Catch::Contains(" h0/1 ") && Catch::Contains(" leaf0/"));
    const auto json = run_cli({"run", source_path("scenarios/default.json"), "--format", "json"});
    const nlohmann::json ports = nlohmann::json::parse(json.out)["results"]["ports"];
    bool waited = false;
    for (const nlohmann::json& port : ports) {
      // Switch-IB 2 and ConnectX-4 at 4x EDR: 8 symbol times of 0.32 ns.
      CHECK(port["PortXmitWait_tick_ns"].get<double>() == Approx(2.56));
      CHECK(port["PortXmitWait"].get<double>() <= port["PortXmitWait_ns"].get<double>() / 2.56);
      waited = waited || port["PortXmitWait"].get<std::uint64_t>() > 0;
    }
    CHECK(waited); // the default all-to-all makes uplinks wait
  }
  SECTION("--counters is for the table only") {
    const auto r = run_cli({"run", lat, "--counters", "--format", "json"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--counters adds a table to --format table"));
  }
}

TEST_CASE("cli: --set overrides are applied, reported and change the digest", "[cli][quick]") {
  const auto base = run_cli(args({"run", default_scenario, "--format", "json"}, short_run));
  const auto changed =
      run_cli(args({"run", default_scenario, "--format", "json", "--set", "/workload/lp_count=8"}, short_run));
  REQUIRE(changed.exit_code == 0);
  CHECK_THAT(changed.out, Catch::Contains("\"lp_count\": 8"));
  const auto digest = [](const std::string& report) {
    const auto at = report.find("\"config_digest\"");
    return report.substr(at, 40);
  };
  CHECK(digest(base.out) != digest(changed.out));
}

TEST_CASE("cli: validate checks without running, params lists parameters", "[cli][quick]") {
  const auto ok = run_cli({"validate", default_scenario});
  CHECK(ok.exit_code == 0);
  CHECK_THAT(ok.out, Catch::Contains("valid scenario \"phold\""));
  const auto bad = run_cli({"validate", default_scenario, "--set", "/workload/lookahead_ns=0"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("/workload/lookahead_ns"));
  CHECK(bad.out.empty());
  // A fabric scenario is checked against its topology (a host it names must exist) before anything is printed.
  const auto no_host =
      run_cli({"validate", testing::source_path("scenarios/default.json"), "--set", "/workloads/0/server=h99"});
  CHECK(no_host.exit_code == 2);
  CHECK_THAT(no_host.err, Catch::Contains("/workloads/0/server"));
  CHECK(no_host.out.empty());
  const auto params = run_cli({"params", "phold"});
  CHECK(params.exit_code == 0);
  for (const char* key : {"lp_count", "lookahead_ns", "mean_extra_delay_ns", "remote_fraction", "program_compute_ns"})
    CHECK_THAT(params.out, Catch::Contains(key));
}

TEST_CASE("cli: params lists the switch and cable tables and the shipped profiles", "[cli][quick]") {
  const auto models = run_cli({"params"});
  CHECK(models.exit_code == 0);
  CHECK_THAT(models.out,
             Catch::Contains("switch") && Catch::Contains("cable") &&
                 Catch::Contains("copper-dac, fibre, gen3-x16, gen3-x8, gen4-x16, gen5-x16, opensm, opensm-cc, "
                                 "quantum-hdr, quantum2-ndr, switch-ib2-edr, switchx2-fdr, topo-import, "
                                 "xeon-e5-haswell, xeon-sapphire-rapids"));
  const auto sw = run_cli({"params", "switch"});
  CHECK(sw.exit_code == 0);
  CHECK_THAT(sw.out, Catch::StartsWith("parameters of switch:"));
  for (const char* key : {"port_count", "port_to_port_latency_ns", "cut_through", "input_buffer_bytes_per_port",
                          "vl_cap", "vl15_buffer_packets", "flow_control_refresh_ns"})
    CHECK_THAT(sw.out, Catch::Contains(key));
  const auto cable = run_cli({"params", "cable"});
  CHECK(cable.exit_code == 0);
  CHECK_THAT(cable.out, Catch::StartsWith("parameters of cable:") && Catch::Contains("propagation_delay_ns_per_m") &&
                            Catch::Contains("ns/m"));
}

TEST_CASE("cli: params workload lists the workload types, and a type's options with unit, default and range",
          "[cli][quick]") {
  const auto types = run_cli({"params", "workload"});
  CHECK(types.exit_code == 0);
  CHECK_THAT(types.out, Catch::StartsWith("workload types") && Catch::Contains("\n  ib_write_lat ") &&
                            Catch::Contains("\n  recursive_doubling_allreduce "));
  const auto bw = run_cli({"params", "workload", "ib_write_bw"});
  CHECK(bw.exit_code == 0);
  CHECK_THAT(bw.out, Catch::StartsWith("options of workload ib_write_bw: ") &&
                         Catch::Contains("\n  cq_mod               count  100            [1, 16384] "));
  const auto lat = run_cli({"params", "workload", "ib_write_lat"});
  CHECK_THAT(lat.out, Catch::Contains("\n  cq_mod               count  1              [1, 16384] "));
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"params", "workload", "ib_write_bandwidth"},
       "ibnetsim params: unknown workload type 'ib_write_bandwidth'; 'ibnetsim params workload' lists them"},
      {{"params", "workload", "ib_write_bw", "extra"}, "ibnetsim params: unexpected argument 'extra'"},
      {{"params", "switch", "extra"}, "ibnetsim params: unexpected argument 'extra'"},
      {{"params", "workload", "--profile", "fibre"}, "--profile and --set are for hardware models"},
  };
  for (const auto& c : cases) {
    const auto r = run_cli(c.args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(c.message));
  }
}

TEST_CASE("cli: params with --profile shows each value with its unit and source", "[cli][quick]") {
  const auto r = run_cli({"params", "switch", "--profile", "switch-ib2-edr"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::StartsWith("switch profile switch-ib2-edr: Mellanox Switch-IB 2 (SB7800 class)"));
  CHECK_THAT(r.out, Catch::Contains(std::string(IBNETSIM_TEST_DATA_DIR) + "/topologies/hardware/switch-ib2-edr.json"));
  CHECK_THAT(line_of(r.out, "port_to_port_latency_ns"), Catch::Matches(" +90 +ns +estimate: .*"));
  CHECK_THAT(line_of(r.out, "port_count"), Catch::Matches(" +36 +count +Linux kernel commit .*"));
  CHECK_THAT(line_of(r.out, "cut_through"), Catch::Matches(" +true +bool +estimate: .*"));

  const auto overridden =
      run_cli({"params", "switch", "--profile", "switch-ib2-edr", "--set", "/port_to_port_latency_ns=120"});
  CHECK(overridden.exit_code == 0);
  CHECK_THAT(line_of(overridden.out, "port_to_port_latency_ns"), Catch::Matches(" +120 +ns +override"));

  const auto cable = run_cli({"params", "cable", "--profile", "fibre"});
  CHECK(cable.exit_code == 0);
  CHECK_THAT(line_of(cable.out, "propagation_delay_ns_per_m"), Catch::Matches(" +4\\.9 +ns/m +estimate: .*"));
}

TEST_CASE("cli: params rejects a bad profile name or value with exit 2 and a clear message", "[cli][quick]") {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"params", "switch", "--profile", "no-such-switch"},
       "ibnetsim params: unknown profile 'no-such-switch'; profiles: connect-ib-fdr, connectx3-fdr, connectx4-edr, "
       "connectx5-edr, connectx6-hdr, connectx7-ndr, copper-dac, fibre, gen3-x16, gen3-x8, gen4-x16, gen5-x16, opensm, "
       "opensm-cc, "
       "quantum-hdr, quantum2-ndr, switch-ib2-edr, switchx2-fdr, topo-import, xeon-e5-haswell, xeon-sapphire-rapids"},
      // Regression (fuzzing): a name too long for a file name ended as an internal error (filesystem_error).
      {{"params", "switch", "--profile", std::string(5000, 'a')}, "ibnetsim params: unknown profile 'aaa"},
      {{"params", "switch", "--profile", "fibre"},
       "fibre.json:/model: expected \"switch\" (the model it is read as), got string \"cable\""},
      {{"params", "switch", "--profile", "quantum-hdr", "--set", "/bogus_ns=5"},
       "ibnetsim: error: --set:/bogus_ns: expected one of the keys port_count, "},
      {{"params", "switch", "--profile", "quantum-hdr", "--set", "/vl_cap=3"},
       "ibnetsim: error: --set:/vl_cap: expected 1, 2, 4, 8 or 15, got 3"},
      {{"params", "switch", "--profile", "quantum-hdr", "--set", "vl_cap"}, "--set expects /key=value, got 'vl_cap'"},
      {{"params", "hca", "--profile", "connectx5-edr", "--set", "/device_ids=0x1017,"},
       "ibnetsim: error: --set:/device_ids: expected comma-separated lowercase hexadecimal device IDs as "
       "ibnetdiscover prints them (0x1017), each at most 0xffff, or \"\", got \"0x1017,\""},
      {{"params", "topo-import", "--profile", "topo-import", "--set", "/default_length_m=0"},
       "ibnetsim: error: --set:/default_length_m: expected"},
      {{"params", "switch", "--set", "/vl_cap=3"}, "--set needs --profile"},
      {{"params", "--profile", "fibre"}, "--profile and --set need a MODEL"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION("ibnetsim " << c.args[1] << " " << c.args[2] << " ... expects: " << c.message) {
      const auto r = run_cli(c.args);
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      CHECK_THAT(r.err, Catch::Contains(c.message));
    }
  }
}

TEST_CASE("cli: the executable's exit status is the documented code", "[cli][quick]") {
  const auto ok = testing::run_executable("--version", testing::scratch_path("exe_version"));
  CHECK(ok.exit_code == 0);
  const auto usage = testing::run_executable("run --nope", testing::scratch_path("exe_usage"));
  CHECK(usage.exit_code == 2);
  const auto invariant = testing::run_executable(
      "run " + default_scenario + " --set /duration_us=2 --set '/workload/self_test={\"drop_event_number\":3}'",
      testing::scratch_path("exe_invariant"));
  CHECK(invariant.exit_code == 3);
}

TEST_CASE("cli: SimGrid is loaded only by runs with host programs", "[cli][quick]") {
  // The dynamic loader lists every object it loads (LD_DEBUG=files): SimGrid, and the ns-3 libraries Debian's
  // SimGrid needs, come in by dlopen from lib/ibnetsim when a run has programs, and never otherwise.
  const auto loads = [](const std::string& args, const std::string& name) {
    const auto r = testing::run_executable("run " + args + " --quiet", testing::scratch_path(name), "LD_DEBUG=files");
    INFO(name << ": " << r.err.substr(0, 2000));
    REQUIRE(r.exit_code == 0);
    return r.err.find("file=libsimgrid.so") != std::string::npos;
  };
  CHECK_FALSE(loads(source_path("scenarios/phold.json") + " --set /duration_us=1", "loads_phold"));
  CHECK_FALSE(loads(source_path("scenarios/experiments/uniform_random.json") +
                        " --set '/host_model=\"fabric\"' --set /workloads/0/messages=2",
                    "loads_fabric"));
  CHECK(loads(source_path("scenarios/default.json") + " --set /workloads/0/iterations=2 --set /workloads/1/messages=1",
              "loads_programs"));
}

TEST_CASE("cli: the data directory is --data-dir, else IBNETSIM_DATA_DIR, else share/ibnetsim next to the executable",
          "[cli][quick]") {
  namespace fs = std::filesystem;
  // The executables started here see no IBNETSIM_DATA_DIR but the one a command gives them.
  const char* inherited = std::getenv(sim::data_dir_environment);
  const std::optional<std::string> saved = inherited ? std::optional<std::string>(inherited) : std::nullopt;
  ::unsetenv(sim::data_dir_environment);
  const std::string profile = "/topologies/hardware/switch-ib2-edr.json";
  const std::string params = "params switch --profile switch-ib2-edr";

  // The real executable finds the build tree's staged data relative to itself: <build>/bin/../share/ibnetsim.
  const fs::path staged = fs::path(IBNETSIM_EXECUTABLE).parent_path().parent_path() / "share" / "ibnetsim";
  const auto beside = testing::run_executable(params, testing::scratch_path("data_dir_beside"));
  CHECK(beside.exit_code == 0);
  CHECK_THAT(beside.out, Catch::Contains("file: " + staged.lexically_normal().string() + profile));
  CHECK_THAT(beside.out, !Catch::Contains(std::string(IBNETSIM_SOURCE_DIR) + profile));

  // --data-dir before or after the command, in-process; the data directory is restored afterwards.
  const std::optional<std::string> before = sim::data_directory_option();
  const std::string source_data = IBNETSIM_SOURCE_DIR;
  for (const auto& argv : {args({"--data-dir", source_data, "params", "switch", "--profile", "switch-ib2-edr"}),
                           args({"params", "switch", "--data-dir=" + source_data, "--profile", "switch-ib2-edr"})}) {
    const auto r = run_cli(argv);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("file: " + source_data + profile));
    CHECK(sim::data_directory_option() == before);
    CHECK(std::getenv(sim::data_dir_environment) == nullptr);
  }

  // An unusable one is bad input naming it and its source; commands needing no data do not look.
  const std::string missing = testing::scratch_path("no-such-data");
  const auto bad = run_cli({"params", "switch", "--profile", "switch-ib2-edr", "--data-dir", missing});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err,
             Catch::Contains("ibnetsim: error: data directory '" + missing + "' (from --data-dir) does not exist") &&
                 Catch::Contains("--data-dir DIR or the environment variable IBNETSIM_DATA_DIR"));
  CHECK(run_cli({"--data-dir", missing, "--version"}).exit_code == 0);
  CHECK(run_cli(args({"--data-dir", missing, "run", default_scenario}, short_run)).exit_code == 0);
  CHECK(run_cli({"params", "--data-dir"}).exit_code == 2);

  // IBNETSIM_DATA_DIR, for the real executable.
  ::setenv(sim::data_dir_environment, missing.c_str(), 1);
  const auto from_environment = testing::run_executable(params, testing::scratch_path("data_dir_environment"));
  CHECK(from_environment.exit_code == 2);
  CHECK_THAT(from_environment.err,
             Catch::Contains("'" + missing + "' (from the environment variable IBNETSIM_DATA_DIR) does not exist"));
  ::setenv(sim::data_dir_environment, source_data.c_str(), 1);
  const auto from_source = testing::run_executable(params, testing::scratch_path("data_dir_source"));
  CHECK(from_source.exit_code == 0);
  CHECK_THAT(from_source.out, Catch::Contains("file: " + source_data + profile));
  if (saved)
    ::setenv(sim::data_dir_environment, saved->c_str(), 1);
  else
    ::unsetenv(sim::data_dir_environment);
}

TEST_CASE("cli: outputs are checked before a run, written whole, and a failed write is exit 2 with the results shown",
          "[cli][quick]") {
  const std::string fabric = source_path("scenarios/default.json");
  const std::vector<std::string> short_fabric = {"run", fabric, "--set", "/workloads/1/messages=1"};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = short_fabric;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  SECTION("an --out or --trace that cannot be written fails before the run, with exit 2 naming it") {
    const std::string missing = testing::scratch_path("no-such-dir/report.json");
    auto r = run_cli(with({"--out", missing}));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(missing + ":/: expected a file that can be written (--out)"));
    CHECK(r.out.empty()); // nothing ran
    r = run_cli(with({"--out", testing::scratch_dir().string()}));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("got a directory"));
    r = run_cli(with({"--trace", testing::scratch_path("no-such-dir/trace.json")}));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("expected a trace file that can be written (--trace)"));
    CHECK(r.out.empty());
  }
  SECTION("trace filters that can match nothing are bad input before the run") {
    const std::string trace = testing::scratch_path("filtered.json");
    auto r = run_cli(with({"--trace", trace, "--trace-host", "nosuch"}));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--trace-host:/: expected the name of a host or switch of the topology, got "
                                      "\"nosuch\""));
    CHECK(r.out.empty());
    r = run_cli(with({"--trace", trace, "--trace-from-us", "5", "--trace-to-us", "2"}));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--trace-from-us must not be after --trace-to-us"));
    r = run_cli(with({"--trace", trace, "--trace-host", "h0", "--quiet"}));
    CHECK(r.exit_code == 0);
    // QP numbers run from 2 to the most QPs the workloads make on a host (16 on h0 and h15 here): others match none.
    for (const char* qpn : {"1", "18", "99"}) {
      r = run_cli(with({"--trace", trace, "--trace-qp", qpn}));
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Catch::Contains(std::string("--trace-qp:/: expected the number of a QP of this run: 2 to 17 "
                                                    "(QP numbers start at 2 on each HCA; its workloads make at most "
                                                    "16 on a host), got ") +
                                        qpn));
      CHECK(r.out.empty());
    }
    r = run_cli(with({"--trace", trace, "--trace-qp", "17", "--quiet"}));
    CHECK(r.exit_code == 0);
  }
  SECTION("a traced QP the run never made: exit 2 after the results are written") {
    // A pattern of random peers may make fewer QPs than it could: only the run knows.
    const std::string trace = testing::scratch_path("unmade_qp.json");
    const std::string out = testing::scratch_path("unmade_qp_report.json");
    const auto r =
        run_cli({"run", fabric, "--set", "/workloads/1/type=uniform_random", "--set", "/workloads/1/offered_load=0.5",
                 "--set", "/workloads/1/messages=1", "--trace", trace, "--trace-qp", "16", "--out", out});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--trace-qp:/: expected the number of a QP the run made (2 to ") &&
                          Catch::Contains("nothing of QP 16 is in the trace, got 16"));
    CHECK_THAT(r.out, Catch::Contains("uniform_random")); // the results were shown ...
    CHECK(std::filesystem::exists(out));                  // ... and written
  }
  SECTION("--out is written whole: the complete report, no partial file left") {
    const std::string path = testing::scratch_path("whole.json");
    const auto r = run_cli(with({"--out", path, "--quiet"}));
    REQUIRE(r.exit_code == 0);
    std::ifstream file(path);
    const nlohmann::json report = nlohmann::json::parse(file); // parses: complete
    CHECK(report.contains("results"));
    CHECK_FALSE(std::filesystem::exists(path + ".partial"));
  }
  SECTION("sweep and compare refuse an --out that is a file, as bad input") {
    const std::string file = testing::write_temp("a_file", "x");
    auto r =
        run_cli({"sweep", source_path("scenarios/experiments/write_lat.json"), "--sweep", "/seed=1,2", "--out", file});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("expected a directory that can be created or written (--out)"));
    r = run_cli({"compare", source_path("scenarios/experiments/write_lat.json"), "--out", file});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err,
               Catch::Contains(file + ":/: expected a directory that can be created or written (--out), got a file"));
  }
  if (std::filesystem::is_character_file("/dev/full")) {
    SECTION("a full disk: --out, --trace and stdout failures are exit 2, and the table is still printed") {
      auto r = run_cli(with({"--out", "/dev/full"}));
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.out, Catch::Contains("ib_write_lat")); // the results were shown first
      CHECK_THAT(r.err, Catch::Contains("/dev/full:/: expected a file that can be written, got No space left"));
      CHECK(std::filesystem::is_character_file("/dev/full")); // written to, never replaced
      r = run_cli(with({"--trace", "/dev/full"}));
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Catch::Contains("expected a trace file that can be written (--trace)"));
      const std::string err_path = testing::scratch_path("stdout_full.err");
      const int status = std::system((std::string(IBNETSIM_EXECUTABLE) + " run " + fabric +
                                      " --set /workloads/1/messages=1 --format json >/dev/full 2>" + err_path)
                                         .c_str());
      CHECK(WEXITSTATUS(status) == 2);
      std::ifstream err(err_path);
      std::stringstream text;
      text << err.rdbuf();
      CHECK_THAT(text.str(), Catch::Contains("could not all be written to standard output"));
    }
  }
}

extern char** environ;

namespace {

/// Starts the real executable with `args`, stdout and stderr into files beside `scratch`; waits (up to two minutes,
/// for a slow machine) until its stderr shows the progress line of a run that is simulating, then sends `signal`.
/// The exit code (128 + signal when the process died of it), and what it printed.
testing::CliResult run_and_signal(std::vector<std::string> args, const std::string& scratch, int signal) {
  args.insert(args.begin(), IBNETSIM_EXECUTABLE);
  std::vector<char*> argv;
  for (std::string& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string out_path = scratch + ".out", err_path = scratch + ".err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE(spawned == 0);
  const auto slurp = [](const std::string& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  int status = 0;
  bool exited = false;
  while (slurp(err_path).find("[ibnetsim] simulated") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true; // it ended before it could be interrupted: the checks below say so
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!exited) {
    ::kill(pid, signal);
    ::waitpid(pid, &status, 0);
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), slurp(out_path), slurp(err_path)};
}

} // namespace

TEST_CASE("cli: SIGINT or SIGTERM during run stops it, prints and writes a partial report, and exits 130 or 143",
          "[cli]") {
  struct Case {
    const char* name;
    std::string scenario;
    std::vector<std::string> extra;
    int signal;
  };
  // Runs far longer than any machine finishes before the signal: one stream of 10^8 WRITEs, a day of PHOLD.
  const std::vector<Case> cases = {
      {"fabric_sigint",
       source_path("scenarios/experiments/write_bw_pair.json"),
       {"--set", "/workloads/0/iterations=100000000"},
       SIGINT},
      {"phold_sigterm", default_scenario, {"--set", "/duration_us=86400000000"}, SIGTERM},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      const std::string report_path = testing::scratch_path(std::string(c.name) + ".json");
      std::vector<std::string> argv = {"run", c.scenario, "--out", report_path};
      argv.insert(argv.end(), c.extra.begin(), c.extra.end());
      const testing::CliResult r = run_and_signal(argv, testing::scratch_path(c.name), c.signal);
      INFO(r.err);
      CHECK(r.exit_code == 128 + c.signal);
      const std::string signal_name = c.signal == SIGINT ? "SIGINT" : "SIGTERM";
      CHECK_THAT(r.err, Catch::Contains("ibnetsim: " + signal_name +
                                        ": the run was interrupted; its partial results "
                                        "are reported (" +
                                        report_path + ")"));
      CHECK_THAT(r.out, Catch::Contains("results") || Catch::Contains("(interrupted: partial results)"));
      std::ifstream file(report_path);
      REQUIRE(file);
      const nlohmann::json report = nlohmann::json::parse(file); // whole: it parses
      CHECK(report.at("partial") == true);
      CHECK(report.at("partial_reason") == "interrupted by " + signal_name);
      CHECK(report.at("partial_at_us").get<double>() > 0);
      CHECK(report.at("results").at("simulated_time_us") == report.at("partial_at_us"));
      CHECK_FALSE(std::filesystem::exists(report_path + ".partial"));
    }
  }
}

TEST_CASE("cli: a scenario whose estimated peak memory exceeds --max-memory is refused before anything is built",
          "[cli][quick]") {
  const std::string fabric = source_path("scenarios/default.json");
  SECTION("10^7 all-to-all messages per peer: 107 GiB, refused at once by validate, run and sweep") {
    const std::vector<std::string> many = {"--set", "/workloads/1/messages=10000000", "--max-memory", "512M"};
    for (const char* command : {"validate", "run"}) {
      const auto started = std::chrono::steady_clock::now();
      const auto r = run_cli(args({command, fabric}, many));
      CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10)); // nothing planned or built
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Catch::Contains(fabric + ":/workloads/1/messages: expected a run that fits in 512 MiB of "
                                                 "memory (--max-memory), got an estimated peak of 107 GiB, mostly "
                                                 "all_to_all: 2400000000 planned messages, 107 GiB "
                                                 "(/workloads/1/messages); the process, 36.0 MiB"));
      CHECK(r.out.empty());
    }
    const auto sweep = run_cli({"sweep", fabric, "--sweep", "/workloads/1/messages=1,10000000", "--max-memory=512M",
                                "--out", testing::scratch_path("budget.sweep")});
    CHECK(sweep.exit_code == 2);
    CHECK_THAT(sweep.err, Catch::Contains("--sweep:/workloads/1/messages: expected a run that fits in 512 MiB") &&
                              Catch::Contains("(point 1: "));
    CHECK_FALSE(std::filesystem::exists(testing::scratch_path("budget.sweep/points/00000.json"))); // nothing ran
  }
  SECTION("PHOLD: its pending events, and host programs (bounded by memory, or by the mapping limit under ASan)") {
    auto r = run_cli({"validate", default_scenario, "--set", "/workload/lp_count=16777216", "--set",
                      "/workload/initial_events_per_lp=65536"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(":/workload/initial_events_per_lp: expected a run that fits in ") &&
                          Catch::Contains("phold: 1099511627776 pending events, 65.0 TiB"));
    // Regression: 32768 programs or more aborted inside SimGrid (SIGABRT) where threads ran out of mappings.
    // A million programs: about 10 GB of stacks and actors, more than the threads' mappings allow under ASan.
    r = run_cli({"validate", source_path("scenarios/phold_programs.json"), "--set", "/workload/program_count=1048576",
                 "--max-memory", "4G"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("phold_programs.json:/workload/program_count: expected "));
  }
  SECTION("--max-memory must be a size") {
    for (const char* size : {"12X", "0", "-5G", "G"}) {
      const auto r = run_cli({"validate", fabric, "--max-memory", size});
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Catch::Contains(std::string("--max-memory expects a size such as 512M, 8G or 1T (powers of "
                                                    "1024), got '") +
                                        size + "'"));
    }
    CHECK(run_cli({"validate", fabric, "--max-memory", "1.5GiB"}).exit_code == 0);
    CHECK(run_cli({"--max-memory=100M", "validate", fabric}).exit_code == 0);
  }
}

TEST_CASE("cli: every shipped scenario fits the default memory budget (the machine's available memory)",
          "[cli][quick]") {
  namespace fs = std::filesystem;
  std::vector<std::string> files = {source_path("tests/scenario/data/all_workloads.json")};
  for (const char* dir : {"scenarios", "scenarios/experiments"})
    for (const auto& entry : fs::directory_iterator(source_path(dir)))
      if (entry.path().extension() == ".json" && !entry.path().string().ends_with(".sweep.json"))
        files.push_back(entry.path().string());
  for (const std::string& file : files) {
    INFO(file);
    const auto r = run_cli({"validate", file});
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
  }
  // The 1,024-host benchmark needs 0.93 GiB (measured, docs/performance.md), estimated 1.08: refused under its
  // measured peak, accepted under 2 GiB.
  const std::string bench = source_path("scenarios/bench/all_to_all_1024.json");
  CHECK(run_cli({"validate", bench, "--max-memory", "955M"}).exit_code == 2);
  CHECK(run_cli({"validate", bench, "--max-memory", "2G"}).exit_code == 0);
  // Benchmark (g), 8,192 fabric-level hosts and 3.2 million connections, peaks at 884,212 KiB (0.84 GiB, measured,
  // docs/performance.md): its estimate is 0.95 to 1.05 GiB (fabric-level hosts at their own cost, not full hosts'),
  // at most 1.25 times the peak, and a limit under the peak refuses it.
  const std::string g = source_path("scenarios/bench/uniform_random_8192.json");
  const auto estimate = run_cli({"validate", g, "--max-memory", "1M"});
  CHECK(estimate.exit_code == 2);
  CHECK_THAT(estimate.err, Catch::Contains("got an estimated peak of 1.0 GiB"));
  CHECK(run_cli({"validate", g, "--max-memory", "860M"}).exit_code == 2);
}

TEST_CASE("cli: sweep's and compare's numeric options are checked, not wrapped or adjusted", "[cli][quick]") {
  // Regression: -j 0 ran as -j 1, and "-1" was taken as 2^32 - 1 or 2^64 - 1 (a seed, a QP depth, every point at once).
  const std::string s = source_path("scenarios/experiments/write_lat.json");
  const std::string dir = testing::scratch_path("numeric_options.sweep");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"sweep", s, "--sweep", "/seed=1,2", "--out", dir, "-j", "0"},
       "--jobs expects an integer in [1, 65536], got '0'"},
      {{"sweep", s, "--sweep", "/seed=1,2", "--out", dir, "-j", "-1"},
       "--jobs expects an integer in [1, 65536], got '-1'"},
      {{"sweep", s, "--sweep", "/workloads/0/iterations=1,2", "--out", dir, "--seed", "-1"},
       "--seed expects an integer in [0, 18446744073709551615], got '-1'"},
      {{"sweep", s, "--sweep", "/seed=1,2", "--out", dir, "--point", "2"}, "--point 2: the sweep has points 0..1"},
      {{"compare", s, "--seed", "-1"}, "--seed expects an integer in [0, 18446744073709551615], got '-1'"},
      {{"compare", s, "-j", "0"}, "--jobs expects an integer in [1, 65536], got '0'"},
      {{"compare", s, "--inline-size", "-5"}, "--inline-size expects an integer in [0, 4096], got '-5'"},
      {{"compare", s, "--postlist", "1"}, "--postlist expects an integer in [2, 16384], got '1'"},
  };
  for (const Case& c : cases) {
    INFO(c.message);
    const auto r = run_cli(c.args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(c.message));
    CHECK_FALSE(std::filesystem::exists(dir)); // refused before anything is written
  }
}
