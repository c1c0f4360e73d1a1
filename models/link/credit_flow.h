// IB link-level, credit-based flow control of one data VL in one direction of one link (IBA vol 1 §7.9): the
// sender's FCTBS and latest FCCL, and the receiver's buffer, ABR and advertised FCCL, as pure state machines in
// 64-byte blocks with 12-bit wrapping counters. They hold no time and schedule nothing: the link model sends the
// data and flow-control packets and calls them. Left out: VL15 (never flow-controlled), the link-initialisation
// handshake (its FC packets are handled like normal ones), when FC packets are sent, and buffers shared by VLs.
#pragma once

#include <cassert>
#include <cstdint>
#include <string>
#include <string_view>

namespace ib::link {

/// One credit: a 64-byte block of receive buffer (IBA vol 1 §7.9.3).
inline constexpr std::uint32_t block_bytes = 64;
/// FCTBS, FCCL and ABR are 12-bit fields and counters, so credit arithmetic is modulo 4096 (IBA vol 1 §7.9.4).
inline constexpr std::uint32_t fc_counter_modulus = 4096;
/// Most blocks a receiver may advertise beyond those it was sent: half the counter space (IBA vol 1 §7.9.4).
inline constexpr std::uint32_t max_credits = 2048;
/// Stable id of the credit conservation invariant (STYLE rule 36).
inline constexpr std::string_view credit_conservation_id = "credit-conservation";

static_assert((fc_counter_modulus & (fc_counter_modulus - 1)) == 0, "fc_wrap() relies on a power-of-two modulus");
static_assert(max_credits * 2 == fc_counter_modulus, "the credit window is half the counter space");

/// `value` mod 4096. Unsigned arithmetic wraps modulo 2^32, a multiple of 4096, so sums and differences may be
/// taken first and reduced afterwards.
constexpr std::uint32_t fc_wrap(std::uint32_t value) {
  return value & (fc_counter_modulus - 1);
}

/// Blocks (credits) a packet of `wire_bytes` (LRH through VCRC) occupies: ceil(wire_bytes / 64) (IBA vol 1 §7.9.3).
constexpr std::uint32_t blocks_for(std::uint32_t wire_bytes) {
  return wire_bytes / block_bytes + (wire_bytes % block_bytes != 0 ? 1 : 0);
}

/// Sender side of one VL: FCTBS (blocks sent, mod 4096) and the latest FCCL received (IBA vol 1 §7.9.4).
class CreditSender {
public:
  /// FCTBS = FCCL = 0, so nothing may be sent before the first flow-control packet arrives.
  CreditSender() = default;

  /// Whether a packet of `blocks` may start now: (FCCL - (FCTBS + blocks)) mod 4096 <= 2048 (IBA vol 1 §7.9.4),
  /// computed as blocks <= available_blocks(), which agrees for every state a conforming receiver allows.
  bool may_send(std::uint32_t blocks) const;
  /// Records a packet of `blocks` sent: FCTBS += blocks (mod 4096). Precondition: may_send(blocks).
  void on_sent(std::uint32_t blocks);
  /// A flow-control packet arrived carrying `fccl` (12 bits); it replaces the previous limit.
  void on_flow_control(std::uint32_t fccl);

  std::uint32_t fctbs() const { return fctbs_; }
  std::uint32_t fccl() const { return fccl_; }
  /// Blocks the receiver allows beyond those sent, (FCCL - FCTBS) mod 4096 in 0..2048; 0 if FCTBS is past FCCL.
  std::uint32_t available_blocks() const;

private:
  std::uint32_t fctbs_ = 0;
  std::uint32_t fccl_ = 0;
};

/// Receiver side of one VL: a buffer of `capacity_blocks`, ABR (adjusted blocks received, mod 4096) and the FCCL
/// it advertises, ABR + free blocks (IBA vol 1 §7.9.4).
class CreditReceiver {
public:
  /// `capacity_blocks` in 1..2048, else std::invalid_argument (a programming guard: profiles are validated earlier).
  explicit CreditReceiver(std::uint32_t capacity_blocks);

  /// A packet of `blocks` arrived and takes buffer space: ABR += blocks. Returns false and changes nothing if it
  /// does not fit, a credit violation the link model reports as an invariant failure (exit 3).
  bool on_packet_arrived(std::uint32_t blocks);
  /// A packet of `blocks` left the buffer (forwarded or consumed). Precondition: blocks <= used_blocks().
  void on_packet_freed(std::uint32_t blocks);
  /// A flow-control packet carried the sender's `fctbs`: ABR = FCTBS, recovering blocks lost on the wire. Returns
  /// whether ABR already equalled it, as it must on a lossless link.
  bool on_fctbs(std::uint32_t fctbs);

  /// The FCCL to advertise now: ABR + free blocks (mod 4096), at most 2048 ahead of ABR.
  std::uint32_t fccl() const;
  std::uint32_t abr() const { return abr_; }
  std::uint32_t used_blocks() const { return used_blocks_; }
  std::uint32_t free_blocks() const { return capacity_blocks_ - used_blocks_; }
  std::uint32_t capacity_blocks() const { return capacity_blocks_; }

private:
  std::uint32_t capacity_blocks_;
  std::uint32_t used_blocks_ = 0;
  std::uint32_t abr_ = 0;
};

/// What the caller of check_credit_conservation knows about the FCCL the sender holds.
enum class FcclDelivery : std::uint8_t {
  latest,  ///< the sender holds the receiver's current FCCL: both views must agree exactly
  pending, ///< a newer FCCL may still be on its way: the sender's view may only lag the receiver's
};

/// Credit conservation on one VL of a lossless link (`credit-conservation`): FCTBS - ABR == blocks_in_flight, and
/// available + in flight == free blocks (<= if pending). Returns the mismatch as text, empty when it holds.
std::string check_credit_conservation(const CreditSender& sender, const CreditReceiver& receiver,
                                      std::uint32_t blocks_in_flight, FcclDelivery delivery = FcclDelivery::latest);

// The per-packet operations, inline: every packet-hop calls several of them.

inline bool CreditSender::may_send(std::uint32_t blocks) const {
  // The spec's test, (FCCL - (FCTBS + blocks)) mod 4096 <= 2048, says the same as this one whenever FCCL is 0..2048
  // blocks ahead of FCTBS, which a conforming receiver guarantees, and for packets under 2048 blocks (real ones
  // are at most 128: LRH PktLen is 11 bits of 4-byte words). Outside that range the modular form would let some
  // sizes through and not others; this one sends nothing.
  assert(blocks >= 1);
  return blocks <= available_blocks();
}

inline void CreditSender::on_sent(std::uint32_t blocks) {
  assert(may_send(blocks) && "sent a packet the receiver has no credit for");
  fctbs_ = fc_wrap(fctbs_ + blocks);
}

inline void CreditSender::on_flow_control(std::uint32_t fccl) {
  assert(fccl < fc_counter_modulus && "FCCL is a 12-bit field");
  fccl_ = fccl;
}

inline std::uint32_t CreditSender::available_blocks() const {
  // A conforming receiver never advertises more than 2048 blocks past what it received, and the sender never
  // passes the limit, so a larger difference can only mean FCTBS is past FCCL: nothing is available.
  const std::uint32_t ahead = fc_wrap(fccl_ - fctbs_);
  return ahead <= max_credits ? ahead : 0;
}

inline bool CreditReceiver::on_packet_arrived(std::uint32_t blocks) {
  assert(blocks >= 1);
  if (blocks > free_blocks())
    return false;
  used_blocks_ += blocks;
  abr_ = fc_wrap(abr_ + blocks);
  return true;
}

inline void CreditReceiver::on_packet_freed(std::uint32_t blocks) {
  assert(blocks >= 1 && blocks <= used_blocks_ && "freed more blocks than the buffer holds");
  used_blocks_ -= blocks;
}

inline std::uint32_t CreditReceiver::fccl() const {
  // The spec caps the advertisement at ABR + 2048; the constructor caps the buffer at 2048 blocks, so the free
  // space never exceeds the cap.
  return fc_wrap(abr_ + free_blocks());
}

} // namespace ib::link
