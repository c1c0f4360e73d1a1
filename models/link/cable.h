// The cable of an IB link as a pure delay (IBA vol 2 leaves propagation to the medium): a copper or fibre cable
// delays every bit by its length times the medium's delay per metre, the same both ways. Left out: loss, signal
// integrity, FEC and retimer latency in active cables (fold them into the per-metre figure), and skew between
// lanes. Serialization is the port's job (port.h); the cable only sets LinkConfig::propagation_delay.
#pragma once

#include "sim/params.h"
#include "sim/profile.h"
#include "sim/time.h"

namespace ib::link {

/// A cable type's parameters; defaults and sources live in topologies/hardware/<profile>.json (model "cable").
struct CableParams {
  double propagation_delay_ns_per_m; ///< one-way delay per metre of cable
};
/// The table of CableParams (model "cable"): parsing, --set overrides, digest and `ibnetsim params cable`.
const sim::ParamTable<CableParams>& param_table();
/// Cable profiles as `ibnetsim params` and the runner's report see them.
extern const sim::ProfileModel cable_profile_model;

/// One-way propagation delay of `length_m` metres of cable, rounded to the nearest picosecond.
/// Preconditions: length_m is finite and in [0, 10^6] (a kilometre-scale link is already far beyond IB reach).
sim::Time propagation_delay(const CableParams& params, double length_m);

} // namespace ib::link
