// The kernel's pending-event set (docs/models/kernel.md): FIFO lanes for the delays that recur, in front of a ladder
// queue for everything else.
//
// A fabric schedules most of its events a fixed delay ahead: a packet's serialization, a cable plus a switch's
// latency, a refresh period. Events pushed the same delay after successive pops come in time order, so a FIFO
// holds them sorted at the cost of an append; the calendar keeps up to `lane_count` such lanes, keyed by delay,
// and merges their heads through a small heap. An event whose delay has no lane, or would break its lane's order
// (an event put back), goes to the ladder queue, which orders anything.
//
// The ladder queue is a monotone two-level bucket queue, after Tang, Goh and Thng ("Ladder queue: an O(1) priority
// queue structure for large-scale discrete event simulation", TOMACS 2005). Simulated time never goes back, so the
// queue need only be ordered near the present. Events due soon sit in a window of at most a few thousand coarse
// buckets, unsorted; the window's width adapts, at each rebuild, to the number and spread of the pending events.
// Few buckets means their tails stay in cache, so a push is a streaming append whatever the population. When a
// coarse bucket comes up it is either sorted directly (if small) or split by a counting sort, in cache, into fine
// slices that are sorted one at a time. Events beyond the window wait, unsorted, in a far list. Events pushed into
// the open coarse bucket's range go to a small heap beside the sorted run. Buckets are lists of fixed-size chunks
// from one shared free list, so memory is bounded by the pending events and nothing allocates once the pools have
// reached their working size.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "sim/event.h"
#include "sim/ring.h"

namespace sim {

class LadderQueue {
public:
  LadderQueue();

  /// Adds an event. Its time must not be earlier than the last event popped.
  void push(const Event& event);
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  /// The earliest pending event, valid until the next push or pop; the queue must not be empty.
  const Event& peek();
  /// Removes and returns the earliest pending event; the queue must not be empty.
  Event pop();
  /// The event `ahead` places after the earliest in the open run, or nullptr; a prefetch hint (Calendar).
  const Event* peek_ahead(std::size_t ahead) const {
    return ahead < static_cast<std::size_t>(run_last_ - run_next_) ? run_next_ + ahead : nullptr;
  }

private:
  void refill();
  bool open_next_fine_slice();
  void open_coarse_bucket(std::size_t bucket);
  void rebuild_window();
  std::size_t find_occupied_bucket(std::size_t from) const;
  std::size_t unopened() const { return size_ - static_cast<std::size_t>(run_last_ - run_next_) - late_.size(); }
  // Pops from late_ when it holds the earliest event, given that run_ is empty.
  bool late_is_next() const { return !late_.empty() && (late_.front().time < run_end_ || unopened() == 0); }

  std::size_t size_ = 0;
  // The open slice, sorted, as [run_next_, run_last_): the rest of a fine slice in fine_events_, or of a bucket
  // sorted directly in run_.
  Event* run_next_ = nullptr;
  Event* run_last_ = nullptr;
  std::vector<Event> run_;
  // Everything not yet opened is at or after run_end_.
  Time run_end_;
  // Min-heap of events pushed below accept_end_ (the open coarse bucket's end) after it opened.
  std::vector<Event> late_;
  Time accept_end_;

  // The coarse window: bucket i covers [window_start_ + i·2^shift_, window_start_ + (i+1)·2^shift_).
  Time window_start_;
  int shift_ = 0;
  std::size_t bucket_count_ = 0;
  std::size_t next_bucket_ = 0;
  std::vector<std::uint64_t> occupied_;

  static constexpr std::uint32_t no_chunk = 0xffffffffu;
  static constexpr std::uint32_t chunk_events = 15;
  struct alignas(64) Chunk {
    Event events[chunk_events];
    std::uint32_t count = 0;
    std::uint32_t next = no_chunk;
  };
  struct Bucket {
    std::uint32_t head = no_chunk;
    std::uint32_t tail = no_chunk;
    std::uint32_t size = 0;
  };
  void push_to_bucket(std::size_t bucket, const Event& event);
  // Chunks live in fixed slabs, never moved: a run whose million QPs each hold a retry timer keeps tens of megabytes
  // of chunks, and a vector would double (and briefly hold both copies) as it grows.
  static constexpr std::uint32_t slab_shift = 8;
  Chunk& at_chunk(std::uint32_t i) { return slabs_[i >> slab_shift][i & ((1u << slab_shift) - 1)]; }
  std::vector<Bucket> buckets_;
  std::vector<std::unique_ptr<Chunk[]>> slabs_;
  std::uint32_t chunk_count_ = 0; ///< chunks made, in slabs_
  std::vector<std::uint32_t> free_chunks_;

  // The open coarse bucket split into fine slices: slice i is fine_events_[fine_offsets_[i], fine_offsets_[i+1])
  // and covers [fine_start_ + i·2^fine_shift_, ...).
  std::vector<Event> fine_events_;
  std::vector<std::uint32_t> fine_offsets_;
  std::vector<std::uint32_t> fine_cursor_;
  std::size_t fine_count_ = 0;
  std::size_t fine_next_ = 0;
  Time fine_start_;
  int fine_shift_ = 0;

  // Events at or after the window's end, unsorted.
  std::vector<Event> far_;
};

/// (time, seq) as one unsigned 128-bit key, in fires_before's order: one compare instead of two.
inline unsigned __int128 order_key(const Event& event) {
  return static_cast<unsigned __int128>(static_cast<std::uint64_t>(event.time.ps()) ^ (std::uint64_t{1} << 63)) << 64 |
         event.seq;
}

class Calendar {
public:
  /// Adds an event. Its time must not be earlier than the last event popped.
  void push(const Event& event) {
    ++size_;
    // Unsigned: before the first pop, last_popped_ is the most negative time.
    const std::uint64_t delay = static_cast<std::uint64_t>(event.time.ps()) - last_popped_;
    const std::size_t index = lane_of(delay);
    Lane& lane = lanes_[index];
    if (lane.delay == delay) {
      const unsigned __int128 key = order_key(event);
      if (lane.events.empty()) {
        if (lane.repeats < lane_admission_repeats) {
          // Not yet: a delay seen by chance (random delays meet now and then) would keep a lone event in the
          // lane heap, and every pop would pay for comparing against it.
          ++lane.repeats;
          return push_to_ladder(event);
        }
        lane.events.push_back(event);
        lane.last_key = key;
        heap_insert(key, static_cast<std::uint8_t>(index));
        return;
      }
      if (key > lane.last_key) {
        lane.events.push_back(event);
        lane.last_key = key;
        return;
      }
    } else if (lane.events.empty()) {
      lane.delay = delay; // the lane will serve this delay if it recurs
      lane.repeats = 0;
    }
    push_to_ladder(event);
  }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  /// Prefetch hints, not an order (the ladder or a push may come first). The event expected next: the earliest
  /// lane's front, or the ladder run's. Then `f` on each candidate for the one after it: that lane's second
  /// event and the fronts of the two lanes next in the heap (or the ladder run's second).
  const Event* likely_next() const {
    if (heap_size_ == 0)
      return ladder_.peek_ahead(0);
    return &lanes_[heap_lane_[0]].events.front();
  }
  template <class F>
  void for_each_likely_second(F&& f) const {
    if (heap_size_ == 0) {
      if (const Event* second = ladder_.peek_ahead(1))
        f(*second);
      return;
    }
    const Lane& top = lanes_[heap_lane_[0]];
    if (top.events.size() > 1)
      f(top.events[1]);
    for (std::size_t child = 1; child <= 2 && child < heap_size_; ++child)
      f(lanes_[heap_lane_[child]].events.front());
  }
  /// Time of the earliest pending event; the calendar must not be empty.
  Time next_time() { return lane_is_next() ? lanes_[heap_lane_[0]].events.front().time : ladder_.peek().time; }
  /// Pops the earliest pending event into `event` if there is one due no later than `until`; else returns
  /// false and changes nothing. One decision where next_time() then pop() would take two.
  bool pop_due(Time until, Event& event) {
    if (size_ == 0)
      return false;
    const bool from_lane = lane_is_next();
    if ((from_lane ? lanes_[heap_lane_[0]].events.front().time : ladder_.peek().time) > until)
      return false;
    take(from_lane, event);
    return true;
  }
  /// Removes and returns the earliest pending event; the calendar must not be empty.
  Event pop() {
    Event event;
    take(lane_is_next(), event);
    return event;
  }

private:
  static constexpr std::size_t lane_count = 64;
  struct alignas(64) Lane {         // one line each: a push or pop touches one lane
    sim::Ring<Event> events{16};    // allocated up front: a lane first used after warm-up allocates nothing
    unsigned __int128 last_key = 0; ///< of the newest event, which every later one must exceed
    std::uint64_t delay = ~std::uint64_t{0};
    std::uint8_t repeats = 0; ///< pushes of `delay` seen while the lane was empty, up to lane_admission_repeats
  };
  /// Events of one delay pushed while its lane is empty before the lane takes them.
  static constexpr std::uint8_t lane_admission_repeats = 4;
  static std::size_t lane_of(std::uint64_t delay) {
    return static_cast<std::size_t>((delay * 0x9e3779b97f4a7c15ull) >> 58); // Fibonacci hashing: top 6 bits
  }
  void heap_insert(unsigned __int128 key, std::uint8_t lane);
  void heap_pop();
  /// The top lane's front changed to `key` (later than before): sift it down. Inline, as it runs once per pop.
  void heap_replace_top(unsigned __int128 key) { sift_down(0, key, heap_lane_[0]); }
  /// Moves the entry (key, lane) down from `hole`. Keys past the heap's end are no_key, so a missing child never
  /// wins and the loop needs no bounds test.
  void sift_down(std::size_t hole, unsigned __int128 key, std::uint8_t lane) {
    for (;;) {
      std::size_t child = 2 * hole + 1;
      child += heap_key_[child + 1] < heap_key_[child] ? 1 : 0;
      if (!(heap_key_[child] < key))
        break;
      heap_key_[hole] = heap_key_[child];
      heap_lane_[hole] = heap_lane_[child];
      hole = child;
    }
    heap_key_[hole] = key;
    heap_lane_[hole] = lane;
  }
  void push_to_ladder(const Event& event) {
    ladder_.push(event);
    if (ladder_key_valid_ && order_key(event) < ladder_front_key_)
      ladder_front_key_ = order_key(event);
  }
  unsigned __int128 ladder_front_key() {
    if (!ladder_key_valid_) {
      ladder_front_key_ = ladder_.empty() ? no_key : order_key(ladder_.peek());
      ladder_key_valid_ = true;
    }
    return ladder_front_key_;
  }
  static constexpr unsigned __int128 no_key = ~static_cast<unsigned __int128>(0);
  /// Whether the earliest event is a lane's (else the ladder's); the calendar must not be empty.
  bool lane_is_next() { return heap_size_ != 0 && heap_key_[0] < ladder_front_key(); }
  /// Removes the earliest event from the top lane or from the ladder, as lane_is_next() said.
  void take(bool from_lane, Event& event) {
    if (from_lane) {
      Lane& lane = lanes_[heap_lane_[0]];
      event = lane.events.front();
      lane.events.pop_front();
      if (lane.events.empty())
        heap_pop();
      else
        heap_replace_top(order_key(lane.events.front()));
    } else {
      event = ladder_.pop();
      ladder_key_valid_ = false; // found again only when a lane competes: a lone ladder pays nothing for lanes
    }
    --size_;
    last_popped_ = static_cast<std::uint64_t>(event.time.ps());
  }

  std::size_t size_ = 0;
  /// The last popped time as uint64 (push's delays wrap): before the first pop, the earliest possible time.
  std::uint64_t last_popped_ = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::min());
  std::array<Lane, lane_count> lanes_;
  // Min-heap of the non-empty lanes by the order_key of their front events, keys and lanes side by side.
  // Entries past heap_size_ hold no_key, up to the children of the last possible entry.
  std::array<unsigned __int128, 2 * lane_count + 2> heap_key_ = filled_with_no_key();
  std::array<std::uint8_t, 2 * lane_count + 2> heap_lane_{};
  static constexpr std::array<unsigned __int128, 2 * lane_count + 2> filled_with_no_key() {
    std::array<unsigned __int128, 2 * lane_count + 2> keys{};
    keys.fill(no_key);
    return keys;
  }
  std::size_t heap_size_ = 0;
  LadderQueue ladder_;
  unsigned __int128 ladder_front_key_ = no_key; ///< order_key of the ladder's earliest event; no_key if empty
  bool ladder_key_valid_ = true;
};

} // namespace sim
