// The subnet manager's timing (docs/models/subnet-manager.md, "Reaction to faults"): OpenSM's sweep and MAD
// settings (its opensm.conf defaults) and the latencies of the SMPs it exchanges with the fabric, which
// models/sm/reaction.h turns into the time a reaction to a fault takes. Defaults and sources live in
// topologies/hardware/opensm.json (model "sm").
#pragma once

#include <cstdint>
#include <string>

#include "sim/params.h"
#include "sim/profile.h"
#include "sim/time.h"

namespace ib::sm {

/// The SM's timing parameters; no defaults in code (STYLE rule 15).
struct Params {
  sim::Time sweep_interval;          ///< between periodic light sweeps; zero: none (opensm.conf sweep_interval)
  bool sweep_on_trap;                ///< a Trap 128 (port state change) starts a heavy sweep at once
  std::uint32_t max_wire_smps;       ///< SMPs outstanding at once (opensm.conf max_wire_smps)
  sim::Time transaction_timeout;     ///< wait for one SMP's response before sending it again
  std::uint32_t transaction_retries; ///< resends of an unanswered SMP before it is given up
  sim::Time smp_send_overhead;       ///< OpenSM's send call until the SMP leaves the SM's port
  sim::Time smp_receive_overhead;    ///< a response (or trap) at the SM's port until OpenSM has processed it
  sim::Time smp_hop_latency;         ///< one link and one switch on the way, each direction
  sim::Time sma_processing;          ///< a node's SMA from a request's arrival to its response (a Set applied)
  sim::Time trap_generation;         ///< a switch port's state change until the switch sends its Trap 128
  sim::Time routing_per_switch_lid;  ///< the routing engine's CPU time per (switch, LID) pair it routes
};
const sim::ParamTable<Params>& param_table();
/// The SM's profiles as `ibnetsim params` and the runner's report see them.
extern const sim::ProfileModel profile_model;
/// "" if `params` are consistent, else the broken rule, key first.
std::string validate(const Params& params);

/// One SMP exchange with a node `hops` links away (0: the SM's own HCA) and nothing lost: from the send call until
/// OpenSM has processed the response.
sim::Time smp_round_trip(const Params& params, unsigned hops);
/// From the send call until the target's SMA has handled the request (a Set takes effect then).
sim::Time smp_arrival(const Params& params, unsigned hops);

} // namespace ib::sm
