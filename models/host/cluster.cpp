#include "models/host/cluster.h"

#include <algorithm>
#include <stdexcept>

#include "models/pcie/params.h"
#include "sim/errors.h"
#include "sim/profile.h"

namespace ib::host {

Cluster::Cluster(const topo::Topology& topology, const sm::Subnet& subnet, const ClusterOptions& options)
    : topology_(topology), subnet_(subnet), switch_index_(topology), options_(options), sim_(options.seed),
      host_of_node_(topology.node_count(), -1), runtime_(sim_) {
  fabric_ = std::make_unique<fabric::Fabric>(sim_, packets_, switch_type, topology, subnet,
                                             static_cast<fabric::HcaPorts&>(*this), options_.profiles);
  if (options_.congestion_switch.enabled)
    fabric_->set_congestion_control(options_.congestion_switch);
  if (options_.adaptive_routing != nullptr) {
    fabric_->set_adaptive_routing(*options_.adaptive_routing);
    for (HostNode& h : hosts_) {
      if (h.endpoint)
        h.endpoint->enable_out_of_order();
      h.out_of_order_rc = true;
    }
  }
  if (options_.congestion_ca.enabled)
    for (HostNode& h : hosts_) {
      if (h.endpoint)
        h.endpoint->set_congestion_control(options_.congestion_ca);
      if (h.hca)
        h.hca->set_congestion_control(options_.congestion_ca);
    }
  // HCA ports use the SM's SL2VL where the routing sets one (dor's datelines); otherwise SL modulo VLs.
  for (HostNode& h : hosts_) {
    if (h.node >= subnet.routing.sl_to_vl.size() || subnet.routing.sl_to_vl[h.node].empty())
      continue;
    const unsigned ports = h.hca ? h.hca->params().port_count : h.endpoint->port_count();
    for (unsigned p = 1; p <= ports; ++p) {
      const auto number = static_cast<std::uint8_t>(p);
      link::Port& port = h.hca ? h.hca->port(number) : h.endpoint->port(number);
      if (!port.connected())
        continue;
      std::array<std::uint8_t, 16> table{};
      for (std::uint8_t sl = 0; sl < 16; ++sl)
        table[sl] = sm::output_vl(subnet.routing, h.node, static_cast<topo::PortNumber>(p), sl, port.data_vls());
      if (h.hca)
        h.hca->set_sl_to_vl(number, table);
      else
        h.endpoint->set_sl_to_vl(number, table);
    }
  }
}

Cluster::~Cluster() = default;

std::uint8_t Cluster::path_sl(const HostNode& node, std::uint16_t dlid) const {
  if (subnet_.routing.path_sl_by_switch.empty())
    return 0;
  const std::uint16_t slid = node.hca ? node.hca->lid(1) : node.endpoint->lid();
  return sm::path_sl(subnet_.routing, switch_index_, subnet_.lids, slid, dlid);
}

link::Port& Cluster::hca_port(topo::NodeIndex node, topo::PortNumber port, sm::Lid base_lid,
                              const hca::Params& params) {
  if (options_.host_model == HostModel::fabric) {
    // No PCIe slot or host behind the port: the endpoint's latencies stand for them.
    if (host_of_node_[node] < 0) {
      host_of_node_[node] = static_cast<std::int32_t>(hosts_.size());
      HostNode& h = hosts_.emplace_back();
      h.name = topology_.node(node).name;
      h.node = node;
      h.subnet = &subnet_;
      h.switch_index = &switch_index_;
      h.component_id = sim_.add_component(h.name);
      const endpoint::Params endpoint_params{params.endpoint_send_latency, params.endpoint_ack_latency,
                                             params.endpoint_completion_latency, params.ack_request_interval_packets};
      h.endpoint = std::make_unique<endpoint::Endpoint>(
          sim::Target{endpoint_type, static_cast<std::uint32_t>(hosts_.size() - 1)}, h.component_id, packets_,
          params.port_count, endpoint_params);
    }
    HostNode& h = hosts_[static_cast<std::size_t>(host_of_node_[node])];
    link::Port& p = h.endpoint->port(static_cast<std::uint8_t>(port));
    p.bind(sim::Target{endpoint_type, static_cast<std::uint32_t>(host_of_node_[node])}, h.component_id,
           static_cast<std::uint8_t>(port), fabric::hca_port_config(params));
    h.endpoint->set_lid(static_cast<std::uint8_t>(port), base_lid);
    return p;
  }
  if (host_of_node_[node] < 0) {
    const std::string& name = topology_.node(node).name;
    if (options_.adaptive_routing != nullptr && params.out_of_order_window_packets == 0)
      throw sim::InputError(sim::profile_path(topology_.node(node).profile), "/parameters/out_of_order_window_packets",
                            "at least 1 with adaptive routing: the fabric reorders packets, and host " + name +
                                "'s HCA would answer every gap with a sequence NAK (out-of-order data placement "
                                "came with ConnectX-5)",
                            "0");
    auto link_entry = link_profiles_.find(params.pcie_link);
    if (link_entry == link_profiles_.end())
      link_entry = link_profiles_
                       .emplace(params.pcie_link,
                                sim::read_named_profile(pcie::link_param_table(), params.pcie_link, options_.profiles))
                       .first;
    auto host_entry = host_profiles_.find(params.host);
    if (host_entry == host_profiles_.end())
      host_entry =
          host_profiles_
              .emplace(params.host, sim::read_named_profile(pcie::host_param_table(), params.host, options_.profiles))
              .first;
    const pcie::LinkParams& link = link_entry->second;
    const pcie::HostParams& host = host_entry->second;
    std::string problem = pcie::validate(link);
    if (problem.empty())
      problem = pcie::validate(host);
    if (problem.empty())
      problem = pcie::validate(link, host);
    if (!problem.empty())
      throw sim::InputError(sim::profile_path(params.pcie_link), "", "a consistent PCIe slot and host", problem);
    pcie::BusConfig bus = pcie::bus_config(link, host);
    bus.cadence_dllps = options_.cadence_dllps;
    host_of_node_[node] = static_cast<std::int32_t>(hosts_.size());
    HostNode& h = hosts_.emplace_back();
    h.name = name;
    h.node = node;
    h.runtime = &runtime_;
    h.subnet = &subnet_;
    h.switch_index = &switch_index_;
    h.memory = std::make_unique<pcie::HostMemory>(options_.verify_contents);
    const std::uint32_t id = sim_.add_component(name);
    h.component_id = id;
    h.hca = std::make_unique<hca::Hca>(
        params, bus, host, sim::Target{hca_type, static_cast<std::uint32_t>(hosts_.size() - 1)}, id, wire_, *h.memory);
  }
  HostNode& h = hosts_[static_cast<std::size_t>(host_of_node_[node])];
  link::Port& p = h.hca->port(static_cast<std::uint8_t>(port));
  p.bind(sim::Target{hca_type, static_cast<std::uint32_t>(host_of_node_[node])}, h.component_id,
         static_cast<std::uint8_t>(port), fabric::hca_port_config(params));
  h.hca->set_lid(static_cast<std::uint8_t>(port), base_lid);
  return p;
}

void Cluster::discard(link::PacketHandle packet) {
  const std::uint32_t headers = packets_[packet].transport_headers;
  if (headers != sim::Handle<hca::TransportHeaders>::invalid_value)
    wire_.headers.release(sim::Handle<hca::TransportHeaders>{headers});
  packets_.release(packet);
}

void Cluster::inject_faults(std::vector<fabric::Fault> faults, const sm::SmOptions& options,
                            const sm::Params& sm_params) {
  if (faults.empty())
    return;
  faults_ = std::make_unique<fabric::FaultInjector>(
      *fabric_, topology_, subnet_, options, sm_params, std::move(faults), sim::Target{fault_type, 0},
      static_cast<link::PacketDiscard&>(*this), options_.adaptive_routing);
  for (HostNode& h : hosts_) {
    h.faults = true;
    if (h.endpoint)
      h.endpoint->enable_retransmission();
  }
}

void Cluster::set_tracer(sim::Tracer* tracer) {
  if (tracer != nullptr)
    for (std::uint32_t id = 0; id < sim_.component_count(); ++id)
      tracer->name_component(id, sim_.component_name(id));
  for (const auto& [a, b] : fabric_->links()) {
    a->set_tracer(tracer);
    b->set_tracer(tracer);
  }
  for (HostNode& h : hosts_)
    if (h.hca)
      h.hca->set_tracer(tracer);
    else
      h.endpoint->set_tracer(tracer);
}

HostNode& Cluster::host(std::string_view name) {
  const auto node = topology_.find(name);
  if (!node || host_of_node_[*node] < 0)
    throw std::invalid_argument("no host named " + std::string(name));
  return hosts_[static_cast<std::size_t>(host_of_node_[*node])];
}

void Cluster::spawn(std::string_view host_name, std::string program_name, std::function<void(Context&)> body) {
  HostNode& node = host(host_name);
  runtime_.spawn(std::move(program_name), [this, &node, body = std::move(body)](sim::Program& program) {
    Context context(program, node);
    body(context);
    context.settle();
    programs_ended_at_ = std::max(programs_ended_at_, program.now());
  });
}

namespace {
/// The fabric's events to their models; with `Count`, also tallied by part of the model.
template <bool Count>
struct ClusterDispatch {
  Cluster& cluster;
  fabric::Fabric& fabric;
  std::deque<HostNode>& hosts;
  fabric::FaultInjector* faults;
  sim::Simulator& sim;
  EventCounts& counts;
  std::vector<Timed*>& timed;
  void operator()(const sim::Event& e) {
    if (e.type == switch_type) {
      if constexpr (Count)
        ++counts.switches;
      fabric.on_switch_event(sim, e);
    } else if (e.type == hca_type) {
      if constexpr (Count) {
        if (e.kind >= static_cast<std::uint8_t>(hca::Hca::Kind::first_bus_kind))
          ++counts.pcie;
        else if (e.kind <= static_cast<std::uint8_t>(hca::Hca::Kind::tx_wake))
          ++counts.hca_ports;
        else
          ++counts.hca;
      }
      hosts[e.index].hca->on_event(sim, e);
    } else if (e.type == endpoint_type) {
      if constexpr (Count)
        ++counts.endpoints;
      hosts[e.index].endpoint->on_event(sim, e);
    } else if (e.type == timer_type) {
      if constexpr (Count)
        ++counts.timers;
      timed[e.index]->on_timer(sim, e.handle);
    } else {
      if constexpr (Count)
        ++counts.faults;
      faults->on_event(sim, e);
    }
  }
  void prefetch(const sim::Event& e) const {
    if (e.type == switch_type)
      fabric.prefetch_switch_event(e);
  }
  void prefetch_near(const sim::Event& e) const {
    if (e.type == switch_type)
      fabric.prefetch_switch_event_near(e);
  }
};
} // namespace

sim::HostRuntime::Outcome Cluster::run(sim::Time until) {
  if (faults_)
    faults_->start(sim_);
  sim::HostRuntime::Outcome outcome;
  if (counting_) {
    ClusterDispatch<true> dispatch{*this, *fabric_, hosts_, faults_.get(), sim_, event_counts_, timed_};
    outcome = runtime_.run(dispatch, until);
  } else {
    ClusterDispatch<false> dispatch{*this, *fabric_, hosts_, faults_.get(), sim_, event_counts_, timed_};
    outcome = runtime_.run(dispatch, until);
  }
  // The buses' deferred events due by the end happen as if the calendar had held them.
  const sim::Time end = sim_.halted() ? sim_.now() : until;
  for (HostNode& h : hosts_)
    if (h.hca)
      h.hca->settle(sim_, end);
  if (counting_) {
    const EventCounts& c = event_counts_;
    event_counts_.programs =
        sim_.events_dispatched() - c.pcie - c.hca - c.hca_ports - c.switches - c.faults - c.endpoints - c.timers;
    for (const HostNode& h : hosts_)
      if (h.hca)
        event_counts_.pcie_deferred += h.hca->bus().deferred_events();
  }
  return outcome;
}

void Cluster::release_queue_pairs() {
  for (HostNode& h : hosts_) {
    if (h.hca)
      h.hca->release_queue_pairs();
    if (h.endpoint)
      h.endpoint->release_connections();
  }
}

std::string Cluster::check_invariants() const {
  std::string problems = fabric_->check_invariants(true);
  std::uint64_t placed = 0;
  std::uint64_t completed = 0;
  std::uint32_t failed = 0;
  std::uint64_t delivered = 0, completed_messages = 0;
  std::uint32_t hca_failed = 0; // a sender that gave up may leave its receiver holding packets out of order
  for (const HostNode& h : hosts_)
    if (h.hca)
      hca_failed += h.hca->failed_qps();
  for (const HostNode& h : hosts_) {
    if (h.endpoint) {
      const std::string p = h.endpoint->check_quiescent();
      if (!p.empty())
        problems += h.name + ": " + p;
      delivered += h.endpoint->counters().messages_delivered;
      completed_messages += h.endpoint->counters().messages_completed;
      continue;
    }
    const std::string p = h.hca->check_quiescent(hca_failed > 0);
    if (!p.empty())
      problems += h.name + ": " + p + "\n";
    placed += h.hca->responder_bytes_placed();
    completed += h.hca->requester_bytes_completed();
    failed += h.hca->failed_qps();
  }
  // Go-back-N drops what follows a gap and never places a duplicate, so even with faults the two agree, unless a
  // QP failed with part of a message placed.
  if (failed == 0 && placed != completed)
    problems += "responders placed " + std::to_string(placed) + " bytes, requesters completed " +
                std::to_string(completed) + "\n";
  // Fabric-level hosts: a message is delivered once its last packet is in, completed once its ACK is back; with
  // faults a message may be delivered and its sender fail before the ACK comes back, never the other way round.
  if (faults_ ? completed_messages > delivered : delivered != completed_messages)
    problems += "endpoints delivered " + std::to_string(delivered) + " messages, completed " +
                std::to_string(completed_messages) + "\n";
  problems += check_exactly_once();
  if (wire_.headers.live() != 0 || packets_.live() != 0)
    problems += std::to_string(packets_.live()) + " packets still live\n";
  return problems;
}

std::string Cluster::check_exactly_once() const {
  // Each RC connection's requester and responder keep their counts apart; they must agree that every completed
  // request was delivered and nothing was delivered that was not posted. A double delivery with a loss would
  // hide in the counts, but go-back-N accepts only the expected PSN, which the transport tests cover.
  std::string problems;
  for (const HostNode& h : hosts_) {
    if (!h.hca)
      continue;
    for (const hca::RcConnection& c : h.hca->rc_connections()) {
      const sm::Lid dest = c.dest_lid;
      if (dest > subnet_.lids.max_lid())
        continue;
      const topo::PortRef owner = subnet_.lids.owner(dest);
      if (owner.node == topo::no_node || host_of_node_[owner.node] < 0)
        continue;
      const HostNode& peer = hosts_[static_cast<std::size_t>(host_of_node_[owner.node])];
      if (!peer.hca || c.dest_qpn < 2 || c.dest_qpn - 2 >= peer.hca->qp_count())
        continue;
      const hca::QpTrafficCounters& a = h.hca->qp_traffic_counters(c.qpn);
      // Accepted, not yet delivered: the ACK leaves on acceptance, before the payload is placed.
      const std::uint64_t accepted = peer.hca->qp_traffic_counters(c.dest_qpn).rc_messages_accepted;
      if (accepted < a.rc_requests_completed || accepted > a.rc_requests_posted)
        problems += "exactly-once: " + h.name + " QP " + std::to_string(c.qpn) + " -> " + peer.name + " QP " +
                    std::to_string(c.dest_qpn) + ": " + std::to_string(a.rc_requests_completed) +
                    " requests completed, " + std::to_string(a.rc_requests_posted) + " posted, but " +
                    std::to_string(accepted) + " messages accepted\n";
    }
  }
  return problems;
}

} // namespace ib::host
