// Streaming throughput: an ib_write_bw-style stream of 64 KiB RDMA WRITEs with 16 outstanding keeps a 4x EDR link
// at its payload rate (PCIe Gen3 x16 reads faster than the link drains), and a READ stream does the same in the
// other direction. The payload rate at MTU 4096 is 4096 / (4096 + 26 header and CRC bytes, + RETH on the first
// packet of each message) of 100 Gb/s, 99.4 %.
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/hca_cluster.h"

using namespace ib;

namespace {

/// Payload Gb/s of `messages` RDMA operations of `size` bytes, `depth` outstanding, from the first post to the
/// last completion.
double stream_gbps(verbs::WrOpcode opcode, std::uint32_t size, std::uint32_t messages, std::uint32_t depth) {
  testing::TestCluster c(testing::star_topology(2));
  testing::QpAddress a, b;
  std::uint64_t a_buffer = 0, b_buffer = 0;
  sim::Time first_post, last_completion;
  c->spawn("h1", "streamer", [&](host::Context& ctx) {
    verbs::QpCaps caps;
    caps.max_send_wr = depth;
    const std::uint32_t cq = ctx.create_cq(depth);
    const std::uint32_t qp = ctx.create_qp(verbs::QpType::rc, caps, cq, cq);
    a = {ctx.lid(), qp};
    a_buffer = ctx.memory().allocate(size);
    ctx.program().sleep_until(sim::Time::from_ns(1));
    ctx.connect_qp(qp, testing::attr_to(b));
    verbs::SendWr wr;
    wr.opcode = opcode;
    wr.local_address = a_buffer;
    wr.length_bytes = size;
    wr.remote_address = b_buffer;
    std::vector<verbs::WorkCompletion> wc(depth);
    std::uint32_t posted = 0, completed = 0;
    first_post = ctx.now();
    while (completed < messages) {
      while (posted < messages && posted - completed < depth) {
        REQUIRE(ctx.post_send(qp, wr).ok());
        ++posted;
      }
      const int n = ctx.wait_cq(cq, wc);
      REQUIRE(n > 0);
      completed += static_cast<std::uint32_t>(n);
    }
    last_completion = ctx.now();
  });
  c->spawn("h2", "target", [&](host::Context& ctx) {
    const std::uint32_t cq = ctx.create_cq(16);
    const std::uint32_t qp = ctx.create_qp(verbs::QpType::rc, {}, cq, cq);
    b = {ctx.lid(), qp};
    b_buffer = ctx.memory().allocate(size);
    ctx.program().sleep_until(sim::Time::from_ns(1));
    ctx.connect_qp(qp, testing::attr_to(a));
  });
  c->run();
  CHECK(c->check_invariants() == "");
  return static_cast<double>(size) * messages * 8 / (last_completion - first_post).ps() * 1e3;
}

} // namespace

TEST_CASE("ib_write_bw-style 64 KiB WRITEs reach 95 % of the 4x EDR payload rate", "[hca][bandwidth]") {
  const double gbps = stream_gbps(verbs::WrOpcode::rdma_write, 65536, 300, 16);
  INFO(gbps << " Gb/s");
  CHECK(gbps >= 0.95 * 99.4);
  CHECK(gbps <= 99.4);
}

TEST_CASE("ib_read_bw-style 64 KiB READs reach 95 % of the 4x EDR payload rate", "[hca][bandwidth]") {
  const double gbps = stream_gbps(verbs::WrOpcode::rdma_read, 65536, 300, 16);
  INFO(gbps << " Gb/s");
  CHECK(gbps >= 0.95 * 99.4);
  CHECK(gbps <= 99.4);
}
