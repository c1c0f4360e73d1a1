#include "models/link/credit_flow.h"

#include <cassert>
#include <stdexcept>

namespace ib::link {

namespace {

static_assert((fc_counter_modulus & (fc_counter_modulus - 1)) == 0, "wrap() relies on a power-of-two modulus");
static_assert(max_credits * 2 == fc_counter_modulus, "the credit window is half the counter space");

// Unsigned arithmetic wraps modulo 2^32, a multiple of 4096, so sums and differences may be taken first and
// reduced afterwards.
constexpr std::uint32_t wrap(std::uint32_t value) {
  return value & (fc_counter_modulus - 1);
}

} // namespace

bool CreditSender::may_send(std::uint32_t blocks) const {
  // The spec's test, (FCCL - (FCTBS + blocks)) mod 4096 <= 2048, says the same as this one whenever FCCL is 0..2048
  // blocks ahead of FCTBS, which a conforming receiver guarantees, and for packets under 2048 blocks (real ones
  // are at most 128: LRH PktLen is 11 bits of 4-byte words). Outside that range the modular form would let some
  // sizes through and not others; this one sends nothing.
  assert(blocks >= 1);
  return blocks <= available_blocks();
}

void CreditSender::on_sent(std::uint32_t blocks) {
  assert(may_send(blocks) && "sent a packet the receiver has no credit for");
  fctbs_ = wrap(fctbs_ + blocks);
}

void CreditSender::on_flow_control(std::uint32_t fccl) {
  assert(fccl < fc_counter_modulus && "FCCL is a 12-bit field");
  fccl_ = fccl;
}

std::uint32_t CreditSender::available_blocks() const {
  // A conforming receiver never advertises more than 2048 blocks past what it received, and the sender never
  // passes the limit, so a larger difference can only mean FCTBS is past FCCL: nothing is available.
  const std::uint32_t ahead = wrap(fccl_ - fctbs_);
  return ahead <= max_credits ? ahead : 0;
}

CreditReceiver::CreditReceiver(std::uint32_t capacity_blocks) : capacity_blocks_(capacity_blocks) {
  if (capacity_blocks < 1 || capacity_blocks > max_credits)
    throw std::invalid_argument("ib::link::CreditReceiver: capacity_blocks must be in 1..2048, got " +
                                std::to_string(capacity_blocks));
}

bool CreditReceiver::on_packet_arrived(std::uint32_t blocks) {
  assert(blocks >= 1);
  if (blocks > free_blocks())
    return false;
  used_blocks_ += blocks;
  abr_ = wrap(abr_ + blocks);
  return true;
}

void CreditReceiver::on_packet_freed(std::uint32_t blocks) {
  assert(blocks >= 1 && blocks <= used_blocks_ && "freed more blocks than the buffer holds");
  used_blocks_ -= blocks;
}

bool CreditReceiver::on_fctbs(std::uint32_t fctbs) {
  assert(fctbs < fc_counter_modulus && "FCTBS is a 12-bit field");
  const bool in_step = fctbs == abr_;
  abr_ = fctbs;
  return in_step;
}

std::uint32_t CreditReceiver::fccl() const {
  // The spec caps the advertisement at ABR + 2048; the constructor caps the buffer at 2048 blocks, so the free
  // space never exceeds the cap.
  return wrap(abr_ + free_blocks());
}

std::string check_credit_conservation(const CreditSender& sender, const CreditReceiver& receiver,
                                      std::uint32_t blocks_in_flight, FcclDelivery delivery) {
  if (blocks_in_flight > max_credits)
    return std::to_string(blocks_in_flight) + " blocks in flight, more than the 2048 the sender may have outstanding";

  std::string mismatch;
  // Every block sent is either on the wire or counted by the receiver.
  const std::uint32_t unreceived = wrap(sender.fctbs() - receiver.abr());
  if (unreceived != blocks_in_flight)
    mismatch = "sender is " + std::to_string(unreceived) + " blocks ahead of the receiver (FCTBS " +
               std::to_string(sender.fctbs()) + ", ABR " + std::to_string(receiver.abr()) + ") but " +
               std::to_string(blocks_in_flight) + " are in flight";

  // The blocks the sender may still send, plus those already on their way, are what the buffer has room for; the
  // sender's view is smaller by whatever was freed since the FCCL it holds was computed.
  const std::uint32_t committed = sender.available_blocks() + blocks_in_flight;
  const bool holds =
      delivery == FcclDelivery::latest ? committed == receiver.free_blocks() : committed <= receiver.free_blocks();
  if (!holds) {
    if (!mismatch.empty())
      mismatch += "; ";
    mismatch += "sender may send " + std::to_string(sender.available_blocks()) + " blocks and " +
                std::to_string(blocks_in_flight) + " are in flight, but the receiver has " +
                std::to_string(receiver.free_blocks()) + " of " + std::to_string(receiver.capacity_blocks()) +
                " free (FCCL " + std::to_string(sender.fccl()) + " at the sender, " + std::to_string(receiver.fccl()) +
                " at the receiver" + (delivery == FcclDelivery::latest ? ", which should be the same)" : ")");
  }
  return mismatch;
}

} // namespace ib::link
