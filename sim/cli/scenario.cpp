#include "sim/cli/scenario.h"

#include "sim/json_reader.h"

namespace cli {

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       std::optional<std::uint64_t> seed) {
  sim::JsonDocument document = sim::load_json_file(path);
  for (const std::string& assignment : overrides)
    sim::apply_override(document.root, assignment, "--set");
  if (seed)
    document.root["seed"] = *seed;

  Scenario scenario;
  scenario.file = document.file;
  scenario.resolved = document.root;
  sim::JsonObjectReader top(document.file, document.root, "");
  top.skip("$schema"); // editors use it to find scenarios/schema/scenario.schema.json
  scenario.name = top.required_string("name");
  scenario.description = top.optional_string("description").value_or("");
  scenario.seed = top.required_uint("seed", 0, UINT64_MAX);
  // A run shorter than a picosecond or longer than a day of simulated time is a typo.
  scenario.duration = top.required_duration("duration_us", sim::Time::from_ps(1), sim::Time::from_ms(86'400'000));
  sim::JsonObjectReader workload = top.required_object("workload");
  workload.required_enum("type", {"phold"});
  scenario.workload = WorkloadType::phold;
  scenario.phold = phold::read_params(workload);
  if (auto self_test = workload.optional_object("self_test")) {
    scenario.drop_event_number = self_test->required_uint("drop_event_number", 1, UINT64_MAX);
    self_test->finish();
  }
  workload.finish();
  top.finish();
  return scenario;
}

nlohmann::ordered_json scenario_config(const Scenario& scenario) {
  nlohmann::ordered_json config;
  config["seed"] = scenario.seed;
  config["duration_us"] = scenario.resolved.at("duration_us");
  nlohmann::ordered_json workload;
  workload["type"] = "phold";
  const nlohmann::json params = phold::param_table().to_json(scenario.phold);
  for (const auto& [key, value] : params.items())
    workload[key] = value;
  config["workload"] = workload;
  return config;
}

} // namespace cli
