// Unit tests for sim/time.h: Time arithmetic and the exact, rounded-up transfer-time helper (STYLE rule 9),
// checked against the worked figures E1 and E2 of docs/references.md.
#include <cstdint>
#include <limits>

#include <catch2/catch.hpp>

#include "sim/time.h"

namespace {

// Lane signalling rates and line codes: ib_constants.json (ib_qdr_*, ib_fdr_*, ib_edr_*), exact-spec.
constexpr std::uint64_t qdr_lane_bps = 10'000'000'000;
constexpr std::uint64_t fdr_lane_bps = 14'062'500'000;
constexpr std::uint64_t edr_lane_bps = 25'781'250'000;

constexpr sim::Rate qdr_4x() {
  return sim::Rate::from_line_code(qdr_lane_bps, 4, 8, 10);
}
constexpr sim::Rate fdr_4x() {
  return sim::Rate::from_line_code(fdr_lane_bps, 4, 64, 66);
}
constexpr sim::Rate edr_4x() {
  return sim::Rate::from_line_code(edr_lane_bps, 4, 64, 66);
}

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

} // namespace

TEST_CASE("sim::Time: unit constructors agree on picoseconds", "[sim][quick]") {
  CHECK(sim::Time().ps() == 0);
  CHECK(sim::Time::zero().ps() == 0);
  CHECK(sim::Time::from_ps(7).ps() == 7);
  CHECK(sim::Time::from_ns(3).ps() == 3'000);
  CHECK(sim::Time::from_us(3).ps() == 3'000'000);
  CHECK(sim::Time::from_ms(3).ps() == 3'000'000'000);
  CHECK(sim::Time::from_ms(1) == sim::Time::from_us(1'000));
  CHECK(sim::Time::from_us(1) == sim::Time::from_ns(1'000));
  CHECK(sim::Time::from_ns(1) == sim::Time::from_ps(1'000));
  CHECK(sim::Time::max().ps() == int64_max);
  // One day, well inside the documented ±106-day range.
  CHECK(sim::Time::from_ms(86'400'000).ps() == 86'400'000'000'000'000);
}

TEST_CASE("sim::Time: arithmetic and comparison", "[sim][quick]") {
  const sim::Time a = sim::Time::from_ns(5);
  const sim::Time b = sim::Time::from_ps(1'250);

  CHECK((a + b).ps() == 6'250);
  CHECK((a - b).ps() == 3'750);
  CHECK((b - a).ps() == -3'750);
  CHECK((b * 4).ps() == 5'000);
  CHECK((b * 0).ps() == 0);

  sim::Time c = a;
  c += b;
  CHECK(c.ps() == 6'250);
  c -= sim::Time::from_ns(6);
  CHECK(c.ps() == 250);

  CHECK(b < a);
  CHECK(a > b);
  CHECK(b <= a);
  CHECK(a >= b);
  CHECK(a != b);
  CHECK(a == sim::Time::from_ps(5'000));
  CHECK(a <= sim::Time::from_ps(5'000));
  CHECK(a >= sim::Time::from_ps(5'000));
  CHECK_FALSE(a < sim::Time::from_ps(5'000));
  CHECK((a <=> b) == std::strong_ordering::greater);
  CHECK(sim::Time::from_ps(-1) < sim::Time::zero());
  CHECK(sim::Time::from_ps(int64_max - 1) < sim::Time::max());

  // Usable in constant expressions.
  static_assert((sim::Time::from_ns(1) + sim::Time::from_ps(1)).ps() == 1'001);
}

TEST_CASE("sim::Time: lossy report conversions", "[sim][quick]") {
  const sim::Time t = sim::Time::from_ps(1'500'000);
  CHECK(t.ns() == Approx(1'500.0));
  CHECK(t.us() == Approx(1.5));
  CHECK(t.s() == Approx(1.5e-6));
  CHECK(sim::Time::from_ps(1).ns() == Approx(0.001));
}

TEST_CASE("sim::Rate: constructors keep the exact fraction", "[sim][quick]") {
  CHECK(sim::Rate::from_bps(3).bits_numerator() == 3);
  CHECK(sim::Rate::from_bps(3).seconds_denominator() == 1);
  CHECK(sim::Rate::from_gbps(100).bits_numerator() == 100'000'000'000);
  CHECK(sim::Rate::from_gbps(100).seconds_denominator() == 1);

  // 4x EDR: the fraction equals exactly 100 Gb/s; 4x FDR is 54.5454... Gb/s, not integral.
  const sim::Rate edr = edr_4x();
  CHECK(edr.bits_numerator() % edr.seconds_denominator() == 0);
  CHECK(edr.bits_numerator() / edr.seconds_denominator() == 100'000'000'000);
  const sim::Rate fdr = fdr_4x();
  CHECK(fdr.bits_numerator() % fdr.seconds_denominator() != 0);
  CHECK(fdr.bps() == Approx(54.545454545e9));
  CHECK(qdr_4x().bps() == Approx(32e9));
}

TEST_CASE("sim::Rate: transfer_time matches reference E1 on 4x EDR exactly", "[sim][quick]") {
  // RDMA WRITE Only/First: LRH 8 + BTH 12 + RETH 16 + 4096 + ICRC 4 + VCRC 2 = 4138 B; 33104 bits / 100 Gb/s.
  CHECK(sim::transfer_time(4138, edr_4x()).ps() == 331'040);
  // WRITE Middle has no RETH: 4122 B.
  CHECK(sim::transfer_time(4122, edr_4x()).ps() == 329'760);
  // The same figures from an integral rate, so the line-code fraction is not what makes them exact.
  CHECK(sim::transfer_time(4138, sim::Rate::from_gbps(100)).ps() == 331'040);
  // One byte at 100 Gb/s lasts 80 ps (the loss ns-3's default resolution would cause).
  CHECK(sim::transfer_time(1, edr_4x()).ps() == 80);
}

TEST_CASE("sim::Rate: transfer_time matches reference E2 on 4x QDR and 4x FDR", "[sim][quick]") {
  // SEND Only with 2 KiB payload: 8 + 12 + 2048 + 4 + 2 = 2074 B = 16592 bits; 4x QDR carries 32 Gb/s exactly.
  CHECK(sim::transfer_time(2074, qdr_4x()).ps() == 518'500);
  // 4x FDR carries 4 × 14.0625e9 × 64/66 = 3.6e12/66 b/s. The time is 16592 × 10^12 × 66 / 3.6e12 ps
  // = 1'095'072 / 3.6 = 304'186.666... ps, so rounded up to a whole picosecond it is 304'187 ps (README: 304.2 ns).
  CHECK(sim::transfer_time(2074, fdr_4x()).ps() == 304'187);
  // Bits and bytes agree.
  CHECK(sim::transfer_time_bits(16'592, fdr_4x()) == sim::transfer_time(2074, fdr_4x()));
}

TEST_CASE("sim::Rate: transfer_time rounds up to a whole picosecond", "[sim][quick]") {
  // 10^12 / 3 = 333'333'333'333.33... ps.
  CHECK(sim::transfer_time_bits(1, sim::Rate::from_bps(3)).ps() == 333'333'333'334);
  // Exact quotients are not bumped.
  CHECK(sim::transfer_time_bits(3, sim::Rate::from_bps(3)).ps() == 1'000'000'000'000);
  CHECK(sim::transfer_time_bits(0, sim::Rate::from_bps(3)).ps() == 0);
  // 1 bit at 3 Tb/s: 1/3 ps rounds up to 1 ps, never to 0.
  CHECK(sim::transfer_time_bits(1, sim::Rate::from_gbps(3'000)).ps() == 1);
  // Rounding is per call, on the exact fraction: 3 bytes at 4x FDR is 24 × 66 / 3.6 = 440 ps exactly,
  // while one byte is 146.67 ps → 147 ps. Three one-byte calls would over-count by 1 ps.
  CHECK(sim::transfer_time(3, fdr_4x()).ps() == 440);
  CHECK(sim::transfer_time(1, fdr_4x()).ps() == 147);
  // A rate with a denominator whose fraction is not reduced: 2/3 b/s, one bit takes 1.5 s.
  CHECK(sim::transfer_time_bits(1, sim::Rate::from_line_code(1, 2, 1, 3)).ps() == 1'500'000'000'000);
}

TEST_CASE("sim::Rate: transfer_time of huge sizes uses 128-bit intermediates", "[sim][quick]") {
  // 2^40 bytes at 1 Gb/s: 2^43 × 10^12 bits·ps overflows 64 bits, the result 2^43 × 1000 ps does not.
  CHECK(sim::transfer_time(std::uint64_t{1} << 40, sim::Rate::from_gbps(1)).ps() == (std::int64_t{1} << 43) * 1'000);
  // 2^40 bytes at 4x FDR: 2^43 × 66 / 3.6 ps = 161'261'705'407'146.67 → ...147 ps; the intermediate carries a
  // factor 66 more.
  CHECK(sim::transfer_time(std::uint64_t{1} << 40, fdr_4x()).ps() == 161'261'705'407'147);
  // All 64-bit bit counts at 4 Tb/s: (2^64 - 1) / 4 ps rounded up = 2^62 ps, inside int64.
  CHECK(sim::transfer_time_bits(std::numeric_limits<std::uint64_t>::max(), sim::Rate::from_gbps(4'000)).ps() ==
        std::int64_t{1} << 62);
  // The largest time that fits: int64 max bits at 1 Tb/s is int64 max ps.
  CHECK(sim::transfer_time_bits(static_cast<std::uint64_t>(int64_max), sim::Rate::from_gbps(1'000)) ==
        sim::Time::max());
}

TEST_CASE("sim::Rate: transfer_time is usable in constant expressions", "[sim][quick]") {
  static_assert(sim::transfer_time(4138, edr_4x()).ps() == 331'040);
  constexpr sim::Time t = sim::transfer_time(2074, qdr_4x());
  CHECK(t.ps() == 518'500);
}
