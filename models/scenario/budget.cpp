#include "models/scenario/budget.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "models/topology/catalog.h"
#include "models/topology/topology.h"
#include "sim/errors.h"
#include "sim/json_reader.h"

namespace ib::scenario {
namespace {

// Costs per item, measured as peak RSS (/usr/bin/time) of Release runs on Debian 12 (glibc malloc, the heap on
// transparent huge pages as main() sets it up), fitted over runs that vary one item at a time; docs/user-guide.md
// ("Memory") gives the runs. Each is what the item costs a run, allocator overhead and growth of its containers
// included.

// The process itself: a 2-host fabric or a 16-LP PHOLD run peaks at 34.6 to 37.5 MiB.
constexpr double process_bytes = 36.0 * 1024 * 1024;
// A host (HCA, PCIe bus, host memory, its cable's port): fat trees of 512 to 5832 hosts at fixed switches, 26.8 to
// 27.1 KiB per host.
constexpr double host_bytes = 27.0 * 1024;
// A fabric-level host (host_model "fabric": its endpoint, port and cable, and what the SM keeps per host beside the
// forwarding tables): benchmark (g)'s fat tree with 8, 16 and 32 hosts per leaf (2,048 to 8,192 hosts at the same
// 768 switches, one message per host), 12.1 to 13.4 KiB per host (2026-11-29).
constexpr double fabric_host_bytes = 12.5 * 1024;
// A switch port (input buffers and queues per VL): 130 KiB per 36-port Switch-IB 2 switch, from fat trees and leaf-
// spines of 40 to 972 switches.
constexpr double switch_port_bytes = 3.6 * 1024;
// An entry of a switch's linear forwarding table, one per LID (std::uint8_t).
constexpr double lft_entry_bytes = 1;
// A QP (its state, rings, host-memory regions and the workload's rendezvous entry): all_to_all of 256, 512 and 1,024
// hosts (65,280 to 1,047,552 QPs: 801, 765 and 634 bytes each beside the other items here, 2026-11-29).
constexpr double qp_bytes = 800;
// host_model "fabric": a connection of an endpoint (104 B since 2026-11-29; its timer, holds and congestion state
// made only when used), its ring of posted messages, the pattern's (peer, QPN) entry (estimate, from the structures'
// sizes; benchmark (g), 3.2 million connections, estimates 1.0 GiB and measures 0.84 GiB).
constexpr double endpoint_connection_bytes = 192;
// A send queue entry the HCA model holds (the WQE as posted and the requester's state of it: one 96-byte ring
// entry), a receive queue entry (24 bytes) and a CQ entry (48 bytes): the structures' sizes. ib_write_bw over 16 QPs
// of 64 B messages at tx_depth 16384 (20,000 iterations) measures 112 MiB against 152 MiB estimated: the model holds
// send entries only as far as a queue fills (2026-11-29). An earlier fit gave 72 bytes per receive entry with its CQ
// entry.
constexpr double send_slot_bytes = 96;
constexpr double recv_slot_bytes = 24;
constexpr double cq_entry_bytes = 48;
// A planned message of a traffic pattern (its plan entry, post time and latency, as their vectors grow): 47.8 bytes
// per message for uniform_random over 16 hosts with 6.4 million messages.
constexpr double message_bytes = 48;
// A time kept for figures (sim::Time).
constexpr double sample_bytes = 8;
// A pattern's per-flow record (32 bytes) and an entry of a per-host map over every host (4 bytes).
constexpr double flow_bytes = 32;
constexpr double peer_map_entry_bytes = 4;
// A host program: its 64 KiB stack, of which only the touched pages are resident (sim/memory.h), and SimGrid's actor
// (sim/host_runtime.cpp): 9.0 to 9.2 KB each between 16 and 24,000 PHOLD programs (2026-11-29).
constexpr double program_bytes_each = 9'150;
// PHOLD: an LP (its name, random stream and counter) and a pending event (the calendar's 32-byte entry, in chunks):
// 1 and 4 million LPs of one event (156 bytes each), and 1 million of 1 and 16 events (65 bytes per event) give 91
// and 65 (2026-11-29, since the calendar's chunks stopped doubling as a vector).
constexpr double phold_lp_bytes = 91;
constexpr double phold_event_bytes = 65;

double program_bytes(std::uint64_t programs) {
  return static_cast<double>(programs) * program_bytes_each;
}

std::string count_text(std::uint64_t n) {
  return std::to_string(n);
}

class Estimate {
public:
  void add(std::string what, std::string pointer, double bytes) {
    if (bytes > 0)
      items_.push_back({std::move(what), std::move(pointer), bytes});
  }
  MemoryEstimate done(std::uint64_t max_qps_per_host) {
    MemoryEstimate out;
    std::stable_sort(items_.begin(), items_.end(),
                     [](const MemoryItem& a, const MemoryItem& b) { return a.bytes > b.bytes; });
    for (const MemoryItem& item : items_)
      out.total_bytes += item.bytes;
    out.items = std::move(items_);
    out.max_qps_per_host = max_qps_per_host;
    return out;
  }

private:
  std::vector<MemoryItem> items_;
};

ib::topo::Topology load_topology(const Scenario& scenario) {
  const FabricScenario& f = scenario.fabric;
  ib::topo::ProfileCatalog catalog(f.profiles);
  if (!f.topology_path.empty())
    return ib::topo::load_topology(f.topology_path, catalog);
  return ib::topo::read_topology(sim::JsonDocument{scenario.file, f.topology_inline, "/topology"}, catalog);
}

MemoryEstimate estimate_fabric(const Scenario& scenario) {
  const FabricScenario& f = scenario.fabric;
  const ib::topo::Topology topology = load_topology(scenario);
  std::uint64_t hosts = 0, hca_ports = 0, switches = 0, switch_ports = 0;
  for (std::size_t n = 0; n < topology.node_count(); ++n) {
    const ib::topo::Node& node = topology.node(static_cast<ib::topo::NodeIndex>(n));
    if (node.kind == ib::topo::NodeKind::hca) {
      ++hosts;
      hca_ports += node.port_count;
    } else {
      ++switches;
      switch_ports += node.port_count;
    }
  }
  const std::uint64_t lids = (hca_ports + switches) << f.lmc;
  Estimate e;
  e.add("the process", "", process_bytes);
  e.add("the fabric's " + count_text(hosts) + " hosts", "/topology",
        static_cast<double>(hosts) * (f.host_model == ib::host::HostModel::fabric ? fabric_host_bytes : host_bytes));
  e.add("the fabric's " + count_text(switches) + " switches (" + count_text(switch_ports) + " ports)", "/topology",
        static_cast<double>(switch_ports) * switch_port_bytes);
  e.add("forwarding tables of " + count_text(switches) + " switches x " + count_text(lids) + " LIDs", "/topology",
        static_cast<double>(switches * (lids + 1)) * lft_entry_bytes);
  std::uint64_t max_qps_per_host = 0;
  for (const auto& w : f.workloads) {
    ib::host::Footprint p = w->footprint(hosts);
    const std::string& name = w->name();
    max_qps_per_host += p.max_qps_per_host;
    if (f.host_model == ib::host::HostModel::fabric) { // no programs, verbs queues or per-peer maps of programs
      e.add(name + ": " + count_text(p.qps) + " connections", p.qps_pointer,
            static_cast<double>(p.qps) * endpoint_connection_bytes);
      p.peer_map_entries = 0;
    } else {
      e.add(name + ": " + count_text(p.programs) + " programs", p.programs_pointer, program_bytes(p.programs));
      e.add(name + ": " + count_text(p.qps) + " QPs", p.qps_pointer, static_cast<double>(p.qps) * qp_bytes);
      const std::uint64_t send_slots = p.send_slots_held != 0 ? p.send_slots_held : p.send_slots;
      e.add(name + ": " + count_text(send_slots) + " send and " + count_text(p.recv_slots) + " receive queue entries",
            p.slots_pointer,
            static_cast<double>(send_slots) * send_slot_bytes + static_cast<double>(p.recv_slots) * recv_slot_bytes +
                static_cast<double>(p.cq_entries) * cq_entry_bytes);
    }
    e.add(name + ": " + count_text(p.messages) + " planned messages", p.messages_pointer,
          static_cast<double>(p.messages) * message_bytes);
    e.add(name + ": " + count_text(p.samples) + " recorded times", p.samples_pointer,
          static_cast<double>(p.samples) * sample_bytes);
    e.add(name + ": " + count_text(p.flows) + " flows and " + count_text(p.peer_map_entries) + " per-peer entries",
          p.flows_pointer,
          static_cast<double>(p.flows) * flow_bytes + static_cast<double>(p.peer_map_entries) * peer_map_entry_bytes);
    if (f.verify_contents) // host memory then holds every byte of its buffers and queues
      e.add(name + ": host memory contents (verify_contents)", p.buffer_pointer,
            static_cast<double>(p.buffer_bytes + p.queue_bytes));
  }
  return e.done(max_qps_per_host);
}

MemoryEstimate estimate_phold(const Scenario& scenario) {
  const phold::Params& p = scenario.phold;
  Estimate e;
  e.add("the process", "", process_bytes);
  e.add("phold: " + count_text(p.lp_count) + " LPs", "/workload/lp_count",
        static_cast<double>(p.lp_count) * phold_lp_bytes);
  const std::uint64_t events = std::uint64_t{p.lp_count} * p.initial_events_per_lp;
  e.add("phold: " + count_text(events) + " pending events", "/workload/initial_events_per_lp",
        static_cast<double>(events) * phold_event_bytes);
  e.add("phold: " + count_text(p.program_count) + " programs", "/workload/program_count",
        program_bytes(p.program_count));
  return e.done(0);
}

} // namespace

MemoryEstimate estimate_memory(const Scenario& scenario) {
  return scenario.workload == WorkloadType::fabric ? estimate_fabric(scenario) : estimate_phold(scenario);
}

std::string format_bytes(double bytes) {
  static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(units)) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 || bytes >= 100 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return text;
}

void check_memory(const Scenario& scenario, const MemoryEstimate& estimate, std::uint64_t limit_bytes,
                  const std::string& limit_source) {
  if (estimate.total_bytes <= static_cast<double>(limit_bytes))
    return;
  std::string biggest;
  std::string pointer;
  for (std::size_t i = 0; i < estimate.items.size() && i < 3; ++i) {
    const MemoryItem& item = estimate.items[i];
    if (pointer.empty())
      pointer = item.pointer;
    biggest += (i == 0 ? "" : "; ") + item.what + ", " + format_bytes(item.bytes) +
               (item.pointer.empty() ? "" : " (" + item.pointer + ")");
  }
  throw sim::InputError(scenario.file, pointer,
                        "a run that fits in " + format_bytes(static_cast<double>(limit_bytes)) + " of memory (" +
                            limit_source + ")",
                        "an estimated peak of " + format_bytes(estimate.total_bytes) + ", mostly " + biggest);
}

std::optional<std::uint64_t> available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  std::uint64_t kib = 0;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:")
      return kib * 1024;
  return std::nullopt;
}

} // namespace ib::scenario
