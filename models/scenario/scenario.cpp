#include "models/scenario/scenario.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "models/sm/routing.h"
#include "sim/errors.h"
#include "sim/json_reader.h"
#include "sim/report.h"

namespace ib::scenario {

namespace {

/// The routing engines a scenario can name: every registered engine that routes from the topology (the file
/// engine also needs an LFT dump, which a scenario cannot give yet).
std::span<const std::string_view> scenario_engines() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const ib::sm::EngineInfo* engine : ib::sm::engines())
      if (!engine->replays_file)
        out.push_back(engine->name);
    return out;
  }();
  return names;
}

/// The scenario's "faults": each checked for its own shape here, against the topology and the run's length when the
/// topology is loaded (resolve_faults).
void read_faults(const nlohmann::json& faults, Scenario& scenario) {
  static constexpr std::string_view types[] = {"link_down",   "link_up",   "link_flap",
                                               "switch_down", "switch_up", "bit_errors"};
  const sim::Time day = sim::Time::from_ms(86'400'000);
  for (std::size_t i = 0; i < faults.size(); ++i) {
    FaultSpec spec;
    spec.pointer = sim::json_pointer_append("/faults", i);
    sim::JsonObjectReader entry(scenario.file, faults[i], spec.pointer);
    spec.type = entry.required_enum("type", types);
    spec.at = entry.required_duration("at_us", sim::Time::zero(), day);
    spec.target_key = spec.type.starts_with("switch") ? "switch" : "link";
    spec.target = entry.required_string(spec.target_key);
    if (spec.type == "link_flap") {
      spec.period = entry.required_duration("period_us", sim::Time::from_ps(2), day);
      spec.down_for = entry.required_duration("down_us", sim::Time::from_ps(1), day);
      if (spec.down_for >= spec.period)
        throw sim::InputError(scenario.file, entry.pointer_to("down_us"),
                              "less than period_us (the link must come back between downs)",
                              std::to_string(spec.down_for.us()));
      spec.count = static_cast<std::uint32_t>(entry.required_uint("count", 1, 100'000));
    }
    if (spec.type == "bit_errors")
      spec.bit_error_rate = entry.required_double("bit_error_rate", 0, 0.5);
    entry.finish();
    scenario.fabric.faults.push_back(std::move(spec));
  }
}

void read_fabric(sim::JsonObjectReader& top, Scenario& scenario) {
  scenario.workload = WorkloadType::fabric;
  FabricScenario& f = scenario.fabric;
  scenario.duration = top.optional_duration("duration_us", sim::Time::from_ps(1), sim::Time::from_ms(86'400'000))
                          .value_or(sim::Time::max());
  const nlohmann::json& topology = top.value().contains("topology") ? top.value().at("topology") : nlohmann::json();
  if (topology.is_string()) {
    f.topology_path = topology.get<std::string>();
    const std::filesystem::path path(f.topology_path);
    if (path.is_relative())
      f.topology_path = (std::filesystem::path(scenario.file).parent_path() / path).lexically_normal().string();
    top.skip("topology");
  } else if (topology.is_object()) {
    f.topology_inline = topology;
    top.skip("topology");
  } else {
    throw sim::InputError(scenario.file, "/topology",
                          "a topology file's path or a topology object (nodes and links, or a generator)",
                          topology.is_null() ? "nothing" : sim::describe_json_value(topology));
  }
  if (auto sm = top.optional_object("subnet_manager")) {
    f.routing = sm->optional_enum("routing", scenario_engines()).value_or(std::string(ib::sm::default_engine));
    f.lmc = static_cast<unsigned>(sm->optional_uint("lmc", 0, 7).value_or(0));
    f.sm_profile = sm->optional_string("profile").value_or(f.sm_profile);
    sm->finish();
  }
  if (const nlohmann::json* faults = top.optional_array("faults", 0, 100'000))
    read_faults(*faults, scenario);
  if (auto profiles = top.optional_object("profiles")) {
    // {"connectx4-edr": {"max_inline_data_bytes": 256}}: the values are checked when the profile is read.
    for (const auto& [name, parameters] : profiles->value().items()) {
      const std::string pointer = profiles->pointer_to(name);
      sim::JsonObjectReader entry(scenario.file, parameters, pointer);
      std::vector<sim::Override>& list = f.profiles[name];
      for (const auto& [key, value] : parameters.items()) {
        const std::string relative = sim::json_pointer_append("", key);
        list.push_back({relative, value.dump(), scenario.file, entry.pointer_to(key)});
        entry.skip(key);
      }
      profiles->skip(name);
    }
  }
  f.verify_contents = top.optional_bool("verify_contents").value_or(false);
  f.pcie_dllp_cadence = top.optional_bool("pcie_dllp_cadence").value_or(true);
  const nlohmann::json& workloads = top.required_array("workloads", 1, 10'000);
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    const std::string pointer = sim::json_pointer_append("/workloads", i);
    sim::JsonObjectReader reader(scenario.file, workloads[i], pointer);
    f.workloads.push_back(ib::host::read_workload(reader, scenario.file, pointer, scenario.seed));
    for (std::size_t j = 0; j + 1 < f.workloads.size(); ++j)
      if (f.workloads[j]->name() == f.workloads.back()->name())
        throw sim::InputError(scenario.file, pointer + "/name", "a name no other workload has (set \"name\")",
                              "\"" + f.workloads.back()->name() + "\"");
  }
}

} // namespace

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       std::optional<std::uint64_t> seed) {
  return read_scenario(sim::load_json_file(path), overrides, seed);
}

Scenario read_scenario(sim::JsonDocument document, const std::vector<std::string>& overrides,
                       std::optional<std::uint64_t> seed) {
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
  if (top.has("workloads")) {
    read_fabric(top, scenario);
  } else {
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
  }
  top.finish();
  return scenario;
}

nlohmann::ordered_json scenario_config(const Scenario& scenario) {
  nlohmann::ordered_json config;
  config["seed"] = scenario.seed;
  if (scenario.workload == WorkloadType::fabric) {
    const FabricScenario& f = scenario.fabric;
    if (scenario.duration != sim::Time::max())
      config["duration_us"] = scenario.resolved.at("duration_us");
    if (f.topology_path.empty()) {
      config["topology"] = f.topology_inline;
    } else {
      config["topology"] = f.topology_path;
      // The file's contents decide the run as much as the scenario's: the digest covers them.
      std::ifstream file(f.topology_path, std::ios::binary);
      std::ostringstream text;
      text << file.rdbuf();
      if (!file)
        throw sim::InputError(scenario.file, "/topology", "a readable topology file", f.topology_path);
      config["topology_digest"] = sim::digest_hex(text.str());
    }
    config["subnet_manager"] = {{"routing", f.routing}, {"lmc", f.lmc}, {"profile", f.sm_profile}};
    if (!f.faults.empty())
      config["faults"] = scenario.resolved.at("faults");
    config["verify_contents"] = f.verify_contents;
    config["pcie_dllp_cadence"] = f.pcie_dllp_cadence;
    nlohmann::ordered_json workloads = nlohmann::ordered_json::array();
    for (const auto& w : f.workloads)
      workloads.push_back(w->config());
    config["workloads"] = workloads;
    return config;
  }
  config["duration_us"] = scenario.resolved.at("duration_us");
  nlohmann::ordered_json workload;
  workload["type"] = "phold";
  const nlohmann::json params = phold::param_table().to_json(scenario.phold);
  for (const auto& [key, value] : params.items())
    workload[key] = value;
  config["workload"] = workload;
  return config;
}

} // namespace ib::scenario
