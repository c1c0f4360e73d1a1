// Random numbers: one independent stream per component, derived from (scenario seed, component id)
// (docs/models/kernel.md). The generator is xoshiro256** seeded through splitmix64, and every distribution is written
// here rather than taken from <random>, whose distributions differ between standard libraries and would break
// bit-identical runs.
#pragma once

#include <cmath>
#include <cstdint>

namespace sim {

/// splitmix64 step: a bijective 64-bit mixer, used to expand seeds.
constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Rng {
public:
  /// The stream of component `component_id` under scenario seed `seed`.
  Rng(std::uint64_t seed, std::uint64_t component_id) {
    // Mix the two inputs through separate splitmix rounds so that (seed, id) and (id, seed) differ.
    std::uint64_t mix = seed;
    std::uint64_t key = splitmix64(mix) ^ (component_id * 0xd6e8feb86659fd93ULL);
    for (auto& word : state_)
      word = splitmix64(key);
  }

  /// Uniform over all 64-bit values.
  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  /// Uniform integer in [0, bound), bound > 0, without modulo bias (Lemire's multiply-and-reject).
  std::uint64_t uniform_below(std::uint64_t bound) {
    unsigned __int128 product = static_cast<unsigned __int128>(next_u64()) * bound;
    auto low = static_cast<std::uint64_t>(product);
    if (low < bound) {
      const std::uint64_t threshold = -bound % bound;
      while (low < threshold) {
        product = static_cast<unsigned __int128>(next_u64()) * bound;
        low = static_cast<std::uint64_t>(product);
      }
    }
    return static_cast<std::uint64_t>(product >> 64);
  }

  /// Uniform integer in [low, high], inclusive.
  std::int64_t uniform_between(std::int64_t low, std::int64_t high) {
    // Unsigned arithmetic: high - low overflows int64 for ranges wider than INT64_MAX.
    const std::uint64_t span = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
    const std::uint64_t offset = span == ~std::uint64_t{0} ? next_u64() : uniform_below(span + 1);
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(low) + offset);
  }

  /// Uniform double in [0, 1), 53 random bits.
  double uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  /// Exponential with the given mean. std::log is correctly rounded enough on glibc for determinism across
  /// runs on one platform; reports round well above its last bit.
  double exponential(double mean) { return -mean * std::log1p(-uniform01()); }

  bool bernoulli(double probability) { return uniform01() < probability; }

private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4];
};

} // namespace sim
