#include "models/scenario/scenario.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "models/scenario/opensm_run.h"
#include "models/sm/congestion.h"
#include "models/sm/routing.h"
#include "sim/errors.h"
#include "sim/json_reader.h"
#include "sim/report.h"

namespace ib::scenario {

namespace {

/// What a scenario's subnet_manager/routing can name: every registered engine (the file engine with its lft_file),
/// then "opensm", the real OpenSM run on the fabric (models/scenario/opensm_run.h).
std::span<const std::string_view> scenario_routings() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out(ib::sm::engine_names().begin(), ib::sm::engine_names().end());
    out.push_back("opensm");
    return out;
  }();
  return names;
}

/// A file named by the scenario, relative paths from the scenario's directory.
std::string scenario_relative(const std::string& scenario_file, const std::string& path) {
  const std::filesystem::path p(path);
  if (p.is_relative())
    return (std::filesystem::path(scenario_file).parent_path() / p).lexically_normal().string();
  return path;
}

/// FNV-1a 64 of a file the run reads, so that the config digest covers its contents.
std::string file_digest(const std::string& scenario_file, const std::string& pointer, const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  if (!file)
    throw sim::InputError(scenario_file, pointer, "a readable file", path);
  return sim::digest_hex(text.str());
}

void read_subnet_manager(sim::JsonObjectReader& sm, const std::string& file, FabricScenario& f) {
  f.routing = sm.optional_enum("routing", scenario_routings()).value_or(std::string(ib::sm::default_engine));
  f.lmc = static_cast<unsigned>(sm.optional_uint("lmc", 0, 7).value_or(0));
  f.sm_profile = sm.optional_string("profile").value_or(f.sm_profile);
  f.lid_order = sm.optional_enum("lid_order", {"topology", "opensm"}).value_or("");
  f.sm_port = sm.optional_string("sm_port").value_or("");
  if (sm.has("sm_port") && f.sm_port.empty())
    throw sim::InputError(file, sm.pointer_to("sm_port"), "\"NODE/PORT\", or a switch's name for its port 0", "\"\"");
  const auto path_key = [&](std::string_view key, std::string& out) {
    if (std::optional<std::string> path = sm.optional_string(key)) {
      if (path->empty())
        throw sim::InputError(file, sm.pointer_to(key), "a file's path", "\"\"");
      out = scenario_relative(file, *path);
    }
  };
  path_key("lft_file", f.lft_file);
  path_key("guid2lid_file", f.guid2lid_file);
  f.opensm_engine = sm.optional_enum("engine", ib::scenario::opensm_engines()).value_or("");
  f.adaptive_routing = sm.optional_bool("adaptive_routing").value_or(false);
  if (f.adaptive_routing && f.routing != "ftree" && f.routing != "updn" && f.routing != "minhop")
    throw sim::InputError(file, sm.pointer_to("adaptive_routing"),
                          "false unless routing is ftree, updn or minhop (engines whose shortest paths give AR groups, "
                          "as NVIDIA's ar_ftree and ar_updn)",
                          "true with routing \"" + f.routing + "\"");
  // Congestion control, as opensm.conf sets it: each key overrides the cc profile's value and is checked by its
  // table, errors naming this file and key.
  if (const std::optional<std::string> profile = sm.optional_string("cc_profile")) {
    f.cc_profile = *profile;
    f.cc_configured = true; // a profile of one's own may turn it on: reported, and checked, as the keys are
  }
  for (const auto& field : ib::sm::cc::param_table().fields()) {
    if (!sm.has(field.key))
      continue;
    f.cc_configured = true;
    f.profiles[f.cc_profile].emplace_back("/" + std::string(field.key), sm.value().at(std::string(field.key)).dump(),
                                          file, sm.pointer_to(field.key));
    sm.skip(field.key);
  }
  // Keys that only mean something with one routing are refused elsewhere rather than silently ignored.
  const auto only_with = [&](std::string_view key, std::string_view routing) {
    if (sm.has(key) && f.routing != routing)
      throw sim::InputError(file, sm.pointer_to(key),
                            "no \"" + std::string(key) + "\" unless routing is \"" + std::string(routing) + "\"",
                            "routing \"" + f.routing + "\"");
  };
  only_with("lft_file", "file");
  only_with("engine", "opensm");
  if (f.routing == "file" && f.lft_file.empty())
    throw sim::InputError(file, sm.pointer() + "/lft_file",
                          "with routing \"file\", an LFT dump to replay (opensm-lfts.dump or dump_lfts output)",
                          "nothing");
  if (f.routing == "opensm") {
    if (f.opensm_engine.empty())
      f.opensm_engine = std::string(ib::sm::default_engine);
    for (std::string_view key : {"guid2lid_file", "lid_order"})
      if (sm.has(key))
        throw sim::InputError(file, sm.pointer_to(key),
                              "no \"" + std::string(key) + "\" with routing \"opensm\" (OpenSM assigns the LIDs)",
                              sim::describe_json_value(sm.value().at(std::string(key))));
  }
  if (sm.has("guid2lid_file") && sm.has("lid_order"))
    throw sim::InputError(file, sm.pointer_to("lid_order"),
                          "no \"lid_order\" with a guid2lid_file (the file gives every LID)",
                          "\"" + f.lid_order + "\"");
  sm.finish();
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
    f.topology_path = scenario_relative(scenario.file, f.topology_path);
    top.skip("topology");
  } else if (topology.is_object()) {
    f.topology_inline = topology;
    top.skip("topology");
  } else {
    throw sim::InputError(scenario.file, "/topology",
                          "a topology file's path or a topology object (nodes and links, or a generator)",
                          topology.is_null() ? "nothing" : sim::describe_json_value(topology));
  }
  if (auto sm = top.optional_object("subnet_manager"))
    read_subnet_manager(*sm, scenario.file, f);
  if (const nlohmann::json* faults = top.optional_array("faults", 0, 100'000)) {
    read_faults(*faults, scenario);
    // The SM's reaction reroutes with its engine; OpenSM would have to run again on every changed fabric.
    if (!f.faults.empty() && f.routing == "opensm")
      throw sim::InputError(scenario.file, "/subnet_manager/routing",
                            "an engine of ibnetsim's subnet manager when the scenario has faults (OpenSM's reaction "
                            "to faults is not run)",
                            "\"opensm\"");
  }
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
  if (top.optional_enum("host_model", {"full", "fabric"}).value_or("full") == "fabric") {
    f.host_model = ib::host::HostModel::fabric;
    if (f.verify_contents)
      throw sim::InputError(scenario.file, "/verify_contents",
                            "false with host_model \"fabric\" (its hosts have no memory to carry bytes)", "true");
  }
  const nlohmann::json& workloads = top.required_array("workloads", 1, 10'000);
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    const std::string pointer = sim::json_pointer_append("/workloads", i);
    sim::JsonObjectReader reader(scenario.file, workloads[i], pointer);
    f.workloads.push_back(ib::host::read_workload(reader, scenario.file, pointer, scenario.seed));
    if (f.host_model == ib::host::HostModel::fabric && !f.workloads.back()->runs_on_endpoints())
      throw sim::InputError(scenario.file, pointer + "/type",
                            "a traffic pattern (" + ib::host::endpoint_workload_types() +
                                ") with host_model \"fabric\": its hosts have no verbs for programs",
                            "\"" + f.workloads.back()->type() + "\"");
    for (std::size_t j = 0; j + 1 < f.workloads.size(); ++j)
      if (f.workloads[j]->name() == f.workloads.back()->name())
        throw sim::InputError(scenario.file, pointer + "/name", "a name no other workload has (set \"name\")",
                              "\"" + f.workloads.back()->name() + "\"");
  }
  // "after": each names another workload, and following them never comes back to where it started.
  for (const auto& w : f.workloads) {
    if (w->after().empty())
      continue;
    const auto found = std::find_if(f.workloads.begin(), f.workloads.end(),
                                    [&](const auto& other) { return other->name() == w->after(); });
    if (found == f.workloads.end() || found->get() == w.get())
      throw sim::InputError(scenario.file, w->after_pointer(), "the name of another workload of the scenario",
                            "\"" + w->after() + "\"");
    w->start_after(**found);
  }
  for (const auto& w : f.workloads) {
    const ib::host::Workload* step = w->predecessor();
    for (std::size_t hops = 0; step != nullptr; step = step->predecessor(), ++hops)
      if (step == w.get() || hops > f.workloads.size())
        throw sim::InputError(scenario.file, w->after_pointer(),
                              "a workload that does not, through its own \"after\", wait for this one",
                              "\"" + w->after() + "\", a cycle");
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
      config["topology_digest"] = file_digest(scenario.file, "/topology", f.topology_path);
    }
    nlohmann::ordered_json sm = {{"routing", f.routing}, {"lmc", f.lmc}, {"profile", f.sm_profile}};
    // Keys a scenario did not set stay out, so that older reports keep their digests.
    if (!f.opensm_engine.empty())
      sm["engine"] = f.opensm_engine;
    if (!f.lid_order.empty())
      sm["lid_order"] = f.lid_order;
    if (!f.sm_port.empty())
      sm["sm_port"] = f.sm_port;
    if (f.adaptive_routing)
      sm["adaptive_routing"] = true;
    if (f.cc_configured) // the settings themselves show in the cc profile's entry, as overrides
      sm["cc_profile"] = f.cc_profile;
    for (const auto& [key, path] : {std::pair{"lft_file", &f.lft_file}, std::pair{"guid2lid_file", &f.guid2lid_file}}) {
      if (path->empty())
        continue;
      sm[key] = *path;
      sm[std::string(key) + "_digest"] = file_digest(scenario.file, "/subnet_manager/" + std::string(key), *path);
    }
    config["subnet_manager"] = sm;
    if (!f.faults.empty())
      config["faults"] = scenario.resolved.at("faults");
    config["verify_contents"] = f.verify_contents;
    config["pcie_dllp_cadence"] = f.pcie_dllp_cadence;
    if (f.host_model == ib::host::HostModel::fabric) // absent when full, so that older reports keep their digests
      config["host_model"] = "fabric";
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
