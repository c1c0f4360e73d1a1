// `ibnetsim perftest TEST [perftest's options]`: its report is that of `run` on the same scenario written as a file,
// perftest's letters set the workload's options, and options it cannot honour are refused or noted.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/scenario/cli_harness.h"

using testing::run_cli;

namespace {

nlohmann::json json_of(const testing::CliResult& result) {
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  return nlohmann::json::parse(result.out);
}

/// What `ibnetsim perftest ib_write_bw ...` builds by default, written as a scenario file would be.
constexpr const char* write_bw_scenario = R"({
  "name": "perftest ib_write_bw",
  "seed": 1,
  "topology": {
    "name": "two-hosts-one-switch",
    "link_defaults": {"width": "4x", "speed": "EDR", "length_m": 2, "cable": "copper-dac"},
    "nodes": [
      {"name": "s0", "kind": "switch", "profile": "switch-ib2-edr"},
      {"name": "h0", "kind": "hca", "profile": "connectx4-edr"},
      {"name": "h1", "kind": "hca", "profile": "connectx4-edr"}
    ],
    "links": [{"a": "h0/1", "b": "s0/1"}, {"a": "h1/1", "b": "s0/2"}]
  },
  "workloads": [{"type": "ib_write_bw", "client": "h0", "server": "h1", "size_bytes": 4096, "iterations": 100,
                 "qps": 2, "tx_depth": 16, "post_list": 4, "cq_mod": 8}]
})";

const std::vector<std::string> write_bw_letters = {"perftest", "ib_write_bw", "-s",       "4096", "-n", "100",
                                                   "-q",       "2",           "-t",       "16",   "-l", "4",
                                                   "-Q",       "8",           "--format", "json"};

} // namespace

TEST_CASE("perftest reports what run reports for the same scenario file", "[cli][perftest]") {
  const std::string file = testing::write_temp("perftest_write_bw.json", write_bw_scenario);
  const testing::CliResult from_file = run_cli({"run", file, "--format", "json"});
  const testing::CliResult from_letters = run_cli(write_bw_letters);
  nlohmann::json file_report = json_of(from_file);
  nlohmann::json letters_report = json_of(from_letters);
  CHECK(letters_report["scenario"]["file"] == "command line");
  CHECK(letters_report["scenario"]["name"] == "perftest ib_write_bw");
  // Only the file name differs: the same bytes once it is the same.
  std::string expected = from_file.out;
  const std::string quoted_file = nlohmann::json(file).dump();
  expected.replace(expected.find(quoted_file), quoted_file.size(), "\"command line\"");
  CHECK(from_letters.out == expected);
  CHECK(letters_report["config_digest"] == file_report["config_digest"]);
}

TEST_CASE("perftest --print-scenario prints a scenario that run runs to the same report", "[cli][perftest]") {
  std::vector<std::string> print = write_bw_letters;
  print.push_back("--print-scenario");
  const testing::CliResult printed = run_cli(print);
  REQUIRE(printed.exit_code == 0);
  const std::string file = testing::write_temp("perftest_printed.json", printed.out);
  nlohmann::json from_file = json_of(run_cli({"run", file, "--format", "json"}));
  nlohmann::json from_letters = json_of(run_cli(write_bw_letters));
  from_file["scenario"].erase("file");
  from_letters["scenario"].erase("file");
  CHECK(from_file == from_letters);
}

TEST_CASE("perftest letters and long names set the workload's options", "[cli][perftest]") {
  const nlohmann::json report = json_of(run_cli(write_bw_letters));
  const nlohmann::json& workload = report["config"]["workloads"][0];
  CHECK(workload["type"] == "ib_write_bw");
  CHECK(workload["sizes_bytes"] == nlohmann::json::array({4096}));
  CHECK(workload["iterations"] == 100);
  CHECK(workload["qps"] == 2);
  CHECK(workload["tx_depth"] == 16);
  CHECK(workload["post_list"] == 4);
  CHECK(workload["cq_mod"] == 8);
  const nlohmann::json long_names =
      json_of(run_cli({"perftest", "ib_send_bw", "--size=2048", "--iters", "20", "--qp=3", "--mtu", "1024",
                       "--connection=UC", "--bidirectional", "--inline_size", "0", "--format", "json"}));
  const nlohmann::json& send = long_names["config"]["workloads"][0];
  CHECK(send["sizes_bytes"] == nlohmann::json::array({2048}));
  CHECK(send["iterations"] == 20);
  CHECK(send["qps"] == 3);
  CHECK(send["mtu_bytes"] == 1024);
  CHECK(send["connection"] == "UC");
  CHECK(send["bidirectional"] == true);
  const nlohmann::json atomic =
      json_of(run_cli({"perftest", "ib_atomic_lat", "-A", "CMP_AND_SWAP", "-n", "10", "--format", "json"}));
  CHECK(atomic["config"]["workloads"][0]["atomic"] == "cmp_and_swap");
}

TEST_CASE("perftest -a runs every size", "[cli][perftest]") {
  const nlohmann::json report = json_of(run_cli({"perftest", "ib_write_lat", "-a", "-n", "5", "--set",
                                                 "/workloads/0/all_sizes_max_bytes=1024", "--format", "json"}));
  const nlohmann::json& rows = report["results"]["workloads"]["ib_write_lat"]["results"];
  REQUIRE(rows.size() == 10); // 2, 4, ..., 1024
  CHECK(rows.front()["size_bytes"] == 2);
  CHECK(rows.back()["size_bytes"] == 1024);
}

TEST_CASE("perftest fabric options: back to back and HCA generation and a topology file first hosts",
          "[cli][perftest]") {
  const nlohmann::json pair = json_of(run_cli(
      {"perftest", "ib_write_lat", "-n", "10", "--back-to-back", "--hca", "connectx6-hdr", "--format", "json"}));
  CHECK(pair["scenario"]["switches"] == 0);
  CHECK(pair["config"]["topology"]["link_defaults"]["speed"] == "HDR");
  const nlohmann::json switched =
      json_of(run_cli({"perftest", "ib_write_lat", "-n", "10", "--hca", "connectx7-ndr", "--print-scenario"}));
  CHECK(switched["topology"]["nodes"][0]["profile"] == "quantum2-ndr");
  const nlohmann::json tree =
      json_of(run_cli({"perftest", "ib_read_bw", "-s", "4096", "-n", "10", "--topology",
                       testing::source_path("topologies/examples/ft2-16.json"), "--format", "json"}));
  CHECK(tree["config"]["workloads"][0]["client"] == "h0");
  CHECK(tree["config"]["workloads"][0]["server"] == "h1");
  const testing::CliResult both =
      run_cli({"perftest", "ib_read_bw", "--topology", testing::source_path("topologies/examples/ft2-16.json"), "--hca",
               "connectx5-edr"});
  CHECK(both.exit_code == 2);
  CHECK(both.err.find("--hca builds a topology") != std::string::npos);
}

TEST_CASE("perftest refuses unknown options and tests and bad values naming the option", "[cli][perftest]") {
  const struct {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"perftest", "ib_write_bw", "-X"}, "unrecognised option '-X'"},
      {{"perftest", "ib_write_bw", "--write_with_imm"}, "'--write_with_imm'"},
      {{"perftest", "ib_flood_bw"}, "unknown perftest test 'ib_flood_bw'"},
      {{"perftest"}, "perftest needs a TEST"},
      {{"perftest", "ib_write_bw", "-s", "0"}, "-s (--size): expected an integer in [1, 1073741824]"},
      {{"perftest", "ib_write_bw", "-n", "many"}, "-n (--iters): expected"},
      {{"perftest", "ib_write_bw", "-m", "300"}, "-m (--mtu): expected"},
      {{"perftest", "ib_write_bw", "-c", "XRC"}, "-c (--connection): expected"},
      {{"perftest", "ib_write_bw", "--hca", "connectx9"}, "--hca: expected an hca profile"},
      {{"perftest", "ib_write_bw", "--server", "h7"}, "--server: expected"},
      {{"perftest", "ib_write_bw", "-D", "10"}, "-D (--duration) is not supported"},
      {{"perftest", "ib_write_bw", "--run_infinitely"}, "--run_infinitely is not supported"},
      {{"perftest", "ib_read_bw", "-o", "4"}, "-o (--outs) is not supported"},
      {{"perftest", "ib_send_lat", "-e"}, "-e (--cq-events) is not supported"},
      {{"perftest", "ib_write_bw", "--back-to-back", "--switch", "quantum-hdr"}, "--switch and --back-to-back"},
  };
  for (const auto& c : cases) {
    const testing::CliResult result = run_cli(c.args);
    INFO(c.args.back() << ": " << result.err);
    CHECK(result.exit_code == 2);
    CHECK(result.err.find(c.message) != std::string::npos);
  }
}

TEST_CASE("perftest notes options with no meaning in a simulation and runs", "[cli][perftest]") {
  const testing::CliResult result = run_cli({"perftest", "ib_write_bw", "-n", "10", "-d", "mlx5_0", "-x", "3", "-F",
                                             "--report_gbits", "-R", "--format", "json"});
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.err.find("note: -d (--ib-dev) ignored") != std::string::npos);
  CHECK(result.err.find("note: -x (--gid-index) ignored") != std::string::npos);
  CHECK(result.err.find("note: -R (--rdma_cm) ignored") != std::string::npos);
  CHECK(result.err.find("-F") == std::string::npos); // harmless: accepted without a word
  CHECK(result.err.find("report_gbits") == std::string::npos);
}

TEST_CASE("perftest --events counts events as run --events does", "[cli][perftest]") {
  const nlohmann::json report =
      json_of(run_cli({"perftest", "ib_write_lat", "-n", "10", "--events", "--format", "json"}));
  CHECK(report["results"].contains("kernel_events_by_part"));
}

TEST_CASE("perftest bandwidth peak stays near the average when several QPs signal together", "[cli][perftest]") {
  // Four QPs in step signal within picoseconds of each other: a peak window shorter than one round of them once gave
  // thousands of Gb/s.
  const auto r = run_cli({"perftest", "ib_write_bw", "-s", "65536", "-n", "200", "-q", "4", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const auto row = nlohmann::json::parse(r.out)["results"]["workloads"]["ib_write_bw"]["results"][0];
  const double peak = row["bw_peak_gbps"].get<double>();
  const double average = row["bw_average_gbps"].get<double>();
  CHECK(peak >= average);
  CHECK(peak <= 1.05 * average);
}
