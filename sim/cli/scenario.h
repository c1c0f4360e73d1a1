// Scenario files (DESIGN §6): what to simulate and for how long. Loading is strict: unknown keys, wrong types and
// impossible values are sim::InputError naming the file and JSON pointer. Command-line overrides (--set, --seed)
// are applied to the JSON before it is read, so they are validated exactly like the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/phold/phold.h"
#include "sim/time.h"

namespace cli {

/// Workload types a scenario can name.
enum class WorkloadType { phold };

struct Scenario {
  std::string file;
  nlohmann::json resolved; ///< the document after overrides: what the digest covers
  std::string name;
  std::string description;
  std::uint64_t seed = 0;
  sim::Time duration;
  WorkloadType workload = WorkloadType::phold;
  phold::Params phold{};
  std::uint64_t drop_event_number = 0; ///< self-test of the invariant checker; 0 in every real run
};

/// Loads `path`, applies each "/json/pointer=value" of `overrides` in order, then `seed` if given.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       std::optional<std::uint64_t> seed);

/// The resolved configuration as reported: every parameter, defaults included, in table order.
nlohmann::ordered_json scenario_config(const Scenario& scenario);

} // namespace cli
