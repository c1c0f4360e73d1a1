// The kernel's pending-event set: a monotone two-level bucket queue (a "ladder-lite" calendar).
//
// Simulated time never goes back, so the queue need only be ordered near the present. Events due soon sit in a
// window of W unsorted buckets of width 2^shift ps; one bucket at a time is sorted and consumed. Events beyond the
// window wait, unsorted, in a far list. When the window is used up, it is rebuilt over the far list with W and the
// width chosen from that list's size and spread, so a bucket holds a few events whatever the density. An event is
// moved a small constant number of times, always in sequential runs. Buckets are lists of fixed-size chunks from
// one shared free list, so memory is bounded by the events pending (not by each bucket's busiest moment) and
// nothing allocates once the pool has reached its working size. Events pushed into the current bucket after it
// opened go to a small heap beside it.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/event.h"

namespace sim {

class Calendar {
public:
  Calendar();

  /// Adds an event. Its time must not be earlier than the last event popped.
  void push(const Event& event);
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  /// Time of the earliest pending event; the calendar must not be empty.
  Time next_time();
  /// Removes and returns the earliest pending event; the calendar must not be empty.
  Event pop();

private:
  void refill();
  void open_bucket(std::size_t bucket);
  void rebuild_window();
  std::size_t find_occupied_bucket(std::size_t from) const;
  void mark_occupied(std::size_t bucket) { occupied_[bucket >> 6] |= std::uint64_t{1} << (bucket & 63); }

  std::size_t size_ = 0;
  // The open bucket, sorted latest-first so the earliest is at the back.
  std::vector<Event> run_;
  // Min-heap of events pushed below front_end_ after the bucket opened.
  std::vector<Event> late_;
  // Events earlier than this go to late_; the rest go to a bucket or to far_.
  Time front_end_;
  // The window: bucket i covers [window_start_ + i·2^shift_, window_start_ + (i+1)·2^shift_).
  Time window_start_;
  int shift_ = 0;
  std::size_t bucket_count_ = 0;
  std::size_t next_bucket_ = 0;

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
  };
  void push_to_bucket(std::size_t bucket, const Event& event);
  std::vector<Bucket> buckets_;
  std::vector<Chunk> chunks_;
  std::vector<std::uint32_t> free_chunks_;
  std::vector<std::uint64_t> occupied_;
  // Events at or after the window's end, unsorted.
  std::vector<Event> far_;
};

} // namespace sim
