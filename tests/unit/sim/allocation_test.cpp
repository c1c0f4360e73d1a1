// Own executable: this file replaces the global operator new and delete to count heap allocations, which
// would count (and slow) every other test linked with it. Build it as a separate test binary.
//
// STYLE rule 27: after warm-up, the kernel's hot paths (schedule and dispatch, timer re-arming, pool acquire
// and release) perform no heap allocation at all.
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/pool.h"
#include "sim/simulator.h"
#include "sim/timer.h"

namespace {

// Every call of any form of operator new. The tests are single-threaded.
std::uint64_t allocation_count = 0;

void* counted_allocate(std::size_t size) {
  ++allocation_count;
  return std::malloc(size == 0 ? 1 : size);
}

void* counted_allocate_aligned(std::size_t size, std::align_val_t alignment) {
  ++allocation_count;
  const auto align = static_cast<std::size_t>(alignment);
  // aligned_alloc wants a size that is a multiple of the alignment.
  const std::size_t rounded = (size == 0 ? align : (size + align - 1) / align * align);
  return std::aligned_alloc(align, rounded);
}

} // namespace

void* operator new(std::size_t size) {
  if (void* p = counted_allocate(size))
    return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = counted_allocate(size))
    return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return counted_allocate(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return counted_allocate(size);
}
void* operator new(std::size_t size, std::align_val_t alignment) {
  if (void* p = counted_allocate_aligned(size, alignment))
    return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  if (void* p = counted_allocate_aligned(size, alignment))
    return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return counted_allocate_aligned(size, alignment);
}
void* operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return counted_allocate_aligned(size, alignment);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}

namespace {

constexpr sim::Target node{1, 0};

// Hold model: each dispatched event schedules one more at now + uniform(1 ns, 1 us), so the pending count
// stays constant (benchmark (a) in docs/performance.md). Stops after `remaining` events.
struct Hold {
  void operator()(const sim::Event& event) {
    sim.schedule_in(sim::Time::from_ps(rng.uniform_between(1'000, 1'000'000)), node, event.kind, event.handle);
    if (--remaining == 0)
      sim.request_stop();
  }
  void run(std::uint64_t events) {
    remaining = events;
    sim.run_until(*this, sim::Time::max());
  }

  sim::Simulator& sim;
  sim::Rng rng;
  std::uint64_t remaining = 0;
};

// Kept out of the optimiser's reach, so the allocation in the sanity check cannot be elided.
int* volatile escape = nullptr;

} // namespace

TEST_CASE("sim::allocation: the counter sees operator new", "[sim][quick]") {
  // Without this, a broken counter would make every zero-allocation check below pass.
  const std::uint64_t before = allocation_count;
  std::vector<int> grown;
  grown.reserve(100);
  escape = grown.data();
  grown.resize(1'000);
  escape = grown.data();
  const std::uint64_t after = allocation_count;
  CHECK(after - before == 2);
}

TEST_CASE("sim::Simulator: hold model allocates nothing after warm-up", "[sim][quick]") {
  const std::uint64_t pending = GENERATE(as<std::uint64_t>{}, 1'000, 100'000);
  CAPTURE(pending);
  sim::Simulator simulator(11);
  Hold hold{simulator, simulator.rng_for(0)};
  for (std::uint64_t i = 0; i < pending; ++i)
    simulator.schedule(sim::Time::from_ps(hold.rng.uniform_between(1'000, 1'000'000)), node, 0,
                       static_cast<std::uint32_t>(i));
  // Warm-up: turn the population over many times, so every calendar vector reaches its working size.
  hold.run(20 * pending + 200'000);
  REQUIRE(simulator.pending_events() == pending);

  const std::uint64_t dispatched_before = simulator.events_dispatched();
  const std::uint64_t before = allocation_count;
  hold.run(100'000);
  const std::uint64_t allocations = allocation_count - before;

  CHECK(simulator.events_dispatched() - dispatched_before == 100'000);
  CHECK(simulator.pending_events() == pending);
  CHECK(allocations == 0);
}

TEST_CASE("sim::Timer: re-arming on every packet allocates nothing after warm-up", "[sim][quick]") {
  // A transport timer pushed back by each packet, on a simulator that also carries a hold-model background.
  struct Owner {
    void operator()(const sim::Event& event) {
      if (event.kind == 1) {
        timer.on_event(sim, event);
        return;
      }
      timer.arm(sim, sim.now() + sim::Time::from_us(2));
      sim.schedule_in(sim::Time::from_ps(rng.uniform_between(1'000, 1'000'000)), node, 0);
      if (--remaining == 0)
        sim.request_stop();
    }
    sim::Simulator& sim;
    sim::Timer timer;
    sim::Rng rng;
    std::uint64_t remaining = 0;
  };
  sim::Simulator simulator(12);
  Owner owner{simulator, sim::Timer(node, 1), simulator.rng_for(1)};
  for (int i = 0; i < 1'000; ++i)
    simulator.schedule(sim::Time::from_ps(owner.rng.uniform_between(1'000, 1'000'000)), node, 0);
  owner.remaining = 500'000;
  simulator.run_until(owner, sim::Time::max());

  const std::uint64_t before = allocation_count;
  owner.remaining = 100'000;
  simulator.run_until(owner, sim::Time::max());
  const std::uint64_t allocations = allocation_count - before;

  CHECK(owner.remaining == 0);
  CHECK(allocations == 0);
}

TEST_CASE("sim::Pool: acquire and release allocate nothing after warm-up", "[sim][quick]") {
  struct Packet {
    std::uint64_t tag;
    std::uint8_t bytes[56];
  };
  sim::Pool<Packet> pool;
  constexpr std::size_t most_live = 10'000;
  std::vector<sim::Handle<Packet>> held;
  held.reserve(most_live);
  // Warm-up: reach the largest population the measured phase will hold, then return it all.
  for (std::size_t i = 0; i < most_live; ++i)
    held.push_back(pool.acquire());
  for (const sim::Handle<Packet> handle : held)
    pool.release(handle);
  held.clear();

  sim::Rng rng(13, 0);
  std::uint64_t operations = 0;
  const std::uint64_t before = allocation_count;
  for (int i = 0; i < 100'000; ++i) {
    const bool acquire = held.empty() || (held.size() < most_live && rng.bernoulli(0.55));
    if (acquire) {
      held.push_back(pool.acquire());
      pool[held.back()].tag = static_cast<std::uint64_t>(i);
    } else {
      const std::size_t victim = rng.uniform_below(held.size());
      pool.release(held[victim]);
      held[victim] = held.back();
      held.pop_back();
    }
    ++operations;
  }
  const std::uint64_t allocations = allocation_count - before;

  CHECK(operations == 100'000);
  CHECK(pool.live() == held.size());
  CHECK(allocations == 0);
}
