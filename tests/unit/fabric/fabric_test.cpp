// Fabrics built from topologies and programmed by the subnet manager, run end to end with the test packet
// source and sink at the HCA ports: a fat tree delivers every packet in order, and on a ring the credit loop that
// the route check reports under minhop with one VL becomes a real deadlock (8 switches, each host sending to the
// host 3 switches on), which dor's datelines remove.
#include <deque>

#include <catch2/catch.hpp>

#include "models/fabric/fabric.h"
#include "models/sm/subnet.h"
#include "tests/support/packet_endpoint.h"
#include "tests/support/sm_fabrics.h"

using namespace ib;

namespace {

constexpr sim::ComponentType switch_type = 1;
constexpr sim::ComponentType endpoint_type = 2;

/// Packet sources and sinks at every HCA port.
class Hosts : public fabric::HcaPorts {
public:
  Hosts(sim::Simulator& sim, link::PacketPool& pool, const topo::Topology& topology)
      : sim_(sim), pool_(pool), topology_(topology), by_node_(topology.node_count(), -1) {}

  link::Port& hca_port(topo::NodeIndex node, topo::PortNumber, sm::Lid base_lid, const hca::Params& params) override {
    const std::uint32_t id = sim_.add_component(topology_.node(node).name);
    by_node_[node] = static_cast<std::int32_t>(endpoints.size());
    endpoints.emplace_back(sim::Target{endpoint_type, static_cast<std::uint32_t>(endpoints.size())}, id, base_lid,
                           pool_, fabric::hca_port_config(params), sim_.rng_for(id));
    return endpoints.back().port();
  }
  testing::PacketEndpoint& of(topo::NodeIndex node) { return endpoints[static_cast<std::size_t>(by_node_[node])]; }

  std::deque<testing::PacketEndpoint> endpoints;

private:
  sim::Simulator& sim_;
  link::PacketPool& pool_;
  const topo::Topology& topology_;
  std::vector<std::int32_t> by_node_;
};

struct Run {
  Run(const topo::Topology& t, const sm::SmOptions& options)
      : topology(t), subnet(sm::run_subnet_manager(t, options)), hosts(sim, pool, t),
        net(sim, pool, switch_type, t, subnet, hosts) {}
  void drain() {
    auto dispatch = [this](const sim::Event& e) {
      if (e.type == switch_type)
        net.on_switch_event(sim, e);
      else
        hosts.endpoints[e.index].on_event(sim, e);
    };
    for (testing::PacketEndpoint& e : hosts.endpoints)
      e.start(sim);
    sim.run_until(dispatch, sim::Time::max());
  }
  std::uint64_t received() const {
    std::uint64_t n = 0;
    for (const testing::PacketEndpoint& e : hosts.endpoints)
      n += e.packets_received();
    return n;
  }

  const topo::Topology& topology;
  sim::Simulator sim{7};
  link::PacketPool pool;
  sm::Subnet subnet;
  Hosts hosts;
  fabric::Fabric net;
};

sm::SmOptions sm_options(const char* engine, unsigned vls) {
  sm::SmOptions o;
  o.engine = engine;
  o.routing.data_vls = vls;
  return o;
}

/// Every host sends `packets` to the host `shift` places on (by node order of hosts), with the routing's path SL.
void shift_traffic(Run& run, std::size_t shift, std::uint64_t packets) {
  std::vector<topo::NodeIndex> hcas;
  for (topo::NodeIndex n = 0; n < run.topology.node_count(); ++n)
    if (run.topology.node(n).kind == topo::NodeKind::hca)
      hcas.push_back(n);
  const sm::SwitchIndex index(run.topology);
  for (std::size_t i = 0; i < hcas.size(); ++i) {
    const sm::Lid src = run.subnet.lids.base_lid(hcas[i], 1);
    const sm::Lid dst = run.subnet.lids.base_lid(hcas[(i + shift) % hcas.size()], 1);
    testing::Flow flow;
    flow.dlids = {dst};
    flow.sl = sm::path_sl(run.subnet.routing, index, run.subnet.lids, src, dst);
    flow.vl = sm::output_vl(run.subnet.routing, hcas[i], 1, flow.sl, run.hosts.of(hcas[i]).port().data_vls());
    flow.packets = packets;
    run.hosts.of(hcas[i]).add_flow(flow);
  }
}

} // namespace

TEST_CASE("fabric: a 3-level fat tree routed by ftree delivers random traffic in order with credits conserved",
          "[fabric][quick]") {
  const topo::Topology t = testing::three_level_tree(4); // 64 hosts, 48 switches of 8 ports
  Run run(t, sm_options("ftree", 8));
  REQUIRE(run.subnet.sound());
  CHECK(run.net.switch_count() == 48);
  CHECK(run.net.links().size() == t.link_count());
  for (testing::PacketEndpoint& e : run.hosts.endpoints) {
    testing::Flow flow;
    flow.uniform_dlid_last = run.subnet.lids.max_lid();
    flow.packets = 200;
    flow.payload_bytes = 2048;
    // Only HCA LIDs: the switches' LIDs come first in topology order, so draw from the hosts' range.
    flow.uniform_dlid_first = static_cast<std::uint16_t>(run.subnet.lids.base_lid(*t.find("h0"), 1));
    e.add_flow(flow);
  }
  run.drain();
  REQUIRE(run.hosts.endpoints.size() == 64);
  CHECK(run.received() == 64 * 200);
  CHECK(run.net.check_invariants(true).empty());
  CHECK(run.pool.live() == 0);
}

TEST_CASE("fabric: on a ring minhop with one VL deadlocks under shift traffic and dor with datelines drains",
          "[fabric][quick]") {
  const topo::Topology ring = testing::grid({8}, true);
  const std::uint64_t packets = 2000;
  {
    Run run(ring, sm_options("minhop", 1));
    REQUIRE_FALSE(run.subnet.check.cycle.empty()); // the route check predicts it
    shift_traffic(run, 3, packets);
    run.drain();
    INFO("received " << run.received() << " of " << 8 * packets);
    // The calendar ran dry with packets stuck in the loop of full buffers: a credit-loop deadlock.
    CHECK(run.received() < 8 * packets);
    CHECK(run.pool.live() > 0);
    CHECK(run.net.check_invariants(false).empty());
  }
  Run run(ring, sm_options("dor", 2));
  REQUIRE(run.subnet.sound());
  shift_traffic(run, 3, packets);
  run.drain();
  CHECK(run.received() == 8 * packets);
  CHECK(run.net.check_invariants(true).empty());
  CHECK(run.pool.live() == 0);
}
