#include "models/pcie/flow_control.h"

#include <cassert>

namespace ib::pcie {

bool is_header(CreditType type) {
  switch (type) {
  case CreditType::ph:
  case CreditType::nph:
  case CreditType::cplh:
    return true;
  case CreditType::pd:
  case CreditType::npd:
  case CreditType::cpld:
    return false;
  }
  return false;
}

unsigned field_bits(CreditType type) {
  return is_header(type) ? header_credit_field_bits : data_credit_field_bits;
}

std::uint32_t max_advertised_credits(CreditType type) {
  return (std::uint32_t{1} << (field_bits(type) - 1)) - 1;
}

std::string_view to_string(CreditType type) {
  switch (type) {
  case CreditType::ph:
    return "PH";
  case CreditType::pd:
    return "PD";
  case CreditType::nph:
    return "NPH";
  case CreditType::npd:
    return "NPD";
  case CreditType::cplh:
    return "CplH";
  case CreditType::cpld:
    return "CplD";
  }
  return "?";
}

CreditCost credit_cost(TlpKind kind, std::uint32_t payload_bytes) {
  assert(payload_bytes == 0 || carries_payload(kind));
  switch (kind) {
  case TlpKind::mwr:
    return {CreditType::ph, CreditType::pd, 1, data_credits(payload_bytes)};
  case TlpKind::mrd:
    return {CreditType::nph, CreditType::npd, 1, 0};
  case TlpKind::cpld:
    return {CreditType::cplh, CreditType::cpld, 1, data_credits(payload_bytes)};
  case TlpKind::cpl:
    return {CreditType::cplh, CreditType::cpld, 1, 0};
  }
  return {CreditType::ph, CreditType::pd, 0, 0};
}

bool may_send(std::uint32_t credit_limit, std::uint32_t credits_consumed, std::uint32_t needed, unsigned bits) {
  const std::uint32_t modulus = std::uint32_t{1} << bits;
  // Unsigned arithmetic wraps mod 2^32, a multiple of 2^bits, so masking afterwards gives the value mod 2^bits.
  return ((credit_limit - (credits_consumed + needed)) & (modulus - 1)) <= modulus / 2;
}

TxCredits::TxCredits(CreditType type, std::uint32_t advertised)
    : mask_((std::uint32_t{1} << field_bits(type)) - 1), bits_(field_bits(type)), infinite_(advertised == 0),
      credit_limit_(advertised & mask_) {
  assert(advertised <= max_advertised_credits(type));
}

bool TxCredits::may_send(std::uint32_t needed) const {
  return infinite_ || pcie::may_send(credit_limit_, credits_consumed_, needed, bits_);
}

void TxCredits::consume(std::uint32_t needed) {
  assert(may_send(needed));
  credits_consumed_ = (credits_consumed_ + needed) & mask_;
}

void TxCredits::update(std::uint32_t credit_limit) {
  if (!infinite_)
    credit_limit_ = credit_limit & mask_;
}

std::uint32_t TxCredits::available() const {
  return infinite_ ? 0 : (credit_limit_ - credits_consumed_) & mask_;
}

RxCredits::RxCredits(CreditType type, std::uint32_t advertised)
    : mask_((std::uint32_t{1} << field_bits(type)) - 1), infinite_(advertised == 0),
      credits_allocated_(advertised & mask_) {
  assert(advertised <= max_advertised_credits(type));
}

bool RxCredits::receive(std::uint32_t credits) {
  if (infinite_)
    return true;
  credits_received_ = (credits_received_ + credits) & mask_;
  // §2.6.1 receiver overflow check: (CREDITS_ALLOCATED - CREDITS_RECEIVED) mod 2^bits >= 2^bits / 2.
  return outstanding() < (mask_ + 1) / 2;
}

void RxCredits::release(std::uint32_t credits) {
  if (!infinite_)
    credits_allocated_ = (credits_allocated_ + credits) & mask_;
}

std::uint32_t RxCredits::outstanding() const {
  return infinite_ ? 0 : (credits_allocated_ - credits_received_) & mask_;
}

} // namespace ib::pcie
