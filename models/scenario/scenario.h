// Scenario files (docs/scenario-reference.md): what to simulate and for how long. Loading is strict: unknown keys,
// wrong types and impossible values are sim::InputError naming the file and JSON pointer. Command-line overrides
// (--set, --seed) are applied to the JSON before it is read, so they are validated exactly like the file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/host/workloads.h"
#include "models/phold/phold.h"
#include "models/sm/routing.h"
#include "sim/json_reader.h"
#include "sim/profile.h"
#include "sim/time.h"

namespace ib::scenario {

/// What a scenario runs: the kernel benchmark (one "workload"), or host programs on a fabric ("workloads").
enum class WorkloadType { phold, fabric };

/// One entry of a scenario's "faults", as written (links and switches are resolved against the topology when it
/// is loaded: resolve_faults in run.h).
struct FaultSpec {
  std::string type;        ///< link_down, link_up, link_flap, switch_down, switch_up, bit_errors
  sim::Time at;            ///< at_us
  std::string target;      ///< "node/port" for a link (either end), a switch's name for a switch
  std::string target_key;  ///< "link" or "switch"
  sim::Time period;        ///< link_flap: from one going-down to the next
  sim::Time down_for;      ///< link_flap: how long each time
  std::uint32_t count = 0; ///< link_flap: times it goes down
  double bit_error_rate = 0;
  std::string pointer; ///< /faults/<i>
};

/// A fabric, its subnet manager's settings, and the workloads its hosts run.
struct FabricScenario {
  std::string topology_path;      ///< a topology file (relative paths from the scenario's directory) ...
  nlohmann::json topology_inline; ///< ... or the topology document itself
  std::string routing = std::string(ib::sm::default_engine); ///< routing engine (models/sm), or "opensm"
  unsigned lmc = 0;
  std::string sm_profile = "opensm"; ///< the SM's timing profile (model "sm"): how fast it reacts to faults
  std::string lid_order;             ///< "topology" or "opensm"; empty: not set (topology)
  std::string sm_port;               ///< "NODE/PORT" or a switch's name (sm::parse_sm_port); empty: OpenSM's default
  std::string lft_file;              ///< routing "file": the LFT dump (resolved against the scenario's directory)
  std::string guid2lid_file;         ///< OpenSM's guid2lid file giving every LID (resolved likewise); empty: none
  std::string opensm_engine;         ///< routing "opensm": the real OpenSM's routing engine
  std::string cc_profile =
      "opensm-cc";               ///< congestion control settings (model "cc"), changed by subnet_manager's cc keys
  bool adaptive_routing = false; ///< subnet_manager/adaptive_routing: AR groups (TREE) beside the LFTs
  bool cc_configured = false;    ///< subnet_manager sets congestion_control or a cc_* key
  std::vector<FaultSpec> faults;
  sim::ProfileOverrides profiles; ///< "profiles": parameters of named hardware profiles changed for this run
  bool verify_contents = false;   ///< host memory carries bytes
  bool pcie_dllp_cadence = true;
  ib::host::HostModel host_model = ib::host::HostModel::full; ///< "host_model": "full" or "fabric"
  std::vector<std::shared_ptr<ib::host::Workload>> workloads;
};

struct Scenario {
  std::string file;
  nlohmann::json resolved; ///< the document after overrides: what the digest covers
  std::string name;
  std::string description;
  std::uint64_t seed = 0;
  sim::Time duration; ///< phold: simulated time covered; fabric: a limit (Time::max() when none)
  WorkloadType workload = WorkloadType::phold;
  phold::Params phold{};
  FabricScenario fabric;
  std::uint64_t drop_event_number = 0; ///< self-test of the invariant checker; 0 in every real run
};

/// Loads `path`, applies each "/json/pointer=value" of `overrides` in order, then `seed` if given.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       std::optional<std::uint64_t> seed);
/// As load_scenario(), for a parsed document (sim::parse_json_text); relative paths are from its file's directory.
Scenario read_scenario(sim::JsonDocument document, const std::vector<std::string>& overrides,
                       std::optional<std::uint64_t> seed);

/// The resolved configuration as reported: every parameter, defaults included, in table order, and the digest of
/// the topology file's contents when the scenario names one (the file is read: InputError if it cannot be).
nlohmann::ordered_json scenario_config(const Scenario& scenario);

} // namespace ib::scenario
