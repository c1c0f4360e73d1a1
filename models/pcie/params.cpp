#include "models/pcie/params.h"

#include "models/pcie/pcie_rate.h"
#include "models/pcie/tlp.h"

namespace ib::pcie {

const sim::ParamTable<LinkParams>& link_param_table() {
  // Credit ranges are the largest finite advertisements the modular gate allows (flow_control.h).
  constexpr double max_header = 127;
  constexpr double max_data = 2047;
  static const sim::ParamTable<LinkParams> table(
      "pcie-link",
      {
          {"generation", &LinkParams::generation, "text", "PCIe generation: gen1, gen2, gen3, gen4 or gen5", 0, 0},
          {"width", &LinkParams::width, "text", "link width: x1, x2, x4, x8 or x16", 0, 0},
          {"max_payload_bytes", &LinkParams::max_payload_bytes, "bytes",
           "Max_Payload_Size (MPS): largest MWr/CplD payload, 128..4096, a power of two", 128, 4096},
          {"max_read_request_bytes", &LinkParams::max_read_request_bytes, "bytes",
           "Max_Read_Request_Size (MRRS): largest MRd, 128..4096, a power of two", 128, 4096},
          {"read_completion_boundary_bytes", &LinkParams::read_completion_boundary_bytes, "bytes",
           "Read Completion Boundary (RCB): completions split only at addresses aligned to it, 64 or 128", 64, 128},
          {"completions_split_at", &LinkParams::completions_split_at, "text",
           "how the completer splits read data: rcb (every RCB boundary) or mps (fewest CplDs of at most MPS)", 0, 0},
          {"ecrc", &LinkParams::ecrc, "bool", "TLPs carry the optional 4 B end-to-end CRC", 0, 0},
          {"ack_interval_symbols", &LinkParams::ack_interval_symbols, "symbol times",
           "one ACK DLLP per this many symbol times (spec's recommended AckNak latency limit)", 1, 100000},
          {"update_fc_interval_symbols", &LinkParams::update_fc_interval_symbols, "symbol times",
           "one UpdateFC DLLP per this many symbol times (spec's recommended UpdateFC interval)", 1, 100000},
          {"device_ph_credits", &LinkParams::device_ph_credits, "credits",
           "posted header credits the device advertises (1 per TLP; 0 = infinite)", 0, max_header},
          {"device_pd_credits", &LinkParams::device_pd_credits, "credits",
           "posted data credits the device advertises (16 B each; 0 = infinite)", 0, max_data},
          {"device_nph_credits", &LinkParams::device_nph_credits, "credits",
           "non-posted header credits the device advertises (0 = infinite)", 0, max_header},
          {"device_npd_credits", &LinkParams::device_npd_credits, "credits",
           "non-posted data credits the device advertises (0 = infinite)", 0, max_data},
          {"device_cplh_credits", &LinkParams::device_cplh_credits, "credits",
           "completion header credits the device advertises (0 = infinite)", 0, max_header},
          {"device_cpld_credits", &LinkParams::device_cpld_credits, "credits",
           "completion data credits the device advertises (0 = infinite)", 0, max_data},
          {"root_port_ph_credits", &LinkParams::root_port_ph_credits, "credits",
           "posted header credits the root port advertises (0 = infinite)", 0, max_header},
          {"root_port_pd_credits", &LinkParams::root_port_pd_credits, "credits",
           "posted data credits the root port advertises (0 = infinite)", 0, max_data},
          {"root_port_nph_credits", &LinkParams::root_port_nph_credits, "credits",
           "non-posted header credits the root port advertises (0 = infinite)", 0, max_header},
          {"root_port_npd_credits", &LinkParams::root_port_npd_credits, "credits",
           "non-posted data credits the root port advertises (0 = infinite)", 0, max_data},
          {"root_port_cplh_credits", &LinkParams::root_port_cplh_credits, "credits",
           "completion header credits the root port advertises (0 = infinite)", 0, max_header},
          {"root_port_cpld_credits", &LinkParams::root_port_cpld_credits, "credits",
           "completion data credits the root port advertises (0 = infinite)", 0, max_data},
          {"device_tags", &LinkParams::device_tags, "count",
           "non-posted requests (tags) the device may have outstanding: 32, 256 extended, up to 768 10-bit", 1, 768},
          {"one_way_latency_ns", &LinkParams::one_way_latency, "ns",
           "one-way latency of the link and both PHYs, excluding serialization", 0, 1e6},
      });
  return table;
}

const sim::ParamTable<HostParams>& host_param_table() {
  static const sim::ParamTable<HostParams> table(
      "host",
      {
          {"memory_read_latency_ns", &HostParams::memory_read_latency, "ns",
           "host-side time of a DMA read before its data returns, the size-independent part", 0, 1e6},
          {"memory_read_ns_per_byte", &HostParams::memory_read_ns_per_byte, "ns/B",
           "host-side time of a DMA read per byte read", 0, 100},
          {"memory_write_latency_ns", &HostParams::memory_write_latency, "ns",
           "time from a posted DMA write leaving the root complex to its data being visible in memory", 0, 1e6},
          {"root_complex_latency_ns", &HostParams::root_complex_latency, "ns",
           "root port and I/O hub pipeline, once per DMA transaction", 0, 1e6},
          {"remote_numa_penalty_ns", &HostParams::remote_numa_penalty, "ns",
           "added to a DMA whose buffer is on the other socket", 0, 1e6},
          {"mmio_doorbell_bytes", &HostParams::mmio_doorbell_bytes, "bytes",
           "payload of a doorbell write (one MWr): a power of two, 4..64", 4, 64},
          {"write_combining_bytes", &HostParams::write_combining_bytes, "bytes",
           "payload of one write-combining buffer flush (one MWr): a power of two, 64..4096", 64, 4096},
          {"mmio_write_cpu_cost_ns", &HostParams::mmio_write_cpu_cost, "ns",
           "CPU time of one posted MMIO write (store and flush)", 0, 1e6},
          {"infinite_completion_credits", &HostParams::infinite_completion_credits, "bool",
           "the root complex advertises infinite completion credits (CplH, CplD)", 0, 0},
          {"post_send_cpu_cost_ns", &HostParams::post_send_cpu_cost, "ns",
           "CPU time of one post_send call besides its WQEs and MMIO writes: lock, doorbell record, barriers", 0, 1e6},
          {"wqe_build_cpu_cost_ns", &HostParams::wqe_build_cpu_cost, "ns",
           "CPU time to write one send WQE into the send queue, inline data aside", 0, 1e6},
          {"inline_copy_ns_per_byte", &HostParams::inline_copy_ns_per_byte, "ns/B",
           "CPU time per byte of inline data copied into a WQE", 0, 100},
          {"post_recv_cpu_cost_ns", &HostParams::post_recv_cpu_cost, "ns",
           "CPU time of one receive WQE written and its doorbell record updated", 0, 1e6},
          {"poll_cq_cpu_cost_ns", &HostParams::poll_cq_cpu_cost, "ns",
           "CPU time of one poll_cq call that finds no completion", 0, 1e6},
          {"cqe_read_cpu_cost_ns", &HostParams::cqe_read_cpu_cost, "ns", "CPU time for each CQE a poll_cq call returns",
           0, 1e6},
      });
  return table;
}

namespace {

constexpr bool power_of_two(std::uint32_t n) {
  return n != 0 && (n & (n - 1)) == 0;
}

/// The data credits of `key` must hold one largest payload unless infinite (PCIe Base Spec r5.0 §2.6.1 minimum
/// initial advertisements: PD and CplD at least MPS / 16).
std::string check_payload_credits(std::string_view key, std::uint32_t credits, std::uint32_t mps) {
  if (credits == 0 || credits >= data_credits(mps))
    return "";
  return std::string(key) + ": expected 0 (infinite) or at least " + std::to_string(data_credits(mps)) + " (one " +
         std::to_string(mps) + " B payload), got " + std::to_string(credits);
}

} // namespace

std::string validate(const LinkParams& params) {
  if (!parse_generation(params.generation))
    return "generation: expected gen1, gen2, gen3, gen4 or gen5, got \"" + params.generation + "\"";
  if (!parse_width(params.width))
    return "width: expected x1, x2, x4, x8 or x16, got \"" + params.width + "\"";
  if (!valid_max_size(params.max_payload_bytes))
    return "max_payload_bytes: expected 128, 256, 512, 1024, 2048 or 4096, got " +
           std::to_string(params.max_payload_bytes);
  if (!valid_max_size(params.max_read_request_bytes))
    return "max_read_request_bytes: expected 128, 256, 512, 1024, 2048 or 4096, got " +
           std::to_string(params.max_read_request_bytes);
  if (!valid_rcb(params.read_completion_boundary_bytes))
    return "read_completion_boundary_bytes: expected 64 or 128, got " +
           std::to_string(params.read_completion_boundary_bytes);
  if (!parse_completion_split(params.completions_split_at))
    return "completions_split_at: expected \"rcb\" or \"mps\", got \"" + params.completions_split_at + "\"";
  const std::uint32_t mps = params.max_payload_bytes;
  for (const auto& [key, credits] :
       {std::pair<std::string_view, std::uint32_t>{"device_pd_credits", params.device_pd_credits},
        {"device_cpld_credits", params.device_cpld_credits},
        {"root_port_pd_credits", params.root_port_pd_credits},
        {"root_port_cpld_credits", params.root_port_cpld_credits}}) {
    std::string problem = check_payload_credits(key, credits, mps);
    if (!problem.empty())
      return problem;
  }
  return "";
}

std::string validate(const HostParams& params) {
  if (!power_of_two(params.mmio_doorbell_bytes))
    return "mmio_doorbell_bytes: expected a power of two, got " + std::to_string(params.mmio_doorbell_bytes);
  if (!power_of_two(params.write_combining_bytes))
    return "write_combining_bytes: expected a power of two, got " + std::to_string(params.write_combining_bytes);
  if (params.mmio_doorbell_bytes > params.write_combining_bytes)
    return "mmio_doorbell_bytes: expected at most write_combining_bytes (" +
           std::to_string(params.write_combining_bytes) + "), got " + std::to_string(params.mmio_doorbell_bytes);
  return "";
}

std::string validate(const LinkParams& link, const HostParams& host) {
  for (const auto& [key, credits] :
       {std::pair<std::string_view, std::uint32_t>{"root_port_cplh_credits", link.root_port_cplh_credits},
        {"root_port_cpld_credits", link.root_port_cpld_credits}}) {
    if (host.infinite_completion_credits && credits != 0)
      return std::string(key) + ": expected 0 (infinite, as the host's infinite_completion_credits says), got " +
             std::to_string(credits);
    if (!host.infinite_completion_credits && credits == 0)
      return std::string(key) +
             ": expected finite credits (the host's infinite_completion_credits is false), got 0 (infinite)";
  }
  if (host.write_combining_bytes > link.max_payload_bytes)
    return "write_combining_bytes: expected at most the link's max_payload_bytes (" +
           std::to_string(link.max_payload_bytes) + "), got " + std::to_string(host.write_combining_bytes);
  return "";
}

std::uint32_t advertised_credits(const LinkParams& params, LinkEnd end, CreditType type) {
  const bool device = end == LinkEnd::device;
  switch (type) {
  case CreditType::ph:
    return device ? params.device_ph_credits : params.root_port_ph_credits;
  case CreditType::pd:
    return device ? params.device_pd_credits : params.root_port_pd_credits;
  case CreditType::nph:
    return device ? params.device_nph_credits : params.root_port_nph_credits;
  case CreditType::npd:
    return device ? params.device_npd_credits : params.root_port_npd_credits;
  case CreditType::cplh:
    return device ? params.device_cplh_credits : params.root_port_cplh_credits;
  case CreditType::cpld:
    return device ? params.device_cpld_credits : params.root_port_cpld_credits;
  }
  return 0;
}

const sim::ProfileModel link_profile_model = sim::profile_model<LinkParams, &link_param_table, &validate>(
    "pcie-link", "PCIe link: generation, width, MPS/MRRS/RCB, DLLP rates, credits, tags (models/pcie)");
const sim::ProfileModel host_profile_model = sim::profile_model<HostParams, &host_param_table, &validate>(
    "host", "host: memory and root-complex latencies, MMIO, verbs-driver CPU costs (models/pcie)");

} // namespace ib::pcie
