// `ibnetsim sweep` and `ibnetsim compare` end to end, through the real executable (their points run as child
// processes of it): a sweep's grid, CSV rows and per-point reports, parallel runs, resume, Slurm array jobs, failing
// points, sweeps over hardware profile values; compare's latency and message-rate effects of inline, BlueFlame,
// postlist and unsignaled completions, and its PCIe transactions per message against the reference's per-post costs.
#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <sys/file.h>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/scenario/cli_harness.h"
#include "tests/scenario/fabric_scenarios.h"
#include "tools/ibnetsim/sweep.h"

using nlohmann::json;
using testing::run_executable;
namespace fs = std::filesystem;

namespace {

using CsvRow = std::map<std::string, std::string>;

std::string slurp(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// RFC 4180 fields of one line.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

/// The rows of a CSV file as column -> cell.
std::vector<CsvRow> read_csv(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  const std::vector<std::string> header = csv_fields(line);
  std::vector<CsvRow> rows;
  while (std::getline(file, line)) {
    const std::vector<std::string> fields = csv_fields(line);
    REQUIRE(fields.size() == header.size());
    CsvRow row;
    for (std::size_t i = 0; i < header.size(); ++i)
      row[header[i]] = fields[i];
    rows.push_back(row);
  }
  return rows;
}

/// ib_write_lat between h0 and h1 through one switch, short.
json write_lat_scenario() {
  return testing::scenario(
      "sweep-lat", testing::star(2),
      {{{"type", "ib_write_lat"}, {"client", "h0"}, {"server", "h1"}, {"size_bytes", 8}, {"iterations", 200}}});
}

/// A fresh directory name for a test's sweep output.
std::string fresh_dir(const std::string& name) {
  const std::string dir = testing::scratch_path("sweep_" + name);
  fs::remove_all(dir);
  return dir;
}

std::string write_scenario(const std::string& name, const json& s) {
  return testing::write_temp("experiment_" + name + ".json", s.dump(2));
}

double number(const std::string& cell) {
  return std::stod(cell);
}

} // namespace

TEST_CASE("sweep: 8 points run in parallel, give 8 rows with their values, and a resumed sweep reruns nothing",
          "[scenario][experiment]") {
  const std::string scenario = write_scenario("lat", write_lat_scenario());
  const std::string dir = fresh_dir("grid");
  const std::string axes = " --sweep /workloads/0/size_bytes=2,64 --sweep /workloads/0/inline_size_bytes=0,220"
                           " --sweep /workloads/0/blueflame=true,false --out " +
                           dir;
  const auto r = run_executable("sweep " + scenario + axes + " -j 4", dir + ".1");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out,
             Catch::Contains("8 points: 8 run (0 failed), 0 already done") && Catch::Contains("4 at once (-j 4)"));

  const std::vector<CsvRow> rows = read_csv(dir + "/results.csv");
  REQUIRE(rows.size() == 8);
  std::map<std::string, double> median; // "size/inline/blueflame" -> t_typical_us
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const CsvRow& row = rows[i];
    CHECK(row.at("point") == std::to_string(i));
    CHECK(row.at("status") == "ok");
    // The last axis varies fastest.
    CHECK(row.at("size_bytes") == (i < 4 ? "2" : "64"));
    CHECK(row.at("inline_size_bytes") == (i % 4 < 2 ? "0" : "220"));
    CHECK(row.at("blueflame") == (i % 2 == 0 ? "true" : "false"));
    // The row's figures are its own report's, and that report ran with the row's values.
    char stem[32];
    std::snprintf(stem, sizeof stem, "%05zu", i);
    const json report = json::parse(slurp(dir + "/points/" + stem + ".json"));
    const json& config = report.at("config").at("workloads").at(0);
    CHECK(config.at("sizes_bytes").at(0).dump() == row.at("size_bytes"));
    CHECK(config.at("inline_size_bytes").dump() == row.at("inline_size_bytes"));
    CHECK(config.at("blueflame").dump() == row.at("blueflame"));
    const json& results = report.at("results").at("workloads").at("ib_write_lat").at("results").at(0);
    CHECK(number(row.at("ib_write_lat.t_typical_us")) == Approx(results.at("t_typical_us").get<double>()));
    median[row.at("size_bytes") + "/" + row.at("inline_size_bytes") + "/" + row.at("blueflame")] =
        number(row.at("ib_write_lat.t_typical_us"));
  }
  // Inline and BlueFlame each take a PCIe round trip out of a small WRITE.
  for (const std::string size : {"2", "64"}) {
    INFO("size " << size);
    CHECK(median[size + "/220/true"] < median[size + "/0/true"]);
    CHECK(median[size + "/220/true"] < median[size + "/220/false"]);
    CHECK(median[size + "/0/true"] < median[size + "/0/false"]);
  }

  SECTION("a resumed sweep reruns nothing and writes the same CSV") {
    const std::string csv = slurp(dir + "/results.csv");
    const auto first_report_time = fs::last_write_time(dir + "/points/00003.json");
    const auto again = run_executable("sweep " + scenario + axes, dir + ".2");
    INFO(again.out << again.err);
    REQUIRE(again.exit_code == 0);
    CHECK_THAT(again.out, Catch::Contains("8 points: 0 run (0 failed), 8 already done"));
    CHECK(fs::last_write_time(dir + "/points/00003.json") == first_report_time);
    CHECK(slurp(dir + "/results.csv") == csv);

    fs::remove(dir + "/points/00005.json");
    const auto one = run_executable("sweep " + scenario + axes, dir + ".3");
    REQUIRE(one.exit_code == 0);
    CHECK_THAT(one.out, Catch::Contains("8 points: 1 run (0 failed), 7 already done"));
    CHECK(slurp(dir + "/results.csv") == csv); // deterministic: the rerun point gives the same figures
  }
  SECTION("another sweep in the same directory is refused; --restart starts over") {
    const auto other =
        run_executable("sweep " + scenario + " --sweep /workloads/0/size_bytes=8 --out " + dir, dir + ".4");
    CHECK(other.exit_code == 2);
    CHECK_THAT(other.err, Catch::Contains("points.json") && Catch::Contains("--restart"));
    const auto restarted =
        run_executable("sweep " + scenario + " --sweep /workloads/0/size_bytes=8 --restart --out " + dir, dir + ".5");
    REQUIRE(restarted.exit_code == 0);
    CHECK(read_csv(dir + "/results.csv").size() == 1);
  }
}

/// `report` without its performance fields (wall time, events/s, peak RSS), which no two runs share.
json without_performance(json report) {
  static const char* const fields[] = {"performance", "wall_s", "peak_rss_bytes", "events_per_s", "wall_seconds"};
  if (report.is_object()) {
    for (const char* field : fields)
      report.erase(field);
    for (auto& [key, value] : report.items())
      value = without_performance(value);
  } else if (report.is_array()) {
    for (json& value : report)
      value = without_performance(value);
  }
  return report;
}

TEST_CASE("sweep: a point's report is the one ibnetsim run writes with the point's values", "[scenario][experiment]") {
  // Points are forks of the sweep's process, which has loaded SimGrid for them: what they report must not depend on
  // that (write_lat's programs run on SimGrid).
  const std::string scenario = write_scenario("same_as_run", write_lat_scenario());
  const std::string dir = fresh_dir("same_as_run");
  const auto r = run_executable("sweep " + scenario + " --sweep /workloads/0/size_bytes=2,4096 --out " + dir, dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string direct = testing::scratch_path("same_as_run_direct.json");
  const auto run = run_executable("run " + scenario + " --set /workloads/0/size_bytes=4096 --quiet --out " + direct,
                                  direct + ".log");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(without_performance(json::parse(slurp(dir + "/points/00001.json"))) ==
        without_performance(json::parse(slurp(direct))));
}

TEST_CASE("sweep: a pattern whose hosts default to every host resumes without rerunning its points",
          "[scenario][experiment]") {
  // Regression: the resume check hashed the scenario before a run fills in the pattern's host list, which the report
  // records, so every finished point ran again.
  const std::string dir = fresh_dir("resume_pattern");
  const std::string command = "sweep " + testing::source_path("scenarios/experiments/uniform_random.json") +
                              " --sweep /seed=1,2 --set /workloads/0/messages=20 --out " + dir;
  const auto first = run_executable(command, dir + ".1");
  INFO(first.out << first.err);
  REQUIRE(first.exit_code == 0);
  CHECK_THAT(first.out, Catch::Contains("2 points: 2 run (0 failed), 0 already done"));
  const json report = json::parse(slurp(dir + "/points/00000.json"));
  CHECK(report.at("config").at("workloads").at(0).at("hosts").size() == 16); // filled in by the run
  const auto second = run_executable(command, dir + ".2");
  INFO(second.out << second.err);
  REQUIRE(second.exit_code == 0);
  CHECK_THAT(second.out, Catch::Contains("2 points: 0 run (0 failed), 2 already done"));
  CHECK_THAT(second.out, !Catch::Contains("ran again"));
}

TEST_CASE("sweep: a directory another sweep is using is refused, while Slurm array tasks share it",
          "[scenario][experiment]") {
  const std::string scenario = write_scenario("lock", write_lat_scenario());
  const std::string dir = fresh_dir("locked");
  fs::create_directories(dir);
  // Another sweep holds the directory (as a running sweep's lock does): a second one would rerun every point.
  const int fd = ::open((dir + "/.lock").c_str(), O_RDWR | O_CREAT, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX) == 0);
  const std::string command = "sweep " + scenario + " --sweep /seed=1,2 --out " + dir;
  auto r = run_executable(command, dir + ".1");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains(dir + ":/: expected a directory no other sweep is using, got one in use by "
                                          "another running sweep"));
  // Array tasks (--point) run side by side, each on its own point: a shared lock lets them.
  REQUIRE(::flock(fd, LOCK_SH) == 0);
  r = run_executable(command + " --point 1", dir + ".2");
  CHECK(r.exit_code == 0);
  CHECK(fs::exists(dir + "/points/00001.json"));
  ::close(fd);
  r = run_executable(command, dir + ".3");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("2 points: 1 run (0 failed), 1 already done"));
}

TEST_CASE("sweep: SIGTERM stops the sweep's running points too, and leaves no partial report",
          "[scenario][experiment]") {
  const std::string dir = fresh_dir("signalled");
  const std::string status_path = dir + ".status";
  // Points long enough to be running a second in (or, on a slow machine, the sweep still validating: either way
  // the signal must leave nothing running).
  const std::string sweep = std::string(IBNETSIM_EXECUTABLE) + " sweep " +
                            testing::source_path("scenarios/default.json") +
                            " --sweep /seed=1,2,3,4,5,6 --set /workloads/1/messages=40 -j 2 --out " + dir;
  const std::string script =
      sweep + " >/dev/null 2>&1 & pid=$!; sleep 1; kill -TERM $pid; wait $pid; echo $? >" + status_path;
  REQUIRE(std::system(script.c_str()) == 0);
  std::ifstream status(status_path);
  int exit_status = -1;
  status >> exit_status;
  CHECK(exit_status == 128 + SIGTERM);
  // No point's run is left: no process whose command line writes into this sweep's points.
  const std::string marker = dir + "/points/";
  std::size_t left_running = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream cmdline(entry.path() / "cmdline", std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    if (text.find(marker) != std::string::npos && text.find("--quiet") != std::string::npos)
      ++left_running;
  }
  CHECK(left_running == 0);
  if (fs::exists(dir + "/points"))
    for (const auto& entry : fs::directory_iterator(dir + "/points"))
      CHECK(entry.path().extension() != ".partial");
}

TEST_CASE("sweep and compare check every point as validate does before running or emitting anything",
          "[scenario][experiment]") {
  // Regression: a value only the fabric can refuse (a host the topology lacks) went into an emitted Slurm script,
  // or failed at the end of a local sweep after the other points had run.
  const std::string dir = fresh_dir("validated");
  const std::string script = dir + ".slurm.sh";
  const std::string scenario = testing::source_path("scenarios/experiments/write_lat.json");
  auto r = run_executable(
      "sweep " + scenario + " --sweep /workloads/0/server=h1,h99 --out " + dir + " --emit-slurm " + script, dir + ".1");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains(":/workloads/0/server: expected the name of a host (an HCA node) of the "
                                    "topology, got \"h99\""));
  CHECK_FALSE(fs::exists(script));
  r = run_executable("sweep " + scenario + " --sweep /workloads/0/server=h1,h99 --out " + dir, dir + ".2");
  CHECK(r.exit_code == 2);
  CHECK_FALSE(fs::exists(dir + "/points/00000.json")); // nothing ran
  r = run_executable("compare " + scenario + " --variant 'bad:/workloads/0/server=h99'", dir + ".3");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("got \"h99\""));
  CHECK(r.out.empty());
}

TEST_CASE("sweep: points whose topology file changed since they ran run again, and validate gives their digest",
          "[scenario][experiment]") {
  json topology = testing::star(2);
  const std::string topology_file = testing::write_temp("experiment_topology.json", topology.dump(2));
  json s = write_lat_scenario();
  s["topology"] = topology_file; // beside the scenario: both are written to the working directory
  const std::string scenario = write_scenario("topology_file", s);
  const std::string dir = fresh_dir("topology_file");
  const std::string args = "sweep " + scenario + " --sweep /workloads/0/size_bytes=2,64 --quiet --out " + dir;
  const auto first = run_executable(args, dir + ".1");
  INFO(first.out << first.err);
  REQUIRE(first.exit_code == 0);
  CHECK_THAT(first.out, Catch::Contains("2 points: 2 run (0 failed), 0 already done"));
  const std::vector<CsvRow> before = read_csv(dir + "/results.csv");

  // `validate` names the digest a run reports, topology file and profiles included (given the scenario's path
  // as the sweep gives it to its points: the topology's path is part of the configuration).
  const auto validated = run_executable("validate " + fs::absolute(scenario).lexically_normal().string() +
                                            " --set /workloads/0/size_bytes=2",
                                        dir + ".v");
  const std::string recorded = json::parse(slurp(dir + "/points/00000.json")).at("config_digest");
  CHECK_THAT(validated.out, Catch::Contains("config digest " + recorded));

  SECTION("unchanged, the sweep resumes") {
    const auto again = run_executable(args, dir + ".2");
    CHECK_THAT(again.out, Catch::Contains("2 points: 0 run (0 failed), 2 already done"));
  }
  SECTION("with longer cables in the topology file, both points run again and their latency grows") {
    topology["link_defaults"]["length_m"] = 20;
    std::ofstream(topology_file) << topology.dump(2);
    const auto again = run_executable(args, dir + ".3");
    INFO(again.out << again.err);
    REQUIRE(again.exit_code == 0);
    CHECK_THAT(again.out,
               Catch::Contains("2 points: 2 run (0 failed), 0 already done") && Catch::Contains("2 of them ran again"));
    const std::vector<CsvRow> after = read_csv(dir + "/results.csv");
    REQUIRE(after.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
      // 18 m more of cable each way, at about 5 ns/m: some 180 ns more per one-way latency.
      CHECK(number(after[i].at("ib_write_lat.t_typical_us")) > number(before[i].at("ib_write_lat.t_typical_us")) + 0.1);
    }
  }
}

TEST_CASE("sweep: a SWEEP.json with a range, zipped parameters and named variants, --emit-slurm and --point",
          "[scenario][experiment]") {
  const std::string scenario = write_scenario("file", write_lat_scenario());
  const json sweep = {
      {"name", "file-sweep"},
      {"scenario", fs::absolute(scenario).string()},
      {"set", {{"/workloads/0/iterations", 100}}},
      {"axes",
       {{{"name", "size"}, {"pointer", "/workloads/0/size_bytes"}, {"range", {{"from", 2}, {"to", 32}, {"times", 4}}}},
        {{"zip",
          {{{"pointer", "/workloads/0/inline_size_bytes"}, {"values", {0, 220}}},
           {{"pointer", "/workloads/0/blueflame"}, {"values", {false, true}}}}}},
        {{"name", "switch"},
         {"variants",
          {{{"name", "fast"}, {"set", {{"/profiles/switch-ib2-edr/port_to_port_latency_ns", 90}}}},
           {{"name", "slow"}, {"set", {{"/profiles/switch-ib2-edr/port_to_port_latency_ns", 190}}}}}}}}},
      {"metrics", {"ib_write_lat.t_typical_us", "/results/pcie/per_message/doorbells"}},
      {"plots",
       {{{"file", "lat.png"}, {"x", "size"}, {"y", "ib_write_lat.t_typical_us"}, {"series", {"switch"}}},
        {{"file", "lat_by_switch.svg"},
         {"x", "size"},
         {"y", "ib_write_lat.t_typical_us"},
         {"facet", {"switch"}},
         {"where", {{"blueflame", true}}}}}}};
  const std::string file = testing::write_temp("experiment_sweep.json", sweep.dump(2));
  const std::string dir = fresh_dir("file");

  SECTION("the grid: 3 sizes x 2 zipped settings x 2 switch variants") {
    const auto r = run_executable("sweep " + file + " --out " + dir + " -j 2", dir);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const std::vector<CsvRow> rows = read_csv(dir + "/results.csv");
    REQUIRE(rows.size() == 12);
    CHECK(rows[0].size() == 9); // point, status, size, inline_size_bytes, blueflame, switch, 2 metrics, error
    std::map<std::string, double> fast, slow;
    for (const CsvRow& row : rows) {
      CHECK(row.at("status") == "ok");
      CHECK((row.at("size") == "2" || row.at("size") == "8" || row.at("size") == "32"));
      // Zipped: inline and BlueFlame go together.
      CHECK(row.at("blueflame") == (row.at("inline_size_bytes") == "220" ? "true" : "false"));
      CHECK(number(row.at("/results/pcie/per_message/doorbells")) == (row.at("blueflame") == "true" ? 0 : 1));
      const std::string key = row.at("size") + "/" + row.at("inline_size_bytes");
      (row.at("switch") == "fast" ? fast : slow)[key] = number(row.at("ib_write_lat.t_typical_us"));
    }
    // The profile override reaches the switch: 100 ns more per pass, one pass per half round trip.
    REQUIRE(fast.size() == 6);
    for (const auto& [key, us] : fast) {
      INFO(key);
      CHECK(slow.at(key) - us == Approx(0.100).margin(1e-6));
    }
    // The directory's sweep.json keeps the plots for tools/plot_sweep.py, and reads back as the same sweep.
    const json written = json::parse(slurp(dir + "/sweep.json"));
    CHECK(written.at("plots").at(1).at("facet") == json{"switch"});
    CHECK(written.at("plots").at(1).at("where") == json{{"blueflame", true}});
    const auto again = run_executable("sweep " + dir + "/sweep.json --out " + dir, dir + ".again");
    INFO(again.err);
    CHECK(again.exit_code == 0);
    CHECK_THAT(again.out, Catch::Contains("12 points: 0 run (0 failed), 12 already done"));
  }
  SECTION("--emit-slurm writes an array job of one task per point; --point runs only that point") {
    const std::string script = dir + ".sbatch";
    const auto r = run_executable("sweep " + file + " --out " + dir + " --emit-slurm " + script, dir);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const std::string text = slurp(script);
    CHECK_THAT(text, Catch::StartsWith("#!/bin/bash") && Catch::Contains("#SBATCH --array=0-11\n") &&
                         Catch::Contains("--task \"${SLURM_ARRAY_TASK_ID}\" --points-per-task 1"));
    CHECK_FALSE(fs::exists(dir + "/points/00000.json"));
    const auto task = run_executable("sweep " + dir + "/sweep.json --out " + dir + " --point 7 --quiet", dir + ".7");
    INFO(task.err);
    REQUIRE(task.exit_code == 0);
    CHECK(fs::exists(dir + "/points/00007.json"));
    CHECK_FALSE(fs::exists(dir + "/points/00006.json"));
    CHECK_FALSE(fs::exists(dir + "/results.csv"));
  }
}

TEST_CASE("sweep: every experiment in scenarios/experiments is a valid sweep, and the credits one draws reference E4's "
          "curve",
          "[scenario][experiment]") {
  for (const auto& entry : fs::directory_iterator(testing::source_path("scenarios/experiments"))) {
    const std::string path = entry.path().string();
    if (!path.ends_with(".sweep.json"))
      continue;
    DYNAMIC_SECTION(entry.path().filename().string()) {
      // --emit-slurm loads every point's scenario, then stops: a check of the whole grid without running it.
      const std::string dir = fresh_dir("experiment_" + entry.path().stem().stem().string());
      const auto r = run_executable("sweep " + path + " --out " + dir + " --emit-slurm " + dir + ".sbatch", dir);
      INFO(r.out << r.err);
      CHECK(r.exit_code == 0);
      CHECK(fs::exists(dir + "/sweep.json"));
    }
  }
  SECTION("bandwidth_vs_credits: flat at line rate once credits cover the loop, a staircase of whole packets below") {
    const std::string dir = fresh_dir("credits");
    const auto r = run_executable(
        "sweep " + testing::source_path("scenarios/experiments/bandwidth_vs_credits.sweep.json") + " --out " + dir,
        dir);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const std::vector<CsvRow> rows = read_csv(dir + "/results.csv");
    REQUIRE(rows.size() == 12);
    // A 4 KiB-MTU packet (4138 B on the wire) needs 65 credits (reference E3), so 66..129 credits per VL admit
    // one packet in flight, 130..194 two: bandwidth steps by whole packets per credit loop.
    double previous = 0, one_packet = 0;
    for (const CsvRow& row : rows) {
      const double credits = number(row.at("credits_per_vl"));
      const double gbps = number(row.at("ib_write_bw.bw_average_gbps"));
      INFO(credits << " credits: " << gbps << " Gb/s");
      CHECK(gbps >= previous - 1e-6);
      if (credits < 130)
        one_packet = gbps;
      if (credits >= 130 && credits < 195)
        CHECK(gbps == Approx(2 * one_packet).epsilon(0.01));
      previous = gbps;
    }
    CHECK(one_packet < 25);
    CHECK(previous >= 0.95 * 99.4); // 512 credits: the 4x EDR payload rate
  }
}

TEST_CASE("sweep: --zip on the command line varies its parameters together", "[scenario][experiment]") {
  const std::string scenario = write_scenario("zip", write_lat_scenario());
  const std::string dir = fresh_dir("zip");
  const auto r =
      run_executable("sweep " + scenario +
                         " --zip /workloads/0/inline_size_bytes=0,220 --zip /workloads/0/blueflame=false,true"
                         " --set /workloads/0/iterations=50 --metric pcie.doorbells --metric pcie.payload_reads"
                         " --out " +
                         dir + " -j 1",
                     dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("1 at once (-j 1)"));
  const std::vector<CsvRow> rows = read_csv(dir + "/results.csv");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].at("inline_size_bytes") == "0");
  CHECK(rows[0].at("blueflame") == "false");
  CHECK(number(rows[0].at("pcie.doorbells")) == 1);
  CHECK(number(rows[0].at("pcie.payload_reads")) == 1);
  CHECK(rows[1].at("inline_size_bytes") == "220");
  CHECK(rows[1].at("blueflame") == "true");
  CHECK(number(rows[1].at("pcie.doorbells")) == 0);
  CHECK(number(rows[1].at("pcie.payload_reads")) == 0);
}

// Regression (fuzzing): a --set value that is not JSON (a plain string, as --set allows) made writing the sweep's
// sweep.json an internal error; it is written as the JSON string, and the sweep resumes from that file.
TEST_CASE("sweep: a --set plain string goes into sweep.json as a string, and the sweep resumes from it",
          "[scenario][experiment]") {
  const std::string scenario = write_scenario("set_string", write_lat_scenario());
  const std::string dir = fresh_dir("set_string");
  const auto r = run_executable("sweep " + scenario +
                                    " --sweep /workloads/0/size_bytes=8 --set /description=plain"
                                    " --set /workloads/0/iterations=50 --out " +
                                    dir,
                                dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const json written = json::parse(slurp(dir + "/sweep.json"));
  CHECK(written.at("set") == json{{"/description", "plain"}, {"/workloads/0/iterations", 50}});
  const auto again = run_executable("sweep " + dir + "/sweep.json --out " + dir, dir + ".again");
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  CHECK_THAT(again.out, Catch::Contains("1 points: 0 run (0 failed), 1 already done"));
}

TEST_CASE("sweep: a phold scenario's figures are its metrics", "[scenario][experiment]") {
  const std::string dir = fresh_dir("phold");
  const auto r = run_executable("sweep " + testing::source_path("scenarios/phold.json") +
                                    " --sweep /workload/lp_count=8,16 --set /duration_us=2 --out " + dir,
                                dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const std::vector<CsvRow> rows = read_csv(dir + "/results.csv");
  REQUIRE(rows.size() == 2);
  // PHOLD keeps its population of lp_count x events_per_lp in flight: twice the LPs handle about twice the events.
  const double ratio = number(rows[1].at("events_handled")) / number(rows[0].at("events_handled"));
  CHECK(ratio == Approx(2).epsilon(0.1));
}

TEST_CASE("sweep: a failing point is reported in its row and the exit code, and the others still run",
          "[scenario][experiment]") {
  const std::string dir = fresh_dir("failing");
  // Bad input fails every point before anything runs (validated as `validate` does); what can still fail is a run:
  // here PHOLD's invariant self-test breaks event conservation in one point (exit 3).
  const auto r = run_executable("sweep " + testing::source_path("scenarios/phold.json") +
                                    " --set /duration_us=5 --sweep /workload/self_test/drop_event_number=1000000000000,"
                                    "500 --out " +
                                    dir,
                                dir);
  CHECK(r.exit_code == 3);
  const std::vector<CsvRow> rows = read_csv(dir + "/results.csv");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].at("status") == "ok");
  CHECK(rows[1].at("status") == "failed (exit 3)");
  CHECK_THAT(rows[1].at("error"), Catch::Contains("[event-conservation]"));
  CHECK(rows[1].at("events_handled").empty());
  CHECK_FALSE(rows[0].at("events_handled").empty());
}

TEST_CASE("sweep: bad sweeps exit 2 naming the file, the JSON pointer and what was expected",
          "[scenario][experiment]") {
  const std::string scenario = fs::absolute(write_scenario("bad", write_lat_scenario())).string();
  const json axis = {{"pointer", "/workloads/0/size_bytes"}, {"values", {2, 8}}};
  struct Case {
    std::string name;
    json sweep;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"unknown_key",
       {{"name", "s"}, {"scenario", scenario}, {"axes", {axis}}, {"metric", {"x"}}},
       ":/metric: expected"},
      {"values_and_range",
       {{"name", "s"},
        {"scenario", scenario},
        {"axes", {{{"pointer", "/seed"}, {"values", {1}}, {"range", {{"from", 1}, {"to", 2}, {"step", 1}}}}}}},
       ":/axes/0: expected exactly one of \"values\" and \"range\""},
      {"zip_lengths",
       {{"name", "s"},
        {"scenario", scenario},
        {"axes", {{{"zip", {axis, {{"pointer", "/seed"}, {"values", {1, 2, 3}}}}}}}}},
       ":/axes/0/zip: expected zipped parameters with as many values each (2)"},
      {"missing_scenario", {{"name", "s"}, {"scenario", "no/such.json"}, {"axes", {axis}}}, ":/scenario: expected"},
      // Regression (fuzzing): a name the system refuses ended as an internal error (filesystem_error).
      {"scenario_name_too_long",
       {{"name", "s"}, {"scenario", std::string(5000, 'a') + ".json"}, {"axes", {axis}}},
       ":/scenario: expected a scenario file (relative paths from the sweep's directory), got \"aaa"},
      // A value the sweep gives is at fault in the sweep file, where it gives it (regression: the scenario file was
      // blamed, at a value it does not have).
      {"bad_value",
       {{"name", "s"},
        {"scenario", scenario},
        {"axes", {{{"pointer", "/workloads/0/size_bytes"}, {"values", {2, -8}}}}}},
       "bad_value.json:/axes/0/values/1: expected an integer in [1, 1073741824], got number -8 (point 1: " + scenario +
           ":/workloads/0/size_bytes)"},
      {"bad_fixed_value",
       {{"name", "s"}, {"scenario", scenario}, {"set", {{"/workloads/0/iterations", 0}}}, {"axes", {axis}}},
       "bad_fixed_value.json:/set/~1workloads~10~1iterations: expected an integer in [1, 100000000], got number 0 "
       "(point 0: " +
           scenario + ":/workloads/0/iterations)"},
      {"unknown_profile",
       {{"name", "s"},
        {"scenario", scenario},
        {"axes", {{{"pointer", "/profiles/connectx9/max_inline_data_bytes"}, {"values", {64}}}}}},
       "unknown_profile.json:/axes/0/values/0: expected a profile this fabric uses"},
      // Regression (fuzzing): a pointer holding '=' became an override "/a=b=1", split at its first '=' into
      // another pointer and value; the sweep.json written for it then failed as an internal error.
      {"pointer_with_equals",
       {{"name", "s"}, {"scenario", scenario}, {"axes", {{{"pointer", "/workloads/0/size_bytes=2"}, {"values", {8}}}}}},
       ":/axes/0/pointer: expected a JSON pointer into the scenario (\"/...\", without '=')"},
      {"set_key_with_equals",
       {{"name", "s"},
        {"scenario", scenario},
        {"axes", {{{"name", "v"}, {"variants", {{{"name", "a"}, {"set", {{"/description=x", 1}}}}}}}}}},
       ":/axes/0/variants/0/set/~1description=x: expected a JSON pointer into the scenario"},
      {"metric_of_no_workload",
       {{"name", "s"}, {"scenario", scenario}, {"axes", {axis}}, {"metrics", {"ib_write_lat.t_typical_us", "lat.t"}}},
       "metric_of_no_workload.json:/metrics/1: expected a metric WORKLOAD.key of a workload of the scenario "
       "(ib_write_lat), pcie.key, simulated_time_us, or a JSON pointer into the report, got \"lat.t\""},
      {"metric_pointer_into_no_section",
       {{"name", "s"}, {"scenario", scenario}, {"axes", {axis}}, {"metrics", {"/result/simulated_time_us"}}},
       "metric_pointer_into_no_section.json:/metrics/0: expected a JSON pointer into a report"},
      {"plot_column",
       {{"name", "s"},
        {"scenario", scenario},
        {"axes", {axis}},
        {"metrics", {"ib_write_lat.t_typical_us"}},
        {"plots", {{{"file", "a.png"}, {"x", "size_bytes"}, {"y", "latency"}}}}},
       ":/plots/0/y: expected an axis name or one of the sweep's metrics"},
      {"plot_format",
       {{"name", "s"},
        {"scenario", scenario},
        {"axes", {axis}},
        {"plots", {{{"file", "a.gif"}, {"x", "size_bytes"}, {"y", "latency"}}}}},
       ":/plots/0/file: expected a file name ending in .png, .svg or .pdf"},
      {"plot_facet_column",
       {{"name", "s"},
        {"scenario", scenario},
        {"axes", {axis}},
        {"metrics", {"ib_write_lat.t_typical_us"}},
        {"plots", {{{"file", "a.svg"}, {"x", "size_bytes"}, {"y", "ib_write_lat.t_typical_us"}, {"facet", {"vls"}}}}}},
       ":/plots/0/facet/0: expected an axis name or one of the sweep's metrics, got \"vls\""},
      {"plot_where_value",
       {{"name", "s"},
        {"scenario", scenario},
        {"axes", {axis}},
        {"plots",
         {{{"file", "a.pdf"},
           {"x", "size_bytes"},
           {"y", "ib_write_lat.t_typical_us"},
           {"where", {{"size_bytes", {2, 8}}}}}}}},
       ":/plots/0/where/size_bytes: expected the value of the rows to plot (a string, number or boolean)"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      const std::string file = testing::write_temp("experiment_bad_" + c.name + ".json", c.sweep.dump(2));
      const std::string dir = fresh_dir("bad_" + c.name);
      const auto r = run_executable("sweep " + file + " --out " + dir, dir);
      INFO(r.out << r.err);
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Catch::Contains(c.message));
    }
  }
  SECTION("a bad --sweep list") {
    const auto r =
        run_executable("sweep " + scenario + " --sweep /workloads/0/size_bytes=2..1*2 --out " + fresh_dir("bad_list"),
                       testing::scratch_path("sweep_bad_list"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("a range whose end is at least its start"));
  }
  SECTION("a --sweep value is at fault on the command line, with the point and the scenario's pointer") {
    const auto r =
        run_executable("sweep " + scenario + " --sweep /workloads/0/size_bytes=2,0 --out " + fresh_dir("bad_cli_value"),
                       testing::scratch_path("sweep_bad_cli_value"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--sweep:/workloads/0/size_bytes: expected an integer in [1, 1073741824], got "
                                      "number 0 (point 1: " +
                                      scenario + ":/workloads/0/size_bytes)"));
  }
  SECTION("a metric that names no value of the reports: exit 2 once the results are written, not an empty column") {
    const std::string dir = fresh_dir("bad_metric");
    const auto r = run_executable("sweep " + scenario + " --sweep /seed=1,2 --metric ib_write_lat.t_typical_us " +
                                      "--metric ib_write_lat.t_typicl_us --out " + dir,
                                  dir);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--metric:/: expected a metric that names a value of the points' reports") &&
                          Catch::Contains("got \"ib_write_lat.t_typicl_us\", found in none"));
    const std::vector<CsvRow> rows = read_csv(dir + "/results.csv"); // the results are kept
    REQUIRE(rows.size() == 2);
    CHECK_FALSE(rows[0].at("ib_write_lat.t_typical_us").empty());
  }
  SECTION("a --variant value of compare is at fault on the command line") {
    const auto r = run_executable("compare " + scenario + " --variant 'tiny:/workloads/0/size_bytes=0'",
                                  testing::scratch_path("compare_bad_variant"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--variant:/workloads/0/size_bytes: expected an integer in [1, 1073741824], "
                                      "got number 0 (variant tiny: " +
                                      scenario + ":/workloads/0/size_bytes)"));
  }
}

TEST_CASE("compare: inline and BlueFlame cut small-message latency, with the reference's PCIe transactions per post",
          "[scenario][experiment]") {
  const std::string scenario = write_scenario("compare_lat", write_lat_scenario());
  const auto r = run_executable("compare " + scenario + " --features inline,blueflame --format json -q", scenario);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  std::vector<std::string> names;
  for (const json& v : doc.at("variants"))
    names.push_back(v.at("name").get<std::string>());
  REQUIRE(names == std::vector<std::string>{"baseline", "inline", "blueflame", "inline+blueflame"});
  std::map<std::string, json> figure; // pointer -> values by variant
  for (const json& f : doc.at("figures"))
    figure[f.at("pointer").get<std::string>()] = f.at("values");
  const json& median = figure.at("/results/workloads/ib_write_lat/results/0/t_typical_us");
  CHECK(median[1].get<double>() < median[0].get<double>());
  CHECK(median[2].get<double>() < median[0].get<double>());
  CHECK(median[3].get<double>() < median[1].get<double>());
  CHECK(median[3].get<double>() < median[2].get<double>());
  // One DMA read round trip is 0.45-0.7 us on the E5 host profile (reference E7, E13): each feature saves one.
  CHECK(median[0].get<double>() - median[1].get<double>() == Approx(0.575).margin(0.125));
  CHECK(median[0].get<double>() - median[2].get<double>() == Approx(0.575).margin(0.125));

  // Per message (one post), both ends: verb_pcie_cost_baseline is {1 MMIO, 2 DMA reads, 1 DMA write} at the
  // requester, verb_pcie_cost_inline_blueflame {1 MMIO, 0 reads, 1 write}; the responder adds the payload write.
  const auto per_message = [&](const std::string& key, std::size_t variant) {
    return figure.at("/results/pcie/per_message/" + key)[variant].get<double>();
  };
  CHECK(per_message("doorbells", 0) == 1);
  CHECK(per_message("downstream_mwr_tlps", 0) == 1);
  CHECK(per_message("downstream_mwr_bytes", 0) == 32); // reference E5: an 8 B doorbell is a 32 B TLP
  CHECK(per_message("upstream_mrd_tlps", 0) == 2);     // WQE and payload
  CHECK(per_message("downstream_cpld_tlps", 0) == 2);
  CHECK(per_message("upstream_mwr_tlps", 0) == 2); // CQE, and the payload written at the responder
  CHECK(per_message("payload_reads", 1) == 0);
  CHECK(per_message("upstream_mrd_tlps", 1) == 1);
  CHECK(per_message("doorbells", 2) == 0);
  CHECK(per_message("blueflame_writes", 2) == 1);
  CHECK(per_message("wqe_reads", 2) == 0);
  CHECK(per_message("downstream_mwr_bytes", 3) == 88); // reference E5: a 64 B WQE by MMIO is an 88 B TLP
  CHECK(per_message("mmio_bytes", 3) == 64);
  CHECK(per_message("upstream_mrd_tlps", 3) == 0);
  CHECK(per_message("downstream_cpld_tlps", 3) == 0);
  CHECK(per_message("upstream_mwr_tlps", 3) == 2);
  CHECK_THAT(doc.at("summaries").at("inline").get<std::string>(), Catch::StartsWith("removes payload reads 1 -> 0"));
  // Figures carry the metric names run and sweep use, and their changes as numbers.
  for (const json& f : doc.at("figures"))
    if (f.at("pointer") == "/results/workloads/ib_write_lat/results/0/t_typical_us") {
      CHECK(f.at("metric") == "ib_write_lat.t_typical_us");
      CHECK(f.at("entity") == "8"); // a perftest's rows are by message size, as in long-csv
      CHECK(f.at("change_percent")[0] == 0.0);
      CHECK(f.at("change_percent")[3].get<double>() ==
            Approx(100.0 * (median[3].get<double>() - median[0].get<double>()) / median[0].get<double>()));
    } else if (f.at("pointer") == "/results/pcie/per_message/blueflame_writes") {
      CHECK(f.at("metric") == "pcie.blueflame_writes");
      CHECK(f.at("change_percent")[2].is_null()); // from 0: no percentage
    }
  CHECK_THAT(doc.at("summaries").at("blueflame").get<std::string>(),
             Catch::StartsWith("removes doorbells 1 -> 0, WQE reads 1 -> 0"));

  SECTION("CSV: tidy rows under the metric names") {
    const auto csv =
        run_executable("compare " + scenario + " --features inline,blueflame --format csv -q", scenario + ".csv");
    REQUIRE(csv.exit_code == 0);
    CHECK_THAT(csv.out, Catch::StartsWith("variant,metric,entity,value,change_percent\n"
                                          "baseline,ib_write_lat.t_typical_us,8,") &&
                            Catch::Contains("\ninline+blueflame,pcie.doorbells,,0.0,-100.0\n") &&
                            Catch::Contains("\nblueflame,pcie.blueflame_writes,,1.0,\n"));
  }
  SECTION("the table shows the same, side by side, with the change against the baseline") {
    const auto table = run_executable("compare " + scenario + " --features inline,blueflame -q", scenario + ".t");
    REQUIRE(table.exit_code == 0);
    CHECK_THAT(table.out, Catch::Contains("baseline") && Catch::Contains("inline+blueflame") &&
                              Catch::Contains("change against baseline") &&
                              Catch::Contains("inline:    removes payload reads 1 -> 0"));
  }
}

TEST_CASE(
    "compare: postlist raises the message rate and rings one doorbell per list, and unsignaled writes one CQE in N",
    "[scenario][experiment]") {
  const std::string scenario = write_scenario(
      "compare_bw",
      testing::scenario(
          "compare-bw", testing::star(2),
          {{{"type", "ib_write_bw"}, {"client", "h0"}, {"server", "h1"}, {"size_bytes", 8}, {"iterations", 4096}}}));
  const auto r = run_executable("compare " + scenario + " --features postlist,unsignaled --format json -q", scenario);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  std::map<std::string, json> figure;
  for (const json& f : doc.at("figures"))
    figure[f.at("pointer").get<std::string>()] = f.at("values");
  const json& rate = figure.at("/results/workloads/ib_write_bw/results/0/msg_rate_mpps");
  INFO("message rates " << rate.dump());
  CHECK(rate[1].get<double>() > 1.2 * rate[0].get<double>()); // postlist
  CHECK(rate[3].get<double>() > 1.2 * rate[0].get<double>()); // postlist+unsignaled
  const auto per_message = [&](const std::string& key, std::size_t variant) {
    return figure.at("/results/pcie/per_message/" + key)[variant].get<double>();
  };
  // 4096 WRs: 256 lists of 16 with postlist, a CQE for every 16th WR unsignaled.
  CHECK(per_message("doorbells", 1) == Approx(1.0 / 16).epsilon(1e-12));
  // Unsignaled alone leaves BlueFlame as the scenario has it (on): each lone WQE goes by MMIO.
  CHECK(per_message("doorbells", 2) == 0);
  CHECK(per_message("blueflame_writes", 2) == 1);
  CHECK(per_message("cqe_writes", 0) == 1);
  CHECK(per_message("cqe_writes", 2) == Approx(1.0 / 16).epsilon(1e-12));
  CHECK(per_message("cqe_writes", 3) == Approx(1.0 / 16).epsilon(1e-12));
  CHECK_THAT(doc.at("summaries").at("unsignaled").get<std::string>(),
             Catch::StartsWith("removes CQE writes 1 -> 0.0625"));
}

TEST_CASE("compare: named variants, and bad requests exit 2", "[scenario][experiment]") {
  const std::string scenario = write_scenario("compare_named", write_lat_scenario());
  SECTION("named variants run against the scenario as it is") {
    const auto r = run_executable("compare " + scenario +
                                      " --variant 'slow-switch:/profiles/switch-ib2-edr/port_to_port_latency_ns=190'"
                                      " --variant 'no-bf:/workloads/0/blueflame=false;/workloads/0/inline_size_bytes=0'"
                                      " --format json -q",
                                  scenario);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const json doc = json::parse(r.out);
    REQUIRE(doc.at("variants").size() == 3);
    for (const json& f : doc.at("figures"))
      if (f.at("pointer") == "/results/workloads/ib_write_lat/results/0/t_typical_us")
        CHECK(f.at("values")[1].get<double>() - f.at("values")[0].get<double>() == Approx(0.100).margin(1e-6));
  }
  SECTION("postlist needs a bandwidth test") {
    const auto r = run_executable("compare " + scenario + " --features postlist", scenario + ".pl");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--features postlist: no workload of the scenario has it"));
  }
  SECTION("unknown feature") {
    const auto r = run_executable("compare " + scenario + " --features inline,turbo", scenario + ".turbo");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("unknown feature 'turbo'"));
  }
}

namespace {

/// A small PHOLD scenario (a few LPs, a microsecond): points that run in milliseconds.
std::string tiny_phold(const std::string& name) {
  json s = json::parse(slurp(testing::source_path("scenarios/phold.json")));
  s.erase("$schema");
  s["duration_us"] = 1;
  s["workload"]["lp_count"] = 8;
  return write_scenario(name, s);
}

/// The value of "#SBATCH --key=" in a script, or "" without one.
std::string sbatch_value(const std::string& script, const std::string& key) {
  const std::string prefix = "#SBATCH --" + key + "=";
  const std::size_t at = script.find(prefix);
  if (at == std::string::npos)
    return "";
  const std::size_t from = at + prefix.size();
  return script.substr(from, script.find('\n', from) - from);
}

} // namespace

TEST_CASE("sweep: a 1500-point Slurm array is batched within 1001 tasks whose ranges cover every point once",
          "[scenario][experiment]") {
  const std::string scenario = tiny_phold("slurm_big");
  const std::string dir = fresh_dir("slurm_big");
  const std::string script = dir + ".sbatch";
  const std::string base = "sweep " + scenario + " --sweep /seed=1..1500+1 --out " + dir;
  const auto r = run_executable(base + " --emit-slurm " + script, dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("a Slurm array of 750 tasks (2 points each) for the 1500 points") &&
                        Catch::Contains("batched automatically"));
  const std::string text = slurp(script);
  CHECK(sbatch_value(text, "array") == "0-749");
  CHECK_THAT(text, Catch::Contains("# Batched automatically") &&
                       Catch::Contains("--task \"${SLURM_ARRAY_TASK_ID}\" --points-per-task 2"));
  CHECK(fs::is_empty(dir + "/points")); // emitting runs nothing
  // The mapping the tasks use (--task I --points-per-task N) covers each point exactly once.
  const std::size_t per_task = cli::default_points_per_task(1500);
  CHECK(per_task == 2);
  CHECK(cli::default_points_per_task(1001) == 1);
  CHECK(cli::default_points_per_task(1002) == 2);
  std::vector<int> covered(1500, 0);
  for (std::size_t task = 0; task < 750; ++task) {
    const cli::PointRange range = cli::task_points(task, per_task, 1500);
    for (std::size_t i = range.first; i < range.end; ++i)
      ++covered.at(i);
  }
  CHECK(std::count(covered.begin(), covered.end(), 1) == 1500);
  // An uneven last task: 7 points, 3 a task: 0-2, 3-5, 6.
  CHECK(cli::task_points(2, 3, 7).first == 6);
  CHECK(cli::task_points(2, 3, 7).end == 7);

  // The last task runs its two points, as --point would write them; a task past the end is bad input.
  auto task = run_executable("sweep " + dir + "/sweep.json --task 749 --points-per-task 2 -j 1 --quiet", dir + ".t");
  INFO(task.err);
  CHECK(task.exit_code == 0);
  CHECK(fs::exists(dir + "/points/01498.json"));
  CHECK(fs::exists(dir + "/points/01499.json"));
  CHECK_FALSE(fs::exists(dir + "/points/01497.json"));
  CHECK_FALSE(fs::exists(dir + "/results.csv"));
  task = run_executable("sweep " + dir + "/sweep.json --task 750 --points-per-task 2", dir + ".t2");
  CHECK(task.exit_code == 2);
  CHECK_THAT(task.err, Catch::Contains("--task 750: a sweep of 1500 points has tasks 0..749"));

  // An explicit batch is the user's: no automatic batching.
  const auto explicit_batch = run_executable(base + " --emit-slurm " + script + " --points-per-task 100", dir + ".e");
  CHECK(explicit_batch.exit_code == 0);
  CHECK(sbatch_value(slurp(script), "array") == "0-14");
  CHECK_THAT(slurp(script), !Catch::Contains("Batched automatically"));
}

TEST_CASE("sweep: --slurm-option adds #SBATCH lines, --array-throttle limits the array, logs are per job and task",
          "[scenario][experiment]") {
  const std::string scenario = tiny_phold("slurm_options");
  const std::string dir = fresh_dir("slurm_options");
  const std::string script = dir + ".sbatch";
  const std::string base = "sweep " + scenario + " --sweep /seed=1,2,3 --out " + dir + " --emit-slurm " + script;
  const auto r = run_executable(base + " --slurm-option=--time=01:00:00 --slurm-option=--partition=compute"
                                       " --slurm-option=--account=proj --slurm-option=--exclusive"
                                       " --slurm-option=--cpus-per-task=4 --array-throttle 2",
                                dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string text = slurp(script);
  INFO(text);
  CHECK(sbatch_value(text, "array") == "0-2%2");
  CHECK(sbatch_value(text, "time") == "01:00:00");
  CHECK(sbatch_value(text, "partition") == "compute");
  CHECK(sbatch_value(text, "account") == "proj");
  CHECK_THAT(text, Catch::Contains("#SBATCH --exclusive\n"));
  CHECK(sbatch_value(text, "cpus-per-task") == "4"); // the user's replaces the default 1
  CHECK(text.find("--cpus-per-task=1") == std::string::npos);
  CHECK(sbatch_value(text, "output") == dir + "/slurm/%A_%a.out");
  CHECK_THAT(text, Catch::Contains("-j \"${SLURM_CPUS_PER_TASK:-1}\""));
  // Every #SBATCH line comes before the first command, or sbatch ignores it.
  CHECK(text.rfind("#SBATCH") < text.find("set -euo pipefail"));
  CHECK(fs::is_empty(dir + "/points"));

  for (const char* bad :
       {"--slurm-option=time=1:00", "--slurm-option=-t", "--slurm-option=--time=", "--slurm-option='--time 1:00'",
        "--slurm-option=--array=0-3", "--slurm-option=--output=x.out"}) {
    const auto b = run_executable(base + " " + bad, dir + ".bad");
    INFO(bad << ": " << b.err);
    CHECK(b.exit_code == 2);
    CHECK_THAT(b.err, Catch::Contains("--slurm-option"));
  }
  const auto no_emit =
      run_executable("sweep " + scenario + " --sweep /seed=1,2 --out " + dir + "x --array-throttle 2", dir + ".ne");
  CHECK(no_emit.exit_code == 2);
}

TEST_CASE("sweep: --collect runs nothing, writes the CSV of the finished points and lists the missing ones",
          "[scenario][experiment]") {
  const std::string scenario = tiny_phold("collect");
  const std::string dir = fresh_dir("collect");
  const std::string base = "sweep " + scenario + " --sweep /seed=1,2,3,4,5 --out " + dir;
  // Points 0-1 and 4 run, as array tasks would.
  auto r = run_executable(base + " --points 0-1 -q", dir + ".1");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  r = run_executable("sweep " + dir + "/sweep.json --point 4 -q", dir + ".2");
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(fs::exists(dir + "/points/00002.json"));

  // Collect from the directory's sweep.json alone: its directory is the output directory.
  r = run_executable("sweep " + dir + "/sweep.json --collect", dir + ".3");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::Contains("collected 3 of 5 points") && Catch::Contains("missing 2 points: 2-3"));
  CHECK_FALSE(fs::exists(dir + "/points/00002.json")); // nothing ran
  std::vector<CsvRow> rows = read_csv(dir + "/results.csv");
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].at("status") == "ok");
  CHECK(rows[2].at("status") == "not run");
  CHECK(rows[4].at("status") == "ok");
  CHECK(rows[4].at("seed") == "5");

  // Once the rest have run, collecting is complete: exit 0.
  r = run_executable("sweep " + dir + "/sweep.json --points 2-3 -q", dir + ".4");
  REQUIRE(r.exit_code == 0);
  r = run_executable("sweep " + dir + "/sweep.json --collect", dir + ".5");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("collected 5 of 5 points"));
  rows = read_csv(dir + "/results.csv");
  for (const CsvRow& row : rows)
    CHECK(row.at("status") == "ok");

  // Collecting a directory without a sweep, or with --emit-slurm, is bad input.
  r = run_executable(base + "-none --collect", dir + ".6");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("points.json"));
  r = run_executable(base + " --collect --emit-slurm x.sbatch", dir + ".7");
  CHECK(r.exit_code == 2);
  r = run_executable(base + " --points 3-1", dir + ".8");
  CHECK(r.exit_code == 2);
  r = run_executable(base + " --points 0-5", dir + ".9");
  CHECK(r.exit_code == 2);
}

TEST_CASE("sweep: a sweep directory stores its scenario relative, so a copied directory resumes and collects",
          "[scenario][experiment]") {
  const std::string scenario = tiny_phold("relocate");
  const std::string dir = fresh_dir("relocate");
  auto r = run_executable("sweep " + scenario + " --sweep /seed=1,2,3 --out " + dir + " -q", dir + ".1");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string scenario_name = fs::path(scenario).filename().string();
  // Beside each other in the scratch directory: "../SCENARIO".
  CHECK(json::parse(slurp(dir + "/sweep.json"))["scenario"] == "../" + scenario_name);
  CHECK(json::parse(slurp(dir + "/points.json"))["scenario"] == "../" + scenario_name);

  SECTION("a copy beside the original resumes without rerunning anything, and collects") {
    const std::string copy = fresh_dir("relocate_copy");
    fs::copy(dir, copy, fs::copy_options::recursive);
    fs::remove(copy + "/results.csv");
    r = run_executable("sweep " + copy + "/sweep.json", copy + ".1");
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("3 points: 0 run (0 failed), 3 already done"));
    CHECK(read_csv(copy + "/results.csv").size() == 3);
    r = run_executable("sweep " + copy + "/sweep.json --collect", copy + ".2");
    CHECK(r.exit_code == 0);
  }
  SECTION("a copy away from its scenario collects, and resumes once its sweep.json names the scenario again") {
    const std::string copy = fresh_dir("relocate_far") + "/deeper/here.sweep";
    fs::create_directories(fs::path(copy).parent_path());
    fs::copy(dir, copy, fs::copy_options::recursive);
    fs::remove(copy + "/results.csv");
    r = run_executable("sweep " + copy + "/sweep.json --collect", copy + ".1");
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(read_csv(copy + "/results.csv").size() == 3);
    // Running needs the scenario: where sweep.json says it is not is exit 2, naming the file and the pointer.
    r = run_executable("sweep " + copy + "/sweep.json", copy + ".2");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(copy + "/sweep.json:/scenario"));
    json moved = json::parse(slurp(copy + "/sweep.json"));
    moved["scenario"] = scenario;
    std::ofstream(copy + "/sweep.json") << moved.dump(2);
    r = run_executable("sweep " + copy + "/sweep.json", copy + ".3");
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("3 points: 0 run (0 failed), 3 already done"));
  }
}
