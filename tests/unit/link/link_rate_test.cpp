#include <catch2/catch.hpp>

#include "models/link/link_rate.h"

using ib::link::Speed;
using ib::link::Width;

TEST_CASE("ib::link::data_rate: 4x rates of every speed match the reference", "[link][quick]") {
  // docs/references.md: ib_<speed>_4x_data_rate, exact where the code makes it whole.
  CHECK(ib::link::data_rate(Width::x4, Speed::sdr).bps() == 8e9);
  CHECK(ib::link::data_rate(Width::x4, Speed::ddr).bps() == 16e9);
  CHECK(ib::link::data_rate(Width::x4, Speed::qdr).bps() == 32e9);
  CHECK(ib::link::data_rate(Width::x4, Speed::fdr10).bps() == 40e9);
  CHECK(ib::link::data_rate(Width::x4, Speed::edr).bps() == 100e9);
  CHECK(ib::link::data_rate(Width::x4, Speed::hdr).bps() == 200e9);
  CHECK(ib::link::data_rate(Width::x4, Speed::ndr).bps() == 400e9);
  // FDR: 4 × 14.0625 Gb/s × 64/66 = 54.5454... Gb/s, kept as an exact fraction.
  const sim::Rate fdr = ib::link::data_rate(Width::x4, Speed::fdr);
  CHECK(fdr.bits_numerator() == 4ULL * 14'062'500'000ULL * 64);
  CHECK(fdr.seconds_denominator() == 66);
  CHECK(fdr.bps() == Approx(3.6e12 / 66.0).epsilon(1e-12));
}

TEST_CASE("ib::link::data_rate: rates scale with the lane count", "[link][quick]") {
  const double edr_lane = ib::link::data_rate(Width::x1, Speed::edr).bps();
  CHECK(edr_lane == 25e9);
  CHECK(ib::link::data_rate(Width::x2, Speed::edr).bps() == 2 * edr_lane);
  CHECK(ib::link::data_rate(Width::x8, Speed::edr).bps() == 8 * edr_lane);
  CHECK(ib::link::data_rate(Width::x12, Speed::edr).bps() == 12 * edr_lane);
  CHECK(ib::link::lanes(Width::x12) == 12);
}

TEST_CASE("ib::link::data_rate: one byte at 4x EDR lasts 80 ps, and E1's packet 331.04 ns", "[link][quick]") {
  const sim::Rate edr = ib::link::data_rate(Width::x4, Speed::edr);
  CHECK(sim::transfer_time(1, edr) == sim::Time::from_ps(80));
  CHECK(sim::transfer_time(4138, edr) == sim::Time::from_ps(331'040));
}

TEST_CASE("ib::link::parse_width and parse_speed read ibnetdiscover's names and round-trip", "[link][quick]") {
  for (Width w : {Width::x1, Width::x2, Width::x4, Width::x8, Width::x12})
    CHECK(ib::link::parse_width(ib::link::to_string(w)) == w);
  for (Speed s : {Speed::sdr, Speed::ddr, Speed::qdr, Speed::fdr10, Speed::fdr, Speed::edr, Speed::hdr, Speed::ndr})
    CHECK(ib::link::parse_speed(ib::link::to_string(s)) == s);
  CHECK(ib::link::parse_width("4x") == Width::x4);
  CHECK(ib::link::parse_speed("FDR10") == Speed::fdr10);
  SECTION("unknown names") {
    CHECK_FALSE(ib::link::parse_width("3x").has_value());
    CHECK_FALSE(ib::link::parse_width("4X").has_value());
    CHECK_FALSE(ib::link::parse_speed("edr").has_value());
    CHECK_FALSE(ib::link::parse_speed("XDR").has_value());
    CHECK_FALSE(ib::link::parse_speed("").has_value());
  }
}

TEST_CASE("ib::link::parse_width_set and parse_speed_set read profile lists strictly", "[link][quick]") {
  using namespace ib::link;
  REQUIRE(parse_width_set("1x,4x") == (width_bit(Width::x1) | width_bit(Width::x4)));
  REQUIRE(parse_speed_set("SDR,QDR,FDR,EDR") ==
          (speed_bit(Speed::sdr) | speed_bit(Speed::qdr) | speed_bit(Speed::fdr) | speed_bit(Speed::edr)));
  REQUIRE(parse_speed_set("HDR") == speed_bit(Speed::hdr));
  REQUIRE_FALSE(parse_width_set(""));
  REQUIRE_FALSE(parse_width_set("4x,"));
  REQUIRE_FALSE(parse_width_set("4x,4x"));
  REQUIRE_FALSE(parse_width_set("4x, 1x"));
  REQUIRE_FALSE(parse_speed_set("EDR,XDR"));
}
