#include "models/hca/params.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <vector>

#include "models/link/link.h"
#include "models/link/port_params.h"
#include "sim/profile.h"

namespace ib::hca {

const sim::ParamTable<Params>& param_table() {
  static const sim::ParamTable<Params> table(
      "hca",
      link::with_port_fields<Params>(
          {{"port_count", &Params::port_count, "count", "IB ports, numbered 1..port_count", 1, 2}},
          {
              {"pcie_link", &Params::pcie_link, "text", "pcie-link profile of the adapter's PCIe slot", 0, 0},
              {"host", &Params::host, "text", "host profile of the machine (memory, root complex, CPU costs)", 0, 0},
              {"wqe_basic_block_bytes", &Params::wqe_basic_block_bytes, "bytes",
               "send WQEs occupy whole basic blocks of this size (mlx5: 64), a power of two", 16, 1024},
              {"recv_wqe_bytes", &Params::recv_wqe_bytes, "bytes",
               "one receive WQE with one scatter entry (mlx5: 16), a power of two", 16, 1024},
              {"cqe_bytes", &Params::cqe_bytes, "bytes", "one completion queue entry (64 or 128), a power of two", 32,
               128},
              {"blueflame_buffer_bytes", &Params::blueflame_buffer_bytes, "bytes",
               "largest WQE the driver copies through BlueFlame (MMIO), a multiple of wqe_basic_block_bytes", 64, 4096},
              {"max_inline_data_bytes", &Params::max_inline_data_bytes, "bytes",
               "largest max_inline_data a QP may ask for", 0, 4096},
              {"max_qp_wr", &Params::max_qp_wr, "count", "deepest send or receive queue (work requests)", 1, 4194304},
              {"max_qp_rd_atom", &Params::max_qp_rd_atom, "count",
               "RDMA READs and atomics a QP may have outstanding as initiator", 1, 255},
              {"max_qp_dest_rd_atom", &Params::max_qp_dest_rd_atom, "count",
               "RDMA READs and atomics a QP serves at once as responder", 1, 255},
              {"send_engines", &Params::send_engines, "count",
               "WQE processing units; any takes a QP's next WQE or packet, one at a time per QP", 1, 1024},
              {"doorbell_processing_ns", &Params::doorbell_processing, "ns",
               "from a doorbell or BlueFlame write reaching the adapter until its QP's engine acts on it", 0, 1e6},
              {"wqe_processing_ns", &Params::wqe_processing, "ns", "engine time to parse and schedule one WQE", 0, 1e6},
              {"qp_context_cache_entries", &Params::qp_context_cache_entries, "count",
               "QP contexts the adapter holds on chip, least recently used out first; a QP whose context is not held "
               "waits for a DMA read of it",
               1, 16777216},
              {"qp_context_bytes", &Params::qp_context_bytes, "bytes",
               "one QP context as read from host memory on a miss", 16, 4096},
              {"qp_context_max_reads", &Params::qp_context_max_reads, "count",
               "QP-context reads the adapter has in flight at once; 1 serializes misses", 1, 1024},
              {"tx_packet_processing_ns", &Params::tx_packet_processing, "ns",
               "engine time to build one packet's headers before it may go to the port", 0, 1e6},
              {"tx_payload_buffer_bytes", &Params::tx_payload_buffer_bytes, "bytes",
               "payload fetched from host memory ahead of the wire, per port; at least one 4096 B MTU", 4096, 1e9},
              {"recv_wqe_cache_entries", &Params::recv_wqe_cache_entries, "count",
               "receive WQEs the adapter reads ahead and holds per receive queue (QP or SRQ); refilled in one DMA read "
               "when half are used",
               1, 65536},
              {"receive_engines", &Params::receive_engines, "count",
               "received-packet processing units; any takes a QP's next packet, one at a time per QP", 1, 1024},
              {"out_of_order_window_packets", &Params::out_of_order_window_packets, "count",
               "RC packets a QP created with out-of-order data placement (QpCaps::out_of_order, as mlx5dv's "
               "MLX5DV_QP_CREATE_OOO_DP) takes ahead of a missing PSN; 0: the adapter cannot, every gap is a sequence "
               "error",
               0, 65536},
              {"rx_packet_processing_ns", &Params::rx_packet_processing, "ns",
               "engine time to check one received packet and match it to its QP", 0, 1e6},
              {"cqe_generation_ns", &Params::cqe_generation, "ns", "time to build one CQE before its DMA write", 0,
               1e6},
              {"atomic_lock_buckets", &Params::atomic_lock_buckets, "count",
               "atomics whose addresses agree in the low log2(buckets) bits serialize; a power of two, 1 = all", 1,
               1048576},
              {"atomic_processing_ns", &Params::atomic_processing, "ns",
               "the adapter's atomic unit: time per atomic, one atomic at a time, before its read-modify-write", 0,
               1e6},
              {"ack_request_interval_packets", &Params::ack_request_interval_packets, "count",
               "AckReq set also on every this many packets of a message (0 = on its last packet only)", 0, 8388608},
              {"endpoint_send_latency_ns", &Params::endpoint_send_latency, "ns",
               "host model \"fabric\": from a post to the first bit of the message's first packet on the wire", 0, 1e6},
              {"endpoint_ack_latency_ns", &Params::endpoint_ack_latency, "ns",
               "host model \"fabric\": from a message's last bit in to its ACK's first bit out", 0, 1e6},
              {"endpoint_completion_latency_ns", &Params::endpoint_completion_latency, "ns",
               "host model \"fabric\": from an ACK's last bit in to the completion seen by the program", 0, 1e6},
          }));
  return table;
}

namespace {

constexpr bool power_of_two(std::uint32_t n) {
  return n != 0 && (n & (n - 1)) == 0;
}

/// The shipped profiles of `model` (topologies/hardware), sorted by name, for error messages.
std::string profile_list(std::string_view model) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& file : std::filesystem::directory_iterator(sim::find_profile_directory().value_or(""), error)) {
    if (file.path().extension() != ".json") {
      continue;
    }
    try {
      if (sim::load_profile(file.path().string()).model == model) {
        names.push_back(file.path().stem().string());
      }
    } catch (const sim::InputError&) {
      // A broken file is reported when it is named, not while listing.
    }
  }
  std::sort(names.begin(), names.end());
  std::string text;
  for (const std::string& name : names) {
    text += (text.empty() ? "" : ", ") + name;
  }
  return text;
}

/// "" if `name` (a bare profile name or a path, as sim::profile_path takes) is a profile of `model`, else the
/// broken rule under `key`: "pcie_link: expected a pcie-link profile (gen3-x16, ...), got "x", no such profile".
std::string check_profile_name(std::string_view key, const std::string& name, std::string_view model) {
  const std::string path = sim::profile_path(name);
  std::error_code error;
  std::string what;
  if (name.empty() || !std::filesystem::is_regular_file(path, error)) {
    what = "no such profile";
  } else {
    try {
      const sim::Profile profile = sim::load_profile(path);
      if (profile.model == model) {
        return "";
      }
      what = (profile.model == "hca" ? "an " : "a ") + profile.model + " profile";
    } catch (const sim::InputError&) {
      what = "not a readable profile (" + path + ")";
    }
  }
  return std::string(key) + ": expected a " + std::string(model) + " profile (" + profile_list(model) + "), got \"" +
         name + "\", " + what;
}

} // namespace

std::string validate(const Params& params) {
  std::string problem = link::validate_port_parameters(params.link_widths, params.link_speeds, params.vl_cap,
                                                       params.input_buffer_bytes_per_port);
  if (problem.empty())
    problem = link::validate_device_ids(params.device_ids);
  if (!problem.empty())
    return problem;
  for (const auto& [key, bytes] :
       {std::pair<std::string_view, std::uint32_t>{"wqe_basic_block_bytes", params.wqe_basic_block_bytes},
        {"recv_wqe_bytes", params.recv_wqe_bytes},
        {"cqe_bytes", params.cqe_bytes}}) {
    if (!power_of_two(bytes))
      return std::string(key) + ": expected a power of two, got " + std::to_string(bytes);
  }
  if (params.blueflame_buffer_bytes % params.wqe_basic_block_bytes != 0)
    return "blueflame_buffer_bytes: expected a multiple of wqe_basic_block_bytes (" +
           std::to_string(params.wqe_basic_block_bytes) + "), got " + std::to_string(params.blueflame_buffer_bytes);
  if (!power_of_two(params.atomic_lock_buckets))
    return "atomic_lock_buckets: expected a power of two, got " + std::to_string(params.atomic_lock_buckets);
  problem = check_profile_name("pcie_link", params.pcie_link, "pcie-link");
  if (!problem.empty())
    return problem;
  return check_profile_name("host", params.host, "host");
}

const sim::ProfileModel profile_model = sim::profile_model<Params, &param_table, &validate>(
    "hca", "HCA: IB ports, PCIe slot and host, queue formats, limits, pipeline costs (models/hca)");

} // namespace ib::hca
