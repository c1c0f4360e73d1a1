// Unit tests for sim/ring.h: FIFO order through growth and wraparound, and an emptied ring starting again at its
// first slot (so a queue that once grew keeps reusing the same cache lines).
#include <cstdint>
#include <deque>
#include <random>

#include <catch2/catch.hpp>

#include "sim/ring.h"

TEST_CASE("sim::Ring: FIFO order through growth and wraparound, against a deque", "[sim][quick]") {
  sim::Ring<std::uint32_t> ring;
  std::deque<std::uint32_t> expected;
  std::mt19937 rng(7);
  std::uint32_t next = 0;
  for (int step = 0; step < 20000; ++step) {
    // Bursts of pushes and pops, so the ring both grows and wraps with a non-zero head.
    if (rng() % 3 != 0 || expected.empty()) {
      ring.push_back(next);
      expected.push_back(next++);
    } else {
      REQUIRE(ring.front() == expected.front());
      ring.pop_front();
      expected.pop_front();
    }
    REQUIRE(ring.size() == expected.size());
    if (!expected.empty() && step % 97 == 0)
      for (std::uint32_t i = 0; i < ring.size(); ++i)
        REQUIRE(ring[i] == expected[i]);
  }
  CHECK(ring.capacity() >= ring.size());
}

TEST_CASE("sim::Ring: emptied, a ring takes its next item in its first slot", "[sim][quick]") {
  sim::Ring<std::uint64_t> ring(64);
  ring.push_back(0);
  const std::uint64_t* first_slot = &ring.front();
  ring.pop_front();
  for (std::uint64_t round = 1; round <= 5; ++round) {
    for (std::uint64_t i = 0; i < 2 + round; ++i)
      ring.push_back(i);
    while (!ring.empty())
      ring.pop_front();
    ring.push_back(round);
    // Without the restart, the head would have moved on by 2 + round slots each round.
    CHECK(&ring.front() == first_slot);
    CHECK(ring.front() == round);
    ring.pop_front();
  }
  CHECK(ring.capacity() == 64);
}
