// The kernel's pending-event set: a monotone two-level bucket queue, after the ladder queue (Tang, Goh and Thng,
// "Ladder queue: an O(1) priority queue structure for large-scale discrete event simulation", TOMACS 2005).
//
// Simulated time never goes back, so the queue need only be ordered near the present. Events due soon sit in a
// window of at most a few thousand coarse buckets, unsorted; the window's width adapts, at each rebuild, to the
// number and spread of the pending events. Few buckets means their tails stay in cache, so a push is a streaming
// append whatever the population. When a coarse bucket comes up it is either sorted directly (if small) or split by
// a counting sort, in cache, into fine slices that are sorted one at a time. Events beyond the window wait, unsorted,
// in a far list. Events pushed into the open coarse bucket's range go to a small heap beside the sorted run. Buckets
// are lists of fixed-size chunks from one shared free list, so memory is bounded by the pending events and nothing
// allocates once the pools have reached their working size.
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
  std::vector<Bucket> buckets_;
  std::vector<Chunk> chunks_;
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

} // namespace sim
