// Unit tests for sim/rng.h: streams are a pure function of (seed, component id), distinct across both, and the
// distributions have the documented ranges and moments. Every statistical check uses a fixed seed, so it is
// deterministic; its bound is loose (several standard deviations) so that it tests the formula, not luck.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/rng.h"

namespace {

std::vector<std::uint64_t> draws(sim::Rng rng, int count) {
  std::vector<std::uint64_t> out;
  for (int i = 0; i < count; ++i)
    out.push_back(rng.next_u64());
  return out;
}

// Pearson's chi-square statistic of `counts` against a uniform expectation.
double chi_square(const std::vector<std::uint64_t>& counts, std::uint64_t total) {
  const double expected = static_cast<double>(total) / static_cast<double>(counts.size());
  double sum = 0;
  for (const std::uint64_t count : counts) {
    const double d = static_cast<double>(count) - expected;
    sum += d * d / expected;
  }
  return sum;
}

constexpr std::int64_t int64_min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

} // namespace

TEST_CASE("sim::Rng: splitmix64 matches the published reference outputs", "[sim][quick]") {
  // First outputs of Vigna's splitmix64.c from state 0.
  std::uint64_t state = 0;
  CHECK(sim::splitmix64(state) == 0xe220a8397b1dcdafULL);
  CHECK(sim::splitmix64(state) == 0x6e789e6aa1b965f4ULL);
  CHECK(sim::splitmix64(state) == 0x06c45d188009454fULL);
  CHECK(state == 3 * 0x9e3779b97f4a7c15ULL);
}

TEST_CASE("sim::Rng: known answers pin the stream across platforms", "[sim][quick]") {
  // Golden values, a determinism backstop (STYLE rule 34): computed by an independent Python transcription of
  // xoshiro256** and splitmix64 with the constructor's seeding. They change only if the stream is redefined.
  CHECK(draws(sim::Rng(0, 0), 4) == std::vector<std::uint64_t>{0xfb5405f7bd79c540ULL, 0x780c98e26cea5883ULL,
                                                               0x2a146e0980febc66ULL, 0x4851477db8791fcaULL});
  CHECK(draws(sim::Rng(42, 7), 4) == std::vector<std::uint64_t>{0x60e1973b8bfa427eULL, 0xe60c51ae2b026dfdULL,
                                                                0x3db348894b13305bULL, 0x231a70fc713cb0b0ULL});
}

TEST_CASE("sim::Rng: the same seed and id give the same sequence", "[sim][quick]") {
  CHECK(draws(sim::Rng(12345, 17), 1'000) == draws(sim::Rng(12345, 17), 1'000));
  // Copies continue identically: the generator is a plain value.
  sim::Rng a(9, 9);
  a.next_u64();
  sim::Rng b = a;
  CHECK(draws(a, 100) == draws(b, 100));
  // Mixed distribution calls consume the same words in the same order.
  sim::Rng c(3, 4);
  sim::Rng d(3, 4);
  for (int i = 0; i < 1'000; ++i) {
    CHECK(c.uniform_below(1'000) == d.uniform_below(1'000));
    CHECK(c.exponential(5.0) == d.exponential(5.0));
    CHECK(c.bernoulli(0.3) == d.bernoulli(0.3));
  }
}

TEST_CASE("sim::Rng: a different id or seed gives a different sequence", "[sim][quick]") {
  const auto base = draws(sim::Rng(100, 5), 64);
  CHECK(base != draws(sim::Rng(100, 6), 64));
  CHECK(base != draws(sim::Rng(101, 5), 64));
  // Swapping seed and id does not give the same stream.
  CHECK(draws(sim::Rng(1, 2), 64) != draws(sim::Rng(2, 1), 64));
  CHECK(draws(sim::Rng(0, 1), 64) != draws(sim::Rng(1, 0), 64));

  // Across a grid of seeds and ids no two streams share a first word, nor look shifted by one word.
  std::vector<std::uint64_t> firsts;
  std::vector<std::uint64_t> seconds;
  for (std::uint64_t seed = 0; seed < 32; ++seed)
    for (std::uint64_t id = 0; id < 256; ++id) {
      sim::Rng rng(seed, id);
      firsts.push_back(rng.next_u64());
      seconds.push_back(rng.next_u64());
    }
  std::vector<std::uint64_t> sorted = firsts;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
  std::sort(seconds.begin(), seconds.end());
  std::size_t shifted = 0;
  for (const std::uint64_t first : firsts)
    shifted += std::binary_search(seconds.begin(), seconds.end(), first);
  CHECK(shifted == 0);
}

TEST_CASE("sim::Rng: next_u64 uses all 64 bits", "[sim][quick]") {
  sim::Rng rng(77, 1);
  // Each bit is set in about half of 10^4 words: mean 5000, sd 50; accept ±400.
  std::vector<int> ones(64, 0);
  for (int i = 0; i < 10'000; ++i) {
    const std::uint64_t word = rng.next_u64();
    for (int bit = 0; bit < 64; ++bit)
      ones[bit] += static_cast<int>((word >> bit) & 1);
  }
  for (int bit = 0; bit < 64; ++bit) {
    CAPTURE(bit);
    CHECK(ones[bit] > 4'600);
    CHECK(ones[bit] < 5'400);
  }
}

TEST_CASE("sim::Rng: uniform_below stays in range and is uniform", "[sim][quick]") {
  sim::Rng rng(2024, 3);
  SECTION("bound 1 gives 0") {
    for (int i = 0; i < 100; ++i)
      CHECK(rng.uniform_below(1) == 0);
  }
  SECTION("small bound, chi-square") {
    // 7 cells, 6 degrees of freedom: the 99.99% point is 27.9.
    const std::uint64_t bound = 7;
    const std::uint64_t total = 70'000;
    std::vector<std::uint64_t> counts(bound, 0);
    std::uint64_t out_of_range = 0;
    for (std::uint64_t i = 0; i < total; ++i) {
      const std::uint64_t v = rng.uniform_below(bound);
      if (v >= bound)
        ++out_of_range;
      else
        ++counts[v];
    }
    CHECK(out_of_range == 0);
    CHECK(chi_square(counts, total) < 28.0);
  }
  SECTION("1000 cells, chi-square") {
    // 999 degrees of freedom: mean 999, sd 44.7; accept up to mean + 6 sd.
    const std::uint64_t bound = 1'000;
    const std::uint64_t total = 200'000;
    std::vector<std::uint64_t> counts(bound, 0);
    std::uint64_t out_of_range = 0;
    for (std::uint64_t i = 0; i < total; ++i) {
      const std::uint64_t v = rng.uniform_below(bound);
      if (v >= bound)
        ++out_of_range;
      else
        ++counts[v];
    }
    CHECK(out_of_range == 0);
    const double statistic = chi_square(counts, total);
    CHECK(statistic < 1'270.0);
    // And not suspiciously perfect either (mean - 6 sd).
    CHECK(statistic > 730.0);
  }
  SECTION("bound near 2^64 has no bias") {
    // For bound = 3·2^62, multiply-and-shift without rejection maps four words onto three values, so residues
    // mod 3 would come out 1/2, 1/4, 1/4. With rejection each is 1/3 (sd 0.0015 over 10^5 draws).
    const std::uint64_t bound = 3 * (std::uint64_t{1} << 62);
    std::vector<std::uint64_t> residues(3, 0);
    std::uint64_t out_of_range = 0;
    for (int i = 0; i < 100'000; ++i) {
      const std::uint64_t v = rng.uniform_below(bound);
      out_of_range += v >= bound;
      ++residues[v % 3];
    }
    CHECK(out_of_range == 0);
    for (const std::uint64_t count : residues)
      CHECK(std::abs(static_cast<double>(count) / 100'000.0 - 1.0 / 3.0) < 0.01);
  }
  SECTION("bound 2^63 + 1: both halves reached, never the bound") {
    const std::uint64_t bound = (std::uint64_t{1} << 63) + 1;
    int upper_half = 0;
    std::uint64_t out_of_range = 0;
    for (int i = 0; i < 10'000; ++i) {
      const std::uint64_t v = rng.uniform_below(bound);
      out_of_range += v >= bound;
      upper_half += v >= (std::uint64_t{1} << 62);
    }
    CHECK(out_of_range == 0);
    CHECK(upper_half > 4'600);
    CHECK(upper_half < 5'400);
  }
}

TEST_CASE("sim::Rng: uniform_between reaches both inclusive ends", "[sim][quick]") {
  sim::Rng rng(8, 8);
  SECTION("small signed range") {
    std::vector<int> counts(7, 0);
    bool in_range = true;
    for (int i = 0; i < 7'000; ++i) {
      const std::int64_t v = rng.uniform_between(-3, 3);
      in_range = in_range && v >= -3 && v <= 3;
      if (v >= -3 && v <= 3)
        ++counts[static_cast<std::size_t>(v + 3)];
    }
    CHECK(in_range);
    // Each value about 1000 times (sd 30).
    for (const int count : counts)
      CHECK(count > 800);
  }
  SECTION("single value") {
    for (int i = 0; i < 100; ++i)
      CHECK(rng.uniform_between(5, 5) == 5);
  }
  SECTION("two values") {
    int lows = 0;
    int highs = 0;
    for (int i = 0; i < 1'000; ++i) {
      const std::int64_t v = rng.uniform_between(1'000'000, 1'000'001);
      lows += v == 1'000'000;
      highs += v == 1'000'001;
    }
    CHECK(lows + highs == 1'000);
    CHECK(lows > 400);
    CHECK(highs > 400);
  }
}

TEST_CASE("sim::Rng: uniform_between over ranges wider than INT64_MAX", "[sim][quick]") {
  // The documented contract is any [low, high]; spans above INT64_MAX need the difference taken unsigned.
  sim::Rng rng(8, 9);
  SECTION("the whole int64 range") {
    int negative = 0;
    int positive = 0;
    for (int i = 0; i < 1'000; ++i) {
      const std::int64_t v = rng.uniform_between(int64_min, int64_max);
      negative += v < 0;
      positive += v > 0;
    }
    CHECK(negative > 400);
    CHECK(positive > 400);
  }
  SECTION("from -1 to INT64_MAX") {
    int upper_half = 0;
    bool in_range = true;
    for (int i = 0; i < 1'000; ++i) {
      const std::int64_t v = rng.uniform_between(-1, int64_max);
      in_range = in_range && v >= -1;
      upper_half += v > int64_max / 2;
    }
    CHECK(in_range);
    CHECK(upper_half > 400);
    CHECK(upper_half < 600);
  }
}

TEST_CASE("sim::Rng: uniform01 lies in 0 inclusive to 1 exclusive with mean 1/2", "[sim][quick]") {
  sim::Rng rng(1, 1);
  double sum = 0;
  double low = 1;
  double high = 0;
  const int total = 100'000;
  for (int i = 0; i < total; ++i) {
    const double u = rng.uniform01();
    sum += u;
    low = std::min(low, u);
    high = std::max(high, u);
  }
  CHECK(low >= 0.0);
  CHECK(high < 1.0);
  CHECK(low < 1e-3);
  CHECK(high > 1.0 - 1e-3);
  // sd of the mean: 0.289 / sqrt(10^5) = 0.0009.
  CHECK(sum / total == Approx(0.5).margin(0.005));
}

TEST_CASE("sim::Rng: exponential has the requested mean", "[sim][quick]") {
  sim::Rng rng(31337, 2);
  const double mean = 250.0; // e.g. ns between arrivals
  const int total = 100'000;
  double sum = 0;
  double sum_squares = 0;
  bool non_negative = true;
  bool finite = true;
  for (int i = 0; i < total; ++i) {
    const double x = rng.exponential(mean);
    non_negative = non_negative && x >= 0.0;
    finite = finite && std::isfinite(x);
    sum += x;
    sum_squares += x * x;
  }
  CHECK(non_negative);
  CHECK(finite);
  const double sample_mean = sum / total;
  // sd of the sample mean: mean / sqrt(10^5) = 0.32%; the brief's 2% is about 6 sd.
  CHECK(sample_mean == Approx(mean).epsilon(0.02));
  // Variance of an exponential is mean^2; checks the shape, not just the scale.
  const double variance = sum_squares / total - sample_mean * sample_mean;
  CHECK(variance == Approx(mean * mean).epsilon(0.05));
}

TEST_CASE("sim::Rng: bernoulli has the requested probability", "[sim][quick]") {
  sim::Rng rng(6, 6);
  int never = 0;
  int always = 0;
  int sometimes = 0;
  const int total = 100'000;
  for (int i = 0; i < total; ++i) {
    never += rng.bernoulli(0.0);
    always += rng.bernoulli(1.0);
    sometimes += rng.bernoulli(0.1);
  }
  CHECK(never == 0);
  CHECK(always == total);
  // sd: sqrt(0.09 / 10^5) = 0.00095.
  CHECK(static_cast<double>(sometimes) / total == Approx(0.1).margin(0.006));
}
