#include "models/link/cable.h"

#include <cassert>
#include <cmath>

namespace ib::link {

namespace {

/// Picoseconds per nanosecond.
constexpr double ps_per_ns = 1000.0;

} // namespace

const sim::ParamTable<CableParams>& param_table() {
  // The range brackets every real medium: nothing beats light in vacuum (1/c = 3.3356 ns/m), and a velocity factor
  // below 1/3 (10 ns/m) is not a data cable.
  static const sim::ParamTable<CableParams> table(
      "cable", {
                   {"propagation_delay_ns_per_m", &CableParams::propagation_delay_ns_per_m, "ns/m",
                    "one-way delay per metre of cable", 3.33, 10},
                   {"fec_latency_hdr_ns", &CableParams::fec_latency_hdr, "ns",
                    "RS-FEC decoding latency a receiver adds to every packet on an HDR link, per hop", 0, 10000},
                   {"fec_latency_ndr_ns", &CableParams::fec_latency_ndr, "ns",
                    "RS-FEC decoding latency a receiver adds to every packet on an NDR link, per hop", 0, 10000},
               });
  return table;
}

sim::Time propagation_delay(const CableParams& params, double length_m) {
  assert(std::isfinite(length_m) && length_m >= 0 && length_m <= 1e6);
  // The double product is within a relative 2^-52 of the exact one and far below 2^53 ps, where doubles hold every
  // integer, so rounding it gives the nearest picosecond unless the exact value sits within that of a half.
  return sim::Time::from_ps(std::llround(length_m * params.propagation_delay_ns_per_m * ps_per_ns));
}

sim::Time fec_latency(const CableParams& params, Speed speed) {
  switch (speed) {
  case Speed::hdr:
    return params.fec_latency_hdr;
  case Speed::ndr:
    return params.fec_latency_ndr;
  case Speed::sdr:
  case Speed::ddr:
  case Speed::qdr:
  case Speed::fdr10:
  case Speed::fdr:
  case Speed::edr:
    break;
  }
  return sim::Time::zero();
}

sim::Time link_delay(const CableParams& params, double length_m, Speed speed) {
  return propagation_delay(params, length_m) + fec_latency(params, speed);
}

const sim::ProfileModel cable_profile_model = sim::profile_model<CableParams, &param_table>(
    "cable", "IB cable: propagation delay per metre, FEC latency per hop at HDR and NDR (models/link)");

} // namespace ib::link
