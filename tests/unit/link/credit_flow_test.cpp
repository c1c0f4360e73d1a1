// Unit tests for models/link/credit_flow.h: block counts (reference E3, E4), the sender's limit test at its exact
// boundary and across the 12-bit wrap, the receiver's buffer, ABR resynchronisation, and credit conservation.
// The random runs drive one VL through a little in-order link and compare every counter with an unwrapped 64-bit
// model of the same traffic, which needs no modular reasoning and so cannot share a wraparound bug.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "models/link/credit_flow.h"
#include "sim/rng.h"

using ib::link::check_credit_conservation;
using ib::link::CreditReceiver;
using ib::link::CreditSender;
using ib::link::FcclDelivery;

namespace {

constexpr std::uint32_t modulus = 4096;

// A sender whose FCTBS is `fctbs` and whose FCCL is `fccl`, reached through the public interface only: it is
// granted and sends at most 2047 blocks at a time.
CreditSender sender_at(std::uint32_t fctbs, std::uint32_t fccl) {
  CreditSender sender;
  for (std::uint32_t remaining = fctbs; remaining > 0;) {
    const std::uint32_t chunk = std::min<std::uint32_t>(remaining, 2047);
    sender.on_flow_control((sender.fctbs() + chunk) % modulus);
    sender.on_sent(chunk);
    remaining -= chunk;
  }
  sender.on_flow_control(fccl % modulus);
  return sender;
}

// Pushes `blocks` through a lossless pair in packets of at most 64 blocks (send, arrive, free, advertise), leaving
// both sides idle, the receiver empty and the sender holding the receiver's current FCCL.
void push_through(CreditSender& sender, CreditReceiver& receiver, std::uint32_t blocks) {
  sender.on_flow_control(receiver.fccl());
  while (blocks > 0) {
    const std::uint32_t packet = std::min({blocks, receiver.free_blocks(), std::uint32_t{64}});
    REQUIRE(sender.may_send(packet));
    sender.on_sent(packet);
    REQUIRE(receiver.on_packet_arrived(packet));
    receiver.on_packet_freed(packet);
    sender.on_flow_control(receiver.fccl());
    blocks -= packet;
  }
}

// One VL of one in-order link, stepped at random. Data packets and the sender's FCTBS packets share the forward
// wire; the receiver's FCCL packets travel back on their own. Beside it runs the unwrapped reference: the
// receiver's FCCL is capacity + blocks freed so far, and a packet may go iff sent + blocks <= the limit held.
class RandomLink {
public:
  RandomLink(std::uint32_t capacity_blocks, std::uint64_t seed)
      : receiver_(capacity_blocks), rng_(seed, capacity_blocks),
        max_packet_bytes_(std::min<std::uint32_t>(capacity_blocks, 130) * ib::link::block_bytes) {}

  void run(std::uint64_t steps) {
    for (step_ = 0; step_ < steps && failure_.empty(); ++step_) {
      step();
      verify();
    }
  }

  const std::string& failure() const { return failure_; }
  std::uint64_t blocks_sent() const { return sent_; }
  std::uint64_t packets_sent() const { return packets_sent_; }
  std::uint64_t refusals() const { return refusals_; }
  std::uint64_t exact_checks() const { return exact_checks_; }
  std::uint32_t largest_packet_blocks() const { return largest_packet_blocks_; }

private:
  struct Forward {
    bool is_fctbs;       // else a data packet
    std::uint32_t value; // FCTBS carried, or the packet's blocks
  };
  struct Backward {
    std::uint32_t fccl;
    std::uint64_t unwrapped_fccl;
  };

  void fail(const std::string& what) {
    if (failure_.empty())
      failure_ = "step " + std::to_string(step_) + ": " + what;
  }

  void step() {
    const std::uint64_t action = rng_.uniform_below(1000);
    // Deliveries outpace emissions so that the wires stay short; a rare drain reaches full quiescence.
    if (action < 330)
      send();
    else if (action < 600)
      deliver_forward();
    else if (action < 800)
      free_one();
    else if (action < 860)
      advertise();
    else if (action < 970)
      deliver_backward();
    else if (action < 995)
      wire_.push_back({true, sender_.fctbs()});
    else
      drain();
  }

  void send() {
    const auto bytes = static_cast<std::uint32_t>(rng_.uniform_between(1, max_packet_bytes_));
    const std::uint32_t blocks = ib::link::blocks_for(bytes);
    const bool expected = sent_ + blocks <= limit_;
    if (sender_.may_send(blocks) != expected)
      fail("may_send(" + std::to_string(blocks) + ") disagrees with the unwrapped model");
    if (!expected) {
      ++refusals_;
      return;
    }
    sender_.on_sent(blocks);
    sent_ += blocks;
    in_flight_blocks_ += blocks;
    ++packets_sent_;
    largest_packet_blocks_ = std::max(largest_packet_blocks_, blocks);
    wire_.push_back({false, blocks});
  }

  void deliver_forward() {
    if (wire_.empty())
      return;
    const Forward head = wire_.front();
    wire_.pop_front();
    if (head.is_fctbs) {
      if (!receiver_.on_fctbs(head.value))
        fail("ABR differed from an FCTBS on a lossless link");
      return;
    }
    if (!receiver_.on_packet_arrived(head.value))
      fail("a packet sent within its credits did not fit");
    in_flight_blocks_ -= head.value;
    arrived_ += head.value;
    buffer_.push_back(head.value);
  }

  void free_one() {
    if (buffer_.empty())
      return;
    // Packets of one VL may leave out of order (to different output ports), so free any of them.
    const auto index = static_cast<std::ptrdiff_t>(rng_.uniform_below(buffer_.size()));
    const std::uint32_t blocks = buffer_[static_cast<std::size_t>(index)];
    buffer_.erase(buffer_.begin() + index);
    receiver_.on_packet_freed(blocks);
    freed_ += blocks;
  }

  void advertise() { back_wire_.push_back({receiver_.fccl(), receiver_.capacity_blocks() + freed_}); }

  void deliver_backward() {
    if (back_wire_.empty())
      return;
    sender_.on_flow_control(back_wire_.front().fccl);
    limit_ = back_wire_.front().unwrapped_fccl;
    back_wire_.pop_front();
  }

  void drain() {
    while (!wire_.empty())
      deliver_forward();
    while (!buffer_.empty())
      free_one();
    advertise();
    while (!back_wire_.empty())
      deliver_backward();
  }

  void verify() {
    if (sender_.fctbs() != sent_ % modulus)
      fail("FCTBS " + std::to_string(sender_.fctbs()) + " is not blocks sent mod 4096");
    if (sender_.fccl() != limit_ % modulus)
      fail("sender's FCCL " + std::to_string(sender_.fccl()) + " is not the limit delivered mod 4096");
    if (sender_.available_blocks() != limit_ - sent_)
      fail("available_blocks() " + std::to_string(sender_.available_blocks()) + " != limit - sent");
    if (receiver_.abr() != arrived_ % modulus)
      fail("ABR " + std::to_string(receiver_.abr()) + " is not blocks received mod 4096");
    if (receiver_.used_blocks() != arrived_ - freed_)
      fail("used_blocks() is not blocks received - blocks freed");
    if (receiver_.fccl() != (receiver_.capacity_blocks() + freed_) % modulus)
      fail("receiver's FCCL " + std::to_string(receiver_.fccl()) + " is not capacity + blocks freed mod 4096");
    if (in_flight_blocks_ != sent_ - arrived_)
      fail("harness lost track of the blocks in flight");
    const std::string pending = check_credit_conservation(sender_, receiver_, in_flight_blocks_, FcclDelivery::pending);
    if (!pending.empty())
      fail("conservation (pending) failed: " + pending);
    // The sender holds the receiver's current FCCL exactly when the reference says so.
    if (limit_ == receiver_.capacity_blocks() + freed_) {
      ++exact_checks_;
      const std::string latest = check_credit_conservation(sender_, receiver_, in_flight_blocks_);
      if (!latest.empty())
        fail("conservation (latest) failed: " + latest);
    }
  }

  CreditSender sender_;
  CreditReceiver receiver_;
  sim::Rng rng_;
  std::int64_t max_packet_bytes_;
  std::deque<Forward> wire_;
  std::deque<Backward> back_wire_;
  std::vector<std::uint32_t> buffer_;
  std::uint32_t in_flight_blocks_ = 0;
  // Unwrapped totals since the start, and the unwrapped FCCL the sender holds.
  std::uint64_t sent_ = 0;
  std::uint64_t arrived_ = 0;
  std::uint64_t freed_ = 0;
  std::uint64_t limit_ = 0;
  std::uint64_t packets_sent_ = 0;
  std::uint64_t refusals_ = 0;
  std::uint64_t exact_checks_ = 0;
  std::uint32_t largest_packet_blocks_ = 0;
  std::uint64_t step_ = 0;
  std::string failure_;
};

} // namespace

TEST_CASE("ib::link::blocks_for: reference E3 and E4 exactly", "[link][quick]") {
  SECTION("E3: the 4138 B WRITE takes 65 credits with or without its VCRC; a 282 B SEND takes 5") {
    STATIC_REQUIRE(ib::link::blocks_for(4138) == 65);
    CHECK(ib::link::blocks_for(4136) == 65);
    CHECK(ib::link::blocks_for(282) == 5);
  }
  SECTION("whole blocks round up only when a byte spills over") {
    CHECK(ib::link::blocks_for(0) == 0);
    CHECK(ib::link::blocks_for(1) == 1);
    CHECK(ib::link::blocks_for(64) == 1);
    CHECK(ib::link::blocks_for(65) == 2);
    CHECK(ib::link::blocks_for(128) == 2);
    // No overflow near the top of the range: ceil((2^32 - 1) / 64) = 2^26.
    CHECK(ib::link::blocks_for(0xFFFF'FFFF) == 67'108'864);
  }
  SECTION("E4: 12,500 B in flight over 100 m of EDR plus one 4138 B packet is 261 credits, about 16.7 KB") {
    const std::uint32_t credits = ib::link::blocks_for(12'500) + ib::link::blocks_for(4138);
    CHECK(credits == 261);
    CHECK(credits * ib::link::block_bytes == 16'704);
    CHECK(CreditReceiver(credits).fccl() == 261);
  }
}

TEST_CASE("ib::link::CreditSender: nothing may be sent before the first flow-control packet", "[link][quick]") {
  const CreditSender sender;
  CHECK(sender.fctbs() == 0);
  CHECK(sender.fccl() == 0);
  CHECK(sender.available_blocks() == 0);
  CHECK_FALSE(sender.may_send(1));
  CHECK_FALSE(sender.may_send(65));
  CHECK_FALSE(sender.may_send(2047));
  CHECK_FALSE(sender.may_send(2048));
}

TEST_CASE("ib::link::CreditSender: sends exactly up to the advertised limit and not one block more", "[link][quick]") {
  CreditSender sender;
  CreditReceiver receiver(100);
  SECTION("from a fresh link") {}
  SECTION("with FCTBS about to wrap past 4095") {
    push_through(sender, receiver, 4096 * 3 + 4050);
    REQUIRE(sender.fctbs() == 4050);
  }
  const std::uint32_t start = sender.fctbs();
  sender.on_flow_control(receiver.fccl());
  CHECK(sender.available_blocks() == 100);
  for (const std::uint32_t blocks : {30u, 30u, 39u}) {
    REQUIRE(sender.may_send(blocks));
    sender.on_sent(blocks);
    REQUIRE(receiver.on_packet_arrived(blocks));
  }
  CHECK(sender.available_blocks() == 1);
  CHECK(sender.may_send(1));
  CHECK_FALSE(sender.may_send(2));
  sender.on_sent(1);
  REQUIRE(receiver.on_packet_arrived(1));
  CHECK(sender.fctbs() == (start + 100) % modulus);
  CHECK(sender.fctbs() == sender.fccl());
  CHECK(sender.available_blocks() == 0);
  CHECK_FALSE(sender.may_send(1));
  CHECK(receiver.free_blocks() == 0);

  // Freeing one packet and advertising it grants exactly that many blocks again.
  receiver.on_packet_freed(39);
  sender.on_flow_control(receiver.fccl());
  CHECK(sender.may_send(39));
  CHECK_FALSE(sender.may_send(40));
}

TEST_CASE("ib::link::CreditSender: agrees with the spec's modular test in every state a receiver allows",
          "[link][quick]") {
  // IBA vol 1 §7.9.4: a packet may go iff (FCCL - (FCTBS + blocks)) mod 4096 <= 2048. Every FCCL 0..2048 blocks
  // ahead of FCTBS and every packet of 1..2047 blocks, at FCTBS values on both sides of the wrap.
  for (const std::uint32_t fctbs : {0u, 1u, 2047u, 2048u, 3000u, 4095u}) {
    std::uint64_t disagreements = 0;
    for (std::uint32_t ahead = 0; ahead <= 2048; ++ahead) {
      const CreditSender sender = sender_at(fctbs, fctbs + ahead);
      REQUIRE(sender.fctbs() == fctbs);
      REQUIRE(sender.available_blocks() == ahead);
      for (std::uint32_t blocks = 1; blocks < 2048; ++blocks) {
        const std::uint32_t spec_margin = (sender.fccl() + 2 * modulus - sender.fctbs() - blocks) % modulus;
        if (sender.may_send(blocks) != (spec_margin <= 2048))
          ++disagreements;
      }
    }
    INFO("FCTBS " << fctbs);
    CHECK(disagreements == 0);
  }
}

TEST_CASE("ib::link::CreditSender: 2048 blocks is the most that may be outstanding", "[link][quick]") {
  // An FCCL 2049 ahead of FCTBS cannot come from a conforming receiver; it reads as behind, granting nothing.
  CHECK(sender_at(0, 2049).available_blocks() == 0);
  CHECK_FALSE(sender_at(0, 2049).may_send(1));
  CHECK(sender_at(3000, 3000 + 2049).available_blocks() == 0);

  CreditSender sender;
  CreditReceiver receiver(2048);
  SECTION("from a fresh link") {}
  SECTION("across the wrap") {
    push_through(sender, receiver, 4096 * 5 + 3000);
    REQUIRE(sender.fctbs() == 3000);
  }
  const std::uint32_t start = sender.fctbs();
  // A full 2048-block buffer advertises exactly ABR + 2048, the furthest an FCCL may lead.
  CHECK(receiver.fccl() == (start + 2048) % modulus);
  sender.on_flow_control(receiver.fccl());
  CHECK(sender.available_blocks() == 2048);
  std::uint32_t sent = 0;
  while (sender.may_send(128)) {
    sender.on_sent(128);
    REQUIRE(receiver.on_packet_arrived(128));
    sent += 128;
  }
  CHECK(sent == 2048);
  CHECK(sender.fctbs() == (start + 2048) % modulus);
  CHECK_FALSE(sender.may_send(1));
  CHECK_FALSE(receiver.on_packet_arrived(1));
}

TEST_CASE("ib::link::CreditSender: 12-bit counters wrap many times in step with an unwrapped model", "[link][quick]") {
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    RandomLink link(261, seed);
    link.run(200'000);
    INFO("seed " << seed << ": " << link.failure());
    CHECK(link.failure().empty());
    // More than ten full wraps of FCTBS and ABR, with packets of many sizes and the limit actually biting.
    CHECK(link.blocks_sent() > 10 * 4096);
    CHECK(link.largest_packet_blocks() == 130);
    CHECK(link.refusals() > 1000);
  }
}

TEST_CASE("ib::link::CreditReceiver: rejects a packet that does not fit and changes nothing", "[link][quick]") {
  CreditReceiver receiver(10);
  CHECK(receiver.fccl() == 10);
  REQUIRE(receiver.on_packet_arrived(6));
  CHECK_FALSE(receiver.on_packet_arrived(5));
  CHECK(receiver.used_blocks() == 6);
  CHECK(receiver.free_blocks() == 4);
  CHECK(receiver.abr() == 6);
  CHECK(receiver.fccl() == 10);
  REQUIRE(receiver.on_packet_arrived(4));
  CHECK(receiver.free_blocks() == 0);
  CHECK_FALSE(receiver.on_packet_arrived(1));
  CHECK(receiver.abr() == 10);
  // Arrivals move ABR and free space in opposite directions, so only freeing moves the advertised limit.
  CHECK(receiver.fccl() == 10);
  receiver.on_packet_freed(6);
  CHECK(receiver.fccl() == 16);
  CHECK(receiver.capacity_blocks() == 10);
}

TEST_CASE("ib::link::CreditReceiver: capacity outside 1..2048 is rejected", "[link][quick]") {
  SECTION("0") {
    CHECK_THROWS_MATCHES(CreditReceiver(0), std::invalid_argument,
                         Catch::Message("ib::link::CreditReceiver: capacity_blocks must be in 1..2048, got 0"));
  }
  SECTION("2049") {
    CHECK_THROWS_MATCHES(CreditReceiver(2049), std::invalid_argument,
                         Catch::Message("ib::link::CreditReceiver: capacity_blocks must be in 1..2048, got 2049"));
  }
  SECTION("4096") {
    CHECK_THROWS_MATCHES(CreditReceiver(4096), std::invalid_argument,
                         Catch::Message("ib::link::CreditReceiver: capacity_blocks must be in 1..2048, got 4096"));
  }
  SECTION("the bounds themselves are accepted") {
    CHECK(CreditReceiver(1).fccl() == 1);
    CHECK(CreditReceiver(2048).fccl() == 2048);
  }
}

TEST_CASE("ib::link::CreditReceiver: an FCTBS resynchronises ABR and recovers blocks lost on the wire",
          "[link][quick]") {
  CreditSender sender;
  CreditReceiver receiver(200);
  SECTION("from a fresh link") {}
  SECTION("across the wrap") {
    push_through(sender, receiver, 4096 * 2 + 4000);
    REQUIRE(receiver.abr() == 4000);
  }
  const std::uint32_t start = sender.fctbs();
  sender.on_flow_control(receiver.fccl());

  SECTION("lossless: the FCTBS matches ABR and changes nothing") {
    sender.on_sent(65);
    REQUIRE(receiver.on_packet_arrived(65));
    const std::uint32_t fccl_before = receiver.fccl();
    CHECK(receiver.on_fctbs(sender.fctbs()));
    CHECK(receiver.abr() == (start + 65) % modulus);
    CHECK(receiver.fccl() == fccl_before);
  }
  SECTION("lossy: the second of three packets is lost, and the FCTBS gives its 65 blocks back") {
    for (const std::uint32_t blocks : {5u, 65u, 30u})
      sender.on_sent(blocks);
    REQUIRE(receiver.on_packet_arrived(5));
    REQUIRE(receiver.on_packet_arrived(30));
    receiver.on_packet_freed(5);
    receiver.on_packet_freed(30);
    // Without the resync the sender would believe the lost blocks still occupy the buffer.
    sender.on_flow_control(receiver.fccl());
    CHECK(sender.available_blocks() == 200 - 65);
    CHECK(check_credit_conservation(sender, receiver, 0) != "");

    CHECK_FALSE(receiver.on_fctbs(sender.fctbs()));
    CHECK(receiver.abr() == sender.fctbs());
    CHECK(receiver.abr() == (start + 100) % modulus);
    sender.on_flow_control(receiver.fccl());
    CHECK(sender.available_blocks() == 200);
    CHECK(check_credit_conservation(sender, receiver, 0) == "");
  }
}

TEST_CASE("ib::link::check_credit_conservation: holds through random traffic", "[link][quick]") {
  for (const std::uint32_t capacity : {1u, 65u, 130u, 2048u}) {
    RandomLink link(capacity, 42);
    link.run(100'000);
    INFO("capacity " << capacity << " blocks: " << link.failure());
    CHECK(link.failure().empty());
    CHECK(link.packets_sent() > 1000);
    // The exact form was checked many times, not only the lagging one.
    CHECK(link.exact_checks() > 100);
  }
}

TEST_CASE("ib::link::check_credit_conservation: reports a deliberate mismatch", "[link][quick]") {
  CreditSender sender;
  CreditReceiver receiver(100);
  push_through(sender, receiver, 5000);
  sender.on_sent(40);
  REQUIRE(receiver.on_packet_arrived(30));
  // 40 blocks sent, 30 of them arrived: 10 in flight, 70 free, 60 still available to the sender.
  REQUIRE(check_credit_conservation(sender, receiver, 10) == "");
  REQUIRE(check_credit_conservation(sender, receiver, 10, FcclDelivery::pending) == "");

  SECTION("the in-flight count disagrees with FCTBS - ABR") {
    const std::string text = check_credit_conservation(sender, receiver, 0);
    CHECK_THAT(text, Catch::Contains("sender is 10 blocks ahead of the receiver") &&
                         Catch::Contains("(FCTBS " + std::to_string(sender.fctbs()) + ", ABR " +
                                         std::to_string(receiver.abr()) + ") but 0 are in flight"));
  }
  SECTION("the sender was granted one block more than the receiver advertised") {
    sender.on_flow_control((receiver.fccl() + 1) % modulus);
    CHECK_THAT(check_credit_conservation(sender, receiver, 10),
               Catch::Contains("sender may send 61 blocks and 10 are in flight, but the receiver has 70 of 100 free"));
    // Too much credit is a violation even while an FCCL may be pending.
    CHECK(check_credit_conservation(sender, receiver, 10, FcclDelivery::pending) != "");
  }
  SECTION("a freed packet not yet advertised: a violation only if the FCCL was claimed delivered") {
    REQUIRE(receiver.on_packet_arrived(10));
    receiver.on_packet_freed(40);
    CHECK_THAT(check_credit_conservation(sender, receiver, 0),
               Catch::Contains("sender may send 60 blocks and 0 are in flight, but the receiver has 100 of 100 free") &&
                   Catch::Contains("which should be the same"));
    CHECK(check_credit_conservation(sender, receiver, 0, FcclDelivery::pending) == "");
    sender.on_flow_control(receiver.fccl());
    CHECK(check_credit_conservation(sender, receiver, 0) == "");
  }
  SECTION("more blocks in flight than may ever be outstanding") {
    CHECK_THAT(check_credit_conservation(sender, receiver, 2049), Catch::Contains("2049 blocks in flight"));
  }
}
