// The HCA's worked expectations (docs/references.md E8, E12, E13, E14; Kalia et al. ATC'16 for the last three) as
// scenario runs through `ibnetsim run --format json` on the shipped hardware profiles: PCIe-bound message rates,
// Doorbell batching and header-only UD SENDs on Connect-IB and ConnectX-3, single-core batching over QPs, and
// contended atomics (ib_atomic_bw with its counters). The bands are the reference's. A case the model does not meet
// yet is tagged [!mayfail] with a comment naming the gap, so that the suite reports it without failing; the bands
// are never loosened to make a case pass.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/scenario/cli_harness.h"
#include "tests/scenario/fabric_scenarios.h"

using nlohmann::json;

namespace {

/// `prefix` then `i`. Built by appending: GCC 12 warns falsely (-Wrestrict, bug 105329) on "literal" + std::string.
std::string numbered(const char* prefix, long i) {
  std::string name = prefix;
  name += std::to_string(i);
  return name;
}

/// Hosts h0..h(n-1) of HCA profile `hca` on one switch of `switch_profile`, 2 m copper at `speed`.
json star_of(int hosts, const std::string& hca, const std::string& switch_profile = "switchx2-fdr",
             const std::string& speed = "FDR") {
  json nodes = json::array({{{"name", "s0"}, {"kind", "switch"}, {"profile", switch_profile}}});
  json links = json::array();
  for (int i = 0; i < hosts; ++i) {
    const std::string host = numbered("h", i), port = numbered("s0/", i + 1);
    nodes.push_back({{"name", host}, {"kind", "hca"}, {"profile", hca}});
    links.push_back({{"a", host + "/1"}, {"b", port}});
  }
  return {{"name", "star"},
          {"link_defaults", {{"width", "4x"}, {"speed", speed}, {"length_m", 2}, {"cable", "copper-dac"}}},
          {"nodes", nodes},
          {"links", links}};
}

/// star_of() with h0's second port cabled too (to s0's last port): Kalia et al.'s Connect-IB hosts use both FDR
/// ports (reference E12: "2 x FDR").
json dual_ported_h0(int hosts, const std::string& hca) {
  json topology = star_of(hosts, hca);
  topology["links"].push_back({{"a", "h0/2"}, {"b", numbered("s0/", hosts + 1)}});
  return topology;
}

json run_report(const std::string& name, const json& topology, const json& workloads) {
  const std::string path =
      testing::write_temp("reference_" + name + ".json", testing::scenario(name, topology, workloads).dump(2));
  const testing::CliResult r = testing::run_cli({"run", path, "--format", "json"});
  INFO(name << ": " << r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

/// The message rates of every workload of a report, summed (they run side by side from time zero).
double total_mpps(const json& report) {
  double sum = 0;
  for (const auto& [name, workload] : report.at("results").at("workloads").items())
    sum += workload.at("results").at(0).at("msg_rate_mpps").get<double>();
  return sum;
}

/// A PCIe counter of host `index` over the messages it sent.
double per_message(const json& report, std::size_t index, const std::string& key) {
  const json& host = report.at("results").at("pcie").at("hosts").at(index);
  return host.at(key).get<double>() / host.at("messages_sent").get<double>();
}

/// One program's ib_send_bw over UD: `size` bytes inline (0: header-only), lists of `post_list` (BlueFlame for a
/// lone WQE, as mlx5 posts it), over `qps` QPs to `server`.
json ud_sends(const std::string& name, const std::string& server, std::uint32_t size, std::uint32_t post_list,
              std::uint32_t qps, std::uint32_t iterations) {
  return {{"type", "ib_send_bw"},
          {"name", name},
          {"client", "h0"},
          {"server", server},
          {"connection", "UD"},
          {"size_bytes", size},
          {"inline_size_bytes", size},
          {"qps", qps},
          {"post_list", post_list},
          {"blueflame", post_list == 1},
          {"cq_mod", 64},
          {"iterations", iterations}};
}

/// `programs` sender programs (cores) on h0, each with its own QPs, spread over receivers h1..h`receivers` and,
/// with `ports` 2, over h0's two ports in turn.
json ud_senders(int programs, int receivers, std::uint32_t size, std::uint32_t post_list, std::uint32_t qps,
                std::uint32_t iterations, int ports = 1) {
  json workloads = json::array();
  for (int p = 0; p < programs; ++p) {
    workloads.push_back(
        ud_sends(numbered("core", p), numbered("h", 1 + p % receivers), size, post_list, qps, iterations));
    if (ports > 1)
      workloads.back()["client_ib_port"] = 1 + p % ports;
  }
  return workloads;
}

/// E11's analytic bounds for Connect-IB (PCIe 3.0 x16): 2-line WQEs by MMIO, and 128-byte WQEs read after a
/// Doorbell; 3-line WQEs (61-124 B payloads) give two thirds of each (reference kalia16_cib_ud_send_pcie_bounds).
constexpr double mmio_bound_mops = 87.5, dma_read_bound_mops = 105.0;

/// ib_atomic_bw from `clients` client hosts h1.. with `qps` QPs each to the server h0, on `counters` counters
/// `stride` bytes apart.
json atomics(int clients, std::uint32_t qps, std::uint32_t counters, std::uint32_t stride, std::uint32_t iterations) {
  json w = {{"type", "ib_atomic_bw"},
            {"client", "h1"},
            {"server", "h0"},
            {"qps", qps},
            {"iterations", iterations},
            {"counters", counters},
            {"counter_stride_bytes", stride}};
  if (clients > 1) {
    json extra = json::array();
    for (int c = 2; c <= clients; ++c)
      extra.push_back(numbered("h", c));
    w["extra_clients"] = extra;
  }
  return json::array({w});
}

/// The aggregate atomic rate of `clients` clients on the profile `hca`.
double atomic_mops(const std::string& name, const std::string& hca, int clients, std::uint32_t qps,
                   std::uint32_t counters, std::uint32_t stride, std::uint32_t iterations) {
  const json report = run_report(name, star_of(clients + 1, hca), atomics(clients, qps, counters, stride, iterations));
  const json& row = report.at("results").at("workloads").at("ib_atomic_bw").at("results").at(0);
  CHECK(row.at("iterations") == std::uint64_t{iterations} * qps * static_cast<std::uint64_t>(clients));
  return row.at("msg_rate_mpps").get<double>();
}

} // namespace

// E8: inline + BlueFlame costs 88 B host to device per message, Doorbell + WQE fetch 116 B, Doorbell batches of 16
// about 71 B, against 113.7 Gb/s of TLPs on Gen3 x16 (ConnectX-4): no simulated rate may exceed those bounds.
TEST_CASE("reference E8: no message rate on ConnectX-4 exceeds its PCIe bound", "[scenario][reference]") {
  struct Mode {
    const char* name;
    bool blueflame;
    std::uint32_t post_list;
    double bound_mops; // 113.7 Gb/s / (8 x bytes per message), reference E8
  };
  for (const Mode& m : {Mode{"inline_blueflame", true, 1, 161.5}, Mode{"doorbell_fetch", false, 1, 122.5},
                        Mode{"doorbell_batch16", false, 16, 200.2}}) {
    DYNAMIC_SECTION(m.name) {
      json workloads = json::array();
      for (int p = 0; p < 8; ++p) // eight cores, a WRITE target each on four servers
        workloads.push_back({{"type", "ib_write_bw"},
                             {"name", numbered("core", p)},
                             {"client", "h0"},
                             {"server", numbered("h", 1 + p % 4)},
                             {"size_bytes", 8},
                             {"inline_size_bytes", 8},
                             {"blueflame", m.blueflame},
                             {"post_list", m.post_list},
                             {"cq_mod", 64},
                             {"iterations", 2000}});
      const json report =
          run_report(std::string("e8_") + m.name, star_of(5, "connectx4-edr", "switch-ib2-edr", "EDR"), workloads);
      const double mops = total_mpps(report);
      INFO(m.name << ": " << mops << " Mops, PCIe bound " << m.bound_mops);
      CHECK(mops > 0);
      CHECK(mops < m.bound_mops);
      CHECK(per_message(report, 0, "blueflame_writes") == (m.blueflame ? 1 : 0));
      CHECK(per_message(report, 0, "doorbells") == Approx(m.blueflame ? 0.0 : 1.0 / m.post_list));
    }
  }
}

// E12 on Connect-IB with as many cores as needed (12 programs over both ports; one core posts about 10 M SENDs/s,
// E13): 16-byte UD SENDs (2-line WQEs) by MMIO, Doorbell-batched in lists of 16 over 2 QPs per core, and header-only
// (1-line WQEs) batched, to four receiving hosts.
TEST_CASE("reference E12: Connect-IB UD SENDs: MMIO, Doorbell batching and header-only against the E11 bounds",
          "[scenario][reference]") {
  const int cores = 12, receivers = 4;
  const json topology = dual_ported_h0(receivers + 1, "connect-ib-fdr");
  const json by_mmio = run_report("e12_mmio", topology, ud_senders(cores, receivers, 16, 1, 1, 2000, 2));
  const json batched = run_report("e12_batched", topology, ud_senders(cores, receivers, 16, 16, 2, 1024, 2));
  const json header_only = run_report("e12_header_only", topology, ud_senders(cores, receivers, 0, 16, 2, 1024, 2));
  const double mmio = total_mpps(by_mmio), doorbell = total_mpps(batched), header = total_mpps(header_only);
  INFO("by MMIO " << mmio << " Mops (bound " << mmio_bound_mops << "), batched " << doorbell << " Mops (bound "
                  << dma_read_bound_mops << "), header-only batched " << header << " Mops");
  // The mechanisms: two 64 B write-combined lines per WQE by MMIO; one doorbell per list of 16 otherwise.
  CHECK(per_message(by_mmio, 0, "mmio_bytes") == 128);
  CHECK(per_message(batched, 0, "doorbells") == Approx(1.0 / 16));
  CHECK(doorbell / mmio >= 1.15);
  CHECK(doorbell / mmio <= 1.40);
  CHECK(mmio / mmio_bound_mops >= 0.80);
  CHECK(mmio / mmio_bound_mops <= 1.00);
  CHECK(doorbell / dma_read_bound_mops >= 0.80);
  CHECK(doorbell / dma_read_bound_mops <= 1.00);
  CHECK(header / doorbell >= 1.3);
  CHECK(header / doorbell <= 1.8);
}

// E12: a payload past 60 bytes makes the WQE 3 lines; read by eye, about 67 Mops batched and 54 by MMIO (+-15 %).
// 100-byte SENDs need both FDR ports: one carries at most 51 M of them per second.
TEST_CASE("reference E12: Connect-IB UD SENDs of 3-line WQEs lose about a third", "[scenario][reference]") {
  const int cores = 12, receivers = 4;
  const json topology = dual_ported_h0(receivers + 1, "connect-ib-fdr");
  const json by_mmio = run_report("e12_3line_mmio", topology, ud_senders(cores, receivers, 100, 1, 1, 2000, 2));
  const json batched = run_report("e12_3line_batched", topology, ud_senders(cores, receivers, 100, 16, 2, 1024, 2));
  const double mmio = total_mpps(by_mmio), doorbell = total_mpps(batched);
  INFO("3-line WQEs: by MMIO " << mmio << " Mops, batched " << doorbell << " Mops");
  CHECK(per_message(by_mmio, 0, "mmio_bytes") == 192);
  CHECK(mmio == Approx(54).epsilon(0.15));
  CHECK(doorbell == Approx(67).epsilon(0.15));
}

// E12 on ConnectX-3 (PCIe 3.0 x8, 8 cores): regular UD SENDs reach 26.0 Mops and header-only ones 32.1, NIC-bound
// well below the x8 PCIe bound (half of E11's x16 105 M/s for batched 128-byte WQEs). Measured figures: +-20 %, the
// reference's guidance for measured values.
TEST_CASE("reference E12: ConnectX-3 UD SENDs are NIC-bound, regular and header-only", "[scenario][reference]") {
  const int cores = 8, receivers = 4;
  const json topology = star_of(receivers + 1, "connectx3-fdr");
  const double regular = total_mpps(run_report("e12_cx3", topology, ud_senders(cores, receivers, 16, 16, 2, 1024)));
  const double header =
      total_mpps(run_report("e12_cx3_header_only", topology, ud_senders(cores, receivers, 0, 16, 2, 1024)));
  INFO("ConnectX-3: regular " << regular << " Mops, header-only " << header << " Mops");
  CHECK(regular == Approx(26.0).epsilon(0.20));
  CHECK(header == Approx(32.1).epsilon(0.20));
  CHECK(regular < 0.8 * dma_read_bound_mops / 2);
}

// E13 on Connect-IB: one core (one program) posting 60-byte UD SENDs (128-byte WQEs) by MMIO on 1 QP, or in
// Doorbell batches of 16 over 1, 2 and 4 QPs: measured 10.0, 9.6, 18.6 and 32.2 Mops.
TEST_CASE("reference E13: one core's Doorbell batching pays only across QPs on Connect-IB", "[scenario][reference]") {
  const json topology = star_of(2, "connect-ib-fdr");
  const auto rate = [&](const std::string& name, std::uint32_t post_list, std::uint32_t qps) {
    return total_mpps(run_report(name, topology, json::array({ud_sends("core", "h1", 60, post_list, qps, 2000)})));
  };
  const double mmio = rate("e13_mmio", 1, 1), batch1 = rate("e13_batch1", 16, 1), batch2 = rate("e13_batch2", 16, 2),
               batch4 = rate("e13_batch4", 16, 4), mmio4 = rate("e13_mmio4", 1, 4);
  INFO("by MMIO " << mmio << " Mops (4 QPs " << mmio4 << "), batched on 1, 2, 4 QPs " << batch1 << ", " << batch2
                  << ", " << batch4 << " Mops");
  CHECK(mmio == Approx(10.0).epsilon(0.20)); // measured, +-20 %
  CHECK(batch1 / mmio >= 0.75);
  CHECK(batch1 / mmio <= 1.1);
  CHECK(batch2 / batch1 >= 1.6);
  CHECK(batch2 / batch1 <= 2.4);
  CHECK(batch4 / mmio >= 2.6);
  CHECK(batch4 / mmio <= 3.8);
  CHECK(mmio4 / mmio <= 1.1); // no gain from QPs without batching: the core is the limit
}

// E13: Doorbell batching costs one DMA read of latency: an unloaded post by Doorbell minus one by MMIO (BlueFlame)
// is one DMA-read round trip, 0.45-0.7 us on the E7 host and never more than 1 us.
TEST_CASE("reference E13: a Doorbell post costs one DMA read more latency than a BlueFlame post on Connect-IB",
          "[scenario][reference]") {
  const auto median_us = [](const std::string& name, bool blueflame) {
    const json report = run_report(name, star_of(2, "connect-ib-fdr"),
                                   json::array({{{"type", "ib_send_lat"},
                                                 {"client", "h0"},
                                                 {"server", "h1"},
                                                 {"connection", "UD"},
                                                 {"size_bytes", 60},
                                                 {"inline_size_bytes", 60},
                                                 {"blueflame", blueflame},
                                                 {"iterations", 200}}}));
    return report.at("results").at("workloads").at("ib_send_lat").at("results").at(0).at("t_typical_us").get<double>();
  };
  const double blueflame = median_us("e13_lat_blueflame", true), doorbell = median_us("e13_lat_doorbell", false);
  INFO("ib_send_lat UD 60 B: BlueFlame " << blueflame << " us, Doorbell " << doorbell << " us");
  CHECK(doorbell - blueflame >= 0.45);
  CHECK(doorbell - blueflame <= 0.7);
}

// E13 on ConnectX-3: 12.4 by MMIO, 9.9 batched on 1 QP, 19.6 on 2 (the 4-QP band is Connect-IB's): the reference's
// ratio bands.
TEST_CASE("reference E13: one core's Doorbell batching pays only across QPs on ConnectX-3", "[scenario][reference]") {
  const json topology = star_of(2, "connectx3-fdr");
  const auto rate = [&](const std::string& name, std::uint32_t post_list, std::uint32_t qps) {
    return total_mpps(run_report(name, topology, json::array({ud_sends("core", "h1", 60, post_list, qps, 2000)})));
  };
  const double mmio = rate("e13_cx3_mmio", 1, 1), batch1 = rate("e13_cx3_batch1", 16, 1),
               batch2 = rate("e13_cx3_batch2", 16, 2);
  INFO("ConnectX-3: by MMIO " << mmio << " Mops, batched on 1, 2 QPs " << batch1 << ", " << batch2 << " Mops");
  CHECK(batch1 / mmio >= 0.75);
  CHECK(batch1 / mmio <= 1.1);
  CHECK(batch2 / batch1 >= 1.6);
  CHECK(batch2 / batch1 <= 2.4);
}

// E13's measured WQE-by-MMIO rates, +-20 % (the reference's guidance for measured values): Connect-IB's 10.0 holds
// (in the Connect-IB case above), ConnectX-3's 12.4 does not.
// Gap: the model's core posts 9.85 Mops by MMIO against at least 9.92. Both testbeds share the one host profile,
// whose driver costs give Connect-IB's 10.0; the ConnectX-3 testbed's core (an E5-2450 against the Connect-IB
// testbed's E5-2683 v3, the mlx4 driver against mlx5) posts about a quarter faster, and no source says why.
TEST_CASE("reference E13: one ConnectX-3 core posts 12.4 M UD SENDs/s by MMIO", "[scenario][reference][!mayfail]") {
  const double mmio = total_mpps(run_report("e13_cx3_mmio_rate", star_of(2, "connectx3-fdr"),
                                            json::array({ud_sends("core", "h1", 60, 1, 1, 2000)})));
  INFO("ConnectX-3 by MMIO: " << mmio << " Mops");
  CHECK(mmio == Approx(12.4).epsilon(0.20));
}

// E14: with every client on one counter (Z = 1), each atomic holds its lock bucket for a PCIe read-modify-write, so
// the rate is 1 / (lock hold time): 1.5-3.0 Mops with the E7 host (Connect-IB measured 2.24). Eight clients with two
// QPs each offer far more than that.
TEST_CASE("reference E14: Connect-IB atomics on one counter run at 1.5-3.0 Mops", "[scenario][reference]") {
  const double mops = atomic_mops("e14_cib_z1", "connect-ib-fdr", 8, 2, 1, 8, 300);
  INFO("Connect-IB, Z = 1: " << mops << " Mops");
  CHECK(mops >= 1.5);
  CHECK(mops <= 3.0);
}

// E14: Connect-IB locks 4096 buckets on the low 12 address bits: two counters 4096 bytes apart serialize (the rate
// of Z = 1), two counters 8 bytes apart do not.
TEST_CASE("reference E14: Connect-IB serializes counters that agree in address bits 0-11", "[scenario][reference]") {
  const double one = atomic_mops("e14_cib_z1", "connect-ib-fdr", 8, 2, 1, 8, 300);
  const double same_bucket = atomic_mops("e14_cib_z2_4096", "connect-ib-fdr", 8, 2, 2, 4096, 300);
  const double two_buckets = atomic_mops("e14_cib_z2_8", "connect-ib-fdr", 8, 2, 2, 8, 300);
  INFO("Connect-IB: Z = 1 " << one << " Mops; Z = 2 at stride 4096 " << same_bucket << ", at stride 8 " << two_buckets);
  CHECK(same_bucket == Approx(one).epsilon(0.05));
  CHECK(two_buckets > 1.5 * one);
}

// E14: ConnectX-3 serializes every atomic (measured 2.7 Mops for any Z): it must vary by less than 10 % across Z.
TEST_CASE("reference E14: ConnectX-3 atomics run at one rate whatever the number of counters",
          "[scenario][reference]") {
  std::vector<double> rates;
  for (const std::uint32_t z : {1u, 64u, 4096u})
    rates.push_back(atomic_mops(numbered("e14_cx3_z", z), "connectx3-fdr", 8, 2, z, 8, 300));
  INFO("ConnectX-3: Z = 1, 64, 4096: " << rates[0] << ", " << rates[1] << ", " << rates[2] << " Mops");
  const auto [low, high] = std::minmax_element(rates.begin(), rates.end());
  CHECK(*high < 1.10 * *low);
  CHECK(rates[0] >= 1.5); // Z = 1: the same round-trip bound as Connect-IB's
  CHECK(rates[0] <= 3.0);
}

// E14: with counters spread widely (Z = 4096, 8 bytes apart) Connect-IB becomes NIC-bound at 52 Mops (+-20 %):
// its atomic unit (atomic_processing_ns). Sixteen clients with two QPs each offer more than that (each client core
// posts about 14 M atomics/s).
TEST_CASE("reference E14: Connect-IB atomics on widely spread counters reach 52 Mops", "[scenario][reference]") {
  const double mops = atomic_mops("e14_cib_z4096", "connect-ib-fdr", 16, 2, 4096, 8, 1000);
  INFO("Connect-IB, Z = 4096, stride 8: " << mops << " Mops");
  CHECK(mops == Approx(52).epsilon(0.20));
}
