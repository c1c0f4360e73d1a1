// Message rate against QPs per NIC (issue 24), end to end through `ibnetsim run`: on ConnectX-4 the aggregate rate of
// small WRITEs holds from 1 to 64 QPs, with no QP-context reads up to the cache's size; in the READ swarm of
// scenarios/experiments/qp_scaling.json, ConnectX-3 falls off a cliff past its cache and Connect-IB slopes, against
// the per-machine READ rates FaSST measured (Kalia et al., OSDI'16, raw sweeps in efficient/rdma_bench
// rc-swarm/sweep/osdi; docs/references.md, "QP-context cache"). The published bands the model misses are in the
// [!mayfail] cases, each with the reason measured.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/scenario/cli_harness.h"
#include "tests/scenario/fabric_scenarios.h"

using nlohmann::json;

namespace {

json run_report(const std::string& name, const json& s) {
  const std::string path = testing::write_temp("qp_scaling_" + name + ".json", s.dump(2));
  const auto r = testing::run_cli({"run", path, "--format", "json"});
  INFO(name << ": " << r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

const json& host_pcie(const json& report, std::size_t host) {
  return report.at("results").at("pcie").at("hosts").at(host);
}

/// Messages the first host sent per simulated microsecond, from the first post to the last program's end: M/s.
double rate_per_us(const json& report) {
  return host_pcie(report, 0).at("messages_sent").get<double>() /
         report.at("results").at("simulated_time_us").get<double>();
}

struct Point {
  double reads_per_us;  ///< READs one host issued per microsecond (M/s), as FaSST counts per machine
  double context_reads; ///< QP-context reads per READ issued
};

/// The shipped swarm with `profile` on both hosts and `qps_per_nic` QPs per NIC, spread over its 12 programs, each
/// issuing 1,260 READs (the shipped file's 2,520 give the same rates within 3 %, in twice the time).
Point swarm(const std::string& profile, std::uint32_t qps_per_nic) {
  std::ifstream file(testing::source_path("scenarios/experiments/qp_scaling.json"));
  json s = json::parse(file);
  s.erase("$schema");
  for (json& node : s.at("topology").at("nodes"))
    if (node.at("kind") == "hca")
      node["profile"] = profile;
  const std::uint32_t programs = static_cast<std::uint32_t>(s.at("workloads").size());
  REQUIRE(qps_per_nic % programs == 0);
  const std::uint32_t qps = qps_per_nic / programs;
  for (json& w : s.at("workloads")) {
    w["qps"] = qps;
    w["iterations"] = 1260 / qps;
  }
  const json report = run_report(profile + "_" + std::to_string(qps_per_nic), s);
  const double reads = host_pcie(report, 0).at("messages_sent").get<double>();
  return {rate_per_us(report), host_pcie(report, 0).at("qp_context_reads").get<double>() / reads};
}

/// FaSST's per-machine rates, M READs/s (docs/references.md, "QP-context cache").
constexpr double cx3_at_48 = 11.0, cx3_at_144 = 3.24, cx3_at_720 = 1.33;
constexpr double cib_at_84 = 50.3, cib_at_420 = 40.9, cib_at_1260 = 31.8;

} // namespace

TEST_CASE("QP scaling: aggregate 32 B WRITE rate does not fall from 1 to 64 QPs, and no QP-context reads up to the "
          "cache size (connectx4-edr)",
          "[scenario][qp_scaling]") {
  // Up to 9 QPs one program each, then 8 programs (so that no core bounds it), posting lists of 16 inline WRITEs.
  const auto run = [](std::uint32_t qps, std::uint32_t wrs_per_program) {
    const std::uint32_t programs = qps <= 9 ? qps : 8, per_program = qps / programs;
    json workloads = json::array();
    for (std::uint32_t p = 0; p < programs; ++p) {
      // Built by appending: GCC 12 warns falsely (-Wrestrict, bug 105329) on "literal" + std::string here.
      std::string name = "w";
      name += std::to_string(p);
      workloads.push_back({{"type", "ib_write_bw"},
                           {"name", name},
                           {"client", "a"},
                           {"server", "b"},
                           {"size_bytes", 32},
                           {"inline_size_bytes", 220},
                           {"post_list", 16},
                           {"qps", per_program},
                           {"iterations", wrs_per_program / per_program}});
    }
    return run_report("write_" + std::to_string(qps),
                      testing::scenario("qp_scaling_write", testing::back_to_back(), workloads));
  };
  double best = 0, one = 0;
  for (const std::uint32_t qps : {1u, 8u, 9u, 16u, 32u, 64u}) {
    const json report = run(qps, 4096);
    const double rate = rate_per_us(report);
    INFO(qps << " QPs: " << rate << " M WRITEs/s, best with fewer QPs " << best);
    CHECK(rate >= 0.97 * best);
    best = std::max(best, rate);
    if (qps == 1)
      one = rate;
    CHECK(host_pcie(report, 0).at("qp_context_reads") == 0);
    CHECK(host_pcie(report, 1).at("qp_context_reads") == 0);
  }
  // More engines than one QP can use, then the PCIe bound: 8 QPs reach at least 4 times one QP's rate.
  CHECK(best >= 4 * one);
  // Every context stays on the adapter while the QPs fit in it; past it, misses begin.
  const auto cache = static_cast<std::uint32_t>(testing::profile_value("connectx4-edr", "qp_context_cache_entries"));
  const json full = run(cache, 16 * cache / 8);
  CHECK(host_pcie(full, 0).at("qp_context_reads") == 0);
  CHECK(host_pcie(full, 1).at("qp_context_reads") == 0);
  const json over = run(cache + cache / 4, 16 * (cache + cache / 4) / 8);
  CHECK(host_pcie(over, 0).at("qp_context_reads") > 0);
  CHECK(host_pcie(over, 1).at("qp_context_reads") > 0);
}

TEST_CASE("QP scaling: the READ swarm falls off a cliff past ConnectX-3's QP-context cache and slopes on Connect-IB's, "
          "as FaSST measured",
          "[scenario][qp_scaling]") {
  const Point cx3_small = swarm("connectx3-fdr", 48), cx3_large = swarm("connectx3-fdr", 720);
  const Point cib_small = swarm("connect-ib-fdr", 84), cib_large = swarm("connect-ib-fdr", 1260);
  INFO("ConnectX-3: " << cx3_small.reads_per_us << " M/s at 48 QPs, " << cx3_large.reads_per_us << " at 720 ("
                      << cx3_large.context_reads << " context reads per READ); Connect-IB: " << cib_small.reads_per_us
                      << " at 84, " << cib_large.reads_per_us << " at 1,260 (" << cib_large.context_reads << ")");
  // Below the cache size nothing is read again; far above it, both ends of most READs miss.
  CHECK(cx3_small.context_reads == 0);
  CHECK(cib_small.context_reads == 0);
  CHECK(cx3_large.context_reads > 1);
  CHECK(cib_large.context_reads > 1);
  // The shapes (FaSST: ConnectX-3 keeps 12 % of its rate at 15 times the QPs, one context read at a time; Connect-IB
  // 63 %, with 48 reads in flight): a cliff, and a gentler slope (how gentle is the Connect-IB case below).
  const double cx3_kept = cx3_large.reads_per_us / cx3_small.reads_per_us;
  const double cib_kept = cib_large.reads_per_us / cib_small.reads_per_us;
  CHECK(cx3_kept < 0.25);
  CHECK(cib_kept < 1);
  CHECK(cib_kept > 3 * cx3_kept);
}

// Gaps, measured (docs/models/hca.md, "Tests"): (0) at 48 QPs the model runs 14.8 M/s against FaSST's 11: its
// ConnectX-3 send engines (3 x 101 ns, fitted to E12 and E13's UD SENDs) and receive engines (2 x 50 ns) leave room
// for 14.8 M READs issued and 14.8 M served per machine, and the adapter serves 29.7 M inbound 32 B READs/s alone
// against the 26 Kalia et al. measured (kalia16_inbound_small_op_rates_cx3_cx): what makes a READ cost more in the
// swarm is not modelled. (1) perftest's programs keep a window per QP and repost to a QP when its READs complete, so
// the QPs whose contexts are cached stay busy and stay cached; misses settle at what one context read at a time
// supplies (0.20 reads per READ at 144 QPs, where FaSST's random choice of QP per READ with C = 105 implies
// 2 x (1 - 105/144) = 0.54), and the rate stays near the small-QP rate. (2) Each READ needs a context at both ends of
// its QP, so ConnectX-3's serialized 256 B reads (about 0.65 us, 1.5 M/s) leave 0.79 M READs/s at 720 QPs; FaSST's
// fit charges 0.72 us per READ for both, 0.36 us per lookup, which two reads in flight give (1.5 M/s at 720, tried;
// qp_context_max_reads has no fitted band to move within).
TEST_CASE("QP scaling: ConnectX-3 READ swarm within 25 % of FaSST at 48, 144 and 720 QPs per NIC",
          "[scenario][qp_scaling][!mayfail]") {
  const Point at_48 = swarm("connectx3-fdr", 48), at_144 = swarm("connectx3-fdr", 144),
              at_720 = swarm("connectx3-fdr", 720);
  INFO("48 QPs: " << at_48.reads_per_us << " M/s (FaSST " << cx3_at_48 << "), 144 QPs: " << at_144.reads_per_us
                  << " M/s (FaSST " << cx3_at_144 << "), 720 QPs: " << at_720.reads_per_us << " M/s (FaSST "
                  << cx3_at_720 << ")");
  CHECK(at_48.reads_per_us >= 0.75 * cx3_at_48);
  CHECK(at_48.reads_per_us <= 1.25 * cx3_at_48);
  CHECK(at_144.reads_per_us >= 0.75 * cx3_at_144);
  CHECK(at_144.reads_per_us <= 1.25 * cx3_at_144);
  CHECK(at_720.reads_per_us >= 0.75 * cx3_at_720);
  CHECK(at_720.reads_per_us <= 1.25 * cx3_at_720);
}

// Gaps, measured: 84 and 420 QPs hold (52.3 and 46.9 M/s against FaSST's 50.3 and 40.9), but past the cache both
// ends of a READ miss and each miss reads 256 B: 1.9 reads per READ at 1,260 QPs, about 700 B to the adapter per READ,
// the gen3 x16 link's limit, so the rate keeps 38 % of the small-QP rate where FaSST kept 63 %; FaSST's rate there
// needs fewer or smaller context reads (its DC notes count 0.54 extra 64 B lines per READ).
TEST_CASE("QP scaling: Connect-IB READ swarm within 20 % of FaSST at 84, 420 and 1,260 QPs per NIC",
          "[scenario][qp_scaling][!mayfail]") {
  const Point at_84 = swarm("connect-ib-fdr", 84), at_420 = swarm("connect-ib-fdr", 420),
              at_1260 = swarm("connect-ib-fdr", 1260);
  INFO("84 QPs: " << at_84.reads_per_us << " M/s (FaSST " << cib_at_84 << "), 420: " << at_420.reads_per_us << " ("
                  << cib_at_420 << "), 1,260: " << at_1260.reads_per_us << " (" << cib_at_1260 << ")");
  const std::vector<std::pair<Point, double>> points = {
      {at_84, cib_at_84}, {at_420, cib_at_420}, {at_1260, cib_at_1260}};
  for (const auto& [point, published] : points) {
    CHECK(point.reads_per_us >= 0.80 * published);
    CHECK(point.reads_per_us <= 1.20 * published);
  }
  CHECK(at_1260.reads_per_us / at_84.reads_per_us > 0.45); // FaSST kept 63 %
}
