// An HCA's parameters (DESIGN §5): one table, defaults in topologies/hardware/<profile>.json. For now the IB
// port side, which the fabric needs to cable and credit an HCA; the queue-pair, PCIe-facing and pipeline costs of
// the HCA model join this table when that model lands.
#pragma once

#include <cstdint>
#include <string>

#include "sim/params.h"
#include "sim/time.h"

namespace ib::hca {

struct Params {
  std::uint32_t port_count;                  ///< IB ports, numbered 1..port_count
  std::string link_widths;                   ///< widths its ports support, e.g. "1x,4x" (link::parse_width_set)
  std::string link_speeds;                   ///< speeds its ports support, e.g. "SDR,QDR,FDR,EDR"
  std::uint32_t vl_cap;                      ///< data VLs per port (PortInfo.VLCap): 1, 2, 4, 8 or 15
  std::uint32_t input_buffer_bytes_per_port; ///< receive buffer per port, split evenly over operational data VLs
  std::uint32_t vl15_buffer_packets;         ///< VL15 receive slots per port
  sim::Time flow_control_refresh;            ///< longest wait before a changed FCTBS/FCCL is sent
};

const sim::ParamTable<Params>& param_table();

/// "" if `params` are consistent, else the broken rule, key first.
std::string validate(const Params& params);

} // namespace ib::hca
