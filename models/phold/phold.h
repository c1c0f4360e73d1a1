// PHOLD (Fujimoto, "Performance of Time Warp under synthetic workloads", 1990): the standard synthetic workload
// of discrete-event kernels. A fixed population of events circulates among logical processes (LPs); each event,
// when handled, sends one new event to a random LP (itself with probability 1 - remote_fraction) after the
// lookahead plus an exponential delay. It stands in for the fabric until the models exist, and is the kernel's
// benchmark. Optionally, every Nth event is handed to a host program (a SimGrid actor), which computes and then
// re-injects it: the coupling's benchmark. It leaves out everything about networks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/event.h"
#include "sim/host_runtime.h"
#include "sim/params.h"
#include "sim/profile.h"
#include "sim/rng.h"
#include "sim/simulator.h"

namespace phold {

struct Params {
  std::uint32_t lp_count;              ///< logical processes
  std::uint32_t initial_events_per_lp; ///< population per LP, constant for the whole run
  sim::Time lookahead;                 ///< minimum delay between handling an event and the one it sends
  sim::Time mean_extra_delay;          ///< mean of the exponential delay added to the lookahead
  double remote_fraction;              ///< probability that the event sent goes to another LP
  std::uint32_t program_count;         ///< host programs (0: none)
  std::uint32_t program_every_events;  ///< hand every Nth event handled to a program (0 with no programs)
  sim::Time program_compute;           ///< CPU time a program spends per event before re-injecting it
};
const sim::ParamTable<Params>& param_table();
/// PHOLD's parameters as `ibnetsim params` lists them (read from a profile-format file with --profile).
extern const sim::ProfileModel profile_model;
/// Reads Params through the table, plus the constraints between fields.
Params read_params(sim::JsonObjectReader& reader);

struct Counters {
  std::uint64_t events_handled = 0;
  std::uint64_t events_sent = 0; ///< initial population included
  std::uint64_t events_sent_remote = 0;
  std::uint64_t events_to_programs = 0;
  std::uint64_t events_from_programs = 0;
  std::uint64_t min_events_per_lp = 0;
  std::uint64_t max_events_per_lp = 0;
};

enum class Kind : std::uint8_t { event_arrives };

/// The component type PHOLD's LPs register under.
inline constexpr sim::ComponentType component_type = 1;

class Model {
public:
  /// Registers every LP with `sim` and seeds the initial population at time zero (plus a random offset).
  /// `drop_event_number` > 0 deliberately loses that event, to exercise the invariant checker (0: never).
  Model(const Params& params, sim::Simulator& sim, std::uint64_t drop_event_number);

  void on_event(const sim::Event& event);
  /// Adds the host programs to `runtime`; call before running.
  void attach_programs(sim::HostRuntime& runtime);
  /// event-conservation: the population is constant. Throws sim::InvariantViolation (exit 3) otherwise.
  void check_invariants() const;
  Counters counters() const;
  /// Events handled by each LP, for determinism checks.
  const std::vector<std::uint64_t>& events_per_lp() const { return handled_per_lp_; }

private:
  struct Inbox; // events waiting for one host program
  void send_from(std::uint32_t lp, sim::Time earliest);
  void program_body(sim::Program& program, std::uint32_t index);

  Params params_;
  sim::Simulator& sim_;
  std::uint64_t drop_event_number_;
  std::vector<std::uint32_t> lp_component_id_;
  std::vector<sim::Rng> lp_rng_;
  std::vector<std::uint64_t> handled_per_lp_;
  std::vector<Inbox> inboxes_;
  std::uint64_t population_ = 0;
  std::uint64_t in_flight_ = 0;
  Counters counters_;
};

struct RunOptions {
  std::uint64_t seed = 0;
  sim::Time duration;                  ///< simulated time covered: events due later are left pending
  std::uint64_t drop_event_number = 0; ///< see Model; 0 in every real run
  /// Called every 2^20 kernel events (see sim::Simulator::set_progress_hook); nullptr for none. Returning false
  /// halts the run where it is (RunResult::halted).
  bool (*progress_hook)(void*, const sim::Simulator&) = nullptr;
  void* progress_context = nullptr;
};

struct RunResult {
  Counters counters;
  std::uint64_t events_dispatched = 0; ///< all kernel events, program wake-ups included
  std::uint64_t events_pending = 0;
  std::uint64_t program_wakeups = 0;
  sim::Time simulated_time;
  std::vector<std::uint64_t> events_per_lp;
  bool halted = false; ///< the progress hook stopped the run before `duration`
};

/// Builds the model, runs it for `options.duration` and checks its invariants.
RunResult run(const Params& params, const RunOptions& options);

} // namespace phold
