// The parameters of a PCIe link between an HCA and its root port (model "pcie-link") and of the host behind the
// root complex (model "host"), docs/scenario-reference.md: plain aggregates, one table each, defaults and sources in
// topologies/hardware/<profile>.json. validate() checks the rules a table cannot: PCIe's legal encodings (MPS,
// MRRS, RCB), names of generations and widths, and credits that cannot carry one largest TLP.
#pragma once

#include <cstdint>
#include <string>

#include "models/pcie/flow_control.h"
#include "sim/params.h"
#include "sim/profile.h"
#include "sim/time.h"

namespace ib::pcie {

/// One PCIe link. Credits are what each end advertises at initialisation (InitFC), 0 = infinite.
struct LinkParams {
  std::string generation;                       ///< "gen1" .. "gen5" (parse_generation)
  std::string width;                            ///< "x1" .. "x16" (parse_width)
  std::uint32_t max_payload_bytes;              ///< MPS: 128, 256, ..., 4096
  std::uint32_t max_read_request_bytes;         ///< MRRS: 128, 256, ..., 4096
  std::uint32_t read_completion_boundary_bytes; ///< RCB: 64 or 128
  std::string completions_split_at;             ///< "rcb" or "mps" (CompletionSplit)
  bool ecrc;                                    ///< TLPs carry a 4 B ECRC digest
  std::uint32_t ack_interval_symbols;           ///< symbol times per ACK DLLP (spec's recommended AckNak latency)
  std::uint32_t update_fc_interval_symbols;     ///< symbol times per UpdateFC DLLP (spec's recommended interval)
  std::uint32_t device_ph_credits;
  std::uint32_t device_pd_credits;
  std::uint32_t device_nph_credits;
  std::uint32_t device_npd_credits;
  std::uint32_t device_cplh_credits;
  std::uint32_t device_cpld_credits;
  std::uint32_t root_port_ph_credits;
  std::uint32_t root_port_pd_credits;
  std::uint32_t root_port_nph_credits;
  std::uint32_t root_port_npd_credits;
  std::uint32_t root_port_cplh_credits;
  std::uint32_t root_port_cpld_credits;
  std::uint32_t device_tags; ///< non-posted requests the device may have outstanding (tags)
  sim::Time one_way_latency; ///< link + both PHYs, one way, excluding serialization
};

/// The host behind the root complex: memory and root-complex latencies, and the CPU side of MMIO.
struct HostParams {
  sim::Time memory_read_latency;       ///< a DMA read's host-side time before data returns, size-independent part
  double memory_read_ns_per_byte;      ///< size-dependent part of the same, per byte read
  sim::Time memory_write_latency;      ///< a posted DMA write's time from the root complex to visibility
  sim::Time root_complex_latency;      ///< root port and I/O hub pipeline, once per DMA transaction
  sim::Time remote_numa_penalty;       ///< added when the buffer is on the other socket
  std::uint32_t mmio_doorbell_bytes;   ///< a doorbell write: one MWr of this payload
  std::uint32_t write_combining_bytes; ///< a write-combining buffer flush: one MWr of at most this payload
  sim::Time mmio_write_cpu_cost;       ///< CPU time of one posted MMIO write (store + flush)
  bool infinite_completion_credits;    ///< the root complex advertises infinite CplH/CplD

  // The verbs driver on the CPU (user space, polling).
  sim::Time post_send_cpu_cost;   ///< one post_send call: lock, doorbell record, barriers
  sim::Time wqe_build_cpu_cost;   ///< one send WQE written into the send queue
  double inline_copy_ns_per_byte; ///< copying inline data into the WQE
  sim::Time post_recv_cpu_cost;   ///< one receive WQE written and its doorbell record updated
  sim::Time poll_cq_cpu_cost;     ///< one poll_cq call that finds nothing
  sim::Time cqe_read_cpu_cost;    ///< each CQE a poll_cq call returns
};

/// The tables (models "pcie-link" and "host"): parsing, --set overrides, digest and `ibnetsim params`.
const sim::ParamTable<LinkParams>& link_param_table();
const sim::ParamTable<HostParams>& host_param_table();
/// PCIe slot and host profiles as `ibnetsim params` and the runner's report see them.
extern const sim::ProfileModel link_profile_model;
extern const sim::ProfileModel host_profile_model;

/// "" if `params` are consistent, else the broken rule as "key: expected ..., got ...".
std::string validate(const LinkParams& params);
std::string validate(const HostParams& params);
/// Rules across a link and its host: completion credits as the host says, a write-combining flush fits one MWr.
std::string validate(const LinkParams& link, const HostParams& host);

/// Which end of a link advertised a credit.
enum class LinkEnd : std::uint8_t { device, root_port };
/// The credits of `type` that `end` advertises (0 = infinite).
std::uint32_t advertised_credits(const LinkParams& params, LinkEnd end, CreditType type);

} // namespace ib::pcie
