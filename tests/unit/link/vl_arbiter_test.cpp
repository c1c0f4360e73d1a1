// Unit tests of the VL arbiter (IBA vol 1 §7.6.9) against hand-computed send sequences, the figures of
// reference/README.md E9 and OpenSM's defaults.
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "models/link/packet_format.h"
#include "models/link/vl_arbiter.h"

namespace {

using ib::link::VlArbConfig;
using ib::link::VlArbEntry;
using ib::link::VlArbiter;

// The 26 bytes around the payload of an RC SEND Only or RDMA WRITE Middle packet.
constexpr std::uint32_t header_bytes =
    ib::link::lrh_bytes + ib::link::bth_bytes + ib::link::icrc_bytes + ib::link::vcrc_bytes;
constexpr std::uint32_t packet_2k = 2048 + header_bytes; // 2074: one 2048-byte MTU packet
constexpr std::uint32_t packet_256 = 256 + header_bytes; // 282

std::uint16_t bit(int vl) {
  return static_cast<std::uint16_t>(1u << vl);
}

VlArbConfig low_only(std::vector<VlArbEntry> low, std::uint8_t data_vls = 15) {
  return VlArbConfig{{}, std::move(low), 0, data_vls};
}

using Sizes = std::array<std::uint32_t, 16>;

Sizes all_sizes(std::uint32_t size) {
  Sizes sizes;
  sizes.fill(size);
  return sizes;
}

struct Run {
  std::array<std::uint64_t, 16> bytes{};
  std::vector<int> sequence;
};

// Sends `packets` packets with every VL in `ready` always ready; VL v's packets are sizes[v] bytes.
Run run(VlArbiter& arbiter, std::uint16_t ready, const Sizes& sizes, int packets) {
  Run result;
  result.sequence.reserve(static_cast<std::size_t>(packets));
  for (int i = 0; i < packets; ++i) {
    const int vl = arbiter.pick(ready);
    REQUIRE(vl >= 0);
    result.bytes[static_cast<std::size_t>(vl)] += sizes[static_cast<std::size_t>(vl)];
    result.sequence.push_back(vl);
    arbiter.on_sent(vl, sizes[static_cast<std::size_t>(vl)]);
  }
  return result;
}

// Share of the bytes sent by `vl` divided by the share its weight asks for; 1 = exact.
double share_vs_weight(const Run& result, int vl, const std::vector<VlArbEntry>& table) {
  std::uint64_t total_bytes = 0;
  for (std::uint64_t b : result.bytes)
    total_bytes += b;
  double total_weight = 0;
  double vl_weight = 0;
  for (const VlArbEntry& entry : table) {
    total_weight += entry.weight;
    if (entry.vl == vl)
      vl_weight += entry.weight;
  }
  const double share = static_cast<double>(result.bytes[static_cast<std::size_t>(vl)]) / total_bytes;
  return share / (vl_weight / total_weight);
}

// Lengths of the runs of consecutive packets from `vl`, in order. A run still going at the end of the sequence
// may have been cut short, so it is left out.
std::vector<int> runs_of(const std::vector<int>& sequence, int vl) {
  std::vector<int> runs;
  int current = 0;
  for (int v : sequence) {
    if (v == vl) {
      ++current;
    } else if (current > 0) {
      runs.push_back(current);
      current = 0;
    }
  }
  return runs;
}

std::uint16_t vls_of(const std::vector<VlArbEntry>& table) {
  std::uint16_t mask = 0;
  for (const VlArbEntry& entry : table)
    mask = static_cast<std::uint16_t>(mask | bit(entry.vl));
  return mask;
}

} // namespace

TEST_CASE("ib::link::VlArbiter: byte shares follow the weights when a turn's weight fits whole packets",
          "[link][quick]") {
  // Per turn an entry of weight w sends ceil(64 w / size) whole packets. With these weights that is within 2 % of
  // 64 w bytes, so the shares match the weight ratios. Other weights are quantized: see the next test case.
  struct Case {
    const char* name;
    std::vector<VlArbEntry> low;
    Sizes sizes;
  };
  Sizes mixed = all_sizes(packet_2k);
  mixed[2] = packet_256;
  const std::vector<Case> cases = {
      {"1:1, 2074-byte packets", {{1, 1}, {2, 1}}, all_sizes(packet_2k)},
      {"1:1, 282-byte packets", {{1, 1}, {2, 1}}, all_sizes(packet_256)},
      {"1:1, 2074 against 282 bytes", {{1, 255}, {2, 255}}, mixed},
      {"32:8, 282-byte packets", {{1, 32}, {2, 8}}, all_sizes(packet_256)},
      {"255:64, 2074-byte packets", {{1, 255}, {2, 64}}, all_sizes(packet_2k)},
      {"255:64, 2074 against 282 bytes", {{1, 255}, {2, 64}}, mixed},
      {"255:128:64, 2074-byte packets", {{1, 255}, {2, 128}, {3, 64}}, all_sizes(packet_2k)},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      VlArbiter arbiter(low_only(c.low));
      const Run result = run(arbiter, vls_of(c.low), c.sizes, 100'000);
      for (const VlArbEntry& entry : c.low) {
        INFO("VL " << int(entry.vl));
        CHECK(std::abs(share_vs_weight(result, entry.vl, c.low) - 1.0) < 0.02);
      }
    }
  }
}

TEST_CASE("ib::link::VlArbiter: a turn sends whole packets until its weight is used, with no carry-over",
          "[link][quick]") {
  SECTION("a weight smaller than one packet still sends exactly one packet per turn") {
    // OpenSM's QoS guide warns of this: with 4 KB MTU, weights should be multiples of 64.
    const std::vector<VlArbEntry> low = {{1, 4}, {2, 1}};
    VlArbiter arbiter(low_only(low));
    const Run result = run(arbiter, bit(1) | bit(2), all_sizes(packet_2k), 1000);
    CHECK(result.bytes[1] == result.bytes[2]);
    CHECK(share_vs_weight(result, 1, low) == Approx(0.625)); // 1/2 of the bytes, not 4/5
  }
  SECTION("packets per turn = ceil(64 x weight / size) for any weight and size") {
    for (const std::uint8_t weight : {1, 4, 31, 32, 33, 64, 100, 255}) {
      for (const std::uint32_t size : {64u, 100u, 282u, 2074u, 4122u}) {
        VlArbiter arbiter(low_only({{1, weight}, {2, 1}}));
        const Run result = run(arbiter, bit(1) | bit(2), all_sizes(size), 3000);
        const auto per_turn = static_cast<int>((64u * weight + size - 1) / size);
        INFO("weight " << int(weight) << ", " << size << "-byte packets");
        REQUIRE(runs_of(result.sequence, 1).size() >= 10);
        for (int length : runs_of(result.sequence, 1))
          CHECK(length == per_turn);
      }
    }
  }
}

TEST_CASE("ib::link::VlArbiter: E9 figures", "[link][quick]") {
  SECTION("weight 4 (OpenSM's default) grants 256 bytes per turn") {
    VlArbiter arbiter(low_only({{1, 4}, {2, 4}}));
    const Run result = run(arbiter, bit(1) | bit(2), all_sizes(64), 80);
    for (int length : runs_of(result.sequence, 1))
      CHECK(length * 64 == 256);
  }
  SECTION("weight 255 grants 16,320 bytes per turn") {
    for (const std::uint32_t size : {64u, 4080u}) {
      VlArbiter arbiter(low_only({{1, 255}, {2, 255}}));
      const Run result = run(arbiter, bit(1) | bit(2), all_sizes(size), 4000);
      for (int length : runs_of(result.sequence, 2))
        CHECK(length * size == 16'320);
    }
  }
  SECTION("VLHighLimit h allows h x 4096 bytes of high priority before a low packet") {
    for (const std::uint8_t limit : {1, 2, 7, 254}) {
      VlArbiter arbiter(VlArbConfig{{{0, 255}}, {{1, 1}}, limit, 8});
      const Run result = run(arbiter, bit(0) | bit(1), all_sizes(256), 20'000);
      const std::vector<int> high_runs = runs_of(result.sequence, 0);
      REQUIRE(high_runs.size() > 3);
      for (int length : high_runs)
        CHECK(length * 256 == limit * 4096);
      for (int length : runs_of(result.sequence, 1))
        CHECK(length == 1);
    }
  }
}

TEST_CASE("ib::link::VlArbiter: high priority preempts low priority up to VLHighLimit", "[link][quick]") {
  const std::vector<VlArbEntry> high = {{0, 4}};
  const std::vector<VlArbEntry> low = {{1, 4}, {2, 4}};

  SECTION("limit 255 is unbounded: low priority starves while a high VL is ready") {
    VlArbiter arbiter(VlArbConfig{high, low, 255, 8});
    const Run result = run(arbiter, bit(0) | bit(1) | bit(2), all_sizes(packet_2k), 10'000);
    CHECK(result.bytes[0] == 10'000ull * packet_2k);
    CHECK(arbiter.pick(bit(1) | bit(2)) == 1);
  }
  SECTION("limit 0: one high packet, then one low packet") {
    VlArbiter arbiter(VlArbConfig{high, low, 0, 8});
    const Run result = run(arbiter, bit(0) | bit(1) | bit(2), all_sizes(packet_256), 12);
    CHECK(result.sequence == std::vector<int>{0, 1, 0, 2, 0, 1, 0, 2, 0, 1, 0, 2});
  }
  SECTION("a packet that starts below the limit completes: the limit may be overrun by one packet") {
    VlArbiter arbiter(VlArbConfig{high, low, 2, 8});
    const Run result = run(arbiter, bit(0) | bit(1), all_sizes(packet_2k), 50);
    // 3 packets = 6222 bytes < 8192, so a 4th goes (8296 bytes), then one low packet.
    for (int length : runs_of(result.sequence, 0))
      CHECK(length == 4);
  }
  SECTION("with no low VL ready, high continues and its count restarts at the limit") {
    VlArbiter arbiter(VlArbConfig{high, low, 2, 8});
    const Sizes sizes = all_sizes(packet_2k);
    run(arbiter, bit(0), sizes, 5); // count: 2074, 4148, 6222, 8296 -> restart: 2074
    // A low VL becomes ready: high may still send 3 packets (to 8296 bytes) before the low packet.
    const Run result = run(arbiter, bit(0) | bit(1), sizes, 9);
    CHECK(result.sequence == std::vector<int>{0, 0, 0, 1, 0, 0, 0, 0, 1});
  }
  SECTION("a low packet restarts the count even when it goes while high is idle") {
    VlArbiter arbiter(VlArbConfig{high, low, 2, 8});
    const Sizes sizes = all_sizes(packet_2k);
    run(arbiter, bit(0), sizes, 3); // 6222 bytes of the 8192 used
    run(arbiter, bit(1), sizes, 1);
    const Run result = run(arbiter, bit(0) | bit(1), sizes, 5);
    CHECK(result.sequence == std::vector<int>{0, 0, 0, 0, 1});
  }
  SECTION("the high table is itself a weighted round robin") {
    VlArbiter arbiter(VlArbConfig{{{0, 2}, {3, 6}}, low, 255, 8});
    const Run result = run(arbiter, bit(0) | bit(1) | bit(3), all_sizes(64), 16);
    CHECK(result.sequence == std::vector<int>{0, 0, 3, 3, 3, 3, 3, 3, 0, 0, 3, 3, 3, 3, 3, 3});
  }
}

TEST_CASE("ib::link::VlArbiter: skipped entries, absent VLs and VL15", "[link][quick]") {
  SECTION("weight-0 entries are skipped") {
    VlArbiter arbiter(low_only({{1, 0}, {2, 4}, {3, 0}}));
    const Run result = run(arbiter, bit(1) | bit(2) | bit(3), all_sizes(64), 100);
    CHECK(result.bytes[2] == 100 * 64);
    CHECK(arbiter.pick(bit(1) | bit(3)) == -1);
  }
  SECTION("entries for VLs at or above data_vls are skipped, and so are their ready bits") {
    VlArbiter arbiter(VlArbConfig{{{5, 255}}, {{6, 4}, {1, 4}, {4, 4}}, 0, 4});
    CHECK(arbiter.pick(bit(4) | bit(5) | bit(6)) == -1);
    const Run result = run(arbiter, bit(1) | bit(4) | bit(5) | bit(6), all_sizes(64), 100);
    CHECK(result.bytes[1] == 100 * 64);
  }
  SECTION("a VL in neither table never sends") {
    VlArbiter arbiter(VlArbConfig{{{0, 4}}, {{1, 4}}, 0, 8});
    CHECK(arbiter.pick(bit(2)) == -1);
    const Run result = run(arbiter, bit(0) | bit(1) | bit(2), all_sizes(64), 100);
    CHECK(result.bytes[2] == 0);
  }
  SECTION("nothing ready: -1") {
    VlArbiter arbiter(VlArbConfig::opensm_default(15));
    CHECK(arbiter.pick(0) == -1);
  }
  SECTION("VL15 always goes first and does not move the tables or the limit count") {
    VlArbiter arbiter(VlArbConfig{{{0, 1}}, {{1, 2}, {2, 2}}, 0, 8});
    CHECK(arbiter.pick(0xFFFF) == 15);
    CHECK(arbiter.pick(bit(15)) == 15);
    REQUIRE(arbiter.pick(bit(0) | bit(1) | bit(2)) == 0);
    arbiter.on_sent(0, 64); // limit 0 reached: a low packet is due
    arbiter.on_sent(arbiter.pick(bit(1) | bit(2)), 64);
    for (int i = 0; i < 5; ++i) {
      REQUIRE(arbiter.pick(bit(0) | bit(1) | bit(15)) == 15);
      arbiter.on_sent(15, 4096);
    }
    // Still VL1's turn with 64 of its 128 bytes left, and the limit count restarted by the low packet.
    const Run result = run(arbiter, bit(0) | bit(1) | bit(2), all_sizes(64), 6);
    CHECK(result.sequence == std::vector<int>{0, 1, 0, 2, 0, 2});
  }
  SECTION("a port with one data VL sends VL0 whenever it is ready, tables or not") {
    VlArbiter arbiter(VlArbConfig{{}, {}, 0, 1});
    CHECK(arbiter.pick(bit(0)) == 0);
    CHECK(arbiter.pick(bit(0) | bit(15)) == 15);
    CHECK(arbiter.pick(bit(1)) == -1);
    const Run result = run(arbiter, bit(0), all_sizes(packet_2k), 10);
    CHECK(result.bytes[0] == 10 * packet_2k);
  }
}

TEST_CASE("ib::link::VlArbiter: turns pass on when the VL is not ready", "[link][quick]") {
  SECTION("an entry keeps its turn while ready; an idle VL forfeits the rest of its turn") {
    VlArbiter arbiter(low_only({{1, 4}, {2, 4}, {3, 4}}));
    const Sizes sizes = all_sizes(64);
    run(arbiter, bit(1) | bit(2), sizes, 2); // VL1 used 128 of 256 bytes
    CHECK(arbiter.pick(bit(2) | bit(3)) == 2);
    run(arbiter, bit(2) | bit(3), sizes, 1); // VL1's turn is over: VL2 starts its own
    const Run result = run(arbiter, bit(1) | bit(2) | bit(3), sizes, 12);
    CHECK(result.sequence == std::vector<int>{2, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 2});
  }
  SECTION("a VL in both tables is charged to the table that gave it the turn") {
    // Limit 0: VL1 alternates as high (every other packet) and as low, where its weight-4 turn then passes to VL2.
    VlArbiter arbiter(VlArbConfig{{{1, 4}}, {{1, 4}, {2, 4}}, 0, 8});
    const Run result = run(arbiter, bit(1) | bit(2), all_sizes(64), 16);
    CHECK(result.sequence == std::vector<int>{1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 2, 1, 2, 1, 2});
  }
  SECTION("a VL listed twice gets two turns per round") {
    const std::vector<VlArbEntry> low = {{1, 4}, {2, 4}, {1, 4}};
    VlArbiter arbiter(low_only(low));
    const Run result = run(arbiter, bit(1) | bit(2), all_sizes(64), 1200);
    CHECK(result.bytes[1] == 2 * result.bytes[2]);
  }
  SECTION("pick() is const and stable: asking with other masks changes nothing") {
    VlArbiter asked(VlArbConfig{{{0, 4}, {3, 2}}, {{1, 8}, {2, 3}, {5, 1}}, 1, 8});
    VlArbiter quiet(VlArbConfig{{{0, 4}, {3, 2}}, {{1, 8}, {2, 3}, {5, 1}}, 1, 8});
    const std::uint16_t ready = bit(0) | bit(1) | bit(2) | bit(3) | bit(5);
    for (int i = 0; i < 2000; ++i) {
      const VlArbiter& view = asked;
      for (std::uint16_t mask : {std::uint16_t{0}, bit(2), bit(5), bit(3), std::uint16_t(bit(1) | bit(5))})
        (void)view.pick(mask);
      const int vl = view.pick(ready);
      REQUIRE(vl == view.pick(ready));
      REQUIRE(vl == quiet.pick(ready));
      const std::uint32_t size = i % 3 == 0 ? packet_2k : packet_256;
      asked.on_sent(vl, size);
      quiet.on_sent(vl, size);
    }
  }
}

TEST_CASE("ib::link::VlArbConfig: OpenSM defaults", "[link][quick]") {
  SECTION("15 data VLs: ib_constants.json ib_vlarb_default_high '0:4 (others 0)', _low '0:0, 1..14:4'") {
    const VlArbConfig config = VlArbConfig::opensm_default(15);
    REQUIRE(config.high.size() == 15);
    REQUIRE(config.low.size() == 15);
    for (std::uint8_t vl = 0; vl < 15; ++vl) {
      INFO("entry " << int(vl));
      CHECK(config.high[vl].vl == vl);
      CHECK(config.high[vl].weight == (vl == 0 ? 4 : 0));
      CHECK(config.low[vl].vl == vl);
      CHECK(config.low[vl].weight == (vl == 0 ? 0 : 4));
    }
    CHECK(config.high_limit == 0); // OSM_DEFAULT_QOS_HIGH_LIMIT
    CHECK(config.data_vls == 15);
    CHECK(ib::link::validate(config).empty());
  }
  SECTION("fewer VLs: OpenSM masks each entry's VL to the operational range (osm_qos.c)") {
    const VlArbConfig eight = VlArbConfig::opensm_default(8);
    CHECK(eight.data_vls == 8);
    for (std::uint8_t entry = 0; entry < 15; ++entry) {
      CHECK(eight.high[entry].vl == (entry & 7));
      CHECK(eight.low[entry].vl == (entry & 7));
    }
    CHECK(eight.low[8].vl == 0); // template entry 8:4 becomes 0:4: VL0 is in the low table too
    CHECK(eight.low[8].weight == 4);
    const VlArbConfig two = VlArbConfig::opensm_default(2);
    for (std::uint8_t entry = 0; entry < 15; ++entry)
      CHECK(two.low[entry].vl == (entry & 1));
    for (std::uint8_t data_vls : {1, 2, 4, 8, 15})
      CHECK(ib::link::validate(VlArbConfig::opensm_default(data_vls)).empty());
  }
  SECTION("with every VL busy, VL0 (high, limit 0) gets every other packet and VLs 1..14 share the rest") {
    VlArbiter arbiter(VlArbConfig::opensm_default(15));
    const Run result = run(arbiter, 0x7FFF, all_sizes(packet_2k), 2800);
    CHECK(result.bytes[0] == 1400ull * packet_2k);
    for (std::size_t vl = 1; vl < 15; ++vl)
      CHECK(result.bytes[vl] == 100ull * packet_2k);
  }
  SECTION("with 8 VLs, the folded entries give VLs 0..6 two low turns per round and VL7 one") {
    VlArbiter arbiter(VlArbConfig::opensm_default(8));
    const Run result = run(arbiter, bit(1) | bit(6) | bit(7), all_sizes(64), 2000);
    CHECK(result.bytes[1] == result.bytes[6]);
    CHECK(result.bytes[1] == 2 * result.bytes[7]);
  }
  SECTION("an unsupported VL count is rejected") {
    CHECK_THROWS_AS(VlArbConfig::opensm_default(3), std::invalid_argument);
  }
}

TEST_CASE("ib::link::validate: invalid configurations are named and refused", "[link][quick]") {
  VlArbConfig config = low_only({{1, 4}});
  std::string expected;
  SECTION("high table longer than 64 entries") {
    config.high.assign(65, VlArbEntry{0, 1});
    expected = "high: 65 entries, at most 64 allowed (IBA 14.2.5.9)";
  }
  SECTION("low table longer than 64 entries") {
    config.low.assign(70, VlArbEntry{0, 1});
    expected = "low: 70 entries, at most 64 allowed (IBA 14.2.5.9)";
  }
  SECTION("VL15 in the high table") {
    config.high = {{0, 1}, {15, 1}};
    expected = "high[1]: VL 15, a table entry's VL must be 0..14 (IBA 7.6.9)";
  }
  SECTION("VL above 15 in the low table") {
    config.low = {{16, 1}};
    expected = "low[0]: VL 16, a table entry's VL must be 0..14 (IBA 7.6.9)";
  }
  SECTION("data_vls 0") {
    config.data_vls = 0;
    expected = "data_vls: 0, expected 1, 2, 4, 8 or 15 (IBA 14.2.5.6)";
  }
  SECTION("data_vls 3") {
    config.data_vls = 3;
    expected = "data_vls: 3, expected 1, 2, 4, 8 or 15 (IBA 14.2.5.6)";
  }
  SECTION("data_vls 16") {
    config.data_vls = 16;
    expected = "data_vls: 16, expected 1, 2, 4, 8 or 15 (IBA 14.2.5.6)";
  }
  CHECK(ib::link::validate(config) == expected);
  try {
    VlArbiter arbiter(config);
    FAIL("the constructor accepted an invalid configuration");
  } catch (const std::invalid_argument& error) {
    CHECK(std::string(error.what()) == "ib::link::VlArbiter: " + expected);
  }
}

TEST_CASE("ib::link::VlArbiter: a full 64-entry table wraps around", "[link][quick]") {
  std::vector<VlArbEntry> low;
  for (int i = 0; i < 64; ++i)
    low.push_back({static_cast<std::uint8_t>(i % 15), static_cast<std::uint8_t>(1 + i % 3)});
  REQUIRE(ib::link::validate(low_only(low)).empty());
  VlArbiter arbiter(low_only(low));
  // With 64-byte packets an entry of weight w sends w packets per turn, so two rounds take twice the sum of the
  // weights in packets, and every VL gets twice its weights' worth of bytes.
  int round_packets = 0;
  std::array<std::uint64_t, 16> expected{};
  for (const VlArbEntry& entry : low) {
    round_packets += entry.weight;
    expected[entry.vl] += 2u * entry.weight * 64u;
  }
  const Run result = run(arbiter, 0x7FFF, all_sizes(64), 2 * round_packets);
  CHECK(result.bytes == expected);
  CHECK(result.sequence.front() == 0);
  CHECK(result.sequence.back() == low.back().vl);
}
