// The port-side parameters every node with IB ports has (switches and HCAs), in one place: each node's parameter
// table starts with its own port count and then takes these, so both read, check and list them alike.
#pragma once

#include <vector>

#include "sim/params.h"

namespace ib::link {

/// Fields of a node's Params type `P`, which has members of these names (see sw::Params, hca::Params).
template <class P>
std::vector<sim::ParamField<P>> node_port_fields() {
  return {
      {"link_widths", &P::link_widths, "text", "link widths the ports support, comma-separated: 1x, 2x, 4x, 8x, 12x", 0,
       0},
      {"link_speeds", &P::link_speeds, "text",
       "link speeds the ports support, comma-separated: SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR", 0, 0},
      {"device_ids", &P::device_ids, "text",
       "NodeInfo.DeviceID values of this device, as ibnetdiscover's devid= lines print them (topo import)", 0, 0},
      {"vl_cap", &P::vl_cap, "count", "data VLs per port (PortInfo.VLCap): 1, 2, 4, 8 or 15", 1, 15},
      {"input_buffer_bytes_per_port", &P::input_buffer_bytes_per_port, "bytes",
       "receive buffer of each port, split evenly over its operational data VLs", 64, 1e9},
      {"vl15_buffer_packets", &P::vl15_buffer_packets, "count", "receive slots for VL15 (management) packets per port",
       1, 1024},
      {"flow_control_refresh_ns", &P::flow_control_refresh, "ns",
       "longest wait before a flow-control packet carries changed FCTBS/FCCL", 1, 1e9},
      {"xmit_wait_tick_symbols", &P::xmit_wait_tick_symbols, "symbols",
       "PortXmitWait's tick in symbol times, one byte on one lane (PortSamplesControl.Tick + 1)", 1, 256},
  };
}

/// `head`, then node_port_fields<P>(), then `tail`: a node's whole table.
template <class P>
std::vector<sim::ParamField<P>> with_port_fields(std::vector<sim::ParamField<P>> head,
                                                 const std::vector<sim::ParamField<P>>& tail) {
  for (sim::ParamField<P>& f : node_port_fields<P>())
    head.push_back(std::move(f));
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

} // namespace ib::link
