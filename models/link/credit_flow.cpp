#include "models/link/credit_flow.h"

#include <cassert>
#include <stdexcept>

namespace ib::link {

namespace {} // namespace

CreditReceiver::CreditReceiver(std::uint32_t capacity_blocks) : capacity_blocks_(capacity_blocks) {
  if (capacity_blocks < 1 || capacity_blocks > max_credits)
    throw std::invalid_argument("ib::link::CreditReceiver: capacity_blocks must be in 1..2048, got " +
                                std::to_string(capacity_blocks));
}

bool CreditReceiver::on_fctbs(std::uint32_t fctbs) {
  assert(fctbs < fc_counter_modulus && "FCTBS is a 12-bit field");
  const bool in_step = fctbs == abr_;
  abr_ = fctbs;
  return in_step;
}

std::string check_credit_conservation(const CreditSender& sender, const CreditReceiver& receiver,
                                      std::uint32_t blocks_in_flight, FcclDelivery delivery) {
  if (blocks_in_flight > max_credits)
    return std::to_string(blocks_in_flight) + " blocks in flight, more than the 2048 the sender may have outstanding";

  std::string mismatch;
  // Every block sent is either on the wire or counted by the receiver.
  const std::uint32_t unreceived = fc_wrap(sender.fctbs() - receiver.abr());
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
