// The event-driven PCIe bus against exact TLP arithmetic: TLP counts and bytes per transfer (reference E5, E6),
// the latency of a lone read as the sum of its parts, 4 KiB and MPS splitting of writes, in-order completions,
// and the bandwidth bounds that starving tags or completion credits impose.
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "models/pcie/bandwidth_model.h"
#include "models/pcie/bus.h"
#include "models/pcie/latency_model.h"
#include "models/pcie/pcie_rate.h"
#include "sim/profile.h"
#include "sim/rng.h"
#include "sim/simulator.h"

using namespace ib;
using pcie::Direction;
using pcie::TlpKind;

namespace {

pcie::BusConfig gen3(pcie::Width width) {
  pcie::BusConfig c{};
  c.data_rate = pcie::data_rate(pcie::Generation::gen3, width);
  c.propagation = sim::Time::from_ns(100);
  c.max_payload_bytes = 256;
  c.max_read_request_bytes = 512;
  c.read_completion_boundary_bytes = 64;
  c.completion_split = pcie::CompletionSplit::mps;
  c.ecrc = false;
  c.addresses_64bit = true;
  c.root_port = {64, 320, 72, 4, 0, 0}; // Xeon C5500 x16 root port (reference), completions infinite
  c.device = {64, 256, 64, 16, 0, 0};   // an endpoint must advertise infinite completion credits
  c.device_tags = 256;
  c.ack_interval = sim::Time::from_ns(20);
  c.update_fc_interval = sim::Time::from_ns(20);
  c.cadence_dllps = false; // so that these tests' times are exact sums of wire, flight and host times
  c.memory_read_base = sim::Time::from_ns(200);
  c.memory_read_ps_per_byte = 250;
  c.posted_accept_latency = sim::Time::from_ns(100);
  c.memory_write_latency = sim::Time::from_ns(150);
  c.mmio_cpu_cost = sim::Time::from_ns(30);
  return c;
}

struct Harness : pcie::BusClient {
  explicit Harness(const pcie::BusConfig& config) : sim(1), bus(config, {1, 0}, 0, *this) { sim.add_component("bus"); }
  void run() {
    auto dispatch = [this](const sim::Event& e) { bus.on_event(sim, e); };
    sim.run_until(dispatch, sim::Time::max());
    bus.settle(sim, sim::Time::max());
  }
  void dma_read_done(sim::Simulator& s, std::uint32_t token) override { reads.push_back({token, s.now()}); }
  void dma_write_done(sim::Simulator& s, std::uint32_t token) override { writes.push_back({token, s.now()}); }
  void dma_write_visible(sim::Simulator& s, std::uint32_t token) override { visible.push_back({token, s.now()}); }
  void mmio_arrived(sim::Simulator& s, std::uint32_t token) override { mmios.push_back({token, s.now()}); }
  std::uint64_t tlps(Direction d, TlpKind k) const { return bus.counters(d).tlps[static_cast<int>(k)]; }
  std::uint64_t bytes(Direction d, TlpKind k) const { return bus.counters(d).tlp_bytes[static_cast<int>(k)]; }

  struct Done {
    std::uint32_t token;
    sim::Time at;
  };
  sim::Simulator sim;
  pcie::Bus bus;
  std::vector<Done> reads, writes, visible, mmios;
};

} // namespace

TEST_CASE("pcie::Bus: a 64 B read is one 24 B MRd and one 84 B CplD and takes the sum of its parts", "[pcie][quick]") {
  const pcie::BusConfig c = gen3(pcie::Width::x8);
  Harness h(c);
  h.bus.dma_read(h.sim, 0x1'0000'0000ull, 64, 7);
  h.run();
  REQUIRE(h.reads.size() == 1);
  CHECK(h.reads[0].token == 7);
  CHECK(h.tlps(Direction::upstream, TlpKind::mrd) == 1);
  CHECK(h.bytes(Direction::upstream, TlpKind::mrd) == 24);
  CHECK(h.tlps(Direction::downstream, TlpKind::cpld) == 1);
  CHECK(h.bytes(Direction::downstream, TlpKind::cpld) == 84);
  const sim::Time expected = sim::transfer_time(24, c.data_rate) + c.propagation + c.memory_read_base +
                             sim::Time::from_ps(64 * 250) + sim::transfer_time(84, c.data_rate) + c.propagation;
  CHECK(h.reads[0].at.ps() == expected.ps());
  CHECK(h.bus.idle());
  CHECK(h.bus.tags_in_use() == 0);
}

TEST_CASE("pcie::Bus: E6 - a 4096 B read at MPS 256 and MRRS 512 is 8 MRd and 16 CplD of 4416 B", "[pcie][quick]") {
  pcie::BusConfig c = gen3(pcie::Width::x16);
  {
    Harness h(c);
    h.bus.dma_read(h.sim, 0x1'0000'0000ull, 4096, 1);
    h.run();
    CHECK(h.tlps(Direction::upstream, TlpKind::mrd) == 8);
    CHECK(h.bytes(Direction::upstream, TlpKind::mrd) == 8 * 24);
    CHECK(h.tlps(Direction::downstream, TlpKind::cpld) == 16);
    CHECK(h.bytes(Direction::downstream, TlpKind::cpld) == 4416);
    CHECK(h.bus.counters(Direction::downstream).payload_bytes == 4096);
  }
  c.completion_split = pcie::CompletionSplit::rcb; // completions of one RCB (64 B) each
  Harness h(c);
  h.bus.dma_read(h.sim, 0x1'0000'0000ull, 4096, 1);
  h.run();
  CHECK(h.tlps(Direction::downstream, TlpKind::cpld) == 64);
  CHECK(h.bytes(Direction::downstream, TlpKind::cpld) == 64 * 20 + 4096);
}

TEST_CASE("pcie::Bus: writes split at MPS and at 4 KiB boundaries and complete when their last TLP leaves",
          "[pcie][quick]") {
  const pcie::BusConfig c = gen3(pcie::Width::x8);
  Harness h(c);
  // 1000 B starting 100 B before a 4 KiB boundary: 100, then 256, 256, 256, 132.
  h.bus.dma_write(h.sim, 0x1'0000'1000ull - 100, 1000, 3);
  h.run();
  CHECK(h.tlps(Direction::upstream, TlpKind::mwr) == 5);
  CHECK(h.bytes(Direction::upstream, TlpKind::mwr) == 1000 + 5 * 24);
  REQUIRE(h.writes.size() == 1);
  const sim::Time wire = sim::transfer_time(100 + 24, c.data_rate) + sim::transfer_time(256 + 24, c.data_rate) * 3 +
                         sim::transfer_time(132 + 24, c.data_rate);
  CHECK(h.writes[0].at.ps() == wire.ps());
  // Visible in host memory once the last TLP has arrived and been written.
  REQUIRE(h.visible.size() == 1);
  CHECK(h.visible[0].at.ps() == (wire + c.propagation + c.memory_write_latency).ps());
  CHECK(h.bus.idle());
}

TEST_CASE("pcie::Bus: E5 - a doorbell is one 32 B MWr and a BlueFlame WQE one 88 B MWr downstream", "[pcie][quick]") {
  const pcie::BusConfig c = gen3(pcie::Width::x8);
  Harness h(c);
  h.bus.mmio_write(h.sim, 8, 8, 1);
  h.bus.mmio_write(h.sim, 64, 64, 2);
  h.run();
  CHECK(h.tlps(Direction::downstream, TlpKind::mwr) == 2);
  CHECK(h.bytes(Direction::downstream, TlpKind::mwr) == 32 + 88);
  REQUIRE(h.mmios.size() == 2);
  CHECK(h.mmios[0].at.ps() == (c.mmio_cpu_cost + sim::transfer_time(32, c.data_rate) + c.propagation).ps());
  // E5's wire times on Gen3 x8: 4.06 ns and 11.17 ns.
  CHECK(sim::transfer_time(32, c.data_rate).ps() == Approx(4063).margin(2));
  CHECK(sim::transfer_time(88, c.data_rate).ps() == Approx(11171).margin(2));
}

TEST_CASE("pcie::Bus: completions of one read arrive in order and reads finish in issue order", "[pcie][quick]") {
  const pcie::BusConfig c = gen3(pcie::Width::x8);
  Harness h(c);
  for (std::uint32_t i = 0; i < 8; ++i)
    h.bus.dma_read(h.sim, 0x1'0000'0000ull + i * 8192, 2048, i);
  h.run();
  REQUIRE(h.reads.size() == 8);
  for (std::uint32_t i = 0; i < 8; ++i)
    CHECK(h.reads[i].token == i);
  CHECK(h.bus.idle());
}

TEST_CASE("pcie::Bus: one tag caps read bandwidth at MRRS per round trip", "[pcie][quick]") {
  pcie::BusConfig c = gen3(pcie::Width::x16);
  c.device_tags = 1;
  Harness h(c);
  const std::uint32_t size = 64 * 1024;
  h.bus.dma_read(h.sim, 0x1'0000'0000ull, size, 1);
  h.run();
  REQUIRE(h.reads.size() == 1);
  // Each 512 B request waits for the previous one's last completion: MRd out, memory, two 256 B CplDs back.
  const sim::Time round = sim::transfer_time(24, c.data_rate) + c.propagation + c.memory_read_base +
                          sim::Time::from_ps(512 * 250) + sim::transfer_time(276, c.data_rate) * 2 + c.propagation;
  CHECK(h.reads[0].at.ps() == (round * (size / 512)).ps());
}

TEST_CASE("pcie::Bus: a read waiting for a tag that comes back without an event starts when it is back",
          "[pcie][quick]") {
  // Two tags, both taken by a 1 KiB read. Its first request's last completion frees a tag on arrival, and no read
  // waits when it leaves, so the deferred bus takes that tag back without an event. A second read comes while it is
  // on its way: it waits, and must start at the tag's arrival, as in the oracle (every event in the calendar).
  std::vector<std::int64_t> done_ps;
  for (const bool defer : {false, true}) {
    pcie::BusConfig c = gen3(pcie::Width::x16);
    c.device_tags = 2;
    c.defer_events = defer;
    Harness h(c);
    h.bus.dma_read(h.sim, 0x1'0000'0000ull, 1024, 1);
    h.sim.schedule(sim::Time::from_ns(500), {2, 0}, 0, 2);
    auto dispatch = [&h](const sim::Event& e) {
      if (e.type == 1)
        h.bus.on_event(h.sim, e);
      else
        h.bus.dma_read(h.sim, 0x1'0001'0000ull, 512, e.handle);
    };
    h.sim.run_until(dispatch, sim::Time::max());
    h.bus.settle(h.sim, sim::Time::max());
    REQUIRE(h.bus.idle());
    CHECK(h.bus.tags_in_use() == 0);
    REQUIRE(h.reads.size() == 2);
    CHECK(h.reads[1].token == 2);
    done_ps.push_back(h.reads[1].at.ps());
  }
  CHECK(done_ps[1] == done_ps[0]);
  // The first request's completions: memory answers at its MRd's arrival plus 200 ns + 512 B x 250 ps; the second
  // CplD lands two CplD times and the flight later. The second read's one request goes out then.
  const pcie::BusConfig c = gen3(pcie::Width::x16);
  const sim::Time mrd = sim::transfer_time(24, c.data_rate), cpld = sim::transfer_time(276, c.data_rate);
  const sim::Time memory = c.memory_read_base + sim::Time::from_ps(512 * 250);
  const sim::Time tag_back = mrd + c.propagation + memory + cpld * 2 + c.propagation;
  CHECK(done_ps[1] == (tag_back + mrd + c.propagation + memory + cpld * 2 + c.propagation).ps());
}

TEST_CASE("pcie::Bus: scarce posted data credits at the root port cap writes at the credits per credit loop",
          "[pcie][quick]") {
  pcie::BusConfig c = gen3(pcie::Width::x16);
  c.root_port.posted_data = 32; // 512 B of posted data buffer
  Harness h(c);
  const std::uint32_t size = 64 * 1024;
  h.bus.dma_write(h.sim, 0x1'0000'0000ull, size, 1);
  h.run();
  REQUIRE(h.writes.size() == 1);
  // 32 data credits are two 256 B TLPs. The third may start once the first's credits are back: its wire time,
  // the way up, the root complex taking it, and an UpdateFC DLLP's way down. So two TLPs per such loop.
  const sim::Time tlp = sim::transfer_time(256 + 24, c.data_rate);
  const sim::Time loop =
      tlp + c.propagation + c.posted_accept_latency + sim::transfer_time(8, c.data_rate) + c.propagation;
  const std::int64_t loops = size / 512;
  const sim::Time bound = loop * (loops - 1) + tlp * 2;
  CHECK(h.writes[0].at.ps() >= bound.ps());
  CHECK(static_cast<double>(h.writes[0].at.ps()) <= static_cast<double>(bound.ps()) * 1.01);
  CHECK(h.bus.counters(Direction::upstream).credit_stalls > 0);
}

namespace {

struct Profiles {
  pcie::LinkParams link;
  pcie::HostParams host;
};

Profiles profiles(const char* link, const char* host = "xeon-e5-haswell") {
  return {sim::read_profile(pcie::link_param_table(), sim::load_profile(sim::profile_path(link))),
          sim::read_profile(pcie::host_param_table(), sim::load_profile(sim::profile_path(host)))};
}

/// Simulated time from issue to completion of one DMA read of `size` bytes, alone on the bus.
sim::Time read_time(const pcie::BusConfig& config, std::uint32_t size) {
  Harness h(config);
  h.bus.dma_read(h.sim, 0x1'0000'0000ull, size, 0);
  h.run();
  REQUIRE(h.reads.size() == 1);
  return h.reads[0].at;
}

} // namespace

TEST_CASE("pcie::Bus: DMA read latency on gen3-x8 and xeon-e5-haswell is within 15 % of the pcie-bench medians",
          "[pcie][quick]") {
  const Profiles p = profiles("gen3-x8");
  const pcie::BusConfig config = pcie::bus_config(p.link, p.host);
  // Reference E7 (pcie_dma_read_latency_xeon_e5_2620v3): medians in ns by size.
  const std::vector<std::pair<std::uint32_t, double>> medians = {{8, 533},   {64, 547},   {128, 573},  {256, 627},
                                                                 {512, 707}, {1024, 853}, {2048, 1133}};
  for (const auto& [size, median_ns] : medians) {
    INFO(size << " B");
    const double simulated_ns = static_cast<double>(read_time(config, size).ps()) / 1000.0;
    CHECK(simulated_ns == Approx(median_ns).epsilon(0.15));
    // An unloaded single read is the analytic sum of its parts, plus the cadence DLLPs between its completions.
    if (size <= p.link.max_read_request_bytes)
      CHECK(static_cast<double>(read_time(config, size).ps()) ==
            Approx(static_cast<double>(pcie::dma_read_latency(pcie::link_config(p.link), p.host, size, false).ps()))
                .epsilon(0.01));
  }
  const double read64_ns = static_cast<double>(read_time(config, 64).ps()) / 1000.0;
  CHECK(read64_ns >= 450);
  CHECK(read64_ns <= 700);
}

TEST_CASE("pcie::Bus: large DMA reads and writes reach the TLP-level bandwidth model within 3 percent",
          "[pcie][quick]") {
  for (const std::uint32_t mps : {128u, 256u, 512u}) {
    for (const std::uint32_t mrrs : {512u, 4096u}) {
      Profiles p = profiles("gen3-x16");
      p.link.max_payload_bytes = mps;
      p.link.max_read_request_bytes = mrrs;
      p.link.ack_interval_symbols =
          pcie::recommended_ack_interval_symbols(pcie::Generation::gen3, pcie::Width::x16, mps);
      p.link.update_fc_interval_symbols =
          pcie::recommended_update_fc_interval_symbols(pcie::Generation::gen3, pcie::Width::x16, mps);
      const pcie::BusConfig config = pcie::bus_config(p.link, p.host);
      const pcie::LinkConfig model = pcie::link_config(p.link);
      INFO("MPS " << mps << " MRRS " << mrrs);
      const std::uint32_t size = 4 << 20;
      const double read_gbps = size * 8.0 / (static_cast<double>(read_time(config, size).ps()) * 1e-12) / 1e9;
      CHECK(read_gbps == Approx(pcie::dma_read_bandwidth_gbps(model, size)).epsilon(0.03));
      Harness h(config);
      h.bus.dma_write(h.sim, 0x1'0000'0000ull, size, 0);
      h.run();
      const double write_gbps = size * 8.0 / (static_cast<double>(h.writes[0].at.ps()) * 1e-12) / 1e9;
      CHECK(write_gbps == Approx(pcie::dma_write_bandwidth_gbps(model, size)).epsilon(0.03));
    }
  }
}

TEST_CASE("pcie::Bus: scarce completion credits at the device cap reads at the credits per credit loop",
          "[pcie][quick]") {
  pcie::BusConfig c = gen3(pcie::Width::x16);
  c.device.completion_data = 32; // 512 B of completion buffer (endpoints normally advertise infinite)
  c.device.completion_headers = 4;
  Harness h(c);
  const std::uint32_t size = 64 * 1024;
  h.bus.dma_read(h.sim, 0x1'0000'0000ull, size, 1);
  h.run();
  REQUIRE(h.reads.size() == 1);
  // Two 256 B CplDs per loop: the third waits for the first's credits, freed as it arrives at the device and
  // returned by an UpdateFC upstream.
  const sim::Time cpld = sim::transfer_time(256 + 20, c.data_rate);
  const sim::Time loop = cpld + c.propagation + sim::transfer_time(8, c.data_rate) + c.propagation;
  const double gbps = size * 8.0 / (static_cast<double>(h.reads[0].at.ps()) * 1e-12) / 1e9;
  const double bound_gbps = 512 * 8.0 / (static_cast<double>(loop.ps()) * 1e-12) / 1e9;
  CHECK(gbps <= bound_gbps);
  CHECK(gbps >= 0.95 * bound_gbps);
  CHECK(h.bus.counters(Direction::downstream).credit_stalls > 0);
}

TEST_CASE("pcie::Bus: completions advertised infinite take no UpdateFC back, finite ones do", "[pcie][quick]") {
  // A 4 KiB read: 8 MRd upstream into the root port's finite non-posted credits, 16 CplD downstream into the
  // device's completion credits. Only finite classes are returned (PCIe Base Spec r5.0 §2.6.1).
  pcie::BusConfig c = gen3(pcie::Width::x8);
  SECTION("infinite") {
    Harness h(c);
    h.bus.dma_read(h.sim, 0x1'0000'0000ull, 4096, 1);
    h.run();
    REQUIRE(h.reads.size() == 1);
    CHECK(h.tlps(Direction::downstream, TlpKind::cpld) == 16);
    CHECK(h.bus.counters(Direction::upstream).update_fc_dllps == 0);  // nothing returns the device's CplD credits
    CHECK(h.bus.counters(Direction::downstream).update_fc_dllps > 0); // the root port returns its NP credits
  }
  SECTION("finite") {
    c.device.completion_headers = 64;
    c.device.completion_data = 256;
    Harness h(c);
    h.bus.dma_read(h.sim, 0x1'0000'0000ull, 4096, 1);
    h.run();
    REQUIRE(h.reads.size() == 1);
    CHECK(h.bus.counters(Direction::upstream).update_fc_dllps > 0);
    CHECK(h.bus.counters(Direction::downstream).update_fc_dllps > 0);
  }
}

TEST_CASE("pcie::Bus: counters report TLPs and bytes by type and direction and the busy time", "[pcie][quick]") {
  const pcie::BusConfig c = gen3(pcie::Width::x8);
  Harness h(c);
  h.bus.dma_write(h.sim, 0x1'0000'0000ull, 512, 1);
  h.bus.dma_read(h.sim, 0x1'0000'4000ull, 128, 2);
  h.run();
  const pcie::DirectionCounters& up = h.bus.counters(Direction::upstream);
  const pcie::DirectionCounters& down = h.bus.counters(Direction::downstream);
  CHECK(h.tlps(Direction::upstream, TlpKind::mwr) == 2);
  CHECK(h.tlps(Direction::upstream, TlpKind::mrd) == 1);
  CHECK(h.tlps(Direction::downstream, TlpKind::cpld) == 1);
  CHECK(up.payload_bytes == 512);
  CHECK(down.payload_bytes == 128);
  // Busy time is the wire time of every TLP and DLLP sent.
  const sim::Time up_tlps = sim::transfer_time(280, c.data_rate) * 2 + sim::transfer_time(24, c.data_rate);
  const sim::Time dllps =
      sim::transfer_time(8, c.data_rate) * static_cast<std::int64_t>(up.ack_dllps + up.update_fc_dllps);
  CHECK(up.busy.ps() == (up_tlps + dllps).ps());
  CHECK(down.update_fc_dllps > 0); // the root port returned the posted and non-posted credits
}

namespace {

/// Random traffic from the device and the CPU on one bus; what it saw, for comparing two runs.
struct Outcome {
  std::vector<std::tuple<char, std::uint32_t, std::int64_t>> done; ///< (what, token, when in ps)
  std::vector<std::uint64_t> counters;
  std::uint64_t events = 0;
};

Outcome random_traffic(pcie::BusConfig c, bool defer, std::uint64_t seed) {
  c.defer_events = defer;
  struct Driver : pcie::BusClient {
    explicit Driver(const pcie::BusConfig& config) : sim(1), bus(config, {1, 0}, 0, *this) {}
    void issue(std::uint32_t token) {
      sim::Rng rng(token, 7);
      const std::uint64_t address = 0x1'0000'0000ull + rng.uniform_below(1 << 20);
      const auto size = static_cast<std::uint32_t>(1 + rng.uniform_below(rng.bernoulli(0.5) ? 64 : 8192));
      switch (rng.uniform_below(3)) {
      case 0:
        bus.dma_read(sim, address, size, token);
        break;
      case 1:
        bus.dma_write(sim, address, size, token);
        break;
      default:
        bus.mmio_write(sim, rng.bernoulli(0.5) ? 8 : 128, 64, token);
      }
    }
    // Some completions start more work at once, as an HCA's pipeline does.
    void dma_read_done(sim::Simulator& s, std::uint32_t t) override {
      record('r', t, s);
      if (t % 3 == 0 && t < 100'000)
        issue(t + 100'000);
    }
    void dma_write_done(sim::Simulator& s, std::uint32_t t) override { record('w', t, s); }
    void dma_write_visible(sim::Simulator& s, std::uint32_t t) override {
      record('v', t, s);
      if (t % 4 == 1 && t < 100'000)
        issue(t + 200'000);
    }
    void mmio_arrived(sim::Simulator& s, std::uint32_t t) override { record('m', t, s); }
    void record(char what, std::uint32_t t, sim::Simulator& s) { out.done.emplace_back(what, t, s.now().ps()); }
    sim::Simulator sim;
    pcie::Bus bus;
    Outcome out;
  } d(c);
  d.sim.add_component("bus");
  sim::Rng rng(seed, 0);
  sim::Time at;
  for (std::uint32_t token = 1; token <= 400; ++token) {
    // Bursts and gaps, and some requests at the very same picosecond.
    if (!rng.bernoulli(0.2))
      at = at +
           sim::Time::from_ps(static_cast<std::int64_t>(rng.uniform_below(rng.bernoulli(0.3) ? 2'000'000 : 20'000)));
    d.sim.schedule(at, {2, 0}, 0, token);
  }
  auto dispatch = [&d](const sim::Event& e) {
    if (e.type == 1)
      d.bus.on_event(d.sim, e);
    else
      d.issue(e.handle);
  };
  d.sim.run_until(dispatch, sim::Time::max());
  d.bus.settle(d.sim, sim::Time::max());
  REQUIRE(d.bus.idle());
  for (const Direction dir : {Direction::upstream, Direction::downstream}) {
    const pcie::DirectionCounters& k = d.bus.counters(dir);
    for (std::size_t i = 0; i < pcie::tlp_kind_count; ++i) {
      d.out.counters.push_back(k.tlps[i]);
      d.out.counters.push_back(k.tlp_bytes[i]);
    }
    for (const std::uint64_t v :
         {k.payload_bytes, k.ack_dllps, k.update_fc_dllps, k.credit_stalls, static_cast<std::uint64_t>(k.busy.ps())})
      d.out.counters.push_back(v);
  }
  d.out.events = d.sim.events_dispatched();
  return d.out;
}

} // namespace

TEST_CASE("pcie::Bus: deferred events change nothing but the number of calendar events", "[pcie][quick]") {
  // The oracle handles every event through the calendar. Plenty of credits, then each class scarce in turn, so
  // that lanes wait on credits that only deferred events bring.
  pcie::BusConfig plenty = gen3(pcie::Width::x8);
  plenty.cadence_dllps = true;
  pcie::BusConfig scarce_posted = plenty;
  scarce_posted.root_port.posted_data = 32;
  scarce_posted.root_port.posted_headers = 2;
  scarce_posted.device.posted_headers = 1;
  scarce_posted.device.posted_data = 8;
  pcie::BusConfig scarce_reads = plenty;
  scarce_reads.root_port.non_posted_headers = 1;
  scarce_reads.device.completion_data = 48;
  scarce_reads.device_tags = 3;
  // Tags alone scarce: completions free them without events while no read waits, and with a wake when one does.
  pcie::BusConfig scarce_tags = plenty;
  scarce_tags.device_tags = 2;
  int variant = 0;
  for (const pcie::BusConfig& c : {plenty, scarce_posted, scarce_reads, scarce_tags}) {
    for (const std::uint64_t seed : {1u, 2u, 3u}) {
      INFO("variant " << variant << ", seed " << seed);
      const Outcome oracle = random_traffic(c, false, seed);
      const Outcome deferred = random_traffic(c, true, seed);
      CHECK(oracle.done.size() >= 400);
      CHECK(deferred.done == oracle.done);
      CHECK(deferred.counters == oracle.counters);
      // While a lane waits on credits or reads wait for a tag, the bus checkpoints at each deferred event
      // (keep_moments), some twice.
      if (variant == 0)
        CHECK(deferred.events < oracle.events * 3 / 4);
      else if (variant == 1)
        CHECK(deferred.events < oracle.events);
      else
        CHECK(deferred.events <= oracle.events + oracle.events * 3 / 100);
    }
    ++variant;
  }
}
