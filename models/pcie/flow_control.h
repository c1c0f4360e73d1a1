// PCIe data link layer flow control (PCIe Base Spec r5.0 §2.6.1): six credit types, posted, non-posted and
// completion, each with a header count (one credit per TLP) and a data count (one credit per 16 B). Counters are
// modular, 8 bits for headers and 12 for data (no scaled flow control), and a receiver that advertises 0 at
// initialisation grants infinite credits of that type. The transmitter gate and the receiver's overflow check
// are the spec's modular comparisons, so counters may wrap any number of times. Left out: scaled flow control
// (Gen4+ optional scale factors), and the VC/shared-credit variants.
#pragma once

#include <cstdint>
#include <string_view>

#include "models/pcie/tlp.h"

namespace ib::pcie {

enum class CreditType : std::uint8_t { ph, pd, nph, npd, cplh, cpld };

/// One data credit covers 4 DW (§2.6.1; docs/references.md pcie_fc_data_credit_unit).
inline constexpr std::uint32_t data_credit_bytes = 16;
/// Credit field widths in InitFC/UpdateFC DLLPs without scaling (InitFC/UpdateFC formats;
/// reference pcie_fc_counter_bits).
inline constexpr unsigned header_credit_field_bits = 8;
inline constexpr unsigned data_credit_field_bits = 12;

bool is_header(CreditType type);
/// 8 for header types, 12 for data types.
unsigned field_bits(CreditType type);
/// The largest finite advertisement: 2^(bits-1) - 1 (127 header, 2047 data), so the modular gate stays sound.
std::uint32_t max_advertised_credits(CreditType type);
/// "PH", "PD", "NPH", "NPD", "CplH", "CplD".
std::string_view to_string(CreditType type);

/// Data credits a payload takes: ceil(payload / 16).
constexpr std::uint32_t data_credits(std::uint32_t payload_bytes) {
  return (payload_bytes + data_credit_bytes - 1) / data_credit_bytes;
}

/// What one TLP consumes: one header credit of `header_type` and `data` credits of `data_type` (MWr: PH + PD;
/// MRd: NPH only, a memory read carries no data; CplD: CplH + CplD; Cpl: CplH only).
struct CreditCost {
  CreditType header_type;
  CreditType data_type;
  std::uint32_t header;
  std::uint32_t data;
};
CreditCost credit_cost(TlpKind kind, std::uint32_t payload_bytes);

/// The spec's transmitter gate (§2.6.1): a TLP needing `needed` credits may go if
/// (CREDIT_LIMIT - (CREDITS_CONSUMED + needed)) mod 2^bits <= 2^bits / 2.
bool may_send(std::uint32_t credit_limit, std::uint32_t credits_consumed, std::uint32_t needed, unsigned bits);

/// The transmitter's view of one credit type of its peer: CREDITS_CONSUMED and CREDIT_LIMIT, both mod 2^bits.
class TxCredits {
public:
  /// From the peer's InitFC advertisement: 0 means infinite.
  TxCredits(CreditType type, std::uint32_t advertised);
  bool infinite() const { return infinite_; }
  bool may_send(std::uint32_t needed) const;
  /// Precondition: may_send(needed).
  void consume(std::uint32_t needed);
  /// An UpdateFC carrying `credit_limit` (ignored when infinite, as the spec requires of such updates).
  void update(std::uint32_t credit_limit);
  /// Credits still available, (CREDIT_LIMIT - CREDITS_CONSUMED) mod 2^bits; 0 when infinite (use infinite()).
  std::uint32_t available() const;
  std::uint32_t credit_limit() const { return credit_limit_; }
  std::uint32_t credits_consumed() const { return credits_consumed_; }

private:
  std::uint32_t mask_;
  unsigned bits_;
  bool infinite_;
  std::uint32_t credit_limit_;
  std::uint32_t credits_consumed_ = 0;
};

/// The receiver's side of one credit type: CREDITS_ALLOCATED (granted so far, sent in UpdateFC) and
/// CREDITS_RECEIVED, both mod 2^bits.
class RxCredits {
public:
  /// Advertising `advertised` credits at initialisation; 0 means infinite.
  RxCredits(CreditType type, std::uint32_t advertised);
  bool infinite() const { return infinite_; }
  /// A TLP arrived taking `credits`. Returns false on receiver overflow (§2.6.1: more arrived than was granted),
  /// a flow-control protocol error.
  bool receive(std::uint32_t credits);
  /// Buffer space for `credits` was freed: grant them again.
  void release(std::uint32_t credits);
  /// The value an UpdateFC carries: CREDITS_ALLOCATED mod 2^bits.
  std::uint32_t credit_limit() const { return credits_allocated_; }
  /// Credits granted but not yet received, (CREDITS_ALLOCATED - CREDITS_RECEIVED) mod 2^bits.
  std::uint32_t outstanding() const;

private:
  std::uint32_t mask_;
  bool infinite_;
  std::uint32_t credits_allocated_;
  std::uint32_t credits_received_ = 0;
};

} // namespace ib::pcie
