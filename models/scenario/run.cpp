#include "models/scenario/run.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "models/hca/params.h"
#include "models/host/cluster.h"
#include "models/link/cable.h"
#include "models/pcie/params.h"
#include "models/phold/phold.h"
#include "models/scenario/opensm_run.h"
#include "models/scenario/profile_models.h"
#include "models/sm/adaptive.h"
#include "models/sm/congestion.h"
#include "models/sm/sm_error.h"
#include "models/sm/sm_params.h"
#include "models/sm/subnet.h"
#include "models/switch/switch.h"
#include "models/topology/catalog.h"
#include "models/topology/topology.h"
#include "sim/errors.h"
#include "sim/json_reader.h"
#include "sim/params.h"
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

/// The subnet manager's options from the scenario's subnet_manager, checked against the topology: an SM port the
/// topology lacks or cannot run an SM on is an InputError at its key.
ib::sm::SmOptions sm_options(const ib::topo::Topology& topology, const FabricScenario& f, const std::string& file) {
  ib::sm::SmOptions options;
  options.engine = f.routing;
  options.lids.lmc = f.lmc;
  options.lids.order = f.lid_order == "opensm" ? ib::sm::LidOrder::opensm : ib::sm::LidOrder::topology;
  options.lids.guid2lid_file = f.guid2lid_file;
  options.routing.lft_file = f.lft_file;
  if (!f.sm_port.empty()) {
    try {
      options.lids.sm_port = ib::sm::parse_sm_port(topology, f.sm_port);
    } catch (const ib::sm::SmError& e) {
      throw sim::InputError(file, "/subnet_manager/sm_port",
                            "a cabled HCA port as \"node/port\" or a switch's name (its port 0)", e.what());
    }
  }
  return options;
}

/// The LIDs and routes the scenario's subnet manager gives `topology`; with routing "opensm", those the real
/// OpenSM computes. Every host must reach every other.
ib::sm::Subnet route(const ib::topo::Topology& topology, const FabricScenario& f, const std::string& file) {
  ib::sm::SmOptions options = sm_options(topology, f, file);
  OpenSmRun opensm; // holds OpenSM's files until they are read
  std::string what = f.routing;
  if (f.routing == "opensm") {
    OpenSmRequest request;
    request.engine = f.opensm_engine;
    request.lmc = f.lmc;
    // Named, not left to ibsim (whose default is the net file's first node, maybe a switch): the port our SM
    // would run on.
    request.sm_port =
        options.lids.sm_port.node != ib::topo::no_node ? options.lids.sm_port : ib::sm::default_sm_port(topology);
    try {
      opensm = run_opensm(topology, request);
    } catch (const OpenSmError& e) {
      throw sim::InputError(file, "/subnet_manager/routing",
                            e.install.empty() ? "an OpenSM run that brings the subnet up"
                                              : "OpenSM and ibsim installed (" + e.install + ")",
                            e.what());
    }
    if (opensm.engine_used != f.opensm_engine)
      throw sim::InputError(file, "/subnet_manager/engine", "an OpenSM engine that can route this topology",
                            "\"" + f.opensm_engine + "\", which OpenSM replaced by \"" + opensm.engine_used +
                                "\" (see its log: the engine refused the fabric)");
    options.engine = "file";
    options.lids.guid2lid_file = opensm.guid2lid_file;
    options.routing.lft_file = opensm.lft_file;
    what = "OpenSM's " + opensm.engine_used;
  }
  // Errors of a file the scenario names point at its key.
  const std::string lft_key = f.routing == "file" ? "/subnet_manager/lft_file" : "/subnet_manager/routing";
  if (!f.guid2lid_file.empty()) {
    try {
      ib::sm::assign_lids(topology, options.lids);
    } catch (const ib::sm::SmError& e) {
      throw sim::InputError(file, "/subnet_manager/guid2lid_file",
                            "OpenSM's guid2lid for this topology: one '0x<port GUID> <first LID> <last LID>' line per "
                            "switch and cabled HCA port, LID ranges as the LMC gives them, none overlapping",
                            e.what());
    }
  }
  try {
    ib::sm::Subnet subnet = ib::sm::run_subnet_manager(topology, options);
    if (subnet.check.unrouted_pairs > 0 || subnet.check.looping_pairs > 0)
      throw sim::InputError(file, lft_key, "a routing that reaches every host",
                            what + ", which leaves " + std::to_string(subnet.check.unrouted_pairs) + " unrouted and " +
                                std::to_string(subnet.check.looping_pairs) + " looping pairs" +
                                (subnet.check.problems.empty() ? "" : " (" + subnet.check.problems.front() + ")"));
    if (f.routing == "opensm") // warnings (a credit loop) name OpenSM's engine, not the replay
      subnet.routing.engine = "OpenSM " + opensm.engine_used;
    return subnet;
  } catch (const ib::sm::SmError& e) {
    throw sim::InputError(file, lft_key,
                          f.routing == "file" ? "an LFT dump of this topology's switches"
                                              : "a routing engine that can route this topology",
                          what + ": " + e.what());
  }
}

/// A routing whose channel dependencies have a cycle can deadlock under load (the check `topo check` runs).
std::string credit_loop_warning(const ib::topo::Topology& topology, const ib::sm::Subnet& subnet) {
  return "the " + subnet.routing.engine + " routes contain a credit loop, so the fabric can deadlock under load: " +
         ib::sm::describe_cycle(topology, subnet.check.cycle);
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
  if (!f.faults.empty())
    add("sm", f.sm_profile);                                // its timing decides how the SM reacts
  if (f.cc_configured || f.profiles.contains(f.cc_profile)) // the scenario configures congestion control
    add("cc", f.cc_profile);
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

/// The scenario's faults resolved against `topology`, flaps expanded, in time order: a link or switch the topology
/// lacks, a time past duration_us, or a change that cannot happen (a link_up of a link that is up) is an
/// InputError at the fault's pointer.
std::vector<ib::fabric::Fault> resolve_faults(const Scenario& scenario, const ib::topo::Topology& topology) {
  using ib::fabric::Fault;
  using ib::fabric::FaultKind;
  struct Timed {
    Fault fault;
    const FaultSpec* spec;
  };
  std::vector<Timed> timed;
  for (const FaultSpec& spec : scenario.fabric.faults) {
    const std::string target_pointer = spec.pointer + "/" + spec.target_key;
    const auto bad_target = [&](const std::string& expected) {
      return sim::InputError(scenario.file, target_pointer, expected, "\"" + spec.target + "\"");
    };
    Fault fault;
    fault.at = spec.at;
    if (scenario.duration != sim::Time::max() && spec.at >= scenario.duration)
      throw sim::InputError(scenario.file, spec.pointer + "/at_us",
                            "a time within the run (duration_us is " +
                                sim::param_detail::format_number(scenario.duration.us()) + ")",
                            sim::param_detail::format_number(spec.at.us()));
    if (spec.target_key == "switch") {
      const auto node = topology.find(spec.target);
      if (!node || topology.node(*node).kind != ib::topo::NodeKind::switch_node)
        throw bad_target("the name of a switch of the topology");
      fault.node = *node;
    } else {
      const std::string expected = "a cabled port of the topology as \"node/port\"";
      const auto slash = spec.target.rfind('/');
      if (slash == std::string::npos)
        throw bad_target(expected);
      const auto node = topology.find(std::string_view(spec.target).substr(0, slash));
      const std::string number = spec.target.substr(slash + 1);
      if (!node || number.empty() || number.size() > 3 || number.find_first_not_of("0123456789") != std::string::npos)
        throw bad_target(expected);
      const unsigned port = static_cast<unsigned>(std::stoul(number));
      if (port < 1 || port > topology.node(*node).port_count ||
          topology.peer(*node, static_cast<ib::topo::PortNumber>(port)).node == ib::topo::no_node)
        throw bad_target(expected);
      fault.link = topology.link_at(*node, static_cast<ib::topo::PortNumber>(port));
    }
    if (spec.type == "link_flap") {
      for (std::uint32_t k = 0; k < spec.count; ++k) {
        Fault down = fault, up = fault;
        down.kind = FaultKind::link_down;
        down.at = spec.at + spec.period * k;
        up.kind = FaultKind::link_up;
        up.at = down.at + spec.down_for;
        timed.push_back({down, &spec});
        timed.push_back({up, &spec});
      }
      continue;
    }
    fault.kind = spec.type == "link_down"     ? FaultKind::link_down
                 : spec.type == "link_up"     ? FaultKind::link_up
                 : spec.type == "switch_down" ? FaultKind::switch_down
                 : spec.type == "switch_up"   ? FaultKind::switch_up
                                              : FaultKind::bit_errors;
    fault.bit_error_rate = spec.bit_error_rate;
    timed.push_back({fault, &spec});
  }
  std::stable_sort(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) { return a.fault.at < b.fault.at; });
  // Play the changes in order: each must change something.
  std::vector<std::uint8_t> link_failed(topology.link_count(), 0), switch_failed(topology.node_count(), 0);
  std::vector<Fault> out;
  for (const Timed& t : timed) {
    const Fault& f = t.fault;
    const auto impossible = [&](const std::string& expected) {
      return sim::InputError(scenario.file, t.spec->pointer + "/" + t.spec->target_key, expected,
                             "\"" + t.spec->target + "\" at " + sim::param_detail::format_number(f.at.us()) + " us");
    };
    if (f.kind != FaultKind::bit_errors) {
      const bool is_link = f.kind == FaultKind::link_down || f.kind == FaultKind::link_up;
      const bool down = f.kind == FaultKind::link_down || f.kind == FaultKind::switch_down;
      std::uint8_t& failed = is_link ? link_failed[f.link] : switch_failed[f.node];
      if (failed == (down ? 1 : 0))
        throw impossible(is_link
                             ? (down ? "a link that is up at that time (it is already down)"
                                     : "a link that is down at that time (a link_up needs an earlier link_down)")
                             : (down ? "a switch that is up at that time (it has already failed)"
                                     : "a switch that has failed by then (a switch_up needs an earlier switch_down)"));
      failed = down ? 1 : 0;
    }
    out.push_back(f);
  }
  return out;
}

/// The SM's timing profile, read as every profile is (the scenario's "profiles" overrides apply).
ib::sm::Params sm_params(const FabricScenario& f, const std::string& scenario_file) {
  ib::sm::Params params = sim::read_named_profile(ib::sm::param_table(), f.sm_profile, f.profiles);
  const std::string broken = ib::sm::validate(params);
  if (!broken.empty())
    throw sim::InputError(sim::profile_path(f.sm_profile), "/parameters", "a consistent SM profile", broken);
  (void)scenario_file;
  return params;
}

/// The congestion control the SM configures: the cc profile with the scenario's settings, which profile_digests()
/// has already checked (a broken one is an InputError at the scenario's key there).
ib::sm::cc::Params cc_params(const FabricScenario& f) {
  ib::sm::cc::Params params = sim::read_named_profile(ib::sm::cc::param_table(), f.cc_profile, f.profiles);
  if (const std::string broken = ib::sm::cc::validate(params); !broken.empty())
    throw sim::InputError(sim::profile_path(f.cc_profile), "/parameters", "a consistent cc profile", broken);
  return params;
}

nlohmann::ordered_json port_counters(Cluster& cluster) {
  nlohmann::ordered_json ports = nlohmann::ordered_json::array();
  const sim::Simulator& sim = cluster.simulator();
  for (const auto& [a, b] : cluster.fabric().links()) {
    for (const ib::link::Port* p : {a, b}) {
      const ib::link::PortCounters c = p->counters();
      nlohmann::ordered_json row = sim::report_object(12);
      row["port"] = sim.component_name(p->owner_component_id()) + "/" + std::to_string(p->number());
      row["PortXmitData"] = c.xmit_data_words;
      row["PortRcvData"] = c.rcv_data_words;
      row["PortXmitPkts"] = c.xmit_pkts;
      row["PortRcvPkts"] = c.rcv_pkts;
      // perfquery's PortXmitWait is in ticks, whose length the device sets: the tick goes with it, and the time.
      row["PortXmitWait"] = c.xmit_wait_ticks;
      row["PortXmitWait_tick_ns"] = p->xmit_wait_tick().ns();
      row["PortXmitWait_ns"] = c.xmit_wait.ns();
      row["flow_control_packets"] = c.flow_control_pkts;
      if (c.link_downed + c.symbol_errors + c.packets_lost() + c.flow_control_lost > 0) {
        // Only faults make errors: a healthy run's rows stay as they were.
        row["LinkDownedCounter"] = c.link_downed;
        row["SymbolErrorCounter"] = c.symbol_errors;
        row["PortRcvErrors"] = c.rcv_errors;
        row["PortXmitDiscards"] = c.xmit_discards;
        row["PortRcvSwitchRelayErrors"] = c.rcv_switch_relay_errors;
        row["lost"] = {{"on_wire_at_link_down", c.lost_on_wire},
                       {"in_buffer_at_link_down", c.lost_in_buffer},
                       {"bad_crc", c.rcv_errors},
                       {"output_down", c.xmit_discards},
                       {"no_route", c.rcv_switch_relay_errors},
                       {"flow_control_bad_crc", c.flow_control_lost}};
      }
      nlohmann::ordered_json by_vl = nlohmann::ordered_json::object();
      for (int vl = 0; vl < ib::link::vl_slots; ++vl)
        if (c.xmit_pkts_by_vl[static_cast<std::size_t>(vl)] > 0)
          by_vl[std::to_string(vl)] = {{"xmit_data_words", c.xmit_data_words_by_vl[static_cast<std::size_t>(vl)]},
                                       {"xmit_pkts", c.xmit_pkts_by_vl[static_cast<std::size_t>(vl)]}};
      row["vls"] = std::move(by_vl);
      // perfquery -X and -S: data words per SL, either way.
      nlohmann::ordered_json by_sl = nlohmann::ordered_json::object();
      for (std::size_t sl = 0; sl < c.xmit_data_words_by_sl.size(); ++sl)
        if (c.xmit_data_words_by_sl[sl] + c.rcv_data_words_by_sl[sl] > 0)
          by_sl[std::to_string(sl)] = {{"PortXmitDataSL", c.xmit_data_words_by_sl[sl]},
                                       {"PortRcvDataSL", c.rcv_data_words_by_sl[sl]}};
      row["sls"] = std::move(by_sl);
      ports.push_back(std::move(row));
    }
  }
  return ports;
}

std::string_view to_string(ib::sm::Detection detection) {
  switch (detection) {
  case ib::sm::Detection::trap:
    return "trap";
  case ib::sm::Detection::light_sweep:
    return "light_sweep";
  case ib::sm::Detection::never:
    return "never";
  }
  return "?";
}

/// Each fault and the SM's reaction to it (with `adaptive` routing, the AR tables it rewrote too), then the losses and
/// the transport's recovery over the whole run.
nlohmann::ordered_json fault_report(Cluster& cluster, const ib::topo::Topology& topology, bool adaptive) {
  const ib::fabric::FaultInjector& injector = *cluster.faults();
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  const auto after = [](sim::Time fault_at, sim::Time offset) -> nlohmann::ordered_json {
    if (offset == sim::Time::max())
      return nullptr;
    return (fault_at + offset).us();
  };
  for (const ib::fabric::FaultRecord& r : injector.records()) {
    nlohmann::ordered_json e;
    e["type"] = ib::fabric::to_string(r.fault.kind);
    e["at_us"] = r.fault.at.us();
    if (r.fault.node != ib::topo::no_node) {
      e["switch"] = topology.node(r.fault.node).name;
    } else {
      const ib::topo::Link& cable = topology.link(r.fault.link);
      e["link"] = {topology.node(cable.a.node).name + "/" + std::to_string(cable.a.port),
                   topology.node(cable.b.node).name + "/" + std::to_string(cable.b.port)};
    }
    if (r.fault.kind == ib::fabric::FaultKind::bit_errors)
      e["bit_error_rate"] = r.fault.bit_error_rate;
    if (r.reacted) {
      const ib::sm::ReactionPlan& p = r.plan;
      nlohmann::ordered_json sm;
      sm["detection"] = to_string(p.detection);
      sm["detected_at_us"] = after(r.fault.at, p.detected_at);
      sm["sweep_started_at_us"] = after(r.fault.at, p.sweep_started_at);
      sm["routing_done_at_us"] = after(r.fault.at, p.routing_done_at);
      sm["rerouted_at_us"] = after(r.fault.at, p.last_lft_at);
      sm["done_at_us"] = after(r.fault.at, p.done_at);
      sm["fault_to_rerouted_us"] = p.last_lft_at == sim::Time::max() ? nlohmann::ordered_json(nullptr)
                                                                     : nlohmann::ordered_json(p.last_lft_at.us());
      sm["smps_sent"] = p.smps_sent;
      sm["smps_lost"] = p.smps_lost;
      sm["lft_blocks_sent"] = p.blocks_changed;
      sm["switches_updated"] = p.switches_updated;
      if (adaptive) // absent without adaptive routing, so that those reports stay as they were
        sm["ar_tables_written"] = p.ar_tables_changed;
      sm["engine"] = p.reroute.engine;
      sm["fell_back_to_minhop"] = p.reroute.fell_back;
      sm["unrouted_pairs"] = p.reroute.check.unrouted_pairs;
      e["subnet_manager"] = sm;
    }
    events.push_back(e);
  }
  std::uint64_t lost_on_wire = 0, lost_in_buffer = 0, bad_crc = 0, output_down = 0, no_route = 0, fc_lost = 0;
  for (const auto& [a, b] : cluster.fabric().links())
    for (const ib::link::Port* p : {a, b}) {
      const ib::link::PortCounters c = p->counters();
      lost_on_wire += c.lost_on_wire;
      lost_in_buffer += c.lost_in_buffer;
      bad_crc += c.rcv_errors;
      output_down += c.xmit_discards;
      no_route += c.rcv_switch_relay_errors;
      fc_lost += c.flow_control_lost;
    }
  ib::hca::QpCounters transport;
  std::uint32_t qps_failed = 0;
  for (std::size_t i = 0; i < cluster.host_count(); ++i) {
    if (const ib::endpoint::Endpoint* e = cluster.host(i).endpoint.get()) { // fabric-level: go-back-N on timeouts
      const ib::endpoint::Counters& c = e->counters();
      transport.retransmitted_packets += c.retransmitted_packets;
      transport.timeouts += c.timeouts;
      transport.sequence_naks_received += c.sequence_naks_received;
      transport.error_completions += c.messages_failed;
      transport.rc_requests_failed += c.messages_failed;
      qps_failed += c.connections_failed;
      continue;
    }
    const ib::hca::QpCounters q = cluster.host(i).hca->totals();
    transport.retransmitted_packets += q.retransmitted_packets;
    transport.timeouts += q.timeouts;
    transport.sequence_naks_received += q.sequence_naks_received;
    transport.error_completions += q.error_completions;
    transport.rc_requests_failed += q.rc_requests_failed;
    qps_failed += cluster.host(i).hca->failed_qps();
  }
  nlohmann::ordered_json out;
  out["events"] = events;
  out["packets_lost"] = {{"total", lost_on_wire + lost_in_buffer + bad_crc + output_down + no_route},
                         {"on_wire_at_link_down", lost_on_wire},
                         {"in_buffer_at_link_down", lost_in_buffer},
                         {"bad_crc", bad_crc},
                         {"output_down", output_down},
                         {"no_route", no_route}};
  out["flow_control_packets_lost"] = fc_lost;
  out["retransmitted_packets"] = transport.retransmitted_packets;
  out["retry_timeouts"] = transport.timeouts;
  out["sequence_naks"] = transport.sequence_naks_received;
  out["error_completions"] = transport.error_completions;
  out["rc_requests_failed"] = transport.rc_requests_failed;
  out["qps_in_error"] = qps_failed;
  return out;
}

/// The table's summary of fault_report(): what was lost and recovered, then each fault and the SM's reaction (the
/// first few; the report has them all).
std::vector<std::string> fault_table(const nlohmann::ordered_json& faults) {
  using sim::param_detail::format_number;
  const auto count = [](const nlohmann::ordered_json& v) { return std::to_string(v.get<std::uint64_t>()); };
  std::vector<std::string> lines;
  const nlohmann::ordered_json& events = faults.at("events");
  const nlohmann::ordered_json& lost = faults.at("packets_lost");
  std::ostringstream head;
  head << "faults: " << events.size() << (events.size() == 1 ? " fault event" : " fault events") << "; "
       << count(lost.at("total")) << " packets lost";
  std::string causes;
  for (const auto& [key, text] :
       std::initializer_list<std::pair<const char*, const char*>>{{"on_wire_at_link_down", "on the wire at link down"},
                                                                  {"in_buffer_at_link_down", "in buffers at link down"},
                                                                  {"bad_crc", "bad CRC"},
                                                                  {"output_down", "routed to a down port"},
                                                                  {"no_route", "with no route"}})
    if (lost.at(key).get<std::uint64_t>() > 0)
      causes += (causes.empty() ? "" : ", ") + count(lost.at(key)) + " " + text;
  if (!causes.empty())
    head << " (" << causes << ")";
  if (faults.at("flow_control_packets_lost").get<std::uint64_t>() > 0)
    head << " and " << count(faults.at("flow_control_packets_lost")) << " flow-control packets";
  head << "; " << count(faults.at("retransmitted_packets")) << " packets resent after "
       << count(faults.at("retry_timeouts")) << " timeouts and " << count(faults.at("sequence_naks"))
       << " sequence NAKs; " << count(faults.at("rc_requests_failed")) << " RC work requests completed in error, "
       << count(faults.at("qps_in_error")) << " QPs in error";
  lines.push_back(head.str());
  constexpr std::size_t shown = 8;
  for (std::size_t i = 0; i < events.size() && i < shown; ++i) {
    const nlohmann::ordered_json& e = events[i];
    std::ostringstream line;
    line << " " << e.at("type").get<std::string>() << " ";
    if (e.contains("switch"))
      line << e.at("switch").get<std::string>();
    else
      line << e.at("link")[0].get<std::string>() << "-" << e.at("link")[1].get<std::string>();
    if (e.contains("bit_error_rate"))
      line << " (bit error rate " << format_number(e.at("bit_error_rate").get<double>()) << ")";
    line << " at " << format_number(e.at("at_us").get<double>()) << " us";
    if (e.contains("subnet_manager")) {
      const nlohmann::ordered_json& sm = e.at("subnet_manager");
      const nlohmann::ordered_json& detected = sm.at("detected_at_us");
      if (detected.is_null())
        line << ": the SM never learns of it";
      else
        line << ": SM " << (sm.at("detection") == "trap" ? "trap" : "sweep") << " at "
             << format_number(detected.get<double>()) << " us";
      if (sm.at("rerouted_at_us").is_null())
        line << ", no LFT changed";
      else
        line << ", rerouted at " << format_number(sm.at("rerouted_at_us").get<double>()) << " us ("
             << format_number(sm.at("fault_to_rerouted_us").get<double>()) << " us after), "
             << count(sm.at("lft_blocks_sent")) << " LFT blocks to " << count(sm.at("switches_updated")) << " switches";
      line << ", " << count(sm.at("smps_sent")) << " SMPs";
      if (sm.at("unrouted_pairs").get<std::uint64_t>() > 0)
        line << ", " << count(sm.at("unrouted_pairs")) << " host pairs left without a route";
    }
    lines.push_back(line.str());
  }
  if (events.size() > shown)
    lines.push_back(" ... and " + std::to_string(events.size() - shown) + " more (results.faults.events)");
  return lines;
}

/// PCIe TLPs and transactions per message sent, per host and over the cluster, by direction and type.
/// Cluster::event_counts as a document, with each part's events per message sent.
sim::ReportJson events_by_part(const Cluster& cluster, std::uint64_t messages) {
  const ib::host::EventCounts& c = cluster.event_counts();
  const std::pair<const char*, std::uint64_t> parts[] = {
      {"programs", c.programs}, {"pcie", c.pcie},           {"pcie_deferred", c.pcie_deferred},
      {"hca", c.hca},           {"hca_ports", c.hca_ports}, {"switches", c.switches},
      {"faults", c.faults},     {"endpoints", c.endpoints}, {"timers", c.timers}};
  sim::ReportJson out;
  out["messages"] = messages;
  sim::ReportJson by;
  for (const auto& [name, events] : parts) {
    by[name]["events"] = events;
    by[name]["per_message"] = static_cast<double>(events) / static_cast<double>(std::max<std::uint64_t>(messages, 1));
  }
  out["parts"] = by;
  return out;
}

/// Calls `visit(node, switch)` for every switch of the fabric, in topology order.
template <class Visit>
void for_each_switch(Cluster& cluster, const ib::topo::Topology& topology, Visit&& visit) {
  for (std::size_t n = 0; n < topology.node_count(); ++n) {
    const auto node = static_cast<ib::topo::NodeIndex>(n);
    if (topology.node(node).kind == ib::topo::NodeKind::switch_node)
      visit(node, std::as_const(cluster.fabric().switch_of(node)));
  }
}

/// Congestion control (IBA A10): where switches marked FECN, and how the CAs reacted, in total and per host.
nlohmann::ordered_json congestion_report(Cluster& cluster, const ib::topo::Topology& topology) {
  nlohmann::ordered_json marked = nlohmann::ordered_json::array();
  std::uint64_t fecn_marked = 0;
  for_each_switch(cluster, topology, [&](ib::topo::NodeIndex node, const ib::sw::Switch& s) {
    for (std::uint32_t p = 1; p <= s.port_count(); ++p)
      if (const std::uint64_t count = s.fecn_marked(static_cast<std::uint8_t>(p)); count > 0) {
        marked.push_back({{"port", topology.node(node).name + "/" + std::to_string(p)}, {"fecn_marked", count}});
        fecn_marked += count;
      }
  });
  ib::link::cc::CaCounters total;
  nlohmann::ordered_json hosts = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < cluster.host_count(); ++i) {
    const auto& host = cluster.host(i);
    const ib::link::cc::CaCounters& c =
        host.endpoint ? host.endpoint->congestion_counters() : host.hca->congestion_counters();
    total += c;
    if (c.fecn_received + c.becn_received == 0)
      continue;
    hosts[cluster.host(i).name] = {{"fecn_received", c.fecn_received},         {"becn_sent", c.becn_sent},
                                   {"becn_received", c.becn_received},         {"max_ccti", c.max_ccti},
                                   {"throttled_packets", c.throttled_packets}, {"throttled_us", c.throttled_time.us()}};
  }
  nlohmann::ordered_json out;
  out["fecn_marked"] = fecn_marked;
  out["fecn_received"] = total.fecn_received;
  out["becn_sent"] = total.becn_sent;
  out["becn_received"] = total.becn_received;
  out["trigger_events"] = total.trigger_events;
  out["throttled_packets"] = total.throttled_packets;
  out["throttled_us"] = total.throttled_time.us();
  out["max_ccti"] = total.max_ccti;
  out["marking_ports"] = marked;
  out["hosts"] = hosts;
  return out;
}

/// Adaptive routing: the switches' choices and the reordering the endpoints or HCAs absorbed.
nlohmann::ordered_json adaptive_report(Cluster& cluster, const ib::topo::Topology& topology) {
  std::uint64_t decisions = 0, off_static = 0;
  for_each_switch(cluster, topology, [&](ib::topo::NodeIndex, const ib::sw::Switch& s) {
    decisions += s.counters().adaptive_decisions;
    off_static += s.counters().adaptive_off_static;
  });
  std::uint64_t out_of_order = 0;
  std::uint32_t depth = 0;
  for (std::size_t i = 0; i < cluster.host_count(); ++i)
    if (const ib::endpoint::Endpoint* e = cluster.host(i).endpoint.get()) {
      out_of_order += e->counters().packets_out_of_order;
      depth = std::max(depth, e->counters().reorder_depth_max);
    } else {
      const ib::hca::QpCounters q = cluster.host(i).hca->totals();
      out_of_order += q.packets_out_of_order;
      depth = std::max(depth, q.reorder_depth_max);
    }
  nlohmann::ordered_json out;
  out["packets_routed_adaptively"] = decisions;
  out["packets_off_static_port"] = off_static;
  out["packets_out_of_order"] = out_of_order;
  out["reorder_depth_max"] = depth;
  return out;
}

/// HostModel::fabric: what the endpoints sent and received, over the cluster.
nlohmann::ordered_json endpoint_totals(Cluster& cluster) {
  ib::endpoint::Counters total;
  for (std::size_t i = 0; i < cluster.host_count(); ++i) {
    const ib::endpoint::Counters& c = cluster.host(i).endpoint->counters();
    total.messages_posted += c.messages_posted;
    total.messages_completed += c.messages_completed;
    total.messages_delivered += c.messages_delivered;
    total.data_packets_sent += c.data_packets_sent;
    total.acks_sent += c.acks_sent;
    total.payload_bytes_sent += c.payload_bytes_sent;
    total.payload_bytes_received += c.payload_bytes_received;
  }
  nlohmann::ordered_json out;
  out["messages_sent"] = total.messages_posted;
  out["messages_delivered"] = total.messages_delivered;
  out["messages_completed"] = total.messages_completed;
  out["data_packets_sent"] = total.data_packets_sent;
  out["acks_sent"] = total.acks_sent;
  out["payload_bytes_sent"] = total.payload_bytes_sent;
  out["payload_bytes_received"] = total.payload_bytes_received;
  return out;
}

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
    recv_wqe_misses,
    qp_context_reads,
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
        down.tlps[0],      down.tlps[2],       up.tlps[0],         up.tlps[1],        down.tlp_bytes[0],
        down.tlp_bytes[2], up.tlp_bytes[0],    up.tlp_bytes[1],    pc.doorbells,      pc.blueflame_writes,
        pc.mmio_bytes,     pc.wqe_fetches,     pc.payload_reads,   pc.payload_writes, pc.recv_wqe_fetches,
        pc.cqe_writes,     pc.recv_wqe_misses, pc.qp_context_reads};
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
    row["recv_wqe_misses"] = pc.recv_wqe_misses;
    row["qp_context_reads"] = pc.qp_context_reads;
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
                        {"cqe_writes", per(total[cqe_writes])},
                        {"recv_wqe_misses", per(total[recv_wqe_misses])},
                        {"qp_context_reads", per(total[qp_context_reads])}};
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

nlohmann::ordered_json validate_fabric(const Scenario& scenario, std::vector<std::string>* warnings) {
  const ib::topo::Topology topology = load(scenario.fabric, scenario.file);
  const ib::sm::Subnet subnet = route(topology, scenario.fabric, scenario.file);
  if (warnings != nullptr && !subnet.check.cycle.empty())
    warnings->push_back(credit_loop_warning(topology, subnet));
  resolve_faults(scenario, topology);
  if (!scenario.fabric.faults.empty())
    sm_params(scenario.fabric, scenario.file);
  nlohmann::ordered_json profiles = profile_digests(topology, scenario.fabric, scenario.file);
  cc_params(scenario.fabric);
  ib::host::ClusterOptions options;
  options.profiles = scenario.fabric.profiles;
  options.host_model = scenario.fabric.host_model;
  ib::sm::ArTables adaptive; // the HCAs must be able to take what AR reorders
  if (scenario.fabric.adaptive_routing) {
    adaptive = ib::sm::tree_groups(topology, subnet.lids, subnet.routing);
    options.adaptive_routing = &adaptive;
  }
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
  report["results"] = std::move(results);
  return out;
}

/// Throws `credit-deadlock` naming the cycle of ports if the fabric is deadlocked now.
void diagnose_deadlock(Cluster& cluster, const Scenario& scenario) {
  const std::string cycle = cluster.fabric().find_credit_deadlock();
  if (!cycle.empty())
    throw sim::InvariantViolation(
        "credit-deadlock", scenario.name,
        "the fabric deadlocked: each switch output of a cycle waits for credits that the next "
        "one's waiting packets hold",
        cycle + " at t=" + std::to_string(cluster.simulator().now().ps()) + " ps");
}

RunResult run_fabric(const Scenario& scenario, const RunOptions& run_options) {
  const FabricScenario& f = scenario.fabric;
  const ib::topo::Topology topology = load(f, scenario.file);
  if (run_options.tracer != nullptr)
    check_trace_components(topology, run_options.tracer->filter());
  const ib::sm::Subnet subnet = route(topology, f, scenario.file);
  std::vector<std::string> warnings;
  if (!subnet.check.cycle.empty())
    warnings.push_back(credit_loop_warning(topology, subnet));
  if (run_options.warnings != nullptr)
    for (const std::string& w : warnings)
      *run_options.warnings << "ibnetsim: warning: " << w << '\n';
  ib::host::ClusterOptions options;
  options.seed = scenario.seed;
  options.verify_contents = f.verify_contents;
  options.cadence_dllps = f.pcie_dllp_cadence;
  options.profiles = f.profiles;
  options.host_model = f.host_model;
  const nlohmann::ordered_json profiles = profile_digests(topology, f, scenario.file);
  const ib::sm::cc::Params cc = cc_params(f);
  options.congestion_switch = ib::sm::cc::switch_setting(cc);
  options.congestion_ca = ib::sm::cc::ca_setting(cc);
  ib::sm::ArTables adaptive;
  if (f.adaptive_routing) {
    adaptive = ib::sm::tree_groups(topology, subnet.lids, subnet.routing);
    options.adaptive_routing = &adaptive;
  }
  Cluster cluster(topology, subnet, options);
  if (!f.faults.empty()) {
    cluster.inject_faults(resolve_faults(scenario, topology), sm_options(topology, f, scenario.file),
                          sm_params(f, scenario.file));
  }
  std::deque<ib::host::Rendezvous> rendezvous; // one per workload: each has its own QPs
  for (const auto& w : f.workloads)
    w->spawn(cluster, rendezvous.emplace_back());
  check_program_count(cluster, scenario);
  cluster.simulator().set_progress_hook(run_options.progress_hook, run_options.progress_context);
  cluster.set_tracer(run_options.tracer);
  cluster.count_events(run_options.count_events);
  sim::HostRuntime::Outcome outcome;
  try {
    outcome = cluster.run(scenario.duration);
  } catch (const sim::InvariantViolation&) {
    // A retry counter exceeded, or a program stuck, is often a fabric that deadlocked: say so, naming the cycle.
    diagnose_deadlock(cluster, scenario);
    throw;
  }
  if (f.host_model == ib::host::HostModel::fabric) // no programs: the hosts' state machines that had not ended
    for (const auto& w : f.workloads)
      outcome.programs_stopped += w->programs_running();
  const bool finished = outcome.programs_stopped == 0;
  const bool interrupted = cluster.simulator().halted();
  if (!finished && !interrupted)
    diagnose_deadlock(cluster, scenario);
  // With faults, a program may wait for a message that was lost, as a real one would hang: reported, not an error.
  if (!finished && !interrupted && scenario.duration == sim::Time::max() && f.faults.empty())
    throw sim::InvariantViolation("program-deadlock", scenario.name,
                                  "the fabric went idle with programs still waiting for something that never comes",
                                  std::to_string(outcome.programs_stopped) + " programs blocked at t=" +
                                      std::to_string(cluster.simulator().now().ps()) + " ps");
  // A run cut short by duration_us or interrupted cannot be quiescent; credits must still be conserved.
  const std::string broken = finished && !interrupted
                                 ? cluster.check_invariants()
                                 : cluster.fabric().check_invariants(false) + cluster.check_exactly_once();
  if (!broken.empty())
    throw sim::InvariantViolation("fabric-run", scenario.name, "the run ended with an invariant broken", broken);
  // What follows reads counters only: the QPs' memory goes before the workloads' reports take theirs.
  cluster.release_queue_pairs();

  RunResult result;
  sim::ReportJson& report = result.report;
  report = sim::report_object(12); // the CLI adds keys after the results
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

  sim::ReportJson results = sim::report_object(24); // the workloads' flows weigh hundreds of MB: never regrown
  // The workloads' span; the fabric then drains (final ACKs, credits). Drained is the last event that did
  // something: timer entries the traffic left behind (a retry timer stopped by the last ACK) fire later, stale.
  results["simulated_time_us"] = (!finished ? cluster.simulator().now() : cluster.programs_ended_at()).us();
  results["drained_at_us"] = cluster.simulator().last_active_at().us();
  if (!warnings.empty())
    results["warnings"] = warnings;
  results["finished"] = finished;
  if (!finished)
    results["programs_blocked"] = outcome.programs_stopped;
  results["kernel_events_dispatched"] = cluster.simulator().events_dispatched();
  results["program_wakeups"] = outcome.wakeups;
  sim::ReportJson workloads;
  for (const auto& w : f.workloads) {
    sim::ReportJson entry = sim::report_object(4);
    entry["type"] = w->type();
    entry["results"] = w->results();
    if (!w->failed_work_requests().empty() || w->programs_failed() > 0) {
      nlohmann::ordered_json failed = nlohmann::ordered_json::object();
      for (const auto& [status, count] : w->failed_work_requests())
        failed[status] = count;
      entry["failed_work_requests"] = failed;
      entry["programs_failed"] = w->programs_failed();
    }
    for (const std::string& line : w->table())
      result.table.push_back(line);
    if (entry.contains("failed_work_requests")) {
      std::ostringstream line;
      line << " failed work requests:";
      for (const auto& [status, count] : entry["failed_work_requests"].items())
        line << " " << count.get<std::uint64_t>() << " " << status << ";";
      line << " programs ended by an error: " << w->programs_failed();
      result.table.push_back(line.str());
    }
    workloads[w->name()] = std::move(entry);
    result.table.push_back("");
  }
  results["workloads"] = std::move(workloads);
  if (cluster.faults() != nullptr) {
    results["faults"] = fault_report(cluster, topology, f.adaptive_routing);
    for (const std::string& line : fault_table(results["faults"]))
      result.table.push_back(line);
    result.table.push_back("");
  }
  if (f.adaptive_routing) { // absent when off, so that reports without it stay as they were
    results["adaptive_routing"] = adaptive_report(cluster, topology);
    const auto& ar = results["adaptive_routing"];
    std::ostringstream line;
    line << "adaptive routing: " << ar.at("packets_routed_adaptively").get<std::uint64_t>()
         << " packets routed by AR groups, " << ar.at("packets_off_static_port").get<std::uint64_t>()
         << " by another port than the LFT's; " << ar.at("packets_out_of_order").get<std::uint64_t>()
         << " arrived out of order, at most " << ar.at("reorder_depth_max").get<std::uint64_t>()
         << " PSNs held by one QP";
    result.table.push_back(line.str());
    result.table.push_back("");
  }
  if (options.congestion_switch.enabled) { // absent when off, so that reports without it stay as they were
    results["congestion_control"] = congestion_report(cluster, topology);
    const auto& cc = results["congestion_control"];
    std::ostringstream line;
    line << "congestion control: " << cc.at("fecn_marked").get<std::uint64_t>() << " packets marked FECN at "
         << cc.at("marking_ports").size() << " switch ports, " << cc.at("becn_received").get<std::uint64_t>()
         << " BECNs received, " << cc.at("throttled_packets").get<std::uint64_t>() << " packets throttled for "
         << sim::param_detail::format_number(cc.at("throttled_us").get<double>()) << " us in all, highest CCTI "
         << cc.at("max_ccti").get<std::uint64_t>();
    result.table.push_back(line.str());
    result.table.push_back("");
  }
  const bool endpoints = cluster.host_model() == ib::host::HostModel::fabric;
  if (endpoints)
    results["endpoints"] = endpoint_totals(cluster);
  else
    results["pcie"] = pcie_per_message(cluster);
  results["ports"] = port_counters(cluster);
  const std::uint64_t messages_sent = results[endpoints ? "endpoints" : "pcie"]["messages_sent"].get<std::uint64_t>();
  report["results"] = std::move(results); // a million flows weigh hundreds of MB: moved, never copied
  result.events_dispatched = cluster.simulator().events_dispatched();
  if (run_options.count_events)
    result.events_by_part = events_by_part(cluster, messages_sent);
  for (std::size_t i = 0; i < cluster.host_count(); ++i) {
    const ib::host::HostNode& h = cluster.host(i);
    const auto qps = static_cast<std::uint32_t>(h.hca ? h.hca->qp_count() : h.endpoint->connection_count());
    if (qps > 0)
      result.max_qpn = std::max(result.max_qpn, qps + 1);
  }
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

std::string config_digest(const Scenario& scenario, std::vector<std::string>* warnings) {
  const nlohmann::ordered_json profiles = scenario.workload == WorkloadType::fabric
                                              ? validate_fabric(scenario, warnings)
                                              : nlohmann::ordered_json::object();
  return sim::digest_hex(run_config(scenario, profiles).dump());
}

} // namespace ib::scenario
