#include "models/hca/params.h"

#include "models/link/link.h"

namespace ib::hca {

const sim::ParamTable<Params>& param_table() {
  static const sim::ParamTable<Params> table(
      "hca", {
                 {"port_count", &Params::port_count, "count", "IB ports, numbered 1..port_count", 1, 2},
                 {"link_widths", &Params::link_widths, "text",
                  "link widths the ports support, comma-separated: 1x, 2x, 4x, 8x, 12x", 0, 0},
                 {"link_speeds", &Params::link_speeds, "text",
                  "link speeds the ports support, comma-separated: SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR", 0, 0},
                 {"vl_cap", &Params::vl_cap, "count", "data VLs per port (PortInfo.VLCap): 1, 2, 4, 8 or 15", 1, 15},
                 {"input_buffer_bytes_per_port", &Params::input_buffer_bytes_per_port, "bytes",
                  "receive buffer of each port, split evenly over its operational data VLs", 64, 1e9},
                 {"vl15_buffer_packets", &Params::vl15_buffer_packets, "count",
                  "receive slots for VL15 (management) packets per port", 1, 1024},
                 {"flow_control_refresh_ns", &Params::flow_control_refresh, "ns",
                  "longest wait before a flow-control packet carries changed FCTBS/FCCL", 1, 1e9},
             });
  return table;
}

std::string validate(const Params& params) {
  return link::validate_port_parameters(params.link_widths, params.link_speeds, params.vl_cap,
                                        params.input_buffer_bytes_per_port);
}

} // namespace ib::hca
