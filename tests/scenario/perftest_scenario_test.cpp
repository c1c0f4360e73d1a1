// perftest workloads end to end through `ibnetsim run`: every test with all_sizes over every transport it supports
// (perftest -a, -c), the combinations perftest refuses as exit-2 errors naming the JSON pointer, ib_send_bw over UD
// with any number of QPs, a UC or UD server that stops waiting for messages dropped for want of a receive, and
// ib_send_bw -b with more messages than receives posted ahead (issue 24).
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/scenario/cli_harness.h"
#include "tests/scenario/fabric_scenarios.h"

using nlohmann::json;
using testing::run_cli;
using testing::scenario;
using testing::source_path;
using testing::star;

namespace {

/// Runs `s` with --format json and `sets`; returns the exit code, the report (null unless 0) and stderr.
struct Run {
  int exit_code;
  json report;
  std::string err;
};

Run run_scenario(const std::string& name, const json& s, const std::vector<std::string>& sets = {}) {
  std::vector<std::string> args{"run", testing::write_temp("perftest_" + name + ".json", s.dump()), "--format", "json"};
  for (const std::string& set : sets) {
    args.push_back("--set");
    args.push_back(set);
  }
  const auto r = run_cli(args);
  return {r.exit_code, r.exit_code == 0 ? json::parse(r.out) : json(), r.err};
}

/// The issue's reproducers run scenarios/experiments/write_lat.json (two ConnectX-4 hosts through one switch).
Run run_write_lat(const std::vector<std::string>& sets) {
  std::vector<std::string> args{"run", source_path("scenarios/experiments/write_lat.json"), "--format", "json"};
  for (const std::string& set : sets) {
    args.push_back("--set");
    args.push_back(set);
  }
  const auto r = run_cli(args);
  return {r.exit_code, r.exit_code == 0 ? json::parse(r.out) : json(), r.err};
}

const json& rows_of(const json& report, const std::string& workload) {
  return report.at("results").at("workloads").at(workload).at("results");
}

std::uint64_t port_counter(const json& report, const std::string& port, const std::string& counter) {
  for (const json& p : report.at("results").at("ports"))
    if (p.at("port") == port)
      return p.at(counter).get<std::uint64_t>();
  FAIL("no port " << port);
  return 0;
}

const json& host_pcie(const json& report, const std::string& host) {
  for (const json& h : report.at("results").at("pcie").at("hosts"))
    if (h.at("host") == host)
      return h;
  FAIL("no host " << host);
  static const json none;
  return none;
}

bool is_latency(const std::string& type) {
  return type.ends_with("_lat");
}

} // namespace

TEST_CASE("perftest: every test runs all_sizes over every transport it supports, one row per doubling size",
          "[scenario][perftest]") {
  // perftest -c: READ and atomics are RC only, WRITE is RC or UC, SEND any of RC, UC and UD. An atomic's size is
  // fixed (its -a is refused, below). At an MTU of 1024 the largest sizes take several packets; over UD, whose
  // messages are one packet, all_sizes stops at the MTU when no maximum is given, as perftest -a does.
  struct Test {
    std::string type;
    std::vector<std::string> connections;
  };
  const std::vector<Test> tests = {
      {"ib_write_lat", {"RC", "UC"}}, {"ib_read_lat", {"RC"}}, {"ib_send_lat", {"RC", "UC", "UD"}},
      {"ib_write_bw", {"RC", "UC"}},  {"ib_read_bw", {"RC"}},  {"ib_send_bw", {"RC", "UC", "UD"}}};
  constexpr std::uint32_t mtu = 1024, max_bytes = 8192;
  for (const Test& t : tests)
    for (const std::string& connection : t.connections)
      for (const bool bidirectional : {false, true})
        for (const std::uint32_t qps : {1u, 2u}) {
          if (is_latency(t.type) && (bidirectional || qps > 1))
            continue;
          const std::string name =
              t.type + "_" + connection + (bidirectional ? "_bi" : "") + "_" + std::to_string(qps) + "qp";
          DYNAMIC_SECTION(name) {
            // A SEND bandwidth test gets more messages per size than it posts receives ahead over RC (512), so
            // that each size reposts receives and leaves none behind for the next.
            const std::uint32_t iterations = is_latency(t.type) ? 20 : t.type == "ib_send_bw" ? 600 : 100;
            json w = {{"type", t.type},           {"client", "h0"},           {"server", "h1"},  {"all_sizes", true},
                      {"iterations", iterations}, {"connection", connection}, {"mtu_bytes", mtu}};
            if (connection != "UD")
              w["all_sizes_max_bytes"] = max_bytes;
            if (!is_latency(t.type)) {
              w["qps"] = qps;
              w["bidirectional"] = bidirectional;
            }
            const Run r = run_scenario(name, scenario(name, star(2), json::array({w})));
            INFO(r.err);
            REQUIRE(r.exit_code == 0);
            CHECK(r.report.at("results").at("finished") == true);
            const json& rows = rows_of(r.report, t.type);
            const std::uint32_t largest = connection == "UD" ? mtu : max_bytes;
            std::vector<std::uint32_t> sizes;
            for (std::uint32_t s = 2; s <= largest; s *= 2)
              sizes.push_back(s);
            REQUIRE(rows.size() == sizes.size());
            for (std::size_t i = 0; i < rows.size(); ++i) {
              const json& row = rows[i];
              INFO(row.dump());
              CHECK(row.at("size_bytes") == sizes[i]);
              if (is_latency(t.type)) {
                CHECK(row.at("iterations") == iterations);
                CHECK(row.at("t_min_us").get<double>() > 0);
                CHECK(row.at("t_typical_us").get<double>() >= row.at("t_min_us").get<double>());
              } else {
                CHECK(row.at("iterations") == iterations * qps * (bidirectional ? 2 : 1));
                CHECK(row.at("bw_average_gbps").get<double>() > 0);
                CHECK(row.at("bw_peak_gbps").get<double>() >= row.at("bw_average_gbps").get<double>());
                CHECK(row.at("msg_rate_mpps").get<double>() > 0);
              }
            }
            // Each size moves twice the bytes of the one before, in about as many messages: bandwidth grows
            // with size until it nears the link's (here, up to 8 KiB, it always grows from 2 B to the largest).
            if (!is_latency(t.type))
              CHECK(rows.back().at("bw_average_gbps").get<double>() > rows.front().at("bw_average_gbps").get<double>());
            // Every SEND arrived: perftest's server waits for all of them.
            if (t.type == "ib_send_bw" || t.type == "ib_send_lat") {
              const std::uint64_t per_size = is_latency(t.type) ? iterations : std::uint64_t{iterations} * qps;
              CHECK(host_pcie(r.report, "h1").at("messages_received") == per_size * sizes.size());
            }
          }
        }
}

TEST_CASE("perftest: the issue's ib_send_lat all_sizes over RC posts receives that fit every size",
          "[scenario][perftest]") {
  // Receives posted at the first size stayed posted into the next, whose first SEND met one too short (exit 3).
  const Run r = run_write_lat({R"(/workloads/0={"type":"ib_send_lat","client":"h0","server":"h1","all_sizes":true,)"
                               R"("all_sizes_max_bytes":4})"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json& rows = rows_of(r.report, "ib_send_lat");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].at("size_bytes") == 2);
  CHECK(rows[1].at("size_bytes") == 4);
  for (const json& row : rows) {
    CHECK(row.at("iterations") == 1000);
    CHECK(row.at("t_typical_us").get<double>() > 0.5);
  }
}

TEST_CASE("perftest: combinations perftest refuses are exit-2 errors naming the JSON pointer", "[scenario][perftest]") {
  struct Case {
    std::string name;
    json workload;
    std::string message;
  };
  const json base = {{"client", "h0"}, {"server", "h1"}};
  const auto with = [&](json extra) {
    json w = base;
    w.update(extra);
    return w;
  };
  const std::vector<Case> cases = {
      {"read_lat_uc", with({{"type", "ib_read_lat"}, {"connection", "UC"}, {"all_sizes", true}}),
       ":/workloads/0/connection: expected RC, got \"UC\""},
      {"read_bw_ud", with({{"type", "ib_read_bw"}, {"connection", "UD"}, {"all_sizes", true}}),
       ":/workloads/0/connection: expected RC, got \"UD\""},
      {"atomic_uc", with({{"type", "ib_atomic_lat"}, {"connection", "UC"}}),
       ":/workloads/0/connection: expected RC, got \"UC\""},
      {"write_bw_ud", with({{"type", "ib_write_bw"}, {"connection", "UD"}, {"all_sizes", true}}),
       ":/workloads/0/connection: expected RC or UC (UD carries only SENDs), got \"UD\""},
      {"atomic_all_sizes", with({{"type", "ib_atomic_lat"}, {"all_sizes", true}}),
       ":/workloads/0/all_sizes: expected false: an atomic is 8 bytes, perftest -a refuses it, got true"},
      {"atomic_all_sizes_max", with({{"type", "ib_atomic_lat"}, {"all_sizes_max_bytes", 64}}),
       ":/workloads/0/all_sizes_max_bytes: expected one of the keys"},
      // Only a maximum given explicitly takes UD past the MTU: refused, with the value given.
      {"ud_all_sizes_max",
       with({{"type", "ib_send_bw"},
             {"connection", "UD"},
             {"all_sizes", true},
             {"mtu_bytes", 1024},
             {"all_sizes_max_bytes", 4096}}),
       ":/workloads/0/all_sizes_max_bytes: expected at most the MTU (1024 B): a UD message is one packet, got 4096"},
      {"ud_size", with({{"type", "ib_send_lat"}, {"connection", "UD"}, {"mtu_bytes", 2048}, {"size_bytes", 2049}}),
       ":/workloads/0/size_bytes: expected at most the MTU (2048 B): a UD message is one packet, got 2049"},
      {"all_sizes_max_without_all_sizes", with({{"type", "ib_send_bw"}, {"all_sizes_max_bytes", 64}}),
       ":/workloads/0/all_sizes_max_bytes"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      const auto r =
          run_cli({"validate", testing::write_temp("perftest_bad_" + c.name + ".json",
                                                   scenario(c.name, star(2), json::array({c.workload})).dump())});
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Catch::Contains(c.message));
    }
  }
}

TEST_CASE("perftest: ib_send_bw over UD completes with 1, 2, 3 and 8 QPs, every datagram received",
          "[scenario][perftest]") {
  // The server waited for one QP's messages at a time, so another QP's 512 receives ran out and its datagrams were
  // dropped, never to come (a program deadlock, exit 3). It now takes every QP's from one receive CQ, and over UD
  // posts as many receives ahead as messages, up to perftest's 16000.
  for (const std::uint32_t qps : {1u, 2u, 3u, 8u}) {
    DYNAMIC_SECTION(qps << " QPs") {
      const Run r = run_write_lat({"/workloads/0/type=ib_send_bw", "/workloads/0/connection=UD",
                                   "/workloads/0/iterations=3000", "/workloads/0/qps=" + std::to_string(qps)});
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(r.report.at("results").at("finished") == true);
      const json& row = rows_of(r.report, "ib_send_bw").at(0);
      CHECK(row.at("iterations") == 3000 * qps);
      CHECK(row.at("bw_average_gbps").get<double>() > 0);
      CHECK(port_counter(r.report, "h1/1", "PortRcvPkts") == 3000 * qps);
      CHECK(host_pcie(r.report, "h1").at("messages_received") == 3000 * qps);
    }
  }
}

TEST_CASE("perftest: a UC or UD server that loses messages for want of a receive stops waiting for them",
          "[scenario][perftest]") {
  // 16500 messages per QP, 16000 receives posted ahead, and a host whose post_recv takes 20 us: the server cannot
  // post receives back as fast as messages come, and the HCA drops those that find none. perftest's server would
  // wait out its 60 s alarm; the simulated one counts the HCA's drops and ends when nothing more can come.
  for (const char* connection : {"UD", "UC"}) {
    DYNAMIC_SECTION(connection) {
      const Run r = run_write_lat({std::string(R"(/workloads/0={"type":"ib_send_bw","client":"h0","server":"h1",)") +
                                       R"("size_bytes":8,"iterations":16500,"qps":2,"tx_depth":512,"connection":")" +
                                       connection + "\"}",
                                   "/profiles/xeon-e5-haswell/post_recv_cpu_cost_ns=20000"});
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(r.report.at("results").at("finished") == true);
      CHECK(rows_of(r.report, "ib_send_bw").at(0).at("iterations") == 33000);
      const std::uint64_t received = host_pcie(r.report, "h1").at("messages_received").get<std::uint64_t>();
      CHECK(received < 33000);
      CHECK(received >= 32000);
      CHECK(port_counter(r.report, "h1/1", "PortRcvPkts") == 33000);
    }
  }
}

TEST_CASE("perftest: ib_send_bw -b with more messages than receives posted ahead completes, and so does RC with 4 "
          "QPs without an RNR NAK",
          "[scenario][perftest]") {
  SECTION("bidirectional") {
    // Each side blocked on its send CQ while the other's SENDs waited for its receives: RNR NAKs and retries for
    // ever. A side that sends and receives now waits for a completion of either kind.
    const Run r = run_write_lat({"/workloads/0/type=ib_send_bw", "/workloads/0/size_bytes=2048",
                                 "/workloads/0/iterations=2000", "/workloads/0/bidirectional=true"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const json& row = rows_of(r.report, "ib_send_bw").at(0);
    CHECK(row.at("iterations") == 4000);
    CHECK(row.at("bw_average_gbps").get<double>() > 20);
    CHECK(host_pcie(r.report, "h0").at("messages_received") == 2000);
    CHECK(host_pcie(r.report, "h1").at("messages_received") == 2000);
  }
  SECTION("four QPs") {
    // The server took one QP's messages at a time, so the others' receives ran out and their SENDs met RNR NAKs.
    const Run r = run_write_lat({"/workloads/0/type=ib_send_bw", "/workloads/0/size_bytes=2048",
                                 "/workloads/0/iterations=2000", "/workloads/0/qps=4"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(rows_of(r.report, "ib_send_bw").at(0).at("iterations") == 8000);
    CHECK(host_pcie(r.report, "h0").at("rnr_naks_received") == 0);
    CHECK(host_pcie(r.report, "h0").at("retransmitted_packets") == 0);
  }
}

// perftest -i: a test's side uses the HCA port it names. On a dual-port Connect-IB host with both ports cabled, a
// client on port 2 sends from port 2 only (its LID is the one the server's QPs are connected to), and a client on
// port 1 beside it from port 1; a port without a link is exit 2 at its pointer.
TEST_CASE("perftest: client_ib_port and server_ib_port choose the HCA port, an uncabled one is exit 2",
          "[scenario][perftest]") {
  json topology = star(3);
  for (json& node : topology["nodes"])
    if (node.at("kind") == "hca")
      node["profile"] = "connect-ib-fdr";
  topology["links"].push_back({{"a", "h0/2"}, {"b", "s0/4"}});
  topology["link_defaults"]["speed"] = "FDR";
  const json on_port_2 = {{"type", "ib_write_bw"}, {"name", "port2"},    {"client", "h0"},   {"server", "h1"},
                          {"client_ib_port", 2},   {"size_bytes", 4096}, {"iterations", 500}};
  json on_port_1 = on_port_2;
  on_port_1["name"] = "port1";
  on_port_1["server"] = "h2";
  on_port_1.erase("client_ib_port");
  const Run r = run_scenario("ib_port", scenario("ib_port", topology, json::array({on_port_2, on_port_1})));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // 500 WRITEs of one 4 KiB packet each per port, and each port's own: no packet of one test on the other's port.
  CHECK(port_counter(r.report, "h0/2", "PortXmitPkts") == 500);
  CHECK(port_counter(r.report, "h0/1", "PortXmitPkts") == 500);
  CHECK(port_counter(r.report, "h1/1", "PortXmitPkts") == 500); // ACKs (one per WRITE: AckReq on every last packet)
  CHECK(r.report.at("config").at("workloads").at(0).at("client_ib_port") == 2);
  // Both tests reach the line rate of their own port (FDR: 54.5 Gb/s of data, 4 KiB WRITEs about 52.7).
  for (const char* name : {"port1", "port2"})
    CHECK(rows_of(r.report, name).at(0).at("bw_average_gbps").get<double>() > 45);

  json uncabled = on_port_2;
  uncabled["server"] = "h1";
  uncabled["server_ib_port"] = 2;
  const Run bad = run_scenario("ib_port_uncabled", scenario("ib_port_uncabled", topology, json::array({uncabled})));
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err,
             Catch::Contains(":/workloads/0/server_ib_port: expected a cabled port of h1 (its HCA has 2 ports), got 2, "
                             "which has no link"));
}
