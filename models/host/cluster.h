// A running cluster: the fabric of a topology programmed by its subnet manager, and behind every HCA port a host
// (host memory, PCIe bus and HCA from the node's profile and the profiles it names) whose programs are SimGrid
// actors. It owns the kernel, dispatches events to switches and HCAs, and checks the invariants at the end:
// credits conserved, nothing left in the fabric, every posted work request completed, and the bytes responders
// placed equal to the bytes requesters had completed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "models/endpoint/endpoint.h"
#include "models/fabric/fabric.h"
#include "models/fabric/faults.h"
#include "models/hca/hca.h"
#include "models/host/context.h"
#include "models/link/congestion.h"
#include "models/pcie/params.h"
#include "models/sm/subnet.h"
#include "models/topology/topology.h"
#include "sim/host_runtime.h"
#include "sim/profile.h"
#include "sim/simulator.h"

namespace ib::host {

inline constexpr sim::ComponentType switch_type = 1;
inline constexpr sim::ComponentType hca_type = 2;
inline constexpr sim::ComponentType fault_type = 3;
inline constexpr sim::ComponentType endpoint_type = 4;
inline constexpr sim::ComponentType timer_type = 5;

/// What stands behind each HCA port (docs/host-models.md): the full host (verbs, HCA pipeline, PCIe, host memory,
/// programs as SimGrid actors) or the fabric-level endpoint (models/endpoint), fixed latencies and line-rate
/// injection, driven by event-driven workloads without programs.
enum class HostModel : std::uint8_t { full, fabric };

struct ClusterOptions {
  std::uint64_t seed = 1;
  bool verify_contents = false;   ///< host memory keeps bytes, so payloads can be checked
  bool cadence_dllps = true;      ///< PCIe Ack/UpdateFC DLLPs at the spec's cadence (bus.h)
  sim::ProfileOverrides profiles; ///< parameters of named profiles changed for this run (a scenario's "profiles")
  HostModel host_model = HostModel::full;
  /// Congestion control as the SM configures it (IBA A10); disabled by default. CAs of both host models react.
  link::cc::SwitchSetting congestion_switch;
  link::cc::CaSetting congestion_ca;
  /// Adaptive routing tables the SM programs (sm::tree_groups), or nullptr for static routing alone. Fabric-level
  /// hosts then accept packets out of order, and programs create their RC QPs with out-of-order data placement.
  const sm::ArTables* adaptive_routing = nullptr;
};

/// One host: its memory, its HCA, and the completion signals its CQs raise; or, with HostModel::fabric, its
/// endpoint alone.
struct HostNode {
  std::string name;
  topo::NodeIndex node = topo::no_node;
  std::uint32_t component_id = 0;
  std::unique_ptr<pcie::HostMemory> memory;
  std::unique_ptr<hca::Hca> hca;                ///< null with HostModel::fabric
  std::unique_ptr<endpoint::Endpoint> endpoint; ///< null with HostModel::full
  std::deque<sim::Signal> signals;              ///< completion channels, each raised by one CQ or more
  std::vector<sim::Signal*> cq_signals;         ///< by CQ number: its channel's signal
  std::deque<sim::Signal> watch_signals;        ///< by buffer watch (Context::watch_buffer)
  sim::HostRuntime* runtime = nullptr;
  const sm::Subnet* subnet = nullptr; ///< for path records (SLs)
  const sm::SwitchIndex* switch_index = nullptr;
  /// Faults are injected: a work request completing in error is an outcome to report, not a model failure.
  bool faults = false;
  /// The fabric routes adaptively: the host's RC QPs are created with out-of-order data placement
  /// (QpCaps::out_of_order), as communication libraries set it up on AR fabrics (NVIDIA's HowTo Configure Adaptive
  /// Routing and SHIELD).
  bool out_of_order_rc = false;
};

/// Events by the part of the model that handled them, for the benchmarks (Cluster::count_events).
struct EventCounts {
  std::uint64_t programs = 0;      ///< program wake-ups (SimGrid actors resumed, or stale halves of a timed wait)
  std::uint64_t pcie = 0;          ///< the PCIe buses' events in the calendar
  std::uint64_t pcie_deferred = 0; ///< and those the buses handled without it (pcie::Bus, deferred events)
  std::uint64_t hca = 0;           ///< the HCAs' transport: doorbells, WQEs, receive processing, CQEs, timers
  std::uint64_t hca_ports = 0;     ///< HCA ports: packet arrivals, serialization ends, flow control
  std::uint64_t switches = 0;      ///< switches: packet arrivals, serialization ends, flow control
  std::uint64_t faults = 0;        ///< fault injection and the SM's reaction
  std::uint64_t endpoints = 0;     ///< fabric-level hosts (HostModel::fabric): their ports and transport
  std::uint64_t timers = 0;        ///< event-driven workloads' timers (HostModel::fabric)
};

/// An event-driven part of a workload (HostModel::fabric has no programs): woken by the timers it sets.
class Timed {
public:
  virtual ~Timed() = default;
  virtual void on_timer(sim::Simulator& sim, std::uint32_t handle) = 0;
};

class Cluster : private fabric::HcaPorts, private link::PacketDiscard {
public:
  /// Builds everything; profiles that do not read or validate are sim::InputError.
  Cluster(const topo::Topology& topology, const sm::Subnet& subnet, const ClusterOptions& options = {});
  ~Cluster() override;

  sim::Simulator& simulator() { return sim_; }
  HostModel host_model() const { return options_.host_model; }
  /// Registers `timed` for timers; returns the target its events take (sim.schedule(at, target, 0, handle)).
  sim::Target add_timed(Timed& timed) {
    timed_.push_back(&timed);
    return sim::Target{timer_type, static_cast<std::uint32_t>(timed_.size() - 1)};
  }
  /// An event-driven workload's host finished its work at `at` (as a program's body returning).
  void note_program_ended(sim::Time at) { programs_ended_at_ = std::max(programs_ended_at_, at); }
  /// The SL of the path from `node`'s port 1 to `dlid` (the SM's path record).
  std::uint8_t path_sl(const HostNode& node, std::uint16_t dlid) const;
  fabric::Fabric& fabric() { return *fabric_; }
  std::size_t host_count() const { return hosts_.size(); }
  HostNode& host(std::string_view name);
  HostNode& host(std::size_t i) { return hosts_[i]; }

  /// A program on host `host_name`, started when run() starts.
  void spawn(std::string_view host_name, std::string program_name, std::function<void(Context&)> body);
  /// Injects `faults` (in time order) during run(); the SM reacts as `options` and `sm_params` say. Call before
  /// run(). With faults, work requests may complete in error and programs may wait for what was lost. With
  /// adaptive routing, the SM's reactions rewrite the switches' AR tables too.
  void inject_faults(std::vector<fabric::Fault> faults, const sm::SmOptions& options, const sm::Params& sm_params);
  /// The injector, or nullptr when no faults are injected.
  const fabric::FaultInjector* faults() const { return faults_.get(); }
  std::size_t program_count() const { return runtime_.program_count(); }
  /// Sends a timeline of every component to `tracer` (nullptr: none). Call before run().
  void set_tracer(sim::Tracer* tracer);
  /// Runs until every program has ended and the fabric is idle, or until `until`.
  sim::HostRuntime::Outcome run(sim::Time until = sim::Time::max());
  /// Makes run() count events by part of the model (a little slower); call before run().
  void count_events(bool on) { counting_ = on; }
  /// What run() counted; all zero unless count_events(true).
  const EventCounts& event_counts() const { return event_counts_; }
  /// When the last program ended (its body returned).
  sim::Time programs_ended_at() const { return programs_ended_at_; }
  /// "" when every invariant holds after the run; else what broke.
  std::string check_invariants() const;
  /// Every RC connection delivered each request it completed, and nothing it did not post (`exactly-once`):
  /// completed <= delivered <= posted, at any time. "" when it holds.
  std::string check_exactly_once() const;
  /// The run is over and its invariants checked: every HCA frees its QPs (hca::Hca::release_queue_pairs), every
  /// fabric-level endpoint its connections.
  void release_queue_pairs();

private:
  link::Port& hca_port(topo::NodeIndex node, topo::PortNumber port, sm::Lid base_lid,
                       const hca::Params& params) override;
  void discard(link::PacketHandle packet) override;

  const topo::Topology& topology_;
  const sm::Subnet& subnet_;
  sm::SwitchIndex switch_index_;
  ClusterOptions options_;
  sim::Simulator sim_;
  bool counting_ = false;
  EventCounts event_counts_;
  link::PacketPool packets_;
  hca::Wire wire_{packets_};
  std::deque<HostNode> hosts_;
  std::vector<std::int32_t> host_of_node_;
  std::unique_ptr<fabric::Fabric> fabric_;
  /// The HCAs' PCIe slot and host profiles, each read once, as the fabric reads its profiles: reading them again for
  /// every HCA made setting up a fabric of a thousand hosts take seconds in a sanitizer build.
  std::map<std::string, pcie::LinkParams, std::less<>> link_profiles_;
  std::map<std::string, pcie::HostParams, std::less<>> host_profiles_;
  sim::HostRuntime runtime_;
  std::unique_ptr<fabric::FaultInjector> faults_;
  std::vector<Timed*> timed_;
  sim::Time programs_ended_at_;
};

} // namespace ib::host
