// The scenario runner (docs/development.md, docs/user-guide.md): a scenario in, a report out. The composition root
// above every model: for a fabric scenario it loads the topology, runs the subnet manager, builds the cluster of hosts
// with their HCAs, runs the workloads as host programs, checks the invariants and assembles the report (every
// workload's figures, the counters of every port under perfquery's names, PCIe TLPs per message); for a phold scenario
// it runs the kernel benchmark. The CLI, the tests and language bindings call this; none of them composes models
// itself.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "models/scenario/scenario.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace ib::scenario {

struct RunOptions {
  /// Called every 2^20 kernel events (sim::Simulator::set_progress_hook); nullptr for none. Returning false
  /// interrupts the run: run() then returns what happened so far, the report marked "partial".
  bool (*progress_hook)(void*, const sim::Simulator&) = nullptr;
  void* progress_context = nullptr;
  /// Receives a timeline of every component (fabric scenarios only); nullptr for none.
  sim::Tracer* tracer = nullptr;
  /// Receives warnings before the simulation starts, one line each (a routing with a credit loop); nullptr: none.
  std::ostream* warnings = nullptr;
  /// Count events by part of the model (RunResult::events_by_part): fabric scenarios only, a little slower.
  bool count_events = false;
};

struct RunResult {
  sim::ReportJson report;         ///< deterministic: the same scenario and seed give the same document
  std::vector<std::string> table; ///< the workloads' own tables, for people (empty for phold)
  std::uint64_t events_dispatched = 0;
  bool partial = false;      ///< the progress hook interrupted the run: the report holds what happened until then
  std::uint32_t max_qpn = 0; ///< fabric: the highest QP number any HCA gave (QPNs run from 2); 0 for none
  /// With RunOptions::count_events: events by part of the model, in total and per message sent, as
  /// {"messages": M, "parts": {"programs": {"events": N, "per_message": X}, ...}}; else null.
  sim::ReportJson events_by_part;
};

/// Runs `scenario` to its end (or its duration_us). Bad input: sim::InputError; an invariant broken:
/// sim::InvariantViolation. A tracer on a phold scenario is an InputError at the scenario's top.
RunResult run(const Scenario& scenario, const RunOptions& options = {});

/// Everything a fabric scenario would run, checked without running it: the topology, the subnet, the hosts the
/// workloads name (filling in their defaults, such as a pattern's hosts, as a run does). Returns the profiles' part
/// of the configuration a run would report: every parameter in effect of every hardware profile the fabric uses,
/// with unit and source.
/// Warnings (a routing with a credit loop) are appended to `warnings` when given.
nlohmann::ordered_json validate_fabric(const Scenario& scenario, std::vector<std::string>* warnings = nullptr);

/// The "config" a run of `scenario` reports, whose digest is the report's "config_digest": scenario_config() and,
/// for a fabric, `profiles` (validate_fabric()). Two runs with the same digest have the same inputs.
sim::ReportJson run_config(const Scenario& scenario, const nlohmann::ordered_json& profiles);

/// The digest `validate` prints and a sweep resumes by: that of the config a run of `scenario` would report
/// (checks a fabric scenario as validate_fabric() does).
std::string config_digest(const Scenario& scenario, std::vector<std::string>* warnings = nullptr);

} // namespace ib::scenario
