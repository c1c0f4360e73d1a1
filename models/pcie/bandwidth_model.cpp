#include "models/pcie/bandwidth_model.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>

namespace ib::pcie {

namespace {

/// Recommended intervals in symbol times by generation group (2.5, 5, 8+ GT/s), width (x1..x16) and MPS
/// (128..4096): pcie-model Ack_Limits and FC_Guide, from PCIe Base Spec r5.0 tables 3-7..3-9 and 2-46..2-48.
/// The two tables agree for x1..x16 (they differ only at x32, left out here).
using IntervalRow = std::array<std::uint32_t, 6>;
constexpr std::array<std::array<IntervalRow, 5>, 3> recommended_interval_table{{
    {{
        {237, 416, 559, 1071, 2095, 4143}, // 2.5 GT/s x1
        {128, 217, 289, 545, 1057, 2081},  // x2
        {73, 118, 154, 282, 538, 1050},    // x4
        {67, 107, 86, 150, 278, 534},      // x8
        {48, 72, 86, 150, 278, 534},       // x16
    }},
    {{
        {288, 467, 610, 1122, 2146, 4194}, // 5 GT/s x1
        {179, 268, 340, 596, 1108, 2132},  // x2
        {124, 169, 205, 333, 589, 1101},   // x4
        {118, 158, 137, 201, 329, 585},    // x8
        {99, 123, 137, 201, 329, 585},     // x16
    }},
    {{
        {333, 512, 655, 1167, 2191, 4239}, // 8 GT/s and up, x1
        {224, 313, 385, 641, 1153, 2177},  // x2
        {169, 214, 250, 378, 634, 1146},   // x4
        {163, 203, 182, 246, 374, 630},    // x8
        {144, 168, 182, 246, 374, 630},    // x16
    }},
}};

std::uint32_t recommended_interval(Generation generation, Width width, std::uint32_t mps) {
  assert(valid_max_size(mps));
  const std::size_t group = std::min<std::size_t>(static_cast<std::size_t>(generation), 2);
  // MPS 128 is index 0: log2(mps) - 7.
  const std::size_t mps_index = static_cast<std::size_t>(std::countr_zero(mps)) - 7;
  return recommended_interval_table[group][static_cast<std::size_t>(width)][mps_index];
}

std::uint64_t completion_wire_bytes(const LinkConfig& config, std::uint64_t address, std::uint32_t size_bytes) {
  std::uint64_t bytes = 0;
  for_each_completion(
      address, size_bytes, config.max_payload_bytes, config.read_completion_boundary_bytes, config.completions_split_at,
      [&](std::uint64_t, std::uint32_t payload) { bytes += wire_bytes(TlpKind::cpld, payload, false, config.ecrc); });
  return bytes;
}

} // namespace

LinkConfig link_config(const LinkParams& params) {
  assert(validate(params).empty());
  return LinkConfig{*parse_generation(params.generation),
                    *parse_width(params.width),
                    params.max_payload_bytes,
                    params.max_read_request_bytes,
                    params.read_completion_boundary_bytes,
                    *parse_completion_split(params.completions_split_at),
                    params.ecrc,
                    true,
                    params.ack_interval_symbols,
                    params.update_fc_interval_symbols,
                    params.one_way_latency};
}

std::uint32_t recommended_ack_interval_symbols(Generation generation, Width width, std::uint32_t mps) {
  return recommended_interval(generation, width, mps);
}

std::uint32_t recommended_update_fc_interval_symbols(Generation generation, Width width, std::uint32_t mps) {
  return recommended_interval(generation, width, mps);
}

LinkConfig recommended_link_config(Generation generation, Width width, std::uint32_t mps, std::uint32_t mrrs,
                                   std::uint32_t rcb, CompletionSplit split) {
  return LinkConfig{generation,
                    width,
                    mps,
                    mrrs,
                    rcb,
                    split,
                    false,
                    true,
                    recommended_ack_interval_symbols(generation, width, mps),
                    recommended_update_fc_interval_symbols(generation, width, mps),
                    sim::Time::zero()};
}

double raw_bandwidth_gbps(const LinkConfig& config) {
  return data_rate(config.generation, config.width).bps() / 1e9;
}

double dllp_overhead_fraction(const LinkConfig& config) {
  // pcie-model divides each DLLP's 8 B by its interval as though the interval's symbol times were bytes of
  // traffic; kept as is, because the reference TLP bandwidths (and pcie-bench's figures) come from it.
  return static_cast<double>(wire_bytes(DllpKind::ack)) / config.ack_interval_symbols +
         static_cast<double>(wire_bytes(DllpKind::update_fc)) / config.update_fc_interval_symbols +
         static_cast<double>(skp_ordered_set_bytes) / skp_interval_symbols;
}

double tlp_bandwidth_gbps(const LinkConfig& config) {
  return raw_bandwidth_gbps(config) * (1.0 - dllp_overhead_fraction(config));
}

std::uint64_t dma_write_wire_bytes(const LinkConfig& config, std::uint64_t address, std::uint64_t size_bytes) {
  std::uint64_t bytes = 0;
  for_each_write_tlp(address, size_bytes, config.max_payload_bytes, [&](std::uint64_t, std::uint32_t payload) {
    bytes += wire_bytes(TlpKind::mwr, payload, config.address64, config.ecrc);
  });
  return bytes;
}

std::uint64_t dma_read_request_wire_bytes(const LinkConfig& config, std::uint64_t address, std::uint64_t size_bytes) {
  return read_request_count(address, size_bytes, config.max_read_request_bytes) *
         wire_bytes(TlpKind::mrd, 0, config.address64, config.ecrc);
}

std::uint64_t dma_read_completion_wire_bytes(const LinkConfig& config, std::uint64_t address,
                                             std::uint64_t size_bytes) {
  std::uint64_t bytes = 0;
  for_each_read_request(address, size_bytes, config.max_read_request_bytes,
                        [&](std::uint64_t request_address, std::uint32_t request_bytes) {
                          bytes += completion_wire_bytes(config, request_address, request_bytes);
                        });
  return bytes;
}

double dma_write_bandwidth_gbps(const LinkConfig& config, std::uint64_t size_bytes) {
  assert(size_bytes > 0);
  return static_cast<double>(size_bytes) * tlp_bandwidth_gbps(config) /
         static_cast<double>(dma_write_wire_bytes(config, 0, size_bytes));
}

double dma_read_bandwidth_gbps(const LinkConfig& config, std::uint64_t size_bytes) {
  assert(size_bytes > 0);
  // Both directions have the same TLP bandwidth; whichever carries more bytes per read sets the read rate.
  const std::uint64_t busiest = std::max(dma_read_completion_wire_bytes(config, 0, size_bytes),
                                         dma_read_request_wire_bytes(config, 0, size_bytes));
  return static_cast<double>(size_bytes) * tlp_bandwidth_gbps(config) / static_cast<double>(busiest);
}

double dma_read_write_bandwidth_gbps(const LinkConfig& config, std::uint64_t size_bytes) {
  assert(size_bytes > 0);
  const std::uint64_t device_to_host =
      dma_write_wire_bytes(config, 0, size_bytes) + dma_read_request_wire_bytes(config, 0, size_bytes);
  const std::uint64_t host_to_device = dma_read_completion_wire_bytes(config, 0, size_bytes);
  return static_cast<double>(size_bytes) * tlp_bandwidth_gbps(config) /
         static_cast<double>(std::max(device_to_host, host_to_device));
}

double message_rate_bound_mmsg_per_s(double link_gbps, double bytes_per_message) {
  assert(bytes_per_message > 0);
  // Gb/s / 8 = GB/s = 10^3 MB/s.
  return link_gbps * 1e3 / 8.0 / bytes_per_message;
}

} // namespace ib::pcie
