// A small fabric composed in code for link and switch tests: switches, packet endpoints (tests/support), links
// between their ports, shortest-path LFTs, the dispatcher, and the invariant checks every test runs at the end.
// models/fabric will build fabrics from topology files; this harness exists until HCAs and the SM do.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "models/link/link.h"
#include "models/switch/switch.h"
#include "sim/simulator.h"
#include "tests/support/names.h"
#include "tests/support/packet_endpoint.h"

namespace ib::testing {

inline constexpr sim::ComponentType switch_type = 1;
inline constexpr sim::ComponentType endpoint_type = 2;

/// A switch profile for tests, shaped like Switch-IB 2 with round numbers; tests override what they study.
inline sw::Params test_switch_params() {
  sw::Params p{};
  p.port_count = 8;
  p.link_widths = "1x,4x";
  p.link_speeds = "SDR,DDR,QDR,FDR10,FDR,EDR,HDR,NDR";
  p.port_to_port_latency = sim::Time::from_ns(100);
  p.cut_through = true;
  p.input_buffer_bytes_per_port = 8 * 512 * 64;
  p.vl_cap = 8;
  p.vl15_buffer_packets = 4;
  p.flow_control_refresh = sim::Time::from_us(2);
  p.xmit_wait_tick_symbols = 8;
  return p;
}

inline link::PortConfig test_endpoint_port(std::uint32_t buffer_bytes = 8 * 512 * 64, std::uint8_t vl_cap = 8) {
  return {buffer_bytes, vl_cap, 4, sim::Time::from_us(2), true, sim::Time::zero(), 8};
}

/// 4x EDR: 100 Gb/s of data.
inline link::LinkConfig edr_link(double length_m = 2, double ns_per_m = 5) {
  return {link::data_rate(link::Width::x4, link::Speed::edr),
          sim::Time::from_ps(static_cast<std::int64_t>(length_m * ns_per_m * 1000 + 0.5))};
}

class TestFabric {
public:
  explicit TestFabric(std::uint64_t seed = 1) : sim(seed) {}

  sw::Switch& add_switch(const std::string& name, const sw::Params& params = test_switch_params()) {
    const std::uint32_t id = sim.add_component(name);
    const auto index = static_cast<std::uint32_t>(switches.size());
    switches.emplace_back(params, sim::Target{switch_type, index}, id, pool);
    switch_at.push_back(&switches.back());
    nodes.push_back({false, index});
    return switches.back();
  }

  /// An endpoint with LID = its order among nodes + 1 unless given.
  PacketEndpoint& add_endpoint(const std::string& name, std::uint16_t lid,
                               const link::PortConfig& config = test_endpoint_port()) {
    const std::uint32_t id = sim.add_component(name);
    const auto index = static_cast<std::uint32_t>(endpoints.size());
    endpoints.emplace_back(sim::Target{endpoint_type, index}, id, lid, pool, config, sim.rng_for(id));
    endpoint_at.push_back(&endpoints.back());
    nodes.push_back({true, index});
    return endpoints.back();
  }

  /// One switch "s1" with `hosts` endpoints h1..hN (LID k on port k) over 2 m EDR cables, routed.
  sw::Switch& add_star(std::uint16_t hosts, const sw::Params& params = test_switch_params()) {
    sw::Switch& s = add_switch("s1", params);
    for (std::uint16_t lid = 1; lid <= hosts; ++lid) {
      connect(add_endpoint(numbered("h", lid), lid).port(), s.port(static_cast<std::uint8_t>(lid)), edr_link(2));
    }
    route_shortest_paths();
    return s;
  }

  void connect(link::Port& a, link::Port& b, const link::LinkConfig& config) {
    link::connect(a, b, config);
    links.emplace_back(&a, &b);
  }

  /// Fills every switch's LFT with shortest paths to every endpoint LID (ties: the lowest-numbered port, or
  /// spread by DLID when `spread`), from a BFS over the wiring.
  void route_shortest_paths(bool spread = true);

  void start() {
    for (PacketEndpoint& e : endpoints) {
      e.start(sim);
    }
  }

  void run(sim::Time until) {
    struct Dispatch {
      TestFabric& net;
      void operator()(const sim::Event& event) {
        switch (event.type) {
        case switch_type:
          net.switch_at[event.index]->on_event(net.sim, event);
          return;
        case endpoint_type:
          net.endpoint_at[event.index]->on_event(net.sim, event);
          return;
        default:
          return;
        }
      }
      void prefetch(const sim::Event& event) const {
        if (event.type == switch_type)
          net.switch_at[event.index]->prefetch(event);
        else if (event.type == endpoint_type)
          net.endpoint_at[event.index]->prefetch(event);
      }
      void prefetch_near(const sim::Event& event) const {
        if (event.type == switch_type)
          net.switch_at[event.index]->prefetch_near(event);
        else if (event.type == endpoint_type)
          net.endpoint_at[event.index]->prefetch_near(event);
      }
    } dispatch{*this};
    sim.run_until(dispatch, until);
  }

  /// Runs until no event is left (sources must be finite).
  void drain() { run(sim::Time::max()); }

  /// Every invariant of the fabric: credits per VL per link direction, switch buffer accounting, and, when
  /// `quiescent`, that no packet is left anywhere. "" when all hold.
  std::string check_invariants(bool quiescent) const {
    std::string problems;
    for (const auto& [a, b] : links) {
      problems += link::check_credit_conservation(*a, *b, quiescent);
      problems += link::check_credit_conservation(*b, *a, quiescent);
    }
    for (const sw::Switch& s : switches) {
      problems += s.check_invariants();
    }
    if (quiescent && pool.live() != 0) {
      problems += "no-packet-loss: " + std::to_string(pool.live()) + " packets still held after the fabric drained; ";
    }
    return problems;
  }

  sim::Simulator sim;
  link::PacketPool pool;
  std::deque<sw::Switch> switches;
  std::deque<PacketEndpoint> endpoints;
  // The same, indexed by event.index without a deque's two-level lookup on every event.
  std::vector<sw::Switch*> switch_at;
  std::vector<PacketEndpoint*> endpoint_at;
  std::vector<std::pair<link::Port*, link::Port*>> links;

private:
  struct NodeRef {
    bool endpoint;
    std::uint32_t index;
  };
  std::vector<NodeRef> nodes;
};

inline void TestFabric::route_shortest_paths(bool spread) {
  // Graph: node ids are switches first (0..S-1), then endpoints (S..S+E-1); one neighbour entry per wired port.
  const std::size_t switch_count = switches.size();
  struct Neighbour {
    std::uint8_t port;
    std::size_t node;
  };
  std::vector<std::vector<Neighbour>> neighbours(switch_count + endpoints.size());
  auto locate = [&](const link::Port* port) -> std::pair<std::size_t, std::uint8_t> {
    for (std::size_t s = 0; s < switch_count; ++s) {
      for (std::uint32_t p = 1; p <= switches[s].port_count(); ++p) {
        if (&switches[s].port(static_cast<std::uint8_t>(p)) == port) {
          return {s, static_cast<std::uint8_t>(p)};
        }
      }
    }
    for (std::size_t e = 0; e < endpoints.size(); ++e) {
      if (&endpoints[e].port() == port) {
        return {switch_count + e, 1};
      }
    }
    return {SIZE_MAX, 0};
  };
  for (const auto& [a, b] : links) {
    const auto [na, pa] = locate(a);
    const auto [nb, pb] = locate(b);
    neighbours[na].push_back({pa, nb});
    neighbours[nb].push_back({pb, na});
  }
  std::vector<std::vector<std::uint8_t>> lfts(switch_count);
  for (std::size_t e = 0; e < endpoints.size(); ++e) {
    const std::uint16_t dlid = endpoints[e].lid();
    std::vector<std::size_t> distance(neighbours.size(), SIZE_MAX);
    std::vector<std::size_t> frontier = {switch_count + e};
    distance[switch_count + e] = 0;
    while (!frontier.empty()) {
      std::vector<std::size_t> next;
      for (const std::size_t node : frontier) {
        for (const Neighbour& n : neighbours[node]) {
          // Paths run through switches only; an endpoint is never a transit node.
          if (distance[n.node] == SIZE_MAX && n.node < switch_count) {
            distance[n.node] = distance[node] + 1;
            next.push_back(n.node);
          }
        }
      }
      frontier = std::move(next);
    }
    for (std::size_t s = 0; s < switch_count; ++s) {
      if (distance[s] == SIZE_MAX) {
        continue;
      }
      std::vector<std::uint8_t> candidates;
      for (const Neighbour& n : neighbours[s]) {
        if (distance[n.node] + 1 == distance[s]) {
          candidates.push_back(n.port);
        }
      }
      std::sort(candidates.begin(), candidates.end());
      if (lfts[s].size() <= dlid) {
        lfts[s].resize(dlid + 1, sw::no_route);
      }
      lfts[s][dlid] = candidates[spread ? dlid % candidates.size() : 0];
    }
  }
  for (std::size_t s = 0; s < switch_count; ++s) {
    switches[s].set_forwarding_table(lfts[s]);
  }
}

} // namespace ib::testing
