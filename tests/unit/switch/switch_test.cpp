// Switch: forwarding by LFT, cut-through and store-and-forward latency, output contention, VL arbitration and
// head-of-line blocking, on small fabrics built with tests/support/test_fabric.h.
#include <catch2/catch.hpp>

#include "models/switch/switch.h"
#include "tests/support/test_fabric.h"

using namespace ib;
using ib::testing::Flow;
using ib::testing::TestFabric;

namespace {

Flow write_flow(std::uint16_t dlid, std::uint64_t packets, std::uint32_t payload = 4096, std::uint8_t sl = 0) {
  Flow f;
  f.dlids = {dlid};
  f.payload_bytes = payload;
  f.packets = packets;
  f.vl = sl;
  f.sl = sl;
  return f;
}

} // namespace

TEST_CASE("sw::Switch: one packet through one cut-through switch takes link + latency + link, exactly",
          "[switch][quick]") {
  TestFabric net;
  sw::Switch& s = net.add_switch("s1");
  testing::PacketEndpoint& a = net.add_endpoint("h1", 1);
  testing::PacketEndpoint& b = net.add_endpoint("h2", 2);
  net.connect(a.port(), s.port(1), testing::edr_link(2));
  net.connect(b.port(), s.port(2), testing::edr_link(2));
  net.route_shortest_paths();
  a.add_flow(write_flow(2, 1));
  net.start();
  net.drain();
  const testing::SourceStats* stats = b.stats_from(1, 0);
  REQUIRE(stats != nullptr);
  // 10 ns cable + 100 ns switch (first bit in to first bit out) + 10 ns cable + 331.04 ns serialization.
  CHECK(stats->latency_min.ps() == 10'000 + 100'000 + 10'000 + 331'040);
  CHECK(net.check_invariants(true).empty());
}
