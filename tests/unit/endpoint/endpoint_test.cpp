// The fabric-level endpoint: two endpoints cabled back to back (STYLE rule 31), exact picosecond figures from the
// latencies, the wire sizes of the packets and the EDR data rate.
#include <deque>
#include <vector>

#include <catch2/catch.hpp>

#include "models/endpoint/endpoint.h"
#include "sim/errors.h"

using namespace ib;

namespace {

constexpr sim::Time send_latency = sim::Time::from_ns(1000), ack_latency = sim::Time::from_ns(50),
                    completion_latency = sim::Time::from_ns(300), propagation = sim::Time::from_ns(10);

struct Completion {
  std::uint32_t tag;
  std::uint64_t wr_id;
  sim::Time at;
  endpoint::Status status;
  std::uint32_t size_bytes;
  sim::Time posted_at;
};

struct Recorder : endpoint::Client {
  void on_completion(sim::Simulator& sim, std::uint32_t tag, const endpoint::Completion& c) override {
    completions.push_back({tag, c.wr_id, sim.now(), c.status, c.size_bytes, c.posted_at});
  }
  std::vector<Completion> completions;
};

struct Pair {
  explicit Pair(std::uint32_t ack_interval = 0) : sim(3) {
    const endpoint::Params params{send_latency, ack_latency, completion_latency, ack_interval};
    const link::PortConfig port{256 * link::block_bytes, 1, 4, sim::Time::from_us(2), true, sim::Time::zero(), 8};
    for (std::uint32_t i = 0; i < 2; ++i) {
      const std::uint32_t id = sim.add_component(i == 0 ? "a" : "b");
      endpoints.emplace_back(sim::Target{1, i}, id, pool, 1, params);
      endpoints.back().port(1).bind(sim::Target{1, i}, id, 1, port);
      endpoints.back().set_lid(1, static_cast<std::uint16_t>(i + 1));
    }
    link::connect(a().port(1), b().port(1), {link::data_rate(link::Width::x4, link::Speed::edr), propagation});
  }
  endpoint::Endpoint& a() { return endpoints[0]; }
  endpoint::Endpoint& b() { return endpoints[1]; }
  /// A connection from a to b (tag 0 at a, 1 at b); returns a's QPN.
  std::uint32_t connect(std::uint32_t mtu = 4096) {
    const std::uint32_t qa = a().create_connection(recorder, 0), qb = b().create_connection(recorder, 1);
    a().connect(qa, 2, 0, qb, mtu, endpoint::Verb::write);
    b().connect(qb, 1, 0, qa, mtu, endpoint::Verb::write);
    return qa;
  }
  void run() {
    auto dispatch = [this](const sim::Event& event) { endpoints[event.index].on_event(sim, event); };
    sim.run_until(dispatch, sim::Time::max());
  }

  sim::Simulator sim;
  link::PacketPool pool;
  std::deque<endpoint::Endpoint> endpoints;
  Recorder recorder;
};

// EDR carries 12.5 bytes per ns: a 4 KiB WRITE ONLY or FIRST (4138 B on the wire, with its RETH) takes 331.04 ns,
// a 4 KiB WRITE MIDDLE or LAST (4122 B) 329.76 ns, an ACK (30 B) 2.4 ns.
constexpr sim::Time data_4k = sim::Time::from_ps(331'040), data_4k_no_reth = sim::Time::from_ps(329'760),
                    ack_wire = sim::Time::from_ps(2'400);

} // namespace

TEST_CASE("An endpoint completes a message after its send, wire, ACK and completion latencies") {
  Pair net;
  const std::uint32_t qpn = net.connect();
  net.a().post(net.sim, qpn, 7, 4096);
  net.run();
  REQUIRE(net.recorder.completions.size() == 1);
  CHECK(net.recorder.completions[0].wr_id == 7);
  CHECK(net.recorder.completions[0].tag == 0);
  CHECK(net.recorder.completions[0].size_bytes == 4096);
  CHECK(net.recorder.completions[0].posted_at == sim::Time::zero());
  CHECK(net.recorder.completions[0].at ==
        send_latency + data_4k + propagation + ack_latency + ack_wire + propagation + completion_latency);
  CHECK(net.a().counters().data_packets_sent == 1);
  CHECK(net.b().counters().acks_sent == 1);
  CHECK(net.b().counters().messages_delivered == 1);
  CHECK(net.b().counters().payload_bytes_received == 4096);
  CHECK(net.a().check_quiescent().empty());
  CHECK(net.pool.live() == 0);
  // The message ready, the data packet and the ACK arriving, the ACK ready, the completion, and each port's
  // flow-control refresh: the ends of serialization, with nothing waiting to be sent, are never dispatched.
  CHECK(net.sim.events_dispatched() == 7); // 9 when each serialization end was an event
}

TEST_CASE("An endpoint sends back to back at line rate and completes in posting order") {
  Pair net;
  const std::uint32_t qpn = net.connect();
  for (std::uint64_t m = 0; m < 100; ++m)
    net.a().post(net.sim, qpn, m, 65536); // 16 packets each
  net.run();
  REQUIRE(net.recorder.completions.size() == 100);
  for (std::uint64_t m = 0; m < 100; ++m)
    CHECK(net.recorder.completions[m].wr_id == m);
  // The last packet's last bit leaves 1,600 packet times after the first one started: the link never idled.
  const link::PortCounters sent = net.a().port(1).counters();
  CHECK(sent.xmit_pkts == 1600);
  CHECK(sent.xmit_wait == sim::Time::zero());
  // Only the flow-control packets a's port sends between them (for the ACKs it receives, and every refresh period)
  // stand between the data packets: a few ns in half a millisecond.
  const sim::Time bare = send_latency + data_4k * 100 + data_4k_no_reth * 1500 + propagation + ack_latency + ack_wire +
                         propagation + completion_latency;
  const sim::Time at = net.recorder.completions.back().at;
  INFO("last completion at " << at.ps() << " ps, without flow control " << bare.ps() << " ps");
  CHECK(at >= bare);
  CHECK((at - bare).ps() * 2000 < bare.ps()); // under 0.05 %
  CHECK(net.b().counters().acks_sent == 100);
  CHECK(net.a().check_quiescent().empty());
}

TEST_CASE("An endpoint's connections take turns packet by packet") {
  Pair net;
  const std::uint32_t first = net.connect(), second = net.connect();
  net.a().post(net.sim, first, 1, 8192); // two packets each: first, second, first, second on the wire
  net.a().post(net.sim, second, 2, 8192);
  net.run();
  REQUIRE(net.recorder.completions.size() == 2);
  const sim::Time last_packet_4k = data_4k_no_reth, first_4k = data_4k;
  CHECK(net.recorder.completions[0].wr_id == 1);
  const sim::Time first_done = send_latency + first_4k * 2 + last_packet_4k + propagation + ack_latency + ack_wire +
                               propagation + completion_latency;
  const sim::Time first_at = net.recorder.completions[0].at;
  INFO("first completion at " << first_at.ps() << " ps, without flow control " << first_done.ps() << " ps");
  CHECK(first_at >= first_done);
  CHECK(first_at - first_done < sim::Time::from_ns(5)); // a flow-control packet or two
  // The second connection's last packet follows the first's.
  CHECK(net.recorder.completions[1].at - first_at == last_packet_4k);
}

TEST_CASE("An endpoint asks for ACKs inside long messages as its profile says, completing once per message") {
  Pair net(4);
  const std::uint32_t qpn = net.connect();
  net.a().post(net.sim, qpn, 0, 16 * 4096);
  net.run();
  CHECK(net.recorder.completions.size() == 1);
  CHECK(net.b().counters().acks_sent == 4); // packets 4, 8, 12 and the last
  CHECK(net.b().counters().messages_delivered == 1);
}

TEST_CASE("An endpoint refuses a packet for a connection it does not have") {
  Pair net;
  const std::uint32_t qa = net.a().create_connection(net.recorder, 0);
  net.a().connect(qa, 2, 0, 99, 4096, endpoint::Verb::write);
  net.a().post(net.sim, qa, 0, 100);
  CHECK_THROWS_AS(net.run(), sim::InvariantViolation);
}
