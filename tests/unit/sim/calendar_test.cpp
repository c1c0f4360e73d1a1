// Unit tests for sim/calendar.h: the calendar must pop in exact (time, seq) order under every monotone pattern of
// pushes, pops and peeks. Each randomised case replays the same operations on a std::set reference and stops at
// the first difference, which it reports.
#include <cstdint>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/calendar.h"

namespace {

// The payload fields are a function of seq, so a popped event can be checked for corruption as well as order.
sim::Event make_event(sim::Time at, std::uint64_t seq) {
  sim::Event event;
  event.time = at;
  event.seq = seq;
  event.index = static_cast<std::uint32_t>(seq * 7 + 1);
  event.handle = static_cast<std::uint32_t>(seq ^ 0x5a5a5a5au);
  event.generation = static_cast<std::uint32_t>(seq >> 3);
  event.type = static_cast<std::uint8_t>(seq * 13);
  event.kind = static_cast<std::uint8_t>(seq >> 8);
  return event;
}

bool same_event(const sim::Event& a, const sim::Event& b) {
  return a.time == b.time && a.seq == b.seq && a.index == b.index && a.handle == b.handle &&
         a.generation == b.generation && a.type == b.type && a.kind == b.kind;
}

// A calendar and a std::set reference driven in lockstep. `now` is the time of the last pop, the calendar's
// monotone clock. Methods return false and fill `failure` on the first disagreement; the failure sticks, so a
// test may run several steps and check `failure() == ""` once at the end.
class CheckedCalendar {
public:
  sim::Time now() const { return now_; }
  std::size_t size() const { return reference_.size(); }
  const std::string& failure() const { return failure_; }
  std::uint64_t operations() const { return operations_; }

  void push(sim::Time at) { push_with_seq(at, next_seq_++); }
  void push_with_seq(sim::Time at, std::uint64_t seq) {
    ++operations_;
    calendar_.push(make_event(at, seq));
    reference_.emplace(at.ps(), seq);
  }

  bool pop() {
    ++operations_;
    if (!failure_.empty() || !sizes_agree())
      return false;
    const auto expected = *reference_.begin();
    reference_.erase(reference_.begin());
    const sim::Event got = calendar_.pop();
    if (!same_event(got, make_event(sim::Time::from_ps(expected.first), expected.second))) {
      std::ostringstream out;
      out << "operation " << operations_ << ": popped (" << got.time.ps() << " ps, seq " << got.seq << "), expected ("
          << expected.first << " ps, seq " << expected.second << ")";
      failure_ = out.str();
      return false;
    }
    now_ = got.time;
    return sizes_agree();
  }

  /// Compares next_time() with the reference; `next` receives it.
  bool peek(sim::Time& next) {
    ++operations_;
    if (!failure_.empty() || !sizes_agree())
      return false;
    next = calendar_.next_time();
    if (next.ps() != reference_.begin()->first) {
      std::ostringstream out;
      out << "operation " << operations_ << ": next_time " << next.ps() << " ps, expected " << reference_.begin()->first
          << " ps";
      failure_ = out.str();
      return false;
    }
    return sizes_agree();
  }

  bool sizes_agree() {
    if (calendar_.size() == reference_.size() && calendar_.empty() == reference_.empty())
      return true;
    if (!failure_.empty())
      return false;
    std::ostringstream out;
    out << "operation " << operations_ << ": size " << calendar_.size() << " empty " << calendar_.empty()
        << ", expected size " << reference_.size();
    failure_ = out.str();
    return false;
  }

  bool drain() {
    while (failure_.empty() && !reference_.empty())
      pop();
    return failure_.empty() && sizes_agree();
  }

private:
  sim::Calendar calendar_;
  std::set<std::pair<std::int64_t, std::uint64_t>> reference_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t operations_ = 0;
  sim::Time now_;
  std::string failure_;
};

using Engine = std::mt19937_64;

// Integer in [0, bound); the slight modulo bias does not matter for driving a test.
std::int64_t below(Engine& engine, std::int64_t bound) {
  return static_cast<std::int64_t>(engine() % static_cast<std::uint64_t>(bound));
}

enum class Spread { narrow, wide, ties, zero_heavy, recurring };

const char* spread_name(Spread spread) {
  switch (spread) {
  case Spread::narrow:
    return "narrow: 1..1000 ps";
  case Spread::wide:
    return "wide: 1 ps..1 us, 1% outliers up to 1 s";
  case Spread::ties:
    return "ties: 0..3 ns in whole ns";
  case Spread::zero_heavy:
    return "zero-heavy: half at now, rest 1..100 ns";
  case Spread::recurring:
    return "recurring: 9 in 10 one of five fixed delays (a fabric's), rest 1 ps..1 us";
  }
  return "?";
}

// A delay drawn from `spread`, in picoseconds.
sim::Time delay(Engine& engine, Spread spread) {
  switch (spread) {
  case Spread::narrow:
    return sim::Time::from_ps(1 + below(engine, 1'000));
  case Spread::wide:
    if (below(engine, 100) == 0)
      return sim::Time::from_ps(1 + below(engine, 1'000'000'000'000));
    return sim::Time::from_ps(1 + below(engine, 1'000'000));
  case Spread::ties:
    return sim::Time::from_ns(below(engine, 4));
  case Spread::zero_heavy:
    if (below(engine, 2) == 0)
      return sim::Time::zero();
    return sim::Time::from_ps(1 + below(engine, 100'000));
  case Spread::recurring: {
    // Serialization of a 4 KiB packet at EDR, a cable plus switch latency, an FC packet, a refresh period, none.
    static constexpr std::int64_t fixed_ps[] = {331'040, 100'000, 480, 20'971'000, 0};
    if (below(engine, 10) != 0)
      return sim::Time::from_ps(fixed_ps[below(engine, 5)]);
    return sim::Time::from_ps(1 + below(engine, 1'000'000));
  }
  }
  return sim::Time::zero();
}

constexpr Spread all_spreads[] = {Spread::narrow, Spread::wide, Spread::ties, Spread::zero_heavy, Spread::recurring};

// Hold model: `pending` events, then `holds` times pop one and push one at now + delay, then drain.
std::string hold_model(std::size_t pending, std::size_t holds, Spread spread, std::uint64_t seed) {
  Engine engine(seed);
  CheckedCalendar calendar;
  for (std::size_t i = 0; i < pending; ++i)
    calendar.push(delay(engine, spread));
  for (std::size_t i = 0; i < holds; ++i) {
    if (!calendar.pop())
      return calendar.failure();
    calendar.push(calendar.now() + delay(engine, spread));
  }
  if (!calendar.drain())
    return calendar.failure();
  return "";
}

// Random mix around a target size: pushes at now + delay, pops, and peeks followed by a push at a time between
// now and the peeked next time inclusive (so earlier than every pending event, or tied with the earliest).
std::string random_mix(std::size_t target_size, std::size_t operations, Spread spread, std::uint64_t seed) {
  Engine engine(seed);
  CheckedCalendar calendar;
  for (std::size_t i = 0; i < operations; ++i) {
    const std::int64_t choice = below(engine, 100);
    // Drift towards the target size; pop more often above it.
    const std::int64_t pop_percent = calendar.size() > target_size ? 55 : 40;
    if (choice < pop_percent) {
      if (calendar.size() > 0 && !calendar.pop())
        return calendar.failure();
    } else if (choice < pop_percent + 15 && calendar.size() > 0) {
      sim::Time next;
      if (!calendar.peek(next))
        return calendar.failure();
      const std::int64_t gap = (next - calendar.now()).ps();
      calendar.push(calendar.now() + sim::Time::from_ps(below(engine, gap + 1)));
    } else if (choice < pop_percent + 20) {
      calendar.push(calendar.now());
    } else {
      calendar.push(calendar.now() + delay(engine, spread));
    }
  }
  if (!calendar.drain())
    return calendar.failure();
  return "";
}

} // namespace

TEST_CASE("sim::Calendar: a new calendar is empty", "[sim][quick]") {
  sim::Calendar calendar;
  CHECK(calendar.empty());
  CHECK(calendar.size() == 0);
}

TEST_CASE("sim::Calendar: size and empty track pushes and pops", "[sim][quick]") {
  sim::Calendar calendar;
  calendar.push(make_event(sim::Time::from_ns(5), 0));
  CHECK_FALSE(calendar.empty());
  CHECK(calendar.size() == 1);
  calendar.push(make_event(sim::Time::from_ns(3), 1));
  calendar.push(make_event(sim::Time::from_ns(9), 2));
  CHECK(calendar.size() == 3);

  // Peeking does not remove.
  CHECK(calendar.next_time() == sim::Time::from_ns(3));
  CHECK(calendar.next_time() == sim::Time::from_ns(3));
  CHECK(calendar.size() == 3);

  CHECK(calendar.pop().seq == 1);
  CHECK(calendar.size() == 2);
  CHECK(calendar.pop().seq == 0);
  CHECK(calendar.pop().seq == 2);
  CHECK(calendar.empty());
  CHECK(calendar.size() == 0);

  // Usable again after running dry.
  calendar.push(make_event(sim::Time::from_ns(10), 3));
  CHECK(calendar.size() == 1);
  CHECK(calendar.next_time() == sim::Time::from_ns(10));
  CHECK(calendar.pop().seq == 3);
  CHECK(calendar.empty());
}

TEST_CASE("sim::Calendar: a popped event carries every field unchanged", "[sim][quick]") {
  sim::Calendar calendar;
  sim::Event event;
  event.time = sim::Time::from_ps(123'456);
  event.seq = 0xfedcba9876543210ull;
  event.index = 0xdeadbeefu;
  event.handle = 0xcafef00du;
  event.generation = 0x01020304u;
  event.type = 200;
  event.kind = 17;
  calendar.push(event);
  CHECK(same_event(calendar.pop(), event));
}

TEST_CASE("sim::Calendar: equal times pop in seq order (FIFO)", "[sim][quick]") {
  CheckedCalendar calendar;
  SECTION("all pushed before the first pop") {
    for (int i = 0; i < 1'000; ++i)
      calendar.push(sim::Time::from_ns(7));
  }
  SECTION("seqs pushed in descending order still pop ascending") {
    for (std::uint64_t seq = 1'000; seq-- > 0;)
      calendar.push_with_seq(sim::Time::from_ns(7), seq);
  }
  SECTION("ties at two instants, interleaved with pops and pushes at now") {
    for (int i = 0; i < 500; ++i) {
      calendar.push(sim::Time::from_ns(7));
      calendar.push(sim::Time::from_ns(8));
    }
    for (int i = 0; i < 300; ++i) {
      calendar.pop();
      calendar.push(calendar.now());
      calendar.push(sim::Time::from_ns(8));
    }
  }
  calendar.drain();
  CHECK(calendar.failure() == "");
}

TEST_CASE("sim::Calendar: a push at the current time while its bucket is open pops after earlier ties",
          "[sim][quick]") {
  CheckedCalendar calendar;
  for (int i = 0; i < 10; ++i)
    calendar.push(sim::Time::from_ns(1));
  for (int i = 0; i < 10; ++i)
    calendar.push(sim::Time::from_ns(1) + sim::Time::from_ps(i + 1));
  // Opens the bucket holding 1 ns, then keeps adding at exactly now and just after it.
  calendar.pop();
  CHECK(calendar.now() == sim::Time::from_ns(1));
  for (int i = 0; i < 50; ++i) {
    calendar.push(calendar.now());
    calendar.push(calendar.now() + sim::Time::from_ps(1));
    calendar.pop();
  }
  calendar.drain();
  CHECK(calendar.failure() == "");
}

TEST_CASE("sim::Calendar: an event earlier than a peeked next time pops first", "[sim][quick]") {
  SECTION("first peek of a fresh calendar") {
    sim::Calendar calendar;
    calendar.push(make_event(sim::Time::from_ns(100), 0));
    calendar.push(make_event(sim::Time::from_ns(200), 1));
    REQUIRE(calendar.next_time() == sim::Time::from_ns(100));
    calendar.push(make_event(sim::Time::from_ns(50), 2));
    CHECK(calendar.next_time() == sim::Time::from_ns(50));
    CHECK(calendar.pop().seq == 2);
    CHECK(calendar.pop().seq == 0);
    CHECK(calendar.pop().seq == 1);
  }
  SECTION("after pops, far below the peeked event's bucket") {
    CheckedCalendar calendar;
    calendar.push(sim::Time::from_ns(1));
    calendar.push(sim::Time::from_ms(1));
    calendar.push(sim::Time::from_ms(1) + sim::Time::from_ps(3));
    calendar.pop();
    sim::Time next;
    calendar.peek(next);
    CHECK(next == sim::Time::from_ms(1));
    // Between the last pop (1 ns) and the peeked 1 ms, at several scales, and one tie with the peeked event.
    calendar.push(sim::Time::from_ns(1));
    calendar.push(sim::Time::from_ns(2));
    calendar.push(sim::Time::from_us(500));
    calendar.push(sim::Time::from_ms(1));
    calendar.push(sim::Time::from_ms(1) - sim::Time::from_ps(1));
    calendar.peek(next);
    CHECK(next == sim::Time::from_ns(1));
    calendar.drain();
    CHECK(calendar.failure() == "");
  }
}

TEST_CASE("sim::Calendar: sparse outliers far beyond the present", "[sim][quick]") {
  CheckedCalendar calendar;
  // A few timeouts seconds away among dense traffic in the first microsecond.
  for (int i = 0; i < 5; ++i)
    calendar.push(sim::Time::from_ms(1'000 * (i + 1)));
  for (int i = 0; i < 2'000; ++i)
    calendar.push(sim::Time::from_ps(i * 499 % 1'000'000));
  for (int i = 0; i < 2'000; ++i) {
    calendar.pop();
    calendar.push(calendar.now() + sim::Time::from_ps(1 + i % 997));
  }
  calendar.drain();
  // Runs dry, then resumes far ahead of where it stopped.
  calendar.push(calendar.now() + sim::Time::from_ms(10'000));
  calendar.push(calendar.now() + sim::Time::from_ps(1));
  calendar.drain();
  CHECK(calendar.failure() == "");
}

TEST_CASE("sim::Calendar: hold model matches a reference at 1, 10^3 and 10^5 pending", "[sim][quick]") {
  const std::size_t pending = GENERATE(as<std::size_t>{}, 1, 1'000, 100'000);
  // Enough holds to turn the whole population over twice, and at least 2·10^4.
  const std::size_t holds = std::max<std::size_t>(20'000, 2 * pending);
  for (const Spread spread : all_spreads) {
    CAPTURE(pending, spread_name(spread));
    CHECK(hold_model(pending, holds, spread, 1'000 + pending) == "");
  }
}

TEST_CASE("sim::Calendar: random pushes, pops and peeks match a reference", "[sim][quick]") {
  const std::size_t target_size = GENERATE(as<std::size_t>{}, 1, 1'000, 100'000);
  const std::size_t operations = std::max<std::size_t>(50'000, 3 * target_size);
  for (const Spread spread : all_spreads) {
    for (const std::uint64_t seed : {1u, 2u}) {
      CAPTURE(target_size, spread_name(spread), seed);
      CHECK(random_mix(target_size, operations, spread, seed) == "");
    }
  }
}

TEST_CASE("sim::Calendar: sizes 1, 10^3 and 10^5 built up then drained", "[sim][quick]") {
  // Not a hold model: the population grows from empty to its size with interleaved pops, then runs dry.
  const std::size_t size = GENERATE(as<std::size_t>{}, 1, 1'000, 100'000);
  for (const Spread spread : all_spreads) {
    CAPTURE(size, spread_name(spread));
    Engine engine(size);
    CheckedCalendar calendar;
    for (std::size_t i = 0; i < size && calendar.failure().empty(); ++i) {
      calendar.push(calendar.now() + delay(engine, spread));
      calendar.push(calendar.now() + delay(engine, spread));
      calendar.pop();
    }
    calendar.drain();
    CHECK(calendar.failure() == "");
  }
}

TEST_CASE("sim::Calendar: events at the far ends of the time range", "[sim][quick]") {
  const std::int64_t max_ps = sim::Time::max().ps();
  CheckedCalendar calendar;
  SECTION("zero and Time::max() together") {
    calendar.push(sim::Time::zero());
    calendar.push(sim::Time::max());
    calendar.push(sim::Time::from_ps(max_ps / 2));
  }
  SECTION("spread evenly over the whole range") {
    for (std::int64_t i = 9; i >= 0; --i)
      calendar.push(sim::Time::from_ps(max_ps / 10 * i));
  }
  SECTION("the last picoseconds before Time::max(), then a push at the current time") {
    // Time::max() is a valid instant; the bucket after the one holding it lies beyond the int64 range.
    calendar.push(sim::Time::max() - sim::Time::from_ps(10));
    calendar.push(sim::Time::max());
    calendar.pop();
    calendar.pop();
    calendar.push(sim::Time::max());
  }
  calendar.drain();
  CHECK(calendar.failure() == "");
}

TEST_CASE("sim::Calendar: an event put back at its old seq pops before later ties in the lane of its delay",
          "[sim][quick]") {
  // Simulator::put_back returns a popped event with its original seq: it must not queue behind events pushed
  // after it at the same time, even when its delay has a lane whose newest event is one of those.
  CheckedCalendar calendar;
  for (int i = 0; i < 20; ++i) { // the 100 ns delay takes a lane
    calendar.push(calendar.now() + sim::Time::from_ns(100));
    REQUIRE(calendar.pop());
  }
  // Two events 100 ns ahead go into the lane; then one at the same time with an older seq must pop first.
  const sim::Time at = calendar.now() + sim::Time::from_ns(100);
  calendar.push(at);
  calendar.push(at);
  calendar.push_with_seq(at, 1);
  calendar.push(at + sim::Time::from_ns(100));
  CHECK(calendar.drain());
  CHECK(calendar.failure() == "");
}
