// Unit tests for sim/pool.h: handles are unique while live and reused after release, objects start
// default-initialised, growth in chunks never moves a held object, and live() counts owners.
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/pool.h"

namespace {

struct Packet {
  std::uint64_t tag = 0;
  std::uint32_t size_bytes = 64;
  std::uint8_t payload[40] = {};
};

// A small chunk so that tests cross chunk boundaries quickly.
constexpr std::uint32_t small_chunk = 4;
using SmallPool = sim::Pool<Packet, small_chunk>;

} // namespace

TEST_CASE("sim::Handle: 32 bits, invalid by default, compared by value", "[sim][quick]") {
  static_assert(sizeof(sim::Handle<Packet>) == 4);
  const sim::Handle<Packet> none;
  CHECK_FALSE(none.valid());
  CHECK(none.value == sim::Handle<Packet>::invalid_value);
  const sim::Handle<Packet> zero{0};
  CHECK(zero.valid());
  CHECK(zero == sim::Handle<Packet>{0});
  CHECK_FALSE(zero == sim::Handle<Packet>{1});
  CHECK_FALSE(zero == none);
}

TEST_CASE("sim::Pool: a new pool holds nothing", "[sim][quick]") {
  sim::Pool<Packet> pool;
  CHECK(pool.live() == 0);
  CHECK(pool.capacity() == 0);
}

TEST_CASE("sim::Pool: handles are valid and unique while live", "[sim][quick]") {
  sim::Pool<Packet> pool;
  std::vector<sim::Handle<Packet>> held;
  std::set<std::uint32_t> values;
  bool all_valid = true;
  for (std::uint32_t i = 0; i < 10'000; ++i) {
    const sim::Handle<Packet> handle = pool.acquire();
    all_valid = all_valid && handle.valid() && handle.value < pool.capacity();
    values.insert(handle.value);
    held.push_back(handle);
    pool[handle].tag = i;
  }
  CHECK(all_valid);
  CHECK(values.size() == 10'000);
  CHECK(pool.live() == 10'000);
  // Grown in whole chunks of the default 4096, no more than needed.
  CHECK(pool.capacity() == 3 * 4'096);
  // Every object kept its own value.
  std::uint32_t intact = 0;
  for (std::uint32_t i = 0; i < held.size(); ++i)
    intact += pool[held[i]].tag == i;
  CHECK(intact == 10'000);
}

TEST_CASE("sim::Pool: acquire hands out a default-initialised object", "[sim][quick]") {
  SmallPool pool;
  const sim::Handle<Packet> first = pool.acquire();
  CHECK(pool[first].tag == 0);
  CHECK(pool[first].size_bytes == 64);
  pool[first].tag = 99;
  pool[first].size_bytes = 4'096;
  pool[first].payload[7] = 0xab;
  pool.release(first);
  // Whichever slot comes back, including the dirty one, it is reset.
  for (std::uint32_t i = 0; i < small_chunk; ++i) {
    const sim::Handle<Packet> handle = pool.acquire();
    CHECK(pool[handle].tag == 0);
    CHECK(pool[handle].size_bytes == 64);
    CHECK(pool[handle].payload[7] == 0);
  }
}

TEST_CASE("sim::Pool: released handles are reused before the pool grows", "[sim][quick]") {
  SmallPool pool;
  std::vector<sim::Handle<Packet>> held;
  for (std::uint32_t i = 0; i < 2 * small_chunk; ++i)
    held.push_back(pool.acquire());
  REQUIRE(pool.capacity() == 2 * small_chunk);

  pool.release(held[1]);
  pool.release(held[6]);
  CHECK(pool.live() == 2 * small_chunk - 2);
  const sim::Handle<Packet> again_a = pool.acquire();
  const sim::Handle<Packet> again_b = pool.acquire();
  CHECK(pool.capacity() == 2 * small_chunk);
  const std::set<std::uint32_t> reused = {again_a.value, again_b.value};
  CHECK(reused == std::set<std::uint32_t>{held[1].value, held[6].value});
  CHECK(pool.live() == 2 * small_chunk);

  // Only now, with no free slot, does it grow.
  const sim::Handle<Packet> fresh = pool.acquire();
  CHECK(pool.capacity() == 3 * small_chunk);
  CHECK(fresh.value >= 2 * small_chunk);
}

TEST_CASE("sim::Pool: growth beyond one chunk keeps earlier objects in place", "[sim][quick]") {
  SmallPool pool;
  std::vector<sim::Handle<Packet>> held;
  std::vector<const Packet*> addresses;
  for (std::uint32_t i = 0; i < 25 * small_chunk + 1; ++i) {
    held.push_back(pool.acquire());
    Packet& packet = pool[held.back()];
    packet.tag = 1'000 + i;
    addresses.push_back(&packet);
  }
  CHECK(pool.capacity() == 26 * small_chunk);
  CHECK(pool.live() == 25 * small_chunk + 1);
  for (std::size_t i = 0; i < held.size(); ++i) {
    CHECK(&pool[held[i]] == addresses[i]);
    CHECK(addresses[i]->tag == 1'000 + i);
  }
  // The const accessor reaches the same object.
  const SmallPool& view = pool;
  CHECK(&view[held[0]] == addresses[0]);
  CHECK(view[held.back()].tag == 1'000 + held.size() - 1);
}

TEST_CASE("sim::Pool: live counts acquired minus released", "[sim][quick]") {
  SmallPool pool;
  std::vector<sim::Handle<Packet>> held;
  for (int i = 0; i < 10; ++i)
    held.push_back(pool.acquire());
  CHECK(pool.live() == 10);
  for (int i = 0; i < 4; ++i)
    pool.release(held[i]);
  CHECK(pool.live() == 6);
  for (int i = 4; i < 10; ++i)
    pool.release(held[i]);
  CHECK(pool.live() == 0);
  // Memory is kept for reuse.
  CHECK(pool.capacity() == 3 * small_chunk);
}

TEST_CASE("sim::Pool: random acquire and release keep handles unique and contents intact", "[sim][quick]") {
  SmallPool pool;
  std::mt19937_64 engine(5);
  struct Held {
    sim::Handle<Packet> handle;
    std::uint64_t tag;
  };
  std::vector<Held> held;
  std::set<std::uint32_t> live_values;
  std::uint64_t next_tag = 1;
  bool unique = true;
  for (int step = 0; step < 25'000; ++step) {
    // Alternates phases of net growth (to about a thousand objects, over hundreds of chunks) and shrinking.
    const bool grow_phase = (step / 5'000) % 2 == 0;
    if (held.empty() || engine() % 100 < (grow_phase ? 60u : 40u)) {
      const sim::Handle<Packet> handle = pool.acquire();
      unique = unique && live_values.insert(handle.value).second;
      pool[handle].tag = next_tag;
      held.push_back({handle, next_tag++});
    } else {
      const std::size_t victim = engine() % held.size();
      live_values.erase(held[victim].handle.value);
      pool.release(held[victim].handle);
      held[victim] = held.back();
      held.pop_back();
    }
  }
  CHECK(unique);
  CHECK(pool.live() == held.size());
  CHECK(held.size() > 100);
  // A slot shared by two owners would show the later owner's tag to the earlier one.
  std::size_t intact = 0;
  for (const Held& h : held)
    intact += pool[h.handle].tag == h.tag;
  CHECK(intact == held.size());
}
