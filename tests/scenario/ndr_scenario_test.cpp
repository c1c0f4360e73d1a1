// The NDR generation end to end (scenarios/experiments/ndr_pair.json): two ConnectX-7 hosts through one Quantum-2 at
// 4x NDR. ib_write_bw of 64 KiB is bounded by the link (400 Gb/s, 397.5 Gb/s of WRITE payload at MTU 4096), which
// is below what PCIe Gen5 x16 carries; ib_write_lat through the switch is the back-to-back latency plus the switch,
// one more cable and one more receiver's FEC, and back to back it lands in reference E10's band.
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/scenario/cli_harness.h"
#include "tests/scenario/fabric_scenarios.h"

using nlohmann::json;
using testing::profile_value;
using testing::run_cli;
using testing::source_path;

namespace {

/// 4x NDR payload rate of RDMA WRITE Middle packets at MTU 4096: 400 Gb/s x 4096 / (4096 + 26 B of LRH, BTH, ICRC
/// and VCRC).
constexpr double ndr_payload_gbps = 400.0 * 4096 / 4122;

/// PCIe Gen5 x16 at MPS 256: 454.8 Gb/s usable at the TLP layer (docs/references.md pcie_gen5_x16_tlp_bw), of which
/// 256 / (256 + 20) carries payload in read completions and 256 / (256 + 24) in the receiver's writes.
constexpr double gen5_read_payload_gbps = 454.8 * 256 / 276;
constexpr double gen5_write_payload_gbps = 454.8 * 256 / 280;

json run_ndr_pair(const std::vector<std::string>& sets) {
  std::vector<std::string> args{"run", source_path("scenarios/experiments/ndr_pair.json"), "--format", "json"};
  for (const std::string& set : sets) {
    args.push_back("--set");
    args.push_back(set);
  }
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out).at("results").at("workloads");
}

} // namespace

TEST_CASE("ndr: ib_write_bw of 64 KiB between two ConnectX-7 through a Quantum-2 reaches 95 % of the 4x NDR payload "
          "rate, which PCIe Gen5 x16 does not bound",
          "[scenario][ndr]") {
  CHECK(ndr_payload_gbps == Approx(397.48).epsilon(1e-4));
  CHECK(gen5_read_payload_gbps > ndr_payload_gbps);
  CHECK(gen5_write_payload_gbps > ndr_payload_gbps);
  const json row = run_ndr_pair({}).at("ib_write_bw").at("results").at(0);
  INFO("BW average " << row.at("bw_average_gbps") << " Gb/s, peak " << row.at("bw_peak_gbps") << " Gb/s");
  CHECK(row.at("iterations") == 2000);
  CHECK(row.at("bw_average_gbps").get<double>() >= 0.95 * ndr_payload_gbps);
  CHECK(row.at("bw_peak_gbps").get<double>() <= ndr_payload_gbps * 1.001);
}

TEST_CASE("ndr: ib_write_lat through one Quantum-2 is back to back plus the switch, a cable and one FEC decode, and "
          "back to back it lands in reference E10's band",
          "[scenario][ndr]") {
  const double through_switch = run_ndr_pair({}).at("ib_write_lat").at("results").at(0).at("t_typical_us");
  // The same hosts cabled to each other, without the switch and the bandwidth run.
  json scenario = json::parse(std::ifstream(source_path("scenarios/experiments/ndr_pair.json")));
  scenario.erase("$schema");
  scenario["topology"]["nodes"].erase(0);
  scenario["topology"]["links"] = json::array({{{"a", "h0/1"}, {"b", "h1/1"}}});
  scenario["workloads"].erase(1);
  const auto r = run_cli({"run", testing::write_temp("ndr_back_to_back.json", scenario.dump(2)), "--format", "json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const double back_to_back =
      json::parse(r.out).at("results").at("workloads").at("ib_write_lat").at("results").at(0).at("t_typical_us");
  const double hop_us = (profile_value("quantum2-ndr", "port_to_port_latency_ns") +
                         2 * profile_value("copper-dac", "propagation_delay_ns_per_m") +
                         profile_value("copper-dac", "fec_latency_ndr_ns")) /
                        1000;
  INFO("back to back " << back_to_back << " us, through the switch " << through_switch << " us, expected hop " << hop_us
                       << " us");
  CHECK(hop_us == Approx(0.200));
  CHECK(back_to_back >= 0.55);
  CHECK(back_to_back <= 1.0);
  CHECK(through_switch - back_to_back == Approx(hop_us).margin(0.005));
}
