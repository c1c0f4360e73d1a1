// The cable of an IB link as a pure delay (IBA vol 2 leaves propagation to the medium): a copper or fibre cable
// delays every bit by its length times the medium's delay per metre, the same both ways. At HDR and NDR the
// receiver's RS-FEC decoder adds a fixed latency per hop (it must hold a codeword before it passes its first bit
// on), which the cable profile carries per speed; SDR to EDR links run without FEC. Left out: loss, signal
// integrity, retimer latency in active cables (fold it into the per-metre figure), FEC latency jitter (a packet's
// start is not aligned to a codeword) and skew between lanes. Serialization is the port's job (port.h); the cable
// only sets LinkConfig::propagation_delay.
#pragma once

#include "models/link/link_rate.h"
#include "sim/params.h"
#include "sim/profile.h"
#include "sim/time.h"

namespace ib::link {

/// A cable type's parameters; defaults and sources live in topologies/hardware/<profile>.json (model "cable").
struct CableParams {
  double propagation_delay_ns_per_m; ///< one-way delay per metre of cable
  sim::Time fec_latency_hdr;         ///< the receiver's FEC decoding latency on an HDR link, per hop
  sim::Time fec_latency_ndr;         ///< the same on an NDR link
};
/// The table of CableParams (model "cable"): parsing, --set overrides, digest and `ibnetsim params cable`.
const sim::ParamTable<CableParams>& param_table();
/// Cable profiles as `ibnetsim params` and the runner's report see them.
extern const sim::ProfileModel cable_profile_model;

/// One-way propagation delay of `length_m` metres of cable, rounded to the nearest picosecond.
/// Preconditions: length_m is finite and in [0, 10^6] (a kilometre-scale link is already far beyond IB reach).
sim::Time propagation_delay(const CableParams& params, double length_m);

/// The FEC latency a receiver adds to every packet on a link at `speed`: the profile's figure at HDR and NDR, zero at
/// SDR to EDR (no FEC).
sim::Time fec_latency(const CableParams& params, Speed speed);

/// Last bit sent to last bit received, beyond serialization, on `length_m` metres at `speed`: propagation plus FEC.
sim::Time link_delay(const CableParams& params, double length_m, Speed speed);

} // namespace ib::link
