// pcie-bench's analytic bandwidth model (bandwidth_model.h) against docs/references.md: the usable TLP bandwidth
// table to its printed precision, and the worked expectations E5, E6, E8 and E11; the DMA read and write bandwidths
// against values printed by pcie-model itself (model/mem_bw.py at github.com/pcie-bench/pcie-model 40703cf).
#include <cmath>
#include <cstdint>

#include <catch2/catch.hpp>

#include "models/pcie/bandwidth_model.h"
#include "models/pcie/pcie_rate.h"
#include "models/pcie/tlp.h"

namespace pcie = ib::pcie;
using pcie::CompletionSplit;
using pcie::Generation;
using pcie::Width;

namespace {

std::int64_t printed(double value, int decimals) {
  return std::llround(value * std::pow(10.0, decimals));
}

pcie::LinkConfig config(Generation g, Width w, std::uint32_t mps, CompletionSplit split = CompletionSplit::mps,
                        std::uint32_t mrrs = 512, std::uint32_t rcb = 64) {
  return pcie::recommended_link_config(g, w, mps, mrrs, rcb, split);
}

} // namespace

TEST_CASE("ib::pcie::tlp_bandwidth_gbps: the reference table to its printed precision", "[pcie][quick]") {
  struct Row {
    Generation generation;
    Width width;
    std::uint32_t mps;
    double gbps;
  };
  // pcie_gen3_x8_tlp_bw, pcie_gen3_x16_tlp_bw, pcie_gen4_x16_tlp_bw, pcie_gen5_x16_tlp_bw. The reference prints
  // two decimals with trailing zeros dropped (111.7 is 111.70): every value is checked to two decimals.
  const Row rows[] = {
      {Generation::gen3, Width::x8, 128, 56.67},   {Generation::gen3, Width::x8, 256, 57.88},
      {Generation::gen3, Width::x8, 512, 57.31},   {Generation::gen3, Width::x16, 128, 111.7},
      {Generation::gen3, Width::x16, 256, 113.7},  {Generation::gen3, Width::x16, 512, 114.62},
      {Generation::gen4, Width::x16, 128, 223.4},  {Generation::gen4, Width::x16, 256, 227.4},
      {Generation::gen4, Width::x16, 512, 229.25}, {Generation::gen5, Width::x16, 128, 446.8},
      {Generation::gen5, Width::x16, 256, 454.8},  {Generation::gen5, Width::x16, 512, 458.49},
  };
  for (const Row& row : rows) {
    INFO(pcie::to_string(row.generation) << " " << pcie::to_string(row.width) << " MPS " << row.mps);
    CHECK(printed(pcie::tlp_bandwidth_gbps(config(row.generation, row.width, row.mps)), 2) == printed(row.gbps, 2));
  }
  CHECK(printed(pcie::raw_bandwidth_gbps(config(Generation::gen3, Width::x8, 256)), 2) == 6302);
}

TEST_CASE("ib::pcie::recommended_ack_interval_symbols: the spec's table as the reference quotes it", "[pcie][quick]") {
  // pcie_ack_updatefc_interval_gen3: x8 {128: 163, 256: 203, 512: 182}, x16 {128: 144, 256: 168, 512: 182}.
  CHECK(pcie::recommended_ack_interval_symbols(Generation::gen3, Width::x8, 128) == 163);
  CHECK(pcie::recommended_ack_interval_symbols(Generation::gen3, Width::x8, 256) == 203);
  CHECK(pcie::recommended_ack_interval_symbols(Generation::gen3, Width::x8, 512) == 182);
  CHECK(pcie::recommended_ack_interval_symbols(Generation::gen3, Width::x16, 128) == 144);
  CHECK(pcie::recommended_ack_interval_symbols(Generation::gen3, Width::x16, 256) == 168);
  CHECK(pcie::recommended_update_fc_interval_symbols(Generation::gen3, Width::x16, 512) == 182);
  // pcie-model reuses the 8 GT/s values at 16 and 32 GT/s; the 2.5 GT/s x1 entry is the spec's formula
  // ((MPS + 28) × 1.4 + 19 for MPS 128).
  CHECK(pcie::recommended_ack_interval_symbols(Generation::gen5, Width::x16, 256) == 168);
  CHECK(pcie::recommended_ack_interval_symbols(Generation::gen1, Width::x1, 128) == 237);
  CHECK(pcie::recommended_update_fc_interval_symbols(Generation::gen2, Width::x4, 4096) == 1101);
  // DLLP and SKP overhead: 2 × 8/203 + 4/1538 on Gen3 x8 at MPS 256.
  CHECK(pcie::dllp_overhead_fraction(config(Generation::gen3, Width::x8, 256)) ==
        Approx(16.0 / 203 + 4.0 / 1538).epsilon(1e-12));
}

TEST_CASE("ib::pcie: E5 BlueFlame and doorbell MWr on Gen3 x8", "[pcie][quick]") {
  const sim::Rate gen3_x8 = pcie::data_rate(Generation::gen3, Width::x8);
  const pcie::LinkConfig link = config(Generation::gen3, Width::x8, 256);
  // A 64 B WQE as one MWr with a 64-bit address: 88 B, 11.17 ns; an 8 B doorbell: 32 B, 4.06 ns.
  CHECK(pcie::dma_write_wire_bytes(link, 0x7f00'0000'0000ULL, 64) == 88);
  CHECK(pcie::dma_write_wire_bytes(link, 0x7f00'0000'0800ULL, 8) == 32);
  CHECK(printed(sim::transfer_time(88, gen3_x8).ns(), 2) == 1117);
  CHECK(printed(sim::transfer_time(32, gen3_x8).ns(), 2) == 406);
  // Fetching the WQE: an MRd of 24 B out, a CplD of 84 B back.
  CHECK(pcie::dma_read_request_wire_bytes(link, 0x1000, 64) == 24);
  CHECK(pcie::dma_read_completion_wire_bytes(link, 0x1000, 64) == 84);
}

TEST_CASE("ib::pcie: E6 DMA read of 4096 B on Gen3 x16 with MPS 256 and MRRS 512", "[pcie][quick]") {
  const pcie::LinkConfig link = config(Generation::gen3, Width::x16, 256);
  CHECK(pcie::read_request_count(0, 4096, link.max_read_request_bytes) == 8);
  CHECK(pcie::dma_read_request_wire_bytes(link, 0, 4096) == 8 * 24);
  std::uint32_t completions = 0;
  pcie::for_each_read_request(0, 4096, 512, [&](std::uint64_t address, std::uint32_t size) {
    completions += pcie::completion_count(address, size, 256, 64, CompletionSplit::mps);
  });
  CHECK(completions == 16);
  const std::uint64_t cpl_bytes = pcie::dma_read_completion_wire_bytes(link, 0, 4096);
  CHECK(cpl_bytes == 16 * 20 + 4096);
  CHECK(cpl_bytes == 4416);
  // 4416 × 8 / 126.03 Gb/s ≈ 280 ns, 92.8 % efficient; a 64 B read is 64/84 = 76.2 % efficient.
  const sim::Time wire = sim::transfer_time(cpl_bytes, pcie::data_rate(Generation::gen3, Width::x16));
  CHECK(std::llround(wire.ns()) == 280);
  CHECK(printed(100.0 * 4096 / static_cast<double>(cpl_bytes), 1) == 928);
  CHECK(printed(100.0 * 64 / static_cast<double>(pcie::dma_read_completion_wire_bytes(link, 0, 64)), 1) == 762);
  // With RCB-sized completions of 64 B: 64 CplD for the same 4096 B.
  const pcie::LinkConfig rcb = config(Generation::gen3, Width::x16, 256, CompletionSplit::rcb);
  CHECK(pcie::dma_read_completion_wire_bytes(rcb, 0, 4096) == 64 * 20 + 4096);
}

TEST_CASE("ib::pcie: E8 PCIe-bound message rates on Gen3 x16 at 113.7 Gb/s", "[pcie][quick]") {
  const pcie::LinkConfig link = config(Generation::gen3, Width::x16, 256);
  const double tlp_gbps = pcie::tlp_bandwidth_gbps(link);
  CHECK(printed(tlp_gbps, 1) == 1137);
  const std::uint64_t wqe_address = 0x7f00'0000'0000ULL;
  const std::uint64_t doorbell_address = 0x3800'0000'0800ULL;
  // Inline + BlueFlame: one 64 B MWr, 88 B host to device.
  const std::uint64_t blueflame = pcie::dma_write_wire_bytes(link, doorbell_address, 64);
  CHECK(blueflame == 88);
  // Doorbell + WQE fetch: the doorbell MWr (32 B) and the WQE's CplD (84 B) travel host to device.
  const std::uint64_t doorbell = pcie::dma_write_wire_bytes(link, doorbell_address, 8);
  const std::uint64_t fetch = doorbell + pcie::dma_read_completion_wire_bytes(link, wqe_address, 64);
  CHECK(fetch == 116);
  // Doorbell batching of 16: one doorbell, and 16 WQEs (1024 B) in 4 CplD of 256 B = 1104 B: 71 B a message.
  CHECK(pcie::dma_read_completion_wire_bytes(link, wqe_address, 16 * 64) == 1104);
  const double batched =
      static_cast<double>(doorbell + pcie::dma_read_completion_wire_bytes(link, wqe_address, 1024)) / 16;
  CHECK(batched == 71.0);
  // The reference quotes the bounds truncated: ~161, ~122 and ~200 M msg/s (161.5, 122.5, 200.2).
  CHECK(std::floor(pcie::message_rate_bound_mmsg_per_s(tlp_gbps, static_cast<double>(blueflame))) == 161);
  CHECK(std::floor(pcie::message_rate_bound_mmsg_per_s(tlp_gbps, static_cast<double>(fetch))) == 122);
  CHECK(std::floor(pcie::message_rate_bound_mmsg_per_s(tlp_gbps, batched)) == 200);
  // ConnectX-4's quoted 150 M msg/s fits under the BlueFlame bound but not under doorbell + fetch.
  CHECK(pcie::message_rate_bound_mmsg_per_s(tlp_gbps, static_cast<double>(blueflame)) > 150);
  CHECK(pcie::message_rate_bound_mmsg_per_s(tlp_gbps, static_cast<double>(fetch)) < 150);
}

TEST_CASE("ib::pcie: E11 the ATC'16 PCIe model in its own TLP accounting and in this model's", "[pcie][quick]") {
  // Kalia et al.: 984.6 MB/s per Gen3 lane after the line code, the same raw rate this model gives x16.
  const pcie::LinkConfig x16 = config(Generation::gen3, Width::x16, 256);
  const double raw_mb_per_s = pcie::raw_bandwidth_gbps(x16) * 1000 / 8;
  CHECK(raw_mb_per_s == Approx(16 * 984.6).epsilon(0.0005));
  // Their accounting (26 B per request TLP, 22 B per completion, completions of 128 B): the four figures of E11.
  const double lane_mb_per_s = 984.6, x16_mb_per_s = 16 * lane_mb_per_s;
  CHECK(x16_mb_per_s / (64 + 26) == Approx(175.0).epsilon(0.005));              // M cache lines/s by MMIO
  CHECK(x16_mb_per_s / (64 + 26) / 2 == Approx(87.5).epsilon(0.005));           // 2-line WQEs by MMIO
  CHECK(x16_mb_per_s * 128 / (128 + 22) == Approx(13443).epsilon(0.005));       // MB/s of DMA-read payload
  CHECK(x16_mb_per_s * 128 / (128 + 22) / 128 == Approx(105.0).epsilon(0.005)); // 128 B WQEs after a Doorbell
  CHECK(10 * 2 * (64 + 26) == 1800);                                            // ten 65 B WQEs by MMIO
  CHECK((8 + 26) + 10 * (128 + 22) == 1534);                                    // by Doorbell and one read
  // This model's accounting (24 B MWr with a 64-bit address, 20 B CplD), with completions combined at 128 B as the
  // paper's CPUs do: about 179 M lines/s and 13,625 MB/s, as E11 says, and 1760 B against 1512 B.
  const pcie::LinkConfig combined = config(Generation::gen3, Width::x16, 128);
  const std::uint64_t wqe_address = 0x7f00'0000'0000ULL, doorbell_address = 0x3800'0000'0800ULL;
  const std::uint64_t line = pcie::dma_write_wire_bytes(x16, doorbell_address, 64);
  CHECK(line == 88);
  CHECK(raw_mb_per_s / static_cast<double>(line) == Approx(179.0).epsilon(0.005));
  const std::uint64_t completion = pcie::dma_read_completion_wire_bytes(combined, wqe_address, 128);
  CHECK(completion == 148);
  CHECK(raw_mb_per_s * 128 / static_cast<double>(completion) == Approx(13625).epsilon(0.005));
  CHECK(10 * 2 * line == 1760);
  CHECK(pcie::dma_write_wire_bytes(x16, doorbell_address, 8) +
            pcie::dma_read_completion_wire_bytes(combined, wqe_address, 10 * 128) ==
        1512);
}

TEST_CASE("ib::pcie: DMA read and write bandwidths reproduce pcie-model mem_bw", "[pcie][quick]") {
  // Printed by pcie-model (mem_bw.write, .read, .read_write with BW_Spec(TLP_bw, TLP_bw, BW_RAW)), 64-bit, no ECRC.
  struct Row {
    Width width;
    std::uint32_t mps;
    CompletionSplit split;
    std::uint64_t size;
    double write_gbps;
    double read_gbps;
    double read_write_gbps;
  };
  const Row rows[] = {
      {Width::x8, 256, CompletionSplit::mps, 4, 8.269252, 9.647461, 4.452674},
      {Width::x8, 256, CompletionSplit::mps, 64, 42.098011, 44.102679, 33.077009},
      {Width::x8, 256, CompletionSplit::mps, 256, 52.923214, 53.690217, 48.745066},
      {Width::x8, 256, CompletionSplit::mps, 1500, 52.814567, 53.597005, 50.598571},
      {Width::x8, 256, CompletionSplit::mps, 4096, 52.923214, 53.690217, 50.748288},
      {Width::x16, 256, CompletionSplit::mps, 64, 82.690953, 86.628618, 64.971463},
      {Width::x16, 256, CompletionSplit::mps, 1500, 103.740931, 105.277834, 99.388165},
      {Width::x16, 256, CompletionSplit::mps, 2048, 103.954341, 105.460926, 99.682245},
      {Width::x8, 128, CompletionSplit::rcb, 64, 41.211590, 43.174047, 32.380535},
      {Width::x8, 128, CompletionSplit::rcb, 256, 47.718683, 43.174047, 43.174047},
      {Width::x8, 128, CompletionSplit::rcb, 1500, 47.538537, 42.928740, 42.928740},
  };
  for (const Row& row : rows) {
    INFO(pcie::to_string(row.width) << " MPS " << row.mps << " " << pcie::to_string(row.split) << " " << row.size
                                    << " B");
    const pcie::LinkConfig link = config(Generation::gen3, row.width, row.mps, row.split);
    CHECK(pcie::dma_write_bandwidth_gbps(link, row.size) == Approx(row.write_gbps).margin(1e-6));
    CHECK(pcie::dma_read_bandwidth_gbps(link, row.size) == Approx(row.read_gbps).margin(1e-6));
    CHECK(pcie::dma_read_write_bandwidth_gbps(link, row.size) == Approx(row.read_write_gbps).margin(1e-6));
  }
}

TEST_CASE("ib::pcie: large DMA reads approach the TLP bandwidth less the CplD headers", "[pcie][quick]") {
  const pcie::LinkConfig link = config(Generation::gen3, Width::x16, 256);
  // Completions of 256 B carry 20 B each: 256/276 of the TLP bandwidth.
  CHECK(pcie::dma_read_bandwidth_gbps(link, 1 << 20) ==
        Approx(pcie::tlp_bandwidth_gbps(link) * 256.0 / 276.0).epsilon(1e-12));
  // ECRC costs 4 B more per TLP.
  pcie::LinkConfig ecrc = link;
  ecrc.ecrc = true;
  CHECK(pcie::dma_write_bandwidth_gbps(ecrc, 4096) ==
        Approx(pcie::tlp_bandwidth_gbps(link) * 256.0 / 284.0).epsilon(1e-12));
  // 32-bit addressing saves 4 B per request.
  pcie::LinkConfig low = link;
  low.address64 = false;
  CHECK(pcie::dma_write_wire_bytes(low, 0, 256) == 276);
}
