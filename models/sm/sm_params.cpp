#include "models/sm/sm_params.h"

namespace ib::sm {

const sim::ParamTable<Params>& param_table() {
  static const sim::ParamTable<Params> table(
      "sm", {
                {"sweep_interval_s", &Params::sweep_interval, "s",
                 "between periodic light sweeps, counted from the start of the run; 0: no periodic sweep", 0, 86400},
                {"sweep_on_trap", &Params::sweep_on_trap, "bool",
                 "a Trap 128 (a switch port changed state) starts a heavy sweep at once", 0, 0},
                {"max_wire_smps", &Params::max_wire_smps, "count", "SMPs the SM keeps outstanding at once", 1, 65535},
                {"transaction_timeout_ms", &Params::transaction_timeout, "ms",
                 "wait for an SMP's response before sending it again", 1, 60000},
                {"transaction_retries", &Params::transaction_retries, "count",
                 "resends of an unanswered SMP before the SM gives it up", 0, 100},
                {"smp_send_overhead_ns", &Params::smp_send_overhead, "ns",
                 "from OpenSM's send call until the SMP leaves the SM's port (umad, kernel MAD layer, QP0)", 0, 1e9},
                {"smp_receive_overhead_ns", &Params::smp_receive_overhead, "ns",
                 "from a response or trap at the SM's port until OpenSM has processed it", 0, 1e9},
                {"smp_hop_latency_ns", &Params::smp_hop_latency, "ns",
                 "an SMP's time over one link and through one switch, each direction", 0, 1e9},
                {"sma_processing_ns", &Params::sma_processing, "ns",
                 "a node's SMA from a request's arrival until its response leaves (a Set applied)", 0, 1e9},
                {"trap_generation_ns", &Params::trap_generation, "ns",
                 "from a switch port's state change until the switch sends its Trap 128", 0, 1e12},
                {"routing_time_per_switch_lid_ns", &Params::routing_per_switch_lid, "ns",
                 "the routing engine's CPU time per (switch, LID) pair it routes", 0, 1e9},
            });
  return table;
}

std::string validate(const Params& params) {
  // An SMP to the SM's own HCA that always times out would stop every sweep at hop 0.
  const sim::Time local = smp_round_trip(params, 0);
  if (params.transaction_timeout <= local)
    return "transaction_timeout_ms: expected more than the round trip of an SMP to the SM's own port (" +
           sim::param_detail::format_number(local.ns() / 1e6) + " ms), got " +
           sim::param_detail::format_number(params.transaction_timeout.ns() / 1e6);
  return "";
}

sim::Time smp_arrival(const Params& params, unsigned hops) {
  return params.smp_send_overhead + params.smp_hop_latency * hops + params.sma_processing;
}

sim::Time smp_round_trip(const Params& params, unsigned hops) {
  return smp_arrival(params, hops) + params.smp_hop_latency * hops + params.smp_receive_overhead;
}

const sim::ProfileModel profile_model = sim::profile_model<Params, &param_table, &validate>(
    "sm", "subnet manager: OpenSM's sweeps, SMP latencies and routing time after a fault (models/sm)");

} // namespace ib::sm
