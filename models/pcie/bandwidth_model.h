// pcie-bench's analytic PCIe bandwidth model (Neugebauer et al., "Understanding PCIe performance for end host
// networking", SIGCOMM 2018; its companion code pcie-model, model/pcie.py and model/mem_bw.py), reimplemented:
// the usable TLP bandwidth per direction after ACK and UpdateFC DLLPs at the spec's recommended rates and SKP
// ordered sets, and the payload bandwidth of back-to-back DMA reads and writes of one size. It is an analytic
// reference for the event-driven PCIe model (not simulated time), so it works in doubles, in Gb/s. Left out, as
// in pcie-model: latency-bound throughput (tags × MRRS / round trip), credit stalls, replays and power states.
#pragma once

#include <cstdint>

#include "models/pcie/params.h"
#include "models/pcie/pcie_rate.h"
#include "models/pcie/tlp.h"
#include "sim/time.h"

namespace ib::pcie {

/// A link as the analytic models see it (LinkParams parsed, plus the addressing mode).
struct LinkConfig {
  Generation generation;
  Width width;
  std::uint32_t max_payload_bytes;
  std::uint32_t max_read_request_bytes;
  std::uint32_t read_completion_boundary_bytes;
  CompletionSplit completions_split_at;
  bool ecrc;
  /// Requests carry 64-bit addresses (4 DW headers), as for DMA buffers above 4 GiB. pcie-model takes this per
  /// configuration; the event-driven model decides per TLP from the address (needs_4dw_header).
  bool address64;
  std::uint32_t ack_interval_symbols;
  std::uint32_t update_fc_interval_symbols;
  sim::Time one_way_latency;
};

/// `params` as a LinkConfig with 64-bit addressing. Precondition: validate(params) is "".
LinkConfig link_config(const LinkParams& params);

/// The spec's recommended ACK latency limit and UpdateFC interval in symbol times (PCIe Base Spec r5.0 tables
/// 3-7..3-9 and 2-46..2-48, as pcie-model encodes them; it uses the 8 GT/s values for 16 and 32 GT/s and the same
/// numbers for both). Precondition: valid_max_size(mps).
std::uint32_t recommended_ack_interval_symbols(Generation generation, Width width, std::uint32_t mps);
std::uint32_t recommended_update_fc_interval_symbols(Generation generation, Width width, std::uint32_t mps);
/// A LinkConfig with the recommended intervals, no ECRC, 64-bit addressing and zero latency.
LinkConfig recommended_link_config(Generation generation, Width width, std::uint32_t mps, std::uint32_t mrrs,
                                   std::uint32_t rcb, CompletionSplit split);

/// SKP ordered sets for clock compensation: 4 B per 1538 (pcie-model SKIP_Length, SKIP_Interval).
inline constexpr std::uint32_t skp_ordered_set_bytes = 4;
inline constexpr std::uint32_t skp_interval_symbols = 1538;

/// The data rate after line coding, Gb/s (data_rate() as a double).
double raw_bandwidth_gbps(const LinkConfig& config);
/// Share of the link taken by DLLPs and SKP ordered sets: 8/ack_interval + 8/update_fc_interval + 4/1538. Like
/// pcie-model, it counts the intervals' symbol times as bytes of link traffic.
double dllp_overhead_fraction(const LinkConfig& config);
/// Bandwidth left for TLPs per direction, Gb/s: raw × (1 − dllp_overhead_fraction) (pcie-model TLP_bw).
double tlp_bandwidth_gbps(const LinkConfig& config);

/// Wire bytes of a DMA write of `size_bytes` at `address`: its MWr TLPs (for_each_write_tlp), device to host.
std::uint64_t dma_write_wire_bytes(const LinkConfig& config, std::uint64_t address, std::uint64_t size_bytes);
/// Wire bytes of a DMA read's MRd requests (for_each_read_request), device to host.
std::uint64_t dma_read_request_wire_bytes(const LinkConfig& config, std::uint64_t address, std::uint64_t size_bytes);
/// Wire bytes of a DMA read's CplDs, host to device: each request's completions (for_each_completion).
std::uint64_t dma_read_completion_wire_bytes(const LinkConfig& config, std::uint64_t address, std::uint64_t size_bytes);

/// Payload bandwidth of back-to-back DMA writes of `size_bytes` (4 KiB-aligned, as pcie-model assumes), Gb/s:
/// size × TLP bandwidth / write wire bytes (pcie-model mem_bw.write).
double dma_write_bandwidth_gbps(const LinkConfig& config, std::uint64_t size_bytes);
/// Payload bandwidth of back-to-back DMA reads of `size_bytes` (aligned), Gb/s: the completions fill the host-to-
/// device direction unless the requests fill the other first: size × TLP bandwidth / max(completion bytes, request
/// bytes) (pcie-model mem_bw.read).
double dma_read_bandwidth_gbps(const LinkConfig& config, std::uint64_t size_bytes);
/// Payload bandwidth of each of a DMA read and a DMA write of `size_bytes` running together, Gb/s: writes and read
/// requests share the device-to-host direction (pcie-model mem_bw.read_write).
double dma_read_write_bandwidth_gbps(const LinkConfig& config, std::uint64_t size_bytes);

/// Upper bound on a message rate when each message moves `bytes_per_message` over a direction of `link_gbps`,
/// in millions of messages per second.
double message_rate_bound_mmsg_per_s(double link_gbps, double bytes_per_message);

} // namespace ib::pcie
