// RC verbs end to end between two hosts through one switch, in verification mode (host memory holds bytes):
// WRITE, READ, SEND/RECV, WRITE with immediate, CAS and FAA deliver the right content and complete in order; and
// the verbs errors a program can provoke (inline too large, posting before RTS, a send queue that is never
// signaled overflowing).
#include <array>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/hca_cluster.h"

using namespace ib;
using testing::bytes_at;
using testing::fill;
using testing::QpAddress;
using testing::verifying;

namespace {

std::uint64_t u64_at(pcie::HostMemory& memory, std::uint64_t address) {
  std::array<std::uint8_t, 8> b{};
  memory.read(address, b);
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = v << 8 | b[static_cast<std::size_t>(i)];
  return v;
}
void put_u64(pcie::HostMemory& memory, std::uint64_t address, std::uint64_t v) {
  std::array<std::uint8_t, 8> b{};
  for (std::size_t i = 0; i < 8; ++i)
    b[i] = static_cast<std::uint8_t>(v >> (8 * i));
  memory.write(address, b);
}

/// Both sides of one RC connection, set up by the two programs at time 0 and connected at 1 ns.
struct Pair {
  QpAddress a, b;
  std::uint64_t a_buffer = 0, b_buffer = 0;
};

struct Side {
  std::uint32_t cq = 0;
  std::uint32_t qp = 0;
};

Side open(host::Context& ctx, QpAddress& me, std::uint64_t& buffer, std::uint32_t buffer_bytes,
          verbs::QpType type = verbs::QpType::rc, verbs::QpCaps caps = {}) {
  Side s;
  s.cq = ctx.create_cq(1024);
  s.qp = ctx.create_qp(type, caps, s.cq, s.cq);
  me = {ctx.lid(), s.qp};
  buffer = ctx.memory().allocate(buffer_bytes);
  return s;
}

void connect(host::Context& ctx, const Side& s, const QpAddress& peer, verbs::QpAttr attr = {}) {
  if (ctx.now() < sim::Time::from_ns(1))
    ctx.program().sleep_until(sim::Time::from_ns(1)); // both sides have created their QPs at time 0
  attr.dest_lid = peer.lid;
  attr.dest_qpn = peer.qpn;
  ctx.connect_qp(s.qp, attr);
}

verbs::WorkCompletion one_completion(host::Context& ctx, std::uint32_t cq) {
  std::array<verbs::WorkCompletion, 1> wc{};
  REQUIRE(ctx.wait_cq(cq, wc) == 1);
  return wc[0];
}

} // namespace

TEST_CASE("RC WRITE of 64 KiB through a switch delivers its bytes and one completion", "[hca][verbs]") {
  testing::TestCluster c(testing::star_topology(2), verifying());
  Pair pair;
  constexpr std::uint32_t size = 65536;
  verbs::WorkCompletion completion;
  sim::Time completed_at;
  c->spawn("h1", "writer", [&](host::Context& ctx) {
    const Side s = open(ctx, pair.a, pair.a_buffer, size);
    fill(ctx.memory(), pair.a_buffer, size, 3);
    connect(ctx, s, pair.b);
    verbs::SendWr wr;
    wr.wr_id = 42;
    wr.opcode = verbs::WrOpcode::rdma_write;
    wr.local_address = pair.a_buffer;
    wr.length_bytes = size;
    wr.remote_address = pair.b_buffer;
    REQUIRE(ctx.post_send(s.qp, wr).ok());
    completion = one_completion(ctx, s.cq);
    completed_at = ctx.now();
  });
  c->spawn("h2", "target", [&](host::Context& ctx) {
    const Side s = open(ctx, pair.b, pair.b_buffer, size);
    connect(ctx, s, pair.a);
  });
  c->run();
  CHECK(completion.wr_id == 42);
  CHECK(completion.status == verbs::WcStatus::success);
  CHECK(completion.opcode == verbs::WcOpcode::rdma_write);
  CHECK(c->check_invariants() == "");
  CHECK(bytes_at(*c->host("h2").memory, pair.b_buffer, size) == bytes_at(*c->host("h1").memory, pair.a_buffer, size));
  // 64 KiB at 100 Gb/s is 5.24 us on the wire alone; the whole operation takes a little more.
  CHECK(completed_at > sim::Time::from_ns(5300));
  CHECK(completed_at < sim::Time::from_ns(9000));
  const hca::QpCounters& q = c->host("h1").hca->qp_counters(pair.a.qpn);
  CHECK(q.packets_sent == 16);
  CHECK(q.retransmitted_packets == 0);
  // Once the run is over, the QPs' memory goes and what the reports read stays.
  hca::Hca& writer = *c->host("h1").hca;
  const hca::QpCounters totals = writer.totals();
  CHECK(totals.packets_sent == 16);
  CHECK(writer.qp_count() == 1);
  c->release_queue_pairs();
  CHECK(writer.qp_count() == 1);
  CHECK(writer.totals().packets_sent == totals.packets_sent);
  CHECK(writer.totals().bytes_sent == size);
  CHECK(writer.totals().rc_requests_completed == 1);
  CHECK(c->host("h2").hca->totals().bytes_received == size);
}

TEST_CASE("RC SEND/RECV, WRITE with immediate, READ and atomics deliver the right content in order", "[hca][verbs]") {
  testing::TestCluster c(testing::star_topology(2), verifying());
  Pair pair;
  std::vector<verbs::WorkCompletion> sender, receiver;
  constexpr std::uint32_t area = 1 << 16;
  c->spawn("h1", "requester", [&](host::Context& ctx) {
    const Side s = open(ctx, pair.a, pair.a_buffer, area);
    fill(ctx.memory(), pair.a_buffer, 10000, 11);
    connect(ctx, s, pair.b);
    std::vector<verbs::SendWr> wrs(6);
    wrs[0].opcode = verbs::WrOpcode::send; // 10000 B: 3 packets
    wrs[0].local_address = pair.a_buffer;
    wrs[0].length_bytes = 10000;
    wrs[1].opcode = verbs::WrOpcode::rdma_write_with_imm;
    wrs[1].local_address = pair.a_buffer;
    wrs[1].length_bytes = 5000;
    wrs[1].remote_address = pair.b_buffer + 20000;
    wrs[1].immediate = 0xabcd;
    wrs[2].opcode = verbs::WrOpcode::rdma_read; // 9000 B from the peer into our buffer at 30000
    wrs[2].local_address = pair.a_buffer + 30000;
    wrs[2].length_bytes = 9000;
    wrs[2].remote_address = pair.b_buffer + 40000;
    wrs[3].opcode = verbs::WrOpcode::atomic_fetch_and_add;
    wrs[3].local_address = pair.a_buffer + 50000;
    wrs[3].length_bytes = 8;
    wrs[3].remote_address = pair.b_buffer + 60000;
    wrs[3].compare_add = 5;
    wrs[4].opcode = verbs::WrOpcode::atomic_cmp_and_swp;
    wrs[4].local_address = pair.a_buffer + 50008;
    wrs[4].length_bytes = 8;
    wrs[4].remote_address = pair.b_buffer + 60000;
    wrs[4].compare_add = 105; // 100 + 5: the swap happens
    wrs[4].swap = 7;
    wrs[5].opcode = verbs::WrOpcode::send;
    wrs[5].inline_data = false;
    wrs[5].local_address = pair.a_buffer + 100;
    wrs[5].length_bytes = 0;
    for (std::size_t i = 0; i < wrs.size(); ++i)
      wrs[i].wr_id = i;
    REQUIRE(ctx.post_send(s.qp, wrs).ok());
    while (sender.size() < wrs.size())
      sender.push_back(one_completion(ctx, s.cq));
  });
  c->spawn("h2", "responder", [&](host::Context& ctx) {
    const Side s = open(ctx, pair.b, pair.b_buffer, area);
    fill(ctx.memory(), pair.b_buffer + 40000, 9000, 77);
    put_u64(ctx.memory(), pair.b_buffer + 60000, 100);
    std::vector<verbs::RecvWr> recvs(3);
    recvs[0] = {100, pair.b_buffer, 16384};
    recvs[1] = {101, pair.b_buffer + 16384, 64};
    recvs[2] = {102, pair.b_buffer + 16448, 64};
    connect(ctx, s, pair.a);
    REQUIRE(ctx.post_recv(s.qp, recvs).ok());
    while (receiver.size() < 3)
      receiver.push_back(one_completion(ctx, s.cq));
  });
  c->run();
  REQUIRE(sender.size() == 6);
  for (std::size_t i = 0; i < sender.size(); ++i) {
    CHECK(sender[i].wr_id == i);
    CHECK(sender[i].status == verbs::WcStatus::success);
  }
  CHECK(sender[2].opcode == verbs::WcOpcode::rdma_read);
  CHECK(sender[3].opcode == verbs::WcOpcode::fetch_add);
  CHECK(sender[4].opcode == verbs::WcOpcode::comp_swap);
  REQUIRE(receiver.size() == 3);
  CHECK(receiver[0].wr_id == 100);
  CHECK(receiver[0].opcode == verbs::WcOpcode::recv);
  CHECK(receiver[0].byte_len == 10000);
  CHECK(receiver[1].wr_id == 101);
  CHECK(receiver[1].opcode == verbs::WcOpcode::recv_rdma_with_imm);
  CHECK(receiver[1].with_imm);
  CHECK(receiver[1].immediate == 0xabcd);
  CHECK(receiver[1].byte_len == 5000);
  CHECK(receiver[2].wr_id == 102);
  CHECK(receiver[2].byte_len == 0);
  pcie::HostMemory& m1 = *c->host("h1").memory;
  pcie::HostMemory& m2 = *c->host("h2").memory;
  CHECK(bytes_at(m2, pair.b_buffer, 10000) == bytes_at(m1, pair.a_buffer, 10000));
  CHECK(bytes_at(m2, pair.b_buffer + 20000, 5000) == bytes_at(m1, pair.a_buffer, 5000));
  CHECK(bytes_at(m1, pair.a_buffer + 30000, 9000) == bytes_at(m2, pair.b_buffer + 40000, 9000));
  CHECK(u64_at(m1, pair.a_buffer + 50000) == 100); // FAA returned the old value
  CHECK(u64_at(m1, pair.a_buffer + 50008) == 105); // CAS returned the value it compared
  CHECK(u64_at(m2, pair.b_buffer + 60000) == 7);
  CHECK(c->check_invariants() == "");
}

TEST_CASE("inline data is copied at post time: a buffer changed after post_send does not change what arrives",
          "[hca][verbs]") {
  // A 600 B inline SEND over a 256 B MTU (three packets, each cut from the copy at its offset) and a 100 B inline
  // WRITE, posted together; the program then overwrites its buffer before the HCA has sent a packet.
  testing::TestCluster c(testing::star_topology(2), verifying());
  Pair pair;
  std::vector<verbs::WorkCompletion> sender, receiver;
  std::vector<std::uint8_t> posted_bytes;
  verbs::QpCaps caps;
  caps.max_inline_data = 600;
  verbs::QpAttr attr;
  attr.path_mtu = verbs::Mtu::mtu256;
  c->spawn("h1", "requester", [&](host::Context& ctx) {
    const Side s = open(ctx, pair.a, pair.a_buffer, 4096, verbs::QpType::rc, caps);
    fill(ctx.memory(), pair.a_buffer, 700, 3);
    posted_bytes = bytes_at(ctx.memory(), pair.a_buffer, 700);
    connect(ctx, s, pair.b, attr);
    std::vector<verbs::SendWr> wrs(2);
    wrs[0].opcode = verbs::WrOpcode::send;
    wrs[0].inline_data = true;
    wrs[0].local_address = pair.a_buffer;
    wrs[0].length_bytes = 600;
    wrs[1].opcode = verbs::WrOpcode::rdma_write;
    wrs[1].inline_data = true;
    wrs[1].local_address = pair.a_buffer + 600;
    wrs[1].length_bytes = 100;
    wrs[1].remote_address = pair.b_buffer + 2048;
    REQUIRE(ctx.post_send(s.qp, wrs).ok());
    fill(ctx.memory(), pair.a_buffer, 700, 99); // too late: the WQEs hold the data
    while (sender.size() < wrs.size())
      sender.push_back(one_completion(ctx, s.cq));
  });
  c->spawn("h2", "responder", [&](host::Context& ctx) {
    const Side s = open(ctx, pair.b, pair.b_buffer, 4096, verbs::QpType::rc, caps);
    connect(ctx, s, pair.a, attr);
    std::vector<verbs::RecvWr> recvs = {{1, pair.b_buffer, 1024}};
    REQUIRE(ctx.post_recv(s.qp, recvs).ok());
    receiver.push_back(one_completion(ctx, s.cq));
  });
  c->run();
  REQUIRE(sender.size() == 2);
  CHECK(sender[0].status == verbs::WcStatus::success);
  CHECK(sender[1].status == verbs::WcStatus::success);
  REQUIRE(receiver.size() == 1);
  CHECK(receiver[0].byte_len == 600);
  pcie::HostMemory& m2 = *c->host("h2").memory;
  const std::vector<std::uint8_t> sent(posted_bytes.begin(), posted_bytes.begin() + 600);
  const std::vector<std::uint8_t> written(posted_bytes.begin() + 600, posted_bytes.end());
  CHECK(bytes_at(m2, pair.b_buffer, 600) == sent);
  CHECK(bytes_at(m2, pair.b_buffer + 2048, 100) == written);
  CHECK(bytes_at(*c->host("h1").memory, pair.a_buffer, 700) != posted_bytes);
  CHECK(c->host("h1").hca->totals().packets_sent == 4); // 3 + 1
}

TEST_CASE("verbs errors: inline above max_inline_data, posting before RTS, an SQ never signaled overflows",
          "[hca][verbs]") {
  testing::TestCluster c(testing::star_topology(2));
  Pair pair;
  std::vector<verbs::PostResult> results;
  c->spawn("h1", "poster", [&](host::Context& ctx) {
    verbs::QpCaps caps;
    caps.max_send_wr = 8;
    caps.max_inline_data = 64;
    const Side s = open(ctx, pair.a, pair.a_buffer, 4096, verbs::QpType::rc, caps);
    verbs::SendWr wr;
    wr.opcode = verbs::WrOpcode::rdma_write;
    wr.local_address = pair.a_buffer;
    wr.length_bytes = 32;
    results.push_back(ctx.post_send(s.qp, wr)); // not in RTS yet
    connect(ctx, s, pair.b);
    wr.remote_address = pair.b_buffer;
    wr.inline_data = true;
    wr.length_bytes = 65;
    results.push_back(ctx.post_send(s.qp, wr)); // above max_inline_data
    wr.length_bytes = 64;
    wr.signaled = false;
    std::vector<verbs::SendWr> nine(9, wr);
    results.push_back(ctx.post_send(s.qp, nine));  // 8 fit, the 9th does not
    ctx.program().compute(sim::Time::from_us(20)); // all done on the wire, but nothing frees the queue
    results.push_back(ctx.post_send(s.qp, wr));
    wr.signaled = true;
  });
  c->spawn("h2", "target", [&](host::Context& ctx) {
    const Side s = open(ctx, pair.b, pair.b_buffer, 4096);
    connect(ctx, s, pair.a);
  });
  c->run();
  REQUIRE(results.size() == 4);
  CHECK(results[0].error == verbs::PostError::invalid_state);
  CHECK(results[1].error == verbs::PostError::invalid_wr);
  CHECK(results[1].bad_wr == 0);
  CHECK(results[2].error == verbs::PostError::queue_full);
  CHECK(results[2].bad_wr == 8);
  CHECK(results[3].error == verbs::PostError::queue_full);
  CHECK(c->check_invariants() == "");
}
