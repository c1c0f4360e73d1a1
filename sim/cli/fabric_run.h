// Runs a fabric scenario (docs/scenario-reference.md, docs/user-guide.md): the topology, its subnet manager, a cluster
// of hosts with their HCAs, the scenario's workloads as host programs; then the invariants, and the report: every
// workload's figures, the counters of every port under perfquery's names, PCIe TLPs per message, and what the run cost.
#pragma once

#include <string>
#include <vector>

#include "sim/cli/scenario.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace cli {

struct FabricRunResult {
  sim::ReportJson report;         ///< deterministic: the same scenario and seed give the same document
  std::vector<std::string> table; ///< the workloads' own tables, for people
  std::uint64_t events_dispatched = 0;
};

/// `progress_hook(context, simulator)` is called every 2^20 events (nullptr: none). Bad input: sim::InputError;
/// an invariant broken: sim::InvariantViolation.
FabricRunResult run_fabric(const Scenario& scenario, void (*progress_hook)(void*, const sim::Simulator&),
                           void* progress_context, sim::Tracer* tracer = nullptr);

/// Everything a fabric scenario would run, checked without running it: the topology, the subnet, the hosts the
/// workloads name. Returns the profiles' part of the configuration a run would report (fabric_profiles()).
nlohmann::ordered_json validate_fabric(const Scenario& scenario);

/// Every parameter in effect of every hardware profile a fabric scenario's topology uses, with unit and source:
/// its report's config/profiles. Loads the topology. Empty for a phold scenario.
nlohmann::ordered_json fabric_profiles(const Scenario& scenario);

/// The "config" a run of `scenario` reports, whose digest is the report's "config_digest": scenario_config() and,
/// for a fabric, `profiles` (fabric_profiles()). Two runs with the same digest have the same inputs.
sim::ReportJson run_config(const Scenario& scenario, const nlohmann::ordered_json& profiles);

} // namespace cli
