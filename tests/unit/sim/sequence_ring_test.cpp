// Unit tests for sim/sequence_ring.h: entries keep their running index through growth and through the 2^32 wrap,
// and storage grows only to the number of live entries (rounded up to a power of two), never to the queue's depth.
#include <cstdint>
#include <deque>
#include <random>
#include <string>

#include <catch2/catch.hpp>

#include "sim/sequence_ring.h"

TEST_CASE("sim::SequenceRing: one live entry at a time needs one slot, whatever the running index", "[sim][quick]") {
  sim::SequenceRing<std::string> ring;
  CHECK(ring.capacity() == 0);
  for (std::uint32_t i = 0; i < 1000; ++i) {
    ring.make_room(i, i); // [i, i) live: room for i
    ring[i] = "wqe " + std::to_string(i);
    CHECK(ring[i] == "wqe " + std::to_string(i));
  }
  CHECK(ring.capacity() == 1);
}

TEST_CASE("sim::SequenceRing: growth keeps the live entries at their indices, across the 2^32 wrap", "[sim][quick]") {
  // A queue of depth 13 driven as a send queue is: post while fewer than 13 are live, free a random number of the
  // oldest; checked against a deque of what should be there.
  const std::uint32_t depth = 13;
  for (const std::uint32_t start : {0u, 0xffff'fff0u}) {
    sim::SequenceRing<std::uint64_t> ring;
    std::deque<std::uint64_t> expected;
    std::uint32_t first = start, end = start;
    std::mt19937 rng(7);
    std::uint32_t most_live = 0;
    for (int step = 0; step < 5000; ++step) {
      if (end - first < depth && rng() % 3 != 0) {
        ring.make_room(first, end);
        const std::uint64_t value = (std::uint64_t{end} << 8) ^ static_cast<std::uint64_t>(step);
        ring[end] = value;
        expected.push_back(value);
        ++end;
      } else if (end != first) {
        for (std::uint32_t n = rng() % (end - first) + 1; n > 0; --n, ++first)
          expected.pop_front();
      }
      most_live = std::max(most_live, end - first);
      for (std::uint32_t i = first; i != end; ++i)
        REQUIRE(ring[i] == expected[i - first]);
    }
    CHECK(end - start > 1000); // wrapped past 2^32 when starting near it
    CHECK(most_live == depth);
    CHECK(ring.capacity() == 16); // the power of two above the most live, not more
  }
}
