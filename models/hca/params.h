// An HCA's parameters (docs/scenario-reference.md): one table, defaults in topologies/hardware/<profile>.json: its IB
// ports, the PCIe slot and host it sits in, the layout of its queues in host memory (mlx5's), its limits, and the costs
// of its pipelines (send engines, receive engines, completion generation).
#pragma once

#include <cstdint>
#include <string>

#include "sim/params.h"
#include "sim/profile.h"
#include "sim/time.h"

namespace ib::hca {

struct Params {
  std::uint32_t port_count;                  ///< IB ports, numbered 1..port_count
  std::string link_widths;                   ///< widths its ports support, e.g. "1x,4x" (link::parse_width_set)
  std::string link_speeds;                   ///< speeds its ports support, e.g. "SDR,QDR,FDR,EDR"
  std::string device_ids;                    ///< NodeInfo.DeviceIDs that identify it in ibnetdiscover output
  std::uint32_t vl_cap;                      ///< data VLs per port (PortInfo.VLCap): 1, 2, 4, 8 or 15
  std::uint32_t input_buffer_bytes_per_port; ///< receive buffer per port, split evenly over operational data VLs
  std::uint32_t vl15_buffer_packets;         ///< VL15 receive slots per port
  sim::Time flow_control_refresh;            ///< longest wait before a changed FCTBS/FCCL is sent
  std::uint32_t xmit_wait_tick_symbols;      ///< PortXmitWait tick: symbol times (PortSamplesControl.Tick + 1)

  // Where the adapter sits.
  std::string pcie_link; ///< pcie-link profile of its slot
  std::string host;      ///< host profile (memory, root complex, CPU costs) of the machine

  // Queues in host memory (mlx5 layout).
  std::uint32_t wqe_basic_block_bytes;  ///< send WQEs take whole basic blocks (mlx5: 64 B)
  std::uint32_t recv_wqe_bytes;         ///< one receive WQE (one scatter entry, mlx5: 16 B)
  std::uint32_t cqe_bytes;              ///< one completion queue entry (64 B)
  std::uint32_t blueflame_buffer_bytes; ///< largest WQE the driver may copy through BlueFlame
  std::uint32_t max_inline_data_bytes;  ///< largest max_inline_data a QP may ask for
  std::uint32_t max_qp_wr;              ///< deepest send or receive queue
  std::uint32_t max_qp_rd_atom;         ///< most READs/atomics a QP may have outstanding as initiator
  std::uint32_t max_qp_dest_rd_atom;    ///< most READs/atomics a QP serves at once as responder

  // Pipelines.
  std::uint32_t send_engines;             ///< WQE processing units; any takes a QP's next item, one at a time per QP
  sim::Time doorbell_processing;          ///< doorbell or BlueFlame arrival until its QP's engine acts on it
  sim::Time wqe_processing;               ///< one WQE parsed and scheduled by its engine
  std::uint32_t qp_context_cache_entries; ///< QP contexts held on the adapter (LRU)
  std::uint32_t qp_context_bytes;         ///< one QP context, read from host memory on a cache miss
  std::uint32_t qp_context_max_reads;     ///< context reads in flight at once
  sim::Time tx_packet_processing;         ///< one packet's headers built before it may go to the port
  std::uint32_t tx_payload_buffer_bytes;  ///< payload fetched ahead of the wire, per port
  std::uint32_t recv_wqe_cache_entries;   ///< receive WQEs the HCA holds ahead per receive queue
  std::uint32_t receive_engines;          ///< received-packet processing units, as send_engines
  std::uint32_t
      out_of_order_window_packets;   ///< RC packets a QP with QpCaps::out_of_order keeps ahead of a gap; 0 = none
  sim::Time rx_packet_processing;    ///< one received packet checked and matched to its QP
  sim::Time cqe_generation;          ///< one CQE built before its DMA write
  std::uint32_t atomic_lock_buckets; ///< atomics on addresses equal in log2(buckets) low bits serialize
  sim::Time atomic_processing;       ///< the atomic unit's time per atomic, one at a time
  std::uint32_t ack_request_interval_packets; ///< AckReq also every this many packets of a message; 0 = last only

  // The fabric-level host model (models/endpoint): the whole host as three fixed latencies.
  sim::Time endpoint_send_latency;       ///< post to the first bit of the message on the wire
  sim::Time endpoint_ack_latency;        ///< last bit of a message in to its ACK's first bit out
  sim::Time endpoint_completion_latency; ///< last bit of the ACK in to the completion seen by the program
};

const sim::ParamTable<Params>& param_table();
/// The HCA's profiles as `ibnetsim params` and the runner's report see them.
extern const sim::ProfileModel profile_model;

/// "" if `params` are consistent, else the broken rule, key first.
std::string validate(const Params& params);

} // namespace ib::hca
