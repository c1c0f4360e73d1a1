// Simulated time: a strong int64 count of picoseconds (docs/models/kernel.md). Range about ±106 days. Durations derived
// from rates use one exact helper, computed in 128-bit integers and rounded up (STYLE rule 9): never a cached,
// truncated picoseconds-per-byte figure.
#pragma once

#include <cassert>
#include <compare>
#include <cstdint>
#include <limits>

namespace sim {

class Time {
public:
  constexpr Time() = default;

  static constexpr Time from_ps(std::int64_t ps) { return Time(ps); }
  static constexpr Time from_ns(std::int64_t ns) { return Time(ns * 1'000); }
  static constexpr Time from_us(std::int64_t us) { return Time(us * 1'000'000); }
  static constexpr Time from_ms(std::int64_t ms) { return Time(ms * 1'000'000'000); }
  static constexpr Time zero() { return Time(0); }
  /// Later than any reachable instant; "never".
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }

  constexpr std::int64_t ps() const { return ps_; }
  /// Lossy conversions, for reports only.
  constexpr double ns() const { return static_cast<double>(ps_) / 1e3; }
  constexpr double us() const { return static_cast<double>(ps_) / 1e6; }
  constexpr double s() const { return static_cast<double>(ps_) / 1e12; }

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time other) const { return Time(ps_ + other.ps_); }
  constexpr Time operator-(Time other) const { return Time(ps_ - other.ps_); }
  constexpr Time& operator+=(Time other) {
    ps_ += other.ps_;
    return *this;
  }
  constexpr Time& operator-=(Time other) {
    ps_ -= other.ps_;
    return *this;
  }
  constexpr Time operator*(std::int64_t k) const { return Time(ps_ * k); }

private:
  constexpr explicit Time(std::int64_t ps) : ps_(ps) {}
  std::int64_t ps_ = 0;
};

inline constexpr std::int64_t ps_per_second = 1'000'000'000'000;

/// A data rate, kept as an exact fraction of bits per second, because line codes make most link rates
/// non-integral (4x FDR carries 4 × 14.0625 Gb/s × 64/66 = 54.5454... Gb/s).
class Rate {
public:
  constexpr Rate() = default;
  static constexpr Rate from_bps(std::uint64_t bps) { return Rate(bps, 1); }
  static constexpr Rate from_gbps(std::uint64_t gbps) { return Rate(gbps * 1'000'000'000, 1); }
  /// `lanes` × `lane_signalling_bps` × `code_payload_bits` / `code_total_bits` (e.g. 64/66, 8/10, 128/130).
  static constexpr Rate from_line_code(std::uint64_t lane_signalling_bps, std::uint64_t lanes,
                                       std::uint64_t code_payload_bits, std::uint64_t code_total_bits) {
    return Rate(lane_signalling_bps * lanes * code_payload_bits, code_total_bits);
  }

  /// Numerator and denominator of the rate in bits per second.
  constexpr std::uint64_t bits_numerator() const { return bits_; }
  constexpr std::uint64_t seconds_denominator() const { return seconds_; }
  /// Lossy, for reports only.
  constexpr double bps() const { return static_cast<double>(bits_) / static_cast<double>(seconds_); }

private:
  constexpr Rate(std::uint64_t bits, std::uint64_t seconds) : bits_(bits), seconds_(seconds) {}
  std::uint64_t bits_ = 0;
  std::uint64_t seconds_ = 1;
};

/// Time to push `bits` through a channel of `rate`: bits × 10^12 / rate, computed in 128-bit integers and
/// rounded up to a whole picosecond.
constexpr Time transfer_time_bits(std::uint64_t bits, Rate rate) {
  assert(rate.bits_numerator() > 0);
  const unsigned __int128 numerator = static_cast<unsigned __int128>(bits) * ps_per_second * rate.seconds_denominator();
  const unsigned __int128 ps = (numerator + rate.bits_numerator() - 1) / rate.bits_numerator();
  assert(ps <= static_cast<unsigned __int128>(std::numeric_limits<std::int64_t>::max()));
  return Time::from_ps(static_cast<std::int64_t>(ps));
}

/// Time to push `size_bytes` through a channel of `rate`, rounded up to a whole picosecond.
constexpr Time transfer_time(std::uint64_t size_bytes, Rate rate) {
  return transfer_time_bits(size_bytes * 8, rate);
}

} // namespace sim
