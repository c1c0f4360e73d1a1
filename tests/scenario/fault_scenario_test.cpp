// Faults end to end through `ibnetsim run` (issue 23): a spine link failing and the SM's reroute, a host cut off
// until its peers' work requests fail, a flapping link, a failed and returning switch, bit errors under RC and UD,
// byte-identical reports, and bad fault specifications (exit 2 naming the file and the JSON pointer). Every run that
// exits 0 has passed the end-of-run invariants, exactly-once delivery among them.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/scenario/cli_harness.h"
#include "tests/scenario/fabric_scenarios.h"

using nlohmann::json;
using testing::run_cli;

namespace {

/// h0, h1 on leaf0 and h2, h3 on leaf1; each leaf cabled to spine0 (leaf port 3) and spine1 (leaf port 4).
json two_spines() {
  return {{"name", "two-spines"},
          {"generator",
           {{"type", "leaf-spine"},
            {"leaves", 2},
            {"spines", 2},
            {"hosts_per_leaf", 2},
            {"switch_profile", "switch-ib2-edr"},
            {"hca_profile", "connectx4-edr"},
            {"host_length_m", 2},
            {"host_cable", "copper-dac"},
            {"switch_length_m", 10},
            {"switch_cable", "fibre"}}}};
}

/// Every host writes `messages` messages of 16 KiB to every other; QPs time out after 4.096 us x 2^8 = 1 ms.
json all_to_all(int messages, int qp_timeout = 8) {
  return {{"type", "all_to_all"},
          {"size_bytes", 16384},
          {"messages", messages},
          {"tx_depth", 4},
          {"qp_timeout", qp_timeout}};
}

json fault_scenario(const std::string& name, const json& workloads, const json& faults) {
  json s = testing::scenario(name, two_spines(), workloads);
  s["faults"] = faults;
  return s;
}

json run_ok(const std::string& name, const json& s, const std::vector<std::string>& extra = {}) {
  const std::string path = testing::write_temp("faults_" + name + ".json", s.dump(2));
  std::vector<std::string> args = {"run", path, "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_cli(args);
  INFO(name << ": " << r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

const json& port_row(const json& report, const std::string& port) {
  for (const json& row : report.at("results").at("ports"))
    if (row.at("port") == port)
      return row;
  FAIL("no port " << port);
  static const json none;
  return none;
}

} // namespace

TEST_CASE("faults: a spine link failing mid-run is rerouted by the SM and every message arrives once",
          "[scenario][faults]") {
  const json report =
      run_ok("spine_link", fault_scenario("spine_link", json::array({all_to_all(30)}),
                                          {{{"type", "link_down"}, {"at_us", 20}, {"link", "leaf0/3"}}}));
  const json& results = report.at("results");
  CHECK(results.at("finished") == true);
  const json& faults = results.at("faults");
  REQUIRE(faults.at("events").size() == 1);
  const json& event = faults.at("events").at(0);
  CHECK(event.at("link") == json({"leaf0/3", "spine0/1"}));
  const json& sm = event.at("subnet_manager");
  CHECK(sm.at("detection") == "trap");
  // The reroute comes after the trap and takes SMPs: it is neither instant nor slower than a sweep interval.
  CHECK(sm.at("detected_at_us").get<double>() > 20);
  CHECK(sm.at("rerouted_at_us").get<double>() > sm.at("routing_done_at_us").get<double>());
  CHECK(sm.at("fault_to_rerouted_us").get<double>() == Approx(sm.at("rerouted_at_us").get<double>() - 20));
  CHECK(sm.at("fault_to_rerouted_us").get<double>() < 10e6);
  CHECK(sm.at("lft_blocks_sent").get<int>() > 0);
  CHECK(sm.at("unrouted_pairs") == 0);
  // Packets were lost, the transport recovered them, and no work request failed.
  CHECK(faults.at("packets_lost").at("total").get<int>() > 0);
  CHECK(faults.at("retransmitted_packets").get<int>() > 0);
  CHECK(faults.at("error_completions") == 0);
  const json& workload = results.at("workloads").at("all_to_all");
  CHECK(workload.at("results").at("messages") == 4 * 3 * 30);
  CHECK_FALSE(workload.contains("failed_work_requests"));
  const json& near = port_row(report, "leaf0/3");
  CHECK(near.at("LinkDownedCounter") == 1);
  CHECK(near.at("lost").at("output_down").get<int>() +
            port_row(report, "spine0/1").at("lost").at("output_down").get<int>() ==
        faults.at("packets_lost").at("output_down"));
}

TEST_CASE("faults: a host cut off fails its peers' work requests with retry exceeded, as perftest reports",
          "[scenario][faults]") {
  // h3's only link goes down for good: the SM cannot route to it, and h0's QP exhausts retry_count 2.
  json bw = {{"type", "ib_write_bw"}, {"client", "h0"},  {"server", "h3"},  {"size_bytes", 65536},
             {"iterations", 2000},    {"qp_timeout", 4}, {"retry_count", 2}};
  const json report = run_ok("cut_off", fault_scenario("cut_off", json::array({bw}),
                                                       {{{"type", "link_down"}, {"at_us", 30}, {"link", "h3/1"}}}));
  const json& results = report.at("results");
  const json& workload = results.at("workloads").at("ib_write_bw");
  CHECK(workload.at("failed_work_requests").at("transport retry counter exceeded") == 1);
  CHECK(workload.at("programs_failed").get<int>() >= 1);
  const json& faults = results.at("faults");
  CHECK(faults.at("qps_in_error").get<int>() >= 1);
  // Initial try plus two retries, each after a timeout.
  CHECK(faults.at("retry_timeouts").get<int>() == 3);
  CHECK(faults.at("events").at(0).at("subnet_manager").at("unrouted_pairs").get<int>() > 0);
}

TEST_CASE("faults: the table says what was lost, what the SM did and which work requests failed",
          "[scenario][faults]") {
  // h3 cut off for good: its peers' QPs to it fail after their retries; the table, not only the JSON, says so.
  const json s = fault_scenario("table", json::array({all_to_all(30)}),
                                {{{"type", "link_down"}, {"at_us", 20}, {"link", "h3/1"}}});
  const auto r = run_cli({"run", testing::write_temp("faults_table.json", s.dump(2))});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json report = run_ok("table", s);
  const json& faults = report.at("results").at("faults");
  const json& sm = faults.at("events").at(0).at("subnet_manager");
  const auto text = [](const json& v) { return v.dump(); };
  CHECK_THAT(r.out, Catch::Contains("faults: 1 fault event; " + text(faults.at("packets_lost").at("total")) +
                                    " packets lost"));
  CHECK_THAT(r.out, Catch::Contains(text(faults.at("retry_timeouts")) + " timeouts"));
  CHECK_THAT(r.out, Catch::Contains(text(faults.at("qps_in_error")) + " QPs in error"));
  const json& link = faults.at("events").at(0).at("link");
  CHECK_THAT(r.out, Catch::Contains(" link_down " + link.at(0).get<std::string>() + "-" +
                                    link.at(1).get<std::string>() + " at 20 us: SM trap at "));
  CHECK(sm.at("detection") == "trap");
  CHECK_THAT(r.out, Catch::Contains(text(sm.at("unrouted_pairs")) + " host pairs left without a route"));
  const json& workload = report.at("results").at("workloads").at("all_to_all");
  const std::uint64_t failed = workload.at("results").at("messages_failed").get<std::uint64_t>();
  CHECK(failed > 0);
  CHECK_THAT(r.out, Catch::Contains(" messages failed " + std::to_string(failed) + " (not in the figures here)"));
  CHECK_THAT(r.out, Catch::Contains(" failed work requests: "));
  CHECK_THAT(r.out, Catch::Contains("transport retry counter exceeded;"));
}

TEST_CASE("faults: a flapping link goes down and comes back count times, carrying data once the SM activates it",
          "[scenario][faults]") {
  const json report = run_ok("flap", fault_scenario("flap", json::array({all_to_all(60)}),
                                                    {{{"type", "link_flap"},
                                                      {"at_us", 20},
                                                      {"link", "spine1/2"},
                                                      {"period_us", 8000},
                                                      {"down_us", 1500},
                                                      {"count", 2}}}));
  const json& events = report.at("results").at("faults").at("events");
  REQUIRE(events.size() == 4);
  CHECK(events.at(0).at("type") == "link_down");
  CHECK(events.at(1).at("type") == "link_up");
  CHECK(events.at(1).at("at_us") == 1520);
  CHECK(events.at(2).at("at_us") == 8020);
  // The SM makes the returning link Active within the period, before it goes down again.
  CHECK(events.at(1).at("subnet_manager").at("done_at_us").get<double>() < 8020);
  CHECK(port_row(report, "leaf1/4").at("LinkDownedCounter") == 2);
  // After coming back the link carried traffic again: the SM's activation restored its routes.
  CHECK(events.at(1).at("subnet_manager").at("lft_blocks_sent").get<int>() > 0);
  CHECK(report.at("results").at("finished") == true);
  CHECK(report.at("results").at("faults").at("error_completions") == 0);
}

TEST_CASE("faults: a spine switch fails and returns: traffic moves to the other spine, then its tables are rewritten",
          "[scenario][faults]") {
  const json report =
      run_ok("switch", fault_scenario("switch", json::array({all_to_all(60)}),
                                      {{{"type", "switch_down"}, {"at_us", 20}, {"switch", "spine0"}},
                                       {{"type", "switch_up"}, {"at_us", 3000}, {"switch", "spine0"}}}));
  const json& results = report.at("results");
  CHECK(results.at("finished") == true);
  CHECK(results.at("faults").at("error_completions") == 0);
  const json& events = results.at("faults").at("events");
  REQUIRE(events.size() == 2);
  CHECK(events.at(0).at("switch") == "spine0");
  CHECK(port_row(report, "spine0/1").at("LinkDownedCounter") == 1);
  CHECK(port_row(report, "spine0/2").at("LinkDownedCounter") == 1);
  // The returning switch lost its table: it gets every block again, the leaves only the blocks that change.
  CHECK(events.at(1).at("subnet_manager").at("lft_blocks_sent").get<int>() >= 1);
  CHECK(results.at("workloads").at("all_to_all").at("results").at("messages") == 4 * 3 * 60);
}

TEST_CASE("faults: bit errors are recovered by RC and lose UD messages, and the report repeats byte for byte",
          "[scenario][faults]") {
  const json ber = {{"type", "bit_errors"}, {"at_us", 0}, {"link", "leaf0/1"}, {"bit_error_rate", 1e-6}};
  json rc = {{"type", "ib_write_bw"}, {"client", "h0"}, {"server", "h2"}, {"size_bytes", 65536}, {"iterations", 500}};
  const json s = fault_scenario("ber_rc", json::array({rc}), json::array({ber}));
  const std::string path = testing::write_temp("faults_ber_rc.json", s.dump(2));
  const auto first = run_cli({"run", path, "--format", "json"});
  const auto second = run_cli({"run", path, "--format", "json"});
  REQUIRE(first.exit_code == 0);
  CHECK(first.out == second.out);
  const json report = json::parse(first.out);
  const json& faults = report.at("results").at("faults");
  // 500 x 16 packets of 4,154 wire bytes at 1e-6 per bit: about 3 % are hit.
  CHECK(faults.at("packets_lost").at("bad_crc").get<int>() > 50);
  CHECK(faults.at("sequence_naks").get<int>() > 0);
  CHECK(faults.at("error_completions") == 0);
  CHECK(report.at("results").at("workloads").at("ib_write_bw").at("results").at(0).at("iterations") == 500);
  CHECK(port_row(report, "leaf0/1").at("PortRcvErrors").get<int>() > 0);

  // UD has no retransmission: the datagrams hit are gone.
  json ud = {{"type", "ib_send_bw"}, {"client", "h0"},     {"server", "h2"},
             {"size_bytes", 4096},   {"iterations", 2000}, {"connection", "UD"}};
  const json lossy = run_ok("ber_ud", fault_scenario("ber_ud", json::array({ud}), json::array({ber})));
  CHECK(lossy.at("results").at("faults").at("packets_lost").at("bad_crc").get<int>() > 10);
  CHECK(lossy.at("results").at("faults").at("retransmitted_packets") == 0);
}

TEST_CASE("faults: bad fault specifications exit 2 naming the file and the JSON pointer", "[scenario][faults]") {
  struct Case {
    std::string name;
    json faults;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"no_such_link",
       {{{"type", "link_down"}, {"at_us", 5}, {"link", "leaf9/3"}}},
       ":/faults/0/link: expected a cabled port of the topology as \"node/port\", got \"leaf9/3\""},
      {"port_not_cabled",
       {{{"type", "link_down"}, {"at_us", 5}, {"link", "leaf0/9"}}},
       ":/faults/0/link: expected a cabled port of the topology as \"node/port\", got \"leaf0/9\""},
      {"not_a_switch",
       {{{"type", "switch_down"}, {"at_us", 5}, {"switch", "h0"}}},
       ":/faults/0/switch: expected the name of a switch of the topology, got \"h0\""},
      {"after_the_run",
       {{{"type", "link_down"}, {"at_us", 500}, {"link", "leaf0/3"}}},
       ":/faults/0/at_us: expected a time within the run (duration_us is 100), got 500"},
      {"negative_rate",
       {{{"type", "bit_errors"}, {"at_us", 5}, {"link", "leaf0/3"}, {"bit_error_rate", -1e-9}}},
       ":/faults/0/bit_error_rate: expected a number in [0, 0.5]"},
      {"up_without_down",
       {{{"type", "link_up"}, {"at_us", 5}, {"link", "leaf0/3"}}},
       ":/faults/0/link: expected a link that is down at that time (a link_up needs an earlier link_down)"},
      {"flap_down_too_long",
       {{{"type", "link_flap"}, {"at_us", 5}, {"link", "leaf0/3"}, {"period_us", 10}, {"down_us", 10}, {"count", 2}}},
       ":/faults/0/down_us: expected less than period_us"},
      {"missing_link",
       {{{"type", "link_down"}, {"at_us", 5}}},
       ":/faults/0/link: expected a non-empty string (required key \"link\"), got nothing"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      json s = fault_scenario("bad", json::array({all_to_all(1)}), c.faults);
      s["duration_us"] = 100;
      const std::string path = testing::write_temp("faults_bad_" + c.name + ".json", s.dump(2));
      for (const char* command : {"run", "validate"}) {
        const auto r = run_cli({command, path});
        INFO(command << ": " << r.err);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains(path + c.message));
      }
    }
  }
}

TEST_CASE("faults: validate announces routes with a credit loop, and not deadlock-free ones", "[scenario][faults]") {
  // minhop on a 4 x 4 torus without VLs has credit loops (topo check finds them); the fabric test of the torus
  // shows the deadlock they cause being named.
  json s = testing::scenario("torus", testing::source_path("topologies/examples/torus-4x4.json"),
                             json::array({{{"type", "all_to_all"}, {"size_bytes", 4096}}}));
  s["subnet_manager"] = {{"routing", "minhop"}};
  const auto minhop = run_cli({"validate", testing::write_temp("faults_torus.json", s.dump(2))});
  CHECK(minhop.exit_code == 0);
  CHECK_THAT(minhop.err, Catch::StartsWith("ibnetsim: warning: the minhop routes contain a credit loop, so the fabric "
                                           "can deadlock under load: sw_0_0/p1 VL0 -> "));
  // dor's datelines break the loops.
  s["subnet_manager"] = {{"routing", "dor"}};
  const auto dor = run_cli({"validate", testing::write_temp("faults_torus_dor.json", s.dump(2))});
  CHECK(dor.exit_code == 0);
  CHECK(dor.err.empty());
}

TEST_CASE("faults: while the SM's new LFT blocks are half written, a packet sent back out of its input port is a "
          "switch relay discard, not a model error",
          "[scenario][faults]") {
  // ft2-16, leaf0's link to spine0 down at 20 us and back at 5 ms under a permutation of 20,000 WRITEs per host: as
  // the SM's blocks for the returning link land, leaf1 (already rewritten) sends a packet for h0 to a spine that
  // still routes h0's LID back to leaf1. A switch discards it as PortRcvSwitchRelayErrors ("looping"); RC resends it.
  const std::string path = std::string(IBNETSIM_SOURCE_DIR) + "/scenarios/experiments/adaptive_routing.json";
  const auto r =
      run_cli({"run", path, "--format", "json", "--set", "/topology=\"../../topologies/examples/ft2-16.json\"", "--set",
               "/subnet_manager/adaptive_routing=false", "--set", "/workloads/0/messages=20000", "--set",
               "/workloads/0/qp_timeout=8", "--set",
               R"(/faults=[{"type": "link_down", "at_us": 20, "link": "leaf0/5"},)"
               R"({"type": "link_up", "at_us": 5000, "link": "leaf0/5"}])"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0); // was exit 3 [unroutable-packet] "the LFT sends it back out of its input port"
  const json report = json::parse(r.out);
  CHECK(report.at("results").at("faults").at("packets_lost").at("no_route").get<int>() > 0);
  const json& endpoints = report.at("results").at("endpoints");
  CHECK(endpoints.at("messages_delivered") == endpoints.at("messages_sent"));
  CHECK(endpoints.at("messages_completed") == endpoints.at("messages_sent"));
}
