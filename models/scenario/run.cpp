#include "models/scenario/run.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "models/hca/params.h"
#include "models/host/cluster.h"
#include "models/link/cable.h"
#include "models/pcie/params.h"
#include "models/phold/phold.h"
#include "models/scenario/profile_models.h"
#include "models/sm/sm_error.h"
#include "models/sm/subnet.h"
#include "models/switch/switch.h"
#include "models/topology/catalog.h"
#include "models/topology/topology.h"
#include "sim/errors.h"
#include "sim/json_reader.h"
#include "sim/profile.h"

namespace ib::scenario {
namespace {

using ib::host::Cluster;

ib::topo::Topology load(const FabricScenario& f, const std::string& scenario_file) {
  ib::topo::ProfileCatalog catalog(f.profiles);
  if (!f.topology_path.empty())
    return ib::topo::load_topology(f.topology_path, catalog);
  return ib::topo::read_topology(sim::JsonDocument{scenario_file, f.topology_inline, "/topology"}, catalog);
}

ib::sm::Subnet route(const ib::topo::Topology& topology, const FabricScenario& f, const std::string& file) {
  ib::sm::SmOptions options;
  options.engine = f.routing;
  options.lids.lmc = f.lmc;
  try {
    ib::sm::Subnet subnet = ib::sm::run_subnet_manager(topology, options);
    if (subnet.check.unrouted_pairs > 0 || subnet.check.looping_pairs > 0)
      throw sim::InputError(file, "/subnet_manager/routing", "a routing that reaches every host",
                            f.routing + ", which leaves " + std::to_string(subnet.check.unrouted_pairs) +
                                " unrouted and " + std::to_string(subnet.check.looping_pairs) + " looping pairs");
    return subnet;
  } catch (const ib::sm::SmError& e) {
    throw sim::InputError(file, "/subnet_manager/routing", "a routing engine that can route this topology",
                          f.routing + ": " + e.what());
  }
}

/// Every parameter in effect, from every profile the fabric uses, with its unit and source. A name under the
/// scenario's "profiles" that the fabric does not use is an InputError: its overrides would change nothing.
nlohmann::ordered_json profile_digests(const ib::topo::Topology& topology, const FabricScenario& f,
                                       const std::string& scenario_file) {
  std::set<std::pair<std::string, std::string>> used; // (model, profile)
  std::set<std::string> cables;
  for (std::size_t n = 0; n < topology.node_count(); ++n) {
    const auto& node = topology.node(static_cast<ib::topo::NodeIndex>(n));
    used.insert({node.kind == ib::topo::NodeKind::hca ? "hca" : "switch", node.profile});
  }
  for (const ib::topo::Link& cable : topology.links())
    cables.insert(cable.cable);
  nlohmann::ordered_json out;
  std::set<std::string> names;
  // Each profile read through its model's table and rules, as the registry of profile models reads any profile.
  const auto add = [&](std::string_view model, const std::string& name) -> const auto& {
    const sim::Profile profile = sim::load_profile(sim::profile_path(name));
    auto& entry = out[std::string(model) + "/" + name];
    entry = find_profile_model(model)->digest(profile, sim::overrides_for(f.profiles, name));
    names.insert(name);
    return entry;
  };
  std::set<std::string> slots, hosts;
  for (const auto& [model, name] : used) {
    const auto& entry = add(model, name);
    if (model == "hca") { // an HCA names the PCIe slot and host profiles behind it
      slots.insert(entry.at("pcie_link").at("value").template get<std::string>());
      hosts.insert(entry.at("host").at("value").template get<std::string>());
    }
  }
  for (const std::string& name : slots)
    add("pcie-link", name);
  for (const std::string& name : hosts)
    add("host", name);
  for (const std::string& name : cables)
    add("cable", name);
  for (const auto& [name, overrides] : f.profiles)
    if (!names.contains(name)) {
      std::string list;
      for (const std::string& n : names)
        list += (list.empty() ? "" : ", ") + n;
      throw sim::InputError(scenario_file, sim::json_pointer_append("/profiles", name),
                            "a profile this fabric uses (" + list + ")", "\"" + name + "\"");
    }
  return out;
}

nlohmann::ordered_json port_counters(Cluster& cluster) {
  nlohmann::ordered_json ports = nlohmann::ordered_json::array();
  const sim::Simulator& sim = cluster.simulator();
  for (const auto& [a, b] : cluster.fabric().links()) {
    for (const ib::link::Port* p : {a, b}) {
      const ib::link::PortCounters c = p->counters();
      nlohmann::ordered_json row;
      row["port"] = sim.component_name(p->owner_component_id()) + "/" + std::to_string(p->number());
      row["PortXmitData"] = c.xmit_data_words;
      row["PortRcvData"] = c.rcv_data_words;
      row["PortXmitPkts"] = c.xmit_pkts;
      row["PortRcvPkts"] = c.rcv_pkts;
      row["PortXmitWait_ns"] = c.xmit_wait.ns();
      row["flow_control_packets"] = c.flow_control_pkts;
      nlohmann::ordered_json by_vl = nlohmann::ordered_json::object();
      for (int vl = 0; vl < ib::link::vl_slots; ++vl)
        if (c.xmit_pkts_by_vl[static_cast<std::size_t>(vl)] > 0)
          by_vl[std::to_string(vl)] = {{"PortVLXmitData", c.xmit_data_words_by_vl[static_cast<std::size_t>(vl)]},
                                       {"PortVLXmitPkts", c.xmit_pkts_by_vl[static_cast<std::size_t>(vl)]}};
      row["vls"] = by_vl;
      ports.push_back(row);
    }
  }
  return ports;
}

/// PCIe TLPs and transactions per message sent, per host and over the cluster, by direction and type.
nlohmann::ordered_json pcie_per_message(Cluster& cluster) {
  nlohmann::ordered_json hosts = nlohmann::ordered_json::array();
  // The bus's TLPs by direction and type, then the HCA's transactions by purpose.
  enum Total : std::size_t {
    down_mwr,
    down_cpld,
    up_mwr,
    up_mrd,
    down_mwr_bytes,
    down_cpld_bytes,
    up_mwr_bytes,
    up_mrd_bytes,
    doorbells,
    blueflame_writes,
    mmio_bytes,
    wqe_reads,
    payload_reads,
    payload_writes,
    recv_wqe_reads,
    cqe_writes,
    count
  };
  std::array<std::uint64_t, Total::count> total{};
  std::uint64_t total_messages = 0;
  for (std::size_t i = 0; i < cluster.host_count(); ++i) {
    const ib::host::HostNode& h = cluster.host(i);
    const ib::hca::QpCounters q = h.hca->totals();
    const auto& down = h.hca->bus().counters(ib::pcie::Direction::downstream);
    const auto& up = h.hca->bus().counters(ib::pcie::Direction::upstream);
    const ib::hca::PcieCounters& pc = h.hca->pcie_counters();
    const std::array<std::uint64_t, Total::count> host = {
        down.tlps[0],      down.tlps[2],        up.tlps[0],          up.tlps[1],
        down.tlp_bytes[0], down.tlp_bytes[2],   up.tlp_bytes[0],     up.tlp_bytes[1],
        pc.doorbells,      pc.blueflame_writes, pc.mmio_bytes,       pc.wqe_fetches,
        pc.payload_reads,  pc.payload_writes,   pc.recv_wqe_fetches, pc.cqe_writes};
    for (std::size_t k = 0; k < Total::count; ++k)
      total[k] += host[k];
    total_messages += q.messages_sent;
    if (q.messages_sent == 0 && q.messages_received == 0)
      continue;
    nlohmann::ordered_json row;
    row["host"] = h.name;
    row["messages_sent"] = q.messages_sent;
    row["messages_received"] = q.messages_received;
    row["doorbells"] = pc.doorbells;
    row["blueflame_writes"] = pc.blueflame_writes;
    row["mmio_bytes"] = pc.mmio_bytes;
    row["wqe_reads"] = pc.wqe_fetches;
    row["payload_reads"] = pc.payload_reads;
    row["payload_writes"] = pc.payload_writes;
    row["recv_wqe_reads"] = pc.recv_wqe_fetches;
    row["cqe_writes"] = pc.cqe_writes;
    row["downstream_mwr_tlps"] = host[down_mwr];
    row["downstream_cpld_tlps"] = host[down_cpld];
    row["upstream_mwr_tlps"] = host[up_mwr];
    row["upstream_mrd_tlps"] = host[up_mrd];
    row["retransmitted_packets"] = q.retransmitted_packets;
    row["rnr_naks_received"] = q.rnr_naks_received;
    row["timeouts"] = q.timeouts;
    hosts.push_back(row);
  }
  const auto per = [&](std::uint64_t value) {
    return static_cast<double>(value) / static_cast<double>(std::max<std::uint64_t>(total_messages, 1));
  };
  nlohmann::ordered_json out;
  out["messages_sent"] = total_messages;
  // Both ends' buses count: a message's TLPs are the requester's plus the responder's.
  out["per_message"] = {{"downstream_mwr_tlps", per(total[down_mwr])},
                        {"downstream_cpld_tlps", per(total[down_cpld])},
                        {"upstream_mwr_tlps", per(total[up_mwr])},
                        {"upstream_mrd_tlps", per(total[up_mrd])},
                        {"downstream_bytes", per(total[down_mwr_bytes] + total[down_cpld_bytes])},
                        {"upstream_bytes", per(total[up_mwr_bytes] + total[up_mrd_bytes])},
                        {"downstream_mwr_bytes", per(total[down_mwr_bytes])},
                        {"downstream_cpld_bytes", per(total[down_cpld_bytes])},
                        {"upstream_mwr_bytes", per(total[up_mwr_bytes])},
                        {"upstream_mrd_bytes", per(total[up_mrd_bytes])},
                        {"doorbells", per(total[doorbells])},
                        {"blueflame_writes", per(total[blueflame_writes])},
                        {"mmio_bytes", per(total[mmio_bytes])},
                        {"wqe_reads", per(total[wqe_reads])},
                        {"payload_reads", per(total[payload_reads])},
                        {"payload_writes", per(total[payload_writes])},
                        {"recv_wqe_reads", per(total[recv_wqe_reads])},
                        {"cqe_writes", per(total[cqe_writes])}};
  out["hosts"] = hosts;
  return out;
}

/// Every workload's programs must fit in what the host runtime can run, else SimGrid would abort the process.
void check_program_count(const Cluster& cluster, const Scenario& scenario) {
  if (const sim::ProgramLimit limit = sim::program_limit(); cluster.program_count() > limit.programs)
    throw sim::InputError(scenario.file, "/workloads",
                          "workloads with at most " + std::to_string(limit.programs) +
                              " programs in all, one on each host a workload uses (" + limit.why + ")",
                          std::to_string(cluster.program_count()));
}

} // namespace

sim::ReportJson run_config(const Scenario& scenario, const nlohmann::ordered_json& profiles) {
  sim::ReportJson config = scenario_config(scenario);
  if (scenario.workload == WorkloadType::fabric)
    config["profiles"] = profiles; // the scenario's "profiles" overrides show here, with source "override"
  return config;
}

nlohmann::ordered_json validate_fabric(const Scenario& scenario) {
  const ib::topo::Topology topology = load(scenario.fabric, scenario.file);
  const ib::sm::Subnet subnet = route(topology, scenario.fabric, scenario.file);
  nlohmann::ordered_json profiles = profile_digests(topology, scenario.fabric, scenario.file);
  ib::host::ClusterOptions options;
  options.profiles = scenario.fabric.profiles;
  Cluster cluster(topology, subnet, options);
  // Spawning checks the host names; the programs never run.
  std::deque<ib::host::Rendezvous> rendezvous;
  for (const auto& w : scenario.fabric.workloads)
    w->spawn(cluster, rendezvous.emplace_back());
  check_program_count(cluster, scenario);
  return profiles;
}

namespace {

/// A trace kept to components the fabric does not have would be empty: each name must be a host or switch.
void check_trace_components(const ib::topo::Topology& topology, const sim::TraceFilter& filter) {
  for (const std::string& name : filter.components) {
    bool found = false;
    for (std::size_t n = 0; n < topology.node_count() && !found; ++n)
      found = topology.node(static_cast<ib::topo::NodeIndex>(n)).name == name;
    if (!found)
      throw sim::InputError("--trace-host", "", "the name of a host or switch of the topology", "\"" + name + "\"");
  }
}

/// An interrupted run's report says so, and how far it got; the caller adds why ("partial_reason").
void mark_partial(sim::ReportJson& report, bool partial, sim::Time reached) {
  if (!partial)
    return;
  report["partial"] = true;
  report["partial_at_us"] = reached.us();
}

RunResult run_phold(const Scenario& scenario, const RunOptions& run_options) {
  phold::RunOptions options;
  options.seed = scenario.seed;
  options.duration = scenario.duration;
  options.drop_event_number = scenario.drop_event_number;
  options.progress_hook = run_options.progress_hook;
  options.progress_context = run_options.progress_context;
  const phold::RunResult result = phold::run(scenario.phold, options);

  RunResult out;
  out.partial = result.halted;
  out.events_dispatched = result.events_dispatched;
  sim::ReportJson& report = out.report;
  report["ibnetsim"] = IBNETSIM_VERSION;
  sim::ReportJson about;
  about["file"] = scenario.file;
  about["name"] = scenario.name;
  about["workload"] = "phold";
  about["seed"] = scenario.seed;
  report["scenario"] = about;
  const sim::ReportJson config = run_config(scenario, nlohmann::ordered_json::object());
  report["config"] = config;
  report["config_digest"] = sim::digest_hex(config.dump());
  mark_partial(report, out.partial, result.simulated_time);

  const phold::Counters& c = result.counters;
  sim::ReportJson results;
  results["simulated_time_us"] = result.simulated_time.us();
  results["events_handled"] = c.events_handled;
  results["events_sent"] = c.events_sent;
  results["events_sent_remote"] = c.events_sent_remote;
  results["remote_fraction_observed"] =
      static_cast<double>(c.events_sent_remote) / static_cast<double>(std::max<std::uint64_t>(c.events_sent, 1));
  results["events_per_lp_min"] = c.min_events_per_lp;
  results["events_per_lp_max"] = c.max_events_per_lp;
  results["events_per_lp_mean"] =
      static_cast<double>(c.events_handled) / static_cast<double>(result.events_per_lp.size());
  results["events_to_programs"] = c.events_to_programs;
  results["events_from_programs"] = c.events_from_programs;
  results["program_wakeups"] = result.program_wakeups;
  results["kernel_events_dispatched"] = result.events_dispatched;
  results["kernel_events_pending_at_end"] = result.events_pending;
  results["events_per_simulated_us"] =
      static_cast<double>(c.events_handled) / std::max(result.simulated_time.us(), 1e-6);
  report["results"] = results;
  return out;
}

RunResult run_fabric(const Scenario& scenario, const RunOptions& run_options) {
  const FabricScenario& f = scenario.fabric;
  const ib::topo::Topology topology = load(f, scenario.file);
  if (run_options.tracer != nullptr)
    check_trace_components(topology, run_options.tracer->filter());
  const ib::sm::Subnet subnet = route(topology, f, scenario.file);
  ib::host::ClusterOptions options;
  options.seed = scenario.seed;
  options.verify_contents = f.verify_contents;
  options.cadence_dllps = f.pcie_dllp_cadence;
  options.profiles = f.profiles;
  const nlohmann::ordered_json profiles = profile_digests(topology, f, scenario.file);
  Cluster cluster(topology, subnet, options);
  std::deque<ib::host::Rendezvous> rendezvous; // one per workload: each has its own QPs
  for (const auto& w : f.workloads)
    w->spawn(cluster, rendezvous.emplace_back());
  check_program_count(cluster, scenario);
  cluster.simulator().set_progress_hook(run_options.progress_hook, run_options.progress_context);
  cluster.set_tracer(run_options.tracer);
  const sim::HostRuntime::Outcome outcome = cluster.run(scenario.duration);
  const bool finished = outcome.programs_stopped == 0;
  const bool interrupted = cluster.simulator().halted();
  if (!finished && !interrupted && scenario.duration == sim::Time::max())
    throw sim::InvariantViolation("program-deadlock", scenario.name,
                                  "the fabric went idle with programs still waiting for something that never comes",
                                  std::to_string(outcome.programs_stopped) + " programs blocked at t=" +
                                      std::to_string(cluster.simulator().now().ps()) + " ps");
  // A run cut short by duration_us or interrupted cannot be quiescent; credits must still be conserved.
  const std::string broken =
      finished && !interrupted ? cluster.check_invariants() : cluster.fabric().check_invariants(false);
  if (!broken.empty())
    throw sim::InvariantViolation("fabric-run", scenario.name, "the run ended with an invariant broken", broken);

  RunResult result;
  sim::ReportJson& report = result.report;
  report["ibnetsim"] = IBNETSIM_VERSION;
  sim::ReportJson about;
  about["file"] = scenario.file;
  about["name"] = scenario.name;
  about["topology"] = topology.name;
  about["hosts"] = cluster.host_count();
  about["switches"] = cluster.fabric().switch_count();
  about["routing"] = f.routing;
  about["seed"] = scenario.seed;
  report["scenario"] = about;
  const sim::ReportJson config = run_config(scenario, profiles);
  report["config"] = config;
  report["config_digest"] = sim::digest_hex(config.dump());
  result.partial = interrupted;
  mark_partial(report, interrupted, cluster.simulator().now());

  sim::ReportJson results;
  // The workloads' span: the fabric then drains (final ACKs, credits) and idle retry timers run out.
  results["simulated_time_us"] =
      (interrupted && !finished ? cluster.simulator().now() : cluster.programs_ended_at()).us();
  results["drained_at_us"] = cluster.simulator().now().us();
  results["finished"] = finished;
  results["kernel_events_dispatched"] = cluster.simulator().events_dispatched();
  results["program_wakeups"] = outcome.wakeups;
  sim::ReportJson workloads;
  for (const auto& w : f.workloads) {
    sim::ReportJson entry;
    entry["type"] = w->type();
    entry["results"] = w->results();
    workloads[w->name()] = entry;
    for (const std::string& line : w->table())
      result.table.push_back(line);
    result.table.push_back("");
  }
  results["workloads"] = workloads;
  results["pcie"] = pcie_per_message(cluster);
  results["ports"] = port_counters(cluster);
  report["results"] = results;
  result.events_dispatched = cluster.simulator().events_dispatched();
  for (std::size_t i = 0; i < cluster.host_count(); ++i)
    if (const std::uint32_t qps = cluster.host(i).hca->qp_count(); qps > 0)
      result.max_qpn = std::max(result.max_qpn, qps + 1);
  return result;
}

} // namespace

RunResult run(const Scenario& scenario, const RunOptions& options) {
  if (scenario.workload == WorkloadType::fabric)
    return run_fabric(scenario, options);
  if (options.tracer != nullptr)
    throw sim::InputError(scenario.file, "", "a fabric scenario (one with workloads) to trace", "a phold scenario");
  return run_phold(scenario, options);
}

std::string config_digest(const Scenario& scenario) {
  const nlohmann::ordered_json profiles =
      scenario.workload == WorkloadType::fabric ? validate_fabric(scenario) : nlohmann::ordered_json::object();
  return sim::digest_hex(run_config(scenario, profiles).dump());
}

} // namespace ib::scenario
