// Fabric scenarios end to end through `ibnetsim run SCENARIO --format json`: perftest latency back to back and per
// switch hop (from the hardware profiles' figures), perftest bandwidth, all-to-all and permutation on a non-blocking
// fat tree, incast fairness, byte-identical reports, and bad workload input (exit 2 naming the file and pointer).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/scenario/cli_harness.h"
#include "tests/scenario/fabric_scenarios.h"

using nlohmann::json;
using testing::back_to_back;
using testing::profile_value;
using testing::run_cli;
using testing::scenario;
using testing::source_path;
using testing::star;

namespace {

/// 4x EDR payload rate of RDMA WRITEs at MTU 4096: 100 Gb/s x 4096 / (4096 + 26 B of LRH, BTH, ICRC and VCRC).
constexpr double edr_payload_gbps = 99.4;

constexpr double host_cable_m = 2, switch_cable_m = 10;

/// h0 - leaf0 - spine0 - leaf1 - h1: hosts on 2 m copper, leaves to the spine on 10 m fibre.
json leaf_spine_leaf() {
  return {{"name", "leaf-spine-leaf"},
          {"generator",
           {{"type", "leaf-spine"},
            {"leaves", 2},
            {"spines", 1},
            {"hosts_per_leaf", 1},
            {"switch_profile", "switch-ib2-edr"},
            {"hca_profile", "connectx4-edr"},
            {"host_length_m", host_cable_m},
            {"host_cable", "copper-dac"},
            {"switch_length_m", switch_cable_m},
            {"switch_cable", "fibre"}}}};
}

std::vector<std::string> with(std::vector<std::string> head, const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

/// Writes `text` as a scenario file and runs it with --format json and `extra` options; the run must succeed.
std::pair<std::string, json> run_text(const std::string& name, const std::string& text,
                                      const std::vector<std::string>& extra = {}) {
  const std::string path = testing::write_temp("fabric_" + name + ".json", text);
  const auto r = run_cli(with({"run", path, "--format", "json"}, extra));
  INFO(name << ": " << r.err);
  REQUIRE(r.exit_code == 0);
  return {r.out, json::parse(r.out)};
}

json run_report(const std::string& name, const json& s, const std::vector<std::string>& extra = {}) {
  return run_text(name, s.dump(2), extra).second;
}

const json& results_of(const json& report, const std::string& workload) {
  return report.at("results").at("workloads").at(workload).at("results");
}

double write_lat_median_us(const std::string& name, const json& topology, const std::string& client,
                           const std::string& server) {
  const json report = run_report(name, scenario(name, topology,
                                                {{{"type", "ib_write_lat"},
                                                  {"client", client},
                                                  {"server", server},
                                                  {"size_bytes", 2},
                                                  {"iterations", 1000}}}));
  const json& row = results_of(report, "ib_write_lat").at(0);
  CHECK(row.at("iterations") == 1000);
  return row.at("t_typical_us").get<double>();
}

/// The all-to-all and permutation runs share the README's 16-host fat tree (k = 4, two levels, ftree routing).
json fat_tree_scenario(const std::string& name, const json& workload) {
  json s = scenario(name, source_path("topologies/examples/ft2-16.json"), json::array({workload}));
  s["subnet_manager"] = {{"routing", "ftree"}};
  return s;
}

} // namespace

TEST_CASE("fabric: ib_write_lat of 2 bytes lands in 0.55 to 1.0 us back to back and each hop adds its switch and "
          "cable delays",
          "[scenario][fabric]") {
  const double switch_ns = profile_value("switch-ib2-edr", "port_to_port_latency_ns");
  const double copper_ns_per_m = profile_value("copper-dac", "propagation_delay_ns_per_m");
  const double fibre_ns_per_m = profile_value("fibre", "propagation_delay_ns_per_m");
  const double host_cable_ns = host_cable_m * copper_ns_per_m;

  const double direct = write_lat_median_us("lat_back_to_back", back_to_back(), "a", "b");
  const double one_switch = write_lat_median_us("lat_one_switch", star(2), "h0", "h1");
  const double three_switches = write_lat_median_us("lat_three_switches", leaf_spine_leaf(), "h0", "h1");
  // One way: back to back crosses one 2 m cable; through a switch, two host cables and the switch; leaf-spine-leaf,
  // two host cables, two 10 m fibres and three switches.
  const double one_hop_us = (switch_ns + 2 * host_cable_ns - host_cable_ns) / 1000;
  const double three_hops_us =
      (3 * switch_ns + 2 * switch_cable_m * fibre_ns_per_m + 2 * host_cable_ns - host_cable_ns) / 1000;
  INFO("back to back " << direct << " us, one switch " << one_switch << " us, three switches " << three_switches
                       << " us; expected increases " << one_hop_us << " and " << three_hops_us << " us");
  CHECK(direct >= 0.55);
  CHECK(direct <= 1.0);
  CHECK(one_hop_us == Approx(0.100).margin(1e-9)); // 90 ns switch + one more 2 m cable at 5 ns/m
  CHECK(one_switch - direct == Approx(one_hop_us).margin(0.005));
  CHECK(three_switches - direct == Approx(three_hops_us).margin(0.005));
}

TEST_CASE("fabric: ib_write_bw of 64 KiB through one switch reaches 95 % of the 4x EDR payload rate",
          "[scenario][fabric]") {
  const json report = run_report("write_bw", scenario("write_bw", star(2),
                                                      {{{"type", "ib_write_bw"},
                                                        {"client", "h0"},
                                                        {"server", "h1"},
                                                        {"size_bytes", 65536},
                                                        {"iterations", 2000}}}));
  const json& row = results_of(report, "ib_write_bw").at(0);
  INFO("BW average " << row.at("bw_average_gbps") << " Gb/s, peak " << row.at("bw_peak_gbps") << " Gb/s");
  CHECK(row.at("iterations") == 2000);
  CHECK(row.at("bw_average_gbps").get<double>() >= 0.95 * edr_payload_gbps);
  CHECK(row.at("bw_peak_gbps").get<double>() >= row.at("bw_average_gbps").get<double>());
  CHECK(row.at("bw_peak_gbps").get<double>() <= edr_payload_gbps * 1.001);
}

TEST_CASE("fabric: ib_write_bw ib_read_bw and ib_send_bw runs end when the client is done", "[scenario][fabric]") {
  // No duration_us: the run must end because every program ended, the server's included.
  for (const char* type : {"ib_write_bw", "ib_read_bw", "ib_send_bw"}) {
    DYNAMIC_SECTION(type) {
      const json report = run_report(
          std::string("finish_") + type,
          scenario("finish", star(2),
                   {{{"type", type}, {"client", "h0"}, {"server", "h1"}, {"size_bytes", 65536}, {"iterations", 200}}}));
      CHECK(results_of(report, type).at(0).at("iterations") == 200);
      CHECK(report.at("results").at("finished") == true);
    }
  }
}

TEST_CASE("fabric: drained_at_us is the last event that did something: no retry timer stopped by the last ACK "
          "outlives the traffic",
          "[scenario][fabric]") {
  // Each RC QP's retry timer (4.096 us x 2^14 = 67.1 ms) leaves an entry in the calendar when the last ACK stops it;
  // it fires long after the traffic, stale. What may follow the last completion is the links' last flow-control
  // packets, at most one refresh period later.
  const double refresh_us = profile_value("connectx4-edr", "flow_control_refresh_ns") / 1000;
  CHECK(profile_value("switch-ib2-edr", "flow_control_refresh_ns") / 1000 == refresh_us);
  const auto spans = [](const std::string& scenario_file, const std::vector<std::string>& sets) {
    std::vector<std::string> args{"run", source_path(scenario_file), "--format", "json"};
    for (const std::string& set : sets) {
      args.push_back("--set");
      args.push_back(set);
    }
    const auto r = run_cli(args);
    INFO(scenario_file << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    const json results = json::parse(r.out).at("results");
    return std::pair{results.at("simulated_time_us").get<double>(), results.at("drained_at_us").get<double>()};
  };
  for (const char* file : {"scenarios/experiments/write_lat.json", "scenarios/experiments/write_bw_pair.json"}) {
    DYNAMIC_SECTION(file) {
      const auto [ended, drained] = spans(file, {});
      INFO("programs ended at " << ended << " us, drained at " << drained << " us");
      CHECK(drained >= ended);
      CHECK(drained <= ended + refresh_us + 0.5);
    }
  }
  SECTION("with a 1 us flow-control refresh the fabric is quiet within a microsecond of the last completion") {
    const auto [ended, drained] =
        spans("scenarios/experiments/write_lat.json", {"/profiles/connectx4-edr/flow_control_refresh_ns=1000",
                                                       "/profiles/switch-ib2-edr/flow_control_refresh_ns=1000"});
    INFO("programs ended at " << ended << " us, drained at " << drained << " us");
    CHECK(drained >= ended);
    CHECK(drained <= ended + 1);
  }
}

TEST_CASE("fabric: one RC WRITE of 896 MiB, longer to send than the 67 ms transport timeout, completes untimed out",
          "[scenario][fabric]") {
  // 939524096 bytes take 76 ms at 99 Gb/s: only acknowledgements requested inside the message keep the requester's
  // timer (timeout 14) from expiring and retrying it until "transport retry counter exceeded".
  const auto r = run_cli({"run", source_path("scenarios/experiments/write_bw_pair.json"), "--format", "json", "--set",
                          "/workloads/0/size_bytes=939524096", "--set", "/workloads/0/iterations=1"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json report = json::parse(r.out);
  CHECK(results_of(report, "ib_write_bw").at(0).at("bw_average_gbps").get<double>() > 70);
  for (const json& host : report.at("results").at("pcie").at("hosts")) {
    CHECK(host.at("timeouts") == 0);
    CHECK(host.at("retransmitted_packets") == 0);
  }
}

TEST_CASE("fabric: a workload with \"after\" starts when the one it names has ended, start_us after it",
          "[scenario][fabric]") {
  const json lat = {{"type", "ib_write_lat"}, {"client", "h0"}, {"server", "h1"}, {"iterations", 200}};
  const json bw = {{"type", "ib_write_bw"}, {"name", "bw"},        {"client", "h0"},
                   {"server", "h1"},        {"size_bytes", 65536}, {"iterations", 200}};
  const json alone = run_report("after_alone", scenario("after", star(2), json::array({lat})));
  const auto end_of = [](const json& report) { return report.at("results").at("simulated_time_us").get<double>(); };
  // Together, the bandwidth test's packets queue ahead of the latency test's; after it, they cannot.
  const json together = run_report("after_together", scenario("after", star(2), json::array({lat, bw})));
  json after = bw;
  after["after"] = "ib_write_lat";
  const json sequence = run_report("after_sequence", scenario("after", star(2), json::array({lat, after})));
  const auto typical = [&](const json& report) {
    return results_of(report, "ib_write_lat").at(0).at("t_typical_us").get<double>();
  };
  CHECK(typical(together) > typical(alone));
  CHECK(results_of(sequence, "ib_write_lat") == results_of(alone, "ib_write_lat"));
  CHECK(results_of(sequence, "bw").at(0).at("iterations") == 200);
  CHECK(end_of(sequence) > end_of(together));
  // start_us counts from the predecessor's end.
  after["start_us"] = 10;
  const json later = run_report("after_later", scenario("after", star(2), json::array({lat, after})));
  CHECK(end_of(later) - end_of(sequence) == Approx(10).margin(1e-6));
  CHECK(later.at("config").at("workloads").at(1).at("after") == "ib_write_lat");

  // A name no workload has, the workload itself, a cycle: exit 2 at the "after" that cannot be met.
  const auto error_of = [&](const std::string& name, const json& workloads) {
    const std::string path = testing::write_temp(name + ".json", scenario("after", star(2), workloads).dump(2));
    const auto r = run_cli({"validate", path});
    CHECK(r.exit_code == 2);
    return r.err.substr(r.err.find(path) + path.size());
  };
  json self = bw;
  self["after"] = "bw";
  json a = lat, b = bw;
  a["after"] = "bw";
  b["after"] = "ib_write_lat";
  json nosuch = bw;
  nosuch["after"] = "nosuch";
  CHECK(error_of("after_nosuch", json::array({lat, nosuch})) ==
        ":/workloads/1/after: expected the name of another workload of the scenario, got \"nosuch\"\n");
  CHECK(error_of("after_self", json::array({lat, self})) ==
        ":/workloads/1/after: expected the name of another workload of the scenario, got \"bw\"\n");
  CHECK(error_of("after_cycle", json::array({a, b})) ==
        ":/workloads/0/after: expected a workload that does not, through its own "
        "\"after\", wait for this one, got \"bw\", a cycle\n");
}

TEST_CASE("fabric: ib_write_bw over 2 QPs completes every message of both", "[scenario][fabric]") {
  const json report = run_report("write_bw_2qps", scenario("write_bw_2qps", star(2),
                                                           {{{"type", "ib_write_bw"},
                                                             {"client", "h0"},
                                                             {"server", "h1"},
                                                             {"size_bytes", 65536},
                                                             {"iterations", 200},
                                                             {"qps", 2}}}));
  const json& row = results_of(report, "ib_write_bw").at(0);
  INFO("BW average " << row.at("bw_average_gbps") << " Gb/s");
  CHECK(row.at("iterations") == 400);
  CHECK(row.at("bw_average_gbps").get<double>() >= 0.95 * edr_payload_gbps);
}

TEST_CASE("fabric: perftest over UD and UC: every message arrives, and neither transport acknowledges",
          "[scenario][fabric]") {
  json workloads = json::array();
  const auto add = [&](const std::string& name, const std::string& type, const std::string& connection,
                       std::uint32_t size, std::uint32_t iterations, std::uint32_t first_host) {
    std::string client = "h", server = "h";
    client += std::to_string(first_host);
    server += std::to_string(first_host + 1);
    workloads.push_back({{"name", name},
                         {"type", type},
                         {"client", client},
                         {"server", server},
                         {"size_bytes", size},
                         {"iterations", iterations},
                         {"connection", connection},
                         {"mtu_bytes", 2048}});
  };
  add("ud_lat", "ib_send_lat", "UD", 64, 200, 0);
  add("ud_bw", "ib_send_bw", "UD", 2048, 2000, 2);
  add("uc_bw", "ib_write_bw", "UC", 65536, 200, 4);
  add("rc_bw", "ib_send_bw", "RC", 2048, 2000, 6);
  const json report = run_report("ud_uc", scenario("ud_uc", star(8), workloads));
  CHECK(report.at("config").at("workloads").at(0).at("connection") == "UD");
  const double ud_lat = results_of(report, "ud_lat").at(0).at("t_typical_us").get<double>();
  CHECK(ud_lat >= 0.55);
  CHECK(ud_lat <= 2.0);
  CHECK(results_of(report, "ud_bw").at(0).at("iterations") == 2000);
  CHECK(results_of(report, "uc_bw").at(0).at("bw_average_gbps").get<double>() >= 0.95 * edr_payload_gbps);
  // A server sends nothing back on UD and UC; on RC it acknowledges.
  std::map<std::string, std::uint64_t> sent_by;
  for (const json& port : report.at("results").at("ports"))
    sent_by[port.at("port").get<std::string>()] = port.at("PortXmitPkts").get<std::uint64_t>();
  CHECK(sent_by.at("h3/1") == 0);
  CHECK(sent_by.at("h5/1") == 0);
  CHECK(sent_by.at("h7/1") > 0);
  CHECK(sent_by.at("h2/1") == 2000); // one datagram per message at 2048 B and MTU 2048

  SECTION("UD carries only SENDs of at most one MTU") {
    json bad = scenario("ud_bad", star(2),
                        {{{"type", "ib_write_lat"}, {"client", "h0"}, {"server", "h1"}, {"connection", "UD"}}});
    auto r = run_cli({"run", testing::write_temp("fabric_ud_write.json", bad.dump()), "--quiet"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(":/workloads/0/connection: expected RC or UC (UD carries only SENDs)"));
    bad["workloads"][0]["type"] = "ib_send_lat";
    bad["workloads"][0]["size_bytes"] = 4097;
    r = run_cli({"run", testing::write_temp("fabric_ud_big.json", bad.dump()), "--quiet"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(":/workloads/0/size_bytes: expected at most the MTU (4096 B)"));
  }
}

TEST_CASE("fabric: UD ib_send_bw over 4 QPs and header-only SENDs over UD and RC deliver every message",
          "[scenario][fabric]") {
  // Regression (issue 24): with a receive CQ per QP the server waited on QP 0 while QP 1's RECVs ran out and UD
  // dropped the rest, a program deadlock (exit 3). perftest's receiver polls one CQ for all its QPs.
  const auto sends = [](const std::string& name, const std::string& connection, std::uint32_t size, std::uint32_t qps) {
    return json{{"name", name},   {"type", "ib_send_bw"}, {"client", "h0"},
                {"server", "h1"}, {"size_bytes", size},   {"connection", connection},
                {"qps", qps},     {"iterations", 1500},   {"inline_size_bytes", size}};
  };
  for (const auto& [name, connection, size, qps] :
       {std::tuple<std::string, std::string, std::uint32_t, std::uint32_t>{"ud_4qps", "UD", 64, 4},
        {"ud_header_only", "UD", 0, 2},
        {"rc_header_only", "RC", 0, 1}}) {
    DYNAMIC_SECTION(name) {
      const json report = run_report(name, scenario(name, star(2), json::array({sends(name, connection, size, qps)})));
      CHECK(results_of(report, name).at(0).at("iterations") == 1500 * qps);
      CHECK(report.at("results").at("pcie").at("hosts").at(1).at("messages_received") == 1500 * qps);
      // A header-only SEND has no data segment: a UD WQE of control and datagram segments is one 64 B line, and
      // its 4 bytes travel as immediate data.
      if (size == 0 && connection == "UD")
        CHECK(report.at("results").at("pcie").at("hosts").at(0).at("mmio_bytes") == 64 * 1500 * qps);
    }
  }
}

TEST_CASE("fabric: ib_atomic_bw sums its clients and QPs and reports like perftest's bandwidth tests",
          "[scenario][fabric]") {
  json s = scenario("atomic_bw", star(4),
                    {{{"type", "ib_atomic_bw"},
                      {"client", "h1"},
                      {"extra_clients", {"h2", "h3"}},
                      {"server", "h0"},
                      {"qps", 2},
                      {"iterations", 100},
                      {"atomic", "cmp_and_swap"},
                      {"counters", 8},
                      {"counter_stride_bytes", 64}}});
  s["verify_contents"] = true;
  const auto [text, report] = run_text("atomic_bw", s.dump(2));
  const json& row = results_of(report, "ib_atomic_bw").at(0);
  CHECK(row.at("size_bytes") == 8);
  CHECK(row.at("iterations") == 600); // 3 clients x 2 QPs x 100
  const double mpps = row.at("msg_rate_mpps").get<double>();
  CHECK(mpps > 0);
  CHECK(row.at("bw_average_gbps").get<double>() == Approx(mpps * 64 / 1000)); // 8 bytes each
  const json& config = report.at("config").at("workloads").at(0);
  CHECK(config.at("extra_clients") == json({"h2", "h3"}));
  CHECK(config.at("connection") == "RC");
  // Each client sent its own 200 (2 QPs x 100); the server's HCA answered alone.
  std::map<std::string, std::uint64_t> sent;
  for (const json& host : report.at("results").at("pcie").at("hosts"))
    sent[host.at("host").get<std::string>()] = host.at("messages_sent").get<std::uint64_t>();
  CHECK(sent == std::map<std::string, std::uint64_t>{{"h1", 200}, {"h2", 200}, {"h3", 200}});
  const auto table = run_cli({"run", testing::write_temp("fabric_atomic_bw_table.json", s.dump(2))});
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("ib_atomic_bw (ib_atomic_bw, h1 and 2 more -> h0, cmp_and_swap on 8 "
                                        "counters 64 B apart)\n #bytes     #iterations    BW peak[Gb/sec]"));
}

TEST_CASE("fabric: all_to_all on a non-blocking fat tree injects at 90 % of line rate per host", "[scenario][fabric]") {
  const json report =
      run_report("all_to_all",
                 fat_tree_scenario("all_to_all",
                                   {{"type", "all_to_all"}, {"size_bytes", 65536}, {"messages", 16}, {"tx_depth", 4}}));
  const json& r = results_of(report, "all_to_all");
  INFO("per host " << r.at("per_host_injection_gbps") << " Gb/s, flows " << r.at("flow_gbps_min") << ".."
                   << r.at("flow_gbps_max") << " Gb/s");
  CHECK(r.at("messages") == 16 * 15 * 16);
  CHECK(r.at("flows").size() == 16 * 15);
  CHECK(r.at("per_host_injection_fraction_of_line_rate").get<double>() >= 0.90);
}

TEST_CASE("fabric: a permutation on the same fat tree reports an injection fraction above 0 and at most 1",
          "[scenario][fabric]") {
  const json report = run_report(
      "permutation",
      fat_tree_scenario("permutation",
                        {{"type", "permutation"}, {"size_bytes", 65536}, {"messages", 32}, {"tx_depth", 4}}));
  const json& r = results_of(report, "permutation");
  const double fraction = r.at("per_host_injection_fraction_of_line_rate").get<double>();
  INFO("per-host injection fraction " << fraction);
  CHECK(r.at("messages") == 16 * 32);
  CHECK(r.at("flows").size() == 16);
  std::set<std::string> sources, destinations;
  for (const json& flow : r.at("flows")) {
    CHECK(flow.at("source") != flow.at("destination"));
    sources.insert(flow.at("source").get<std::string>());
    destinations.insert(flow.at("destination").get<std::string>());
  }
  CHECK(sources.size() == 16);
  CHECK(destinations.size() == 16);
  CHECK(fraction > 0);
  CHECK(fraction <= 1);
}

TEST_CASE("fabric: incast of 8 senders to 1 receiver shares the receiver's link within 5 % per flow",
          "[scenario][fabric]") {
  const json report = run_report(
      "incast",
      scenario("incast", star(9), {{{"type", "incast"}, {"receiver", "h0"}, {"size_bytes", 65536}, {"messages", 50}}}));
  const json& r = results_of(report, "incast");
  const json& flows = r.at("flows");
  REQUIRE(flows.size() == 8);
  double sum = 0;
  for (const json& flow : flows) {
    CHECK(flow.at("destination") == "h0");
    CHECK(flow.at("messages") == 50);
    sum += flow.at("gbps").get<double>();
  }
  const double mean = sum / static_cast<double>(flows.size());
  for (const json& flow : flows) {
    INFO(flow.at("source").get<std::string>() << ": " << flow.at("gbps") << " Gb/s, mean " << mean << " Gb/s");
    CHECK(std::abs(flow.at("gbps").get<double>() - mean) <= 0.05 * mean);
  }
  // The receiver's link is the bottleneck and stays busy.
  CHECK(r.at("aggregate_gbps").get<double>() >= 0.95 * edr_payload_gbps);
}

TEST_CASE("fabric: the same scenario and seed give a byte-identical report and a new seed a new permutation",
          "[scenario][fabric]") {
  const std::string text =
      scenario("repeat", star(9),
               {{{"type", "permutation"}, {"size_bytes", 4096}, {"messages", 8}},
                {{"type", "ib_write_lat"}, {"client", "h0"}, {"server", "h8"}, {"iterations", 100}}})
          .dump(2);
  const auto [first_text, first] = run_text("repeat", text);
  const auto [second_text, second] = run_text("repeat", text);
  CHECK(first_text == second_text);
  CHECK_THAT(first_text, !Catch::Contains("\"performance\""));

  const auto [reseeded_text, reseeded] = run_text("repeat", text, {"--seed", "2"});
  CHECK(reseeded.at("config").at("seed") == 2);
  CHECK(reseeded.at("config_digest") != first.at("config_digest"));
  const auto pairs = [](const json& report) {
    std::set<std::pair<std::string, std::string>> out;
    for (const json& flow : results_of(report, "permutation").at("flows"))
      out.insert({flow.at("source").get<std::string>(), flow.at("destination").get<std::string>()});
    return out;
  };
  CHECK(pairs(reseeded) != pairs(first));
}

TEST_CASE("fabric: bad workload input exits 2 naming the file and the JSON pointer", "[scenario][fabric]") {
  struct Case {
    std::string name;
    json workload;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"unknown_key",
       {{"type", "ib_write_lat"}, {"client", "h0"}, {"server", "h1"}, {"sizes_bytes", 2}},
       ":/workloads/0/sizes_bytes: expected one of the keys type, name, client, server, all_sizes, size_bytes, "
       "iterations, tx_depth, qps, inline_size_bytes, post_list, cq_mod, mtu_bytes, qp_timeout, retry_count, "
       "connection, blueflame, "
       "bidirectional, "
       "atomic, client_ib_port, server_ib_port, start_us, after, "
       "got unknown key \"sizes_bytes\""},
      {"ib_port_absent",
       {{"type", "ib_write_lat"}, {"client", "h0"}, {"server", "h1"}, {"server_ib_port", 3}},
       ":/workloads/0/server_ib_port: expected an integer in [1, 2], got number 3"},
      {"ib_port_uncabled",
       {{"type", "ib_write_lat"}, {"client", "h0"}, {"server", "h1"}, {"server_ib_port", 2}},
       ":/workloads/0/server_ib_port: expected a cabled port of h1 (its HCA has 2 ports), got 2, which has no link"},
      {"unknown_host",
       {{"type", "ib_write_lat"}, {"client", "h0"}, {"server", "h7"}},
       ":/workloads/0/server: expected the name of a host (an HCA node) of the topology, got \"h7\""},
      {"size_and_all_sizes",
       {{"type", "ib_write_lat"}, {"client", "h0"}, {"server", "h1"}, {"size_bytes", 2}, {"all_sizes", true}},
       ":/workloads/0/size_bytes: expected size_bytes or all_sizes, not both, got both"},
      {"latency_qps",
       {{"type", "ib_write_lat"}, {"client", "h0"}, {"server", "h1"}, {"qps", 2}},
       ":/workloads/0: expected post_list, cq_mod, tx_depth and qps of 1 for a latency test, got a larger value"},
      {"atomic_bw_over_ud",
       {{"type", "ib_atomic_bw"}, {"client", "h0"}, {"server", "h1"}, {"connection", "UD"}},
       ":/workloads/0/connection: expected RC (UC and UD carry no atomics), got \"UD\""},
      {"atomic_bw_no_counters",
       {{"type", "ib_atomic_bw"}, {"client", "h0"}, {"server", "h1"}, {"counters", 0}},
       ":/workloads/0/counters: expected an integer in [1, 1048576], got number 0"},
      {"atomic_bw_stride",
       {{"type", "ib_atomic_bw"}, {"client", "h0"}, {"server", "h1"}, {"counter_stride_bytes", 12}},
       ":/workloads/0/counter_stride_bytes: expected a multiple of 8 (an atomic's address is 8-byte aligned), got 12"},
      {"atomic_bw_size",
       {{"type", "ib_atomic_bw"}, {"client", "h0"}, {"server", "h1"}, {"size_bytes", 16}},
       ":/workloads/0/size_bytes: expected 8 (atomics are 8 bytes), got 16"},
      {"atomic_bw_extra_client_is_client",
       {{"type", "ib_atomic_bw"}, {"client", "h0"}, {"server", "h1"}, {"extra_clients", {"h0"}}},
       ":/workloads/0/extra_clients/0: expected a host other than client, got \"h0\""},
      {"atomic_bw_extra_client_is_server",
       {{"type", "ib_atomic_bw"}, {"client", "h0"}, {"server", "h1"}, {"extra_clients", {"h1"}}},
       ":/workloads/0/extra_clients/0: expected a host other than the server, got \"h1\""},
      {"atomic_bw_inline",
       {{"type", "ib_atomic_bw"}, {"client", "h0"}, {"server", "h1"}, {"inline_size_bytes", 8}},
       ":/workloads/0/inline_size_bytes: expected one of the keys type, name, client, server, extra_clients, "
       "size_bytes, iterations, tx_depth, qps, post_list, cq_mod, mtu_bytes, qp_timeout, retry_count, connection, "
       "blueflame, atomic, counters, counter_stride_bytes, client_ib_port, server_ib_port, start_us, after, got "
       "unknown key "
       "\"inline_size_bytes\""},
      {"header_only_write",
       {{"type", "ib_write_bw"}, {"client", "h0"}, {"server", "h1"}, {"size_bytes", 0}},
       ":/workloads/0/size_bytes: expected an integer in [1, 1073741824], got number 0"},
      // Regression: a host listed twice passed validate and then failed the run as a model invariant (exit 3).
      {"hosts_twice",
       {{"type", "all_to_all"}, {"hosts", {"h0", "h1", "h0"}}, {"size_bytes", 64}, {"messages", 1}},
       ":/workloads/0/hosts/2: expected a host not listed before (it is already at /workloads/0/hosts/0), got string "
       "\"h0\""},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      const std::string path = testing::write_temp("fabric_bad_" + c.name + ".json",
                                                   scenario("bad", star(2), json::array({c.workload})).dump(2));
      const auto r = run_cli({"run", path});
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Catch::Contains(path + c.message));
      CHECK(r.out.empty());
      const auto checked = run_cli({"validate", path}); // validate refuses what run refuses
      CHECK(checked.exit_code == 2);
      CHECK_THAT(checked.err, Catch::Contains(path + c.message));
    }
  }
  SECTION("an inline topology's error is at its pointer in the scenario file") {
    // Regression: it read "FILE (its /topology):/links/1/b", a pointer the scenario file does not have.
    json topology = star(2);
    topology["links"][1]["b"] = "s0/1";
    const std::string path = testing::write_temp(
        "fabric_bad_inline_topology.json",
        scenario("bad", topology, json::array({{{"type", "ib_write_lat"}, {"client", "h0"}, {"server", "h1"}}}))
            .dump(2));
    for (const char* command : {"run", "validate"}) {
      const auto r = run_cli({command, path});
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Catch::Contains(path + ":/topology/links/1/b: expected a free port, got s0/1, already cabled "
                                               "at /topology/links/0/b"));
    }
  }
}

TEST_CASE("fabric: --trace writes a Chrome trace of each message's steps, and its filters keep only what they name",
          "[scenario][fabric]") {
  const json s = scenario("trace", star(2),
                          {{{"type", "ib_write_bw"},
                            {"client", "h0"},
                            {"server", "h1"},
                            {"size_bytes", 8192},
                            {"iterations", 4},
                            {"tx_depth", 2},
                            {"cq_mod", 1}}});
  const std::string path = testing::write_temp("fabric_trace_scenario.json", s.dump(2));
  const std::string trace_path = testing::write_temp("fabric_trace.json", "");
  const auto events_of = [&](const std::vector<std::string>& filters) {
    std::vector<std::string> args = {"run", path, "--quiet", "--trace", trace_path};
    args.insert(args.end(), filters.begin(), filters.end());
    const auto r = run_cli(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::ifstream file(trace_path);
    return json::parse(file).at("traceEvents");
  };
  std::multiset<std::string> names;
  std::set<std::string> processes;
  for (const json& e : events_of({})) {
    if (e.at("ph") == "M") {
      if (e.at("name") == "process_name")
        processes.insert(e.at("args").at("name").get<std::string>());
      continue;
    }
    CHECK(e.at("ts").get<double>() >= 0);
    names.insert(e.at("name").get<std::string>());
  }
  CHECK(processes == std::set<std::string>{"h0", "h1", "s0"});
  // Perfetto drops slices that overlap on one thread without nesting: a track's overlapping slices (two payload
  // reads in flight) go to lanes of their own. Times in whole picoseconds, as written.
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<std::pair<std::int64_t, std::int64_t>>> slices;
  const auto ps = [](const json& micros) {
    return static_cast<std::int64_t>(std::llround(micros.get<double>() * 1e6));
  };
  for (const json& e : events_of({}))
    if (e.at("ph") == "X")
      slices[{e.at("pid").get<std::uint64_t>(), e.at("tid").get<std::uint64_t>()}].emplace_back(
          ps(e.at("ts")), ps(e.at("ts")) + ps(e.at("dur")));
  std::size_t lanes = 0;
  for (auto& [thread, list] : slices) {
    lanes += thread.second >> 32 != 0;
    std::sort(list.begin(), list.end(),
              [](auto a, auto b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    std::vector<std::int64_t> open; // ends of the slices enclosing the current one
    for (const auto& [start, end] : list) {
      while (!open.empty() && open.back() <= start)
        open.pop_back();
      CHECK((open.empty() || end <= open.back()));
      open.push_back(end);
    }
  }
  CHECK(lanes > 0); // the two payload reads of each WRITE overlap
  // 4 non-inline 8 KiB WRITEs at MTU 4096: a doorbell each (post lists of one), a WQE read and two payload reads,
  // FIRST and LAST packets on both hops, an ACK per message on both hops, payload writes, CQEs and polls.
  CHECK(names.count("post_send") == 4);
  CHECK(names.count("BlueFlame") + names.count("doorbell") == 4);
  CHECK(names.count("WQE read") <= 4);
  CHECK(names.count("payload read") == 8);
  CHECK(names.count("RDMA_WRITE_FIRST") == 8);
  CHECK(names.count("RDMA_WRITE_LAST") == 8);
  CHECK(names.count("ACKNOWLEDGE") == 8);
  CHECK(names.count("payload write") == 8);
  CHECK(names.count("CQE write") == 4);
  CHECK(names.count("poll_cq") == 4);

  // Only the switch, only its first 2 us: its packets, nothing of the hosts.
  const json filtered = events_of({"--trace-host", "s0", "--trace-to-us", "2"});
  std::size_t spans = 0;
  for (const json& e : filtered) {
    if (e.at("ph") == "M")
      continue;
    ++spans;
    CHECK(e.at("cat") == "link");
    CHECK(e.at("ts").get<double>() <= 2.0);
  }
  CHECK(spans > 0);
  const auto bad = run_cli({"run", path, "--trace-qp", "5"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--trace-qp, --trace-host, --trace-from-us and --trace-to-us need --trace FILE") !=
        std::string::npos);
}

TEST_CASE("fabric: on a 4x4 torus dor's datelines (path SLs) carry an all-to-all that minhop's credit loops deadlock",
          "[scenario][fabric]") {
  const auto run_on = [](const std::string& routing) {
    json s = scenario("torus_" + routing, source_path("topologies/examples/torus-4x4.json"),
                      {{{"type", "all_to_all"}, {"size_bytes", 65536}, {"messages", 4}, {"tx_depth", 8}}});
    s["subnet_manager"] = {{"routing", routing}};
    const std::string path = testing::write_temp("fabric_torus_" + routing + ".json", s.dump(2));
    return run_cli({"run", path, "--format", "json"});
  };
  const auto dor = run_on("dor");
  INFO(dor.err);
  REQUIRE(dor.exit_code == 0);
  CHECK(json::parse(dor.out).at("results").at("workloads").at("all_to_all").at("results").at("messages") == 960);
  // Without datelines the rings of the torus close credit loops: the run says so before it starts, traffic stops,
  // and the deadlock is named with its cycle of ports (not as the retry counter that then runs out).
  const auto minhop = run_on("minhop");
  CHECK(minhop.exit_code == 3);
  CHECK_THAT(minhop.err, Catch::StartsWith("ibnetsim: warning: the minhop routes contain a credit loop"));
  CHECK_THAT(minhop.err, Catch::Contains("invariant violated [credit-deadlock] torus_minhop: the fabric deadlocked"));
  CHECK_THAT(minhop.err,
             Catch::Matches("(.|\n)*state: (sw_[0-9]_[0-9]/[0-9] VL0 -> )+\\(back to sw_[0-9]_[0-9]/[0-9] VL0\\) "
                            "at t=[0-9]+ ps\n"));
}
