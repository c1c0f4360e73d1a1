// Benchmark of the links-and-switches issue: packet-hops per second through a two-level leaf-spine of 4x EDR
// links under full uniform random load. Every host sends 4 KiB RDMA WRITE packets back to back, each to a
// destination drawn uniformly among the other hosts; switches are Switch-IB 2 (topologies/hardware profile), with
// shortest-path LFTs spread by DLID over the spines. A packet-hop is one packet crossing one link. Prints
// packet-hops/s, events/s, delivered throughput and peak RSS. Usage: fabric_bench [--hosts-per-leaf H] [--leaves L]
// [--spines S] [--duration-us T] (defaults 16, 32, 16, 500: 512 hosts, full bisection).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sim/memory.h"
#include "sim/profile.h"
#include "sim/report.h"
#include "tests/support/test_fabric.h"

namespace {

struct Options {
  std::uint32_t hosts_per_leaf = 16;
  std::uint32_t leaves = 32;
  std::uint32_t spines = 16;
  std::int64_t duration_us = 500;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const long long v = std::atoll(argv[i + 1]);
    if (std::strcmp(argv[i], "--hosts-per-leaf") == 0) {
      o.hosts_per_leaf = static_cast<std::uint32_t>(v);
    } else if (std::strcmp(argv[i], "--leaves") == 0) {
      o.leaves = static_cast<std::uint32_t>(v);
    } else if (std::strcmp(argv[i], "--spines") == 0) {
      o.spines = static_cast<std::uint32_t>(v);
    } else if (std::strcmp(argv[i], "--duration-us") == 0) {
      o.duration_us = v;
    } else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      std::exit(2);
    }
  }
  return o;
}

} // namespace

int main(int argc, char** argv) {
  sim::back_heap_with_huge_pages(); // as ibnetsim runs
  using namespace ib;
  const Options o = parse(argc, argv);
  testing::TestFabric net(1);
  // Switches are Switch-IB 2 as its profile describes them, with as many ports as the topology needs.
  sw::Params leaf_params = sim::read_profile(sw::param_table(), sim::load_profile(sim::profile_path("switch-ib2-edr")));
  sw::Params spine_params = leaf_params;
  leaf_params.port_count = std::max(leaf_params.port_count, o.hosts_per_leaf + o.spines);
  spine_params.port_count = std::max(spine_params.port_count, o.leaves);
  // Endpoints stand in for HCAs: the switch's buffer and flow-control cadence until HCA profiles exist.
  const link::PortConfig endpoint_port{leaf_params.input_buffer_bytes_per_port,
                                       static_cast<std::uint8_t>(leaf_params.vl_cap),
                                       leaf_params.vl15_buffer_packets,
                                       leaf_params.flow_control_refresh,
                                       true,
                                       sim::Time::zero(),
                                       leaf_params.xmit_wait_tick_symbols};
  const link::LinkConfig cable = testing::edr_link(2);

  for (std::uint32_t l = 0; l < o.leaves; ++l) {
    net.add_switch(testing::numbered("leaf", l), leaf_params);
  }
  for (std::uint32_t s = 0; s < o.spines; ++s) {
    net.add_switch(testing::numbered("spine", s), spine_params);
  }
  const std::uint32_t hosts = o.leaves * o.hosts_per_leaf;
  std::vector<std::uint16_t> all_lids;
  for (std::uint32_t h = 0; h < hosts; ++h) {
    all_lids.push_back(static_cast<std::uint16_t>(h + 1));
  }
  for (std::uint32_t h = 0; h < hosts; ++h) {
    testing::PacketEndpoint& e = net.add_endpoint(testing::numbered("h", h), all_lids[h], endpoint_port);
    // The benchmark measures the fabric: its sinks count what arrives and check each packet's DLID, but keep no
    // record per source (hosts squared of them, touched at random). In-order delivery under this same uniform
    // traffic is checked by the leaf-spine and fat-tree tests (switch_test, fabric_test).
    e.keep_source_stats(false);
    e.check_order(false);
    const std::uint32_t leaf = h / o.hosts_per_leaf;
    net.connect(e.port(), net.switches[leaf].port(static_cast<std::uint8_t>(h % o.hosts_per_leaf + 1)), cable);
    testing::Flow flow;
    flow.uniform_dlid_first = all_lids.front();
    flow.uniform_dlid_last = all_lids.back();
    flow.payload_bytes = 4096;
    e.add_flow(flow);
  }
  for (std::uint32_t l = 0; l < o.leaves; ++l) {
    for (std::uint32_t s = 0; s < o.spines; ++s) {
      net.connect(net.switches[l].port(static_cast<std::uint8_t>(o.hosts_per_leaf + s + 1)),
                  net.switches[o.leaves + s].port(static_cast<std::uint8_t>(l + 1)), cable);
    }
  }
  net.route_shortest_paths();
  net.start();

  const auto started = std::chrono::steady_clock::now();
  net.run(sim::Time::from_us(o.duration_us));
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::uint64_t hops = 0;
  for (const auto& [a, b] : net.links) {
    hops += a->counters().xmit_pkts + b->counters().xmit_pkts;
  }
  std::uint64_t delivered_bytes = 0;
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  for (const testing::PacketEndpoint& e : net.endpoints) {
    delivered_bytes += e.payload_bytes_received();
    sent += e.packets_sent();
    received += e.packets_received();
  }
  std::string problems = net.check_invariants(false);
  // Mid-run, every packet sent and not yet received must still be held by the fabric: none was lost.
  if (sent - received != net.pool.live()) {
    problems += "no-packet-loss: " + std::to_string(sent) + " sent, " + std::to_string(received) + " received, but " +
                std::to_string(net.pool.live()) + " held by the fabric; ";
  }
  const double sim_s = static_cast<double>(o.duration_us) * 1e-6;
  std::printf("leaf-spine: %u hosts, %u leaves x %u spines, 4x EDR, uniform random 4 KiB packets, %lld us simulated\n",
              hosts, o.leaves, o.spines, static_cast<long long>(o.duration_us));
  std::printf("packet-hops: %llu in %.2f s = %.2f M packet-hops/s\n", static_cast<unsigned long long>(hops), wall_s,
              static_cast<double>(hops) / wall_s / 1e6);
  std::printf("events: %llu = %.2f M events/s\n", static_cast<unsigned long long>(net.sim.events_dispatched()),
              static_cast<double>(net.sim.events_dispatched()) / wall_s / 1e6);
  std::printf("delivered payload per host: %.1f Gb/s of %.1f Gb/s (%.1f %%)\n",
              static_cast<double>(delivered_bytes) * 8 / sim_s / hosts / 1e9, 100.0,
              static_cast<double>(delivered_bytes) * 8 / sim_s / hosts / 1e9);
  std::printf("peak RSS: %.1f MiB\n", static_cast<double>(sim::peak_rss_bytes()) / (1024.0 * 1024.0));
  if (!problems.empty()) {
    std::fprintf(stderr, "invariant violated: %s\n", problems.c_str());
    return 3;
  }
  return 0;
}
