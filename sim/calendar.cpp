#include "sim/calendar.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <limits>

namespace sim {

namespace {
// Aim for this many events per bucket: small enough that sorting a bucket is cheap, large enough that the window
// and its bitmap stay compact. Measured with tests/bench/calendar_bench (estimate of the optimum, 4-16 all fine).
constexpr std::size_t events_per_bucket = 8;
constexpr std::size_t min_buckets = 64;
constexpr std::size_t max_buckets = std::size_t{1} << 20;
constexpr std::size_t quantile_samples = 128;

bool later_first(const Event& a, const Event& b) { return fires_before(b, a); }
} // namespace

Calendar::Calendar()
    : front_end_(Time::from_ps(std::numeric_limits<std::int64_t>::min())),
      window_start_(Time::from_ps(std::numeric_limits<std::int64_t>::min())) {}

void Calendar::push(const Event& event) {
  ++size_;
  if (event.time < front_end_) {
    late_.push_back(event);
    std::push_heap(late_.begin(), late_.end(), later_first);
    return;
  }
  // Unsigned: before the first window, window_start_ is the most negative time and the difference would overflow.
  const std::uint64_t offset =
      static_cast<std::uint64_t>(event.time.ps()) - static_cast<std::uint64_t>(window_start_.ps());
  const std::uint64_t bucket = offset >> shift_;
  if (bucket < bucket_count_)
    push_to_bucket(bucket, event);
  else
    far_.push_back(event);
}

void Calendar::push_to_bucket(std::size_t bucket, const Event& event) {
  Bucket& list = buckets_[bucket];
  if (list.tail == no_chunk || chunks_[list.tail].count == chunk_events) {
    std::uint32_t chunk;
    if (free_chunks_.empty()) {
      chunk = static_cast<std::uint32_t>(chunks_.size());
      chunks_.emplace_back();
    } else {
      chunk = free_chunks_.back();
      free_chunks_.pop_back();
    }
    chunks_[chunk].count = 0;
    chunks_[chunk].next = no_chunk;
    if (list.tail == no_chunk) {
      list.head = chunk;
      mark_occupied(bucket);
    } else {
      chunks_[list.tail].next = chunk;
    }
    list.tail = chunk;
  }
  Chunk& tail = chunks_[list.tail];
  tail.events[tail.count++] = event;
}

Time Calendar::next_time() {
  assert(!empty());
  if (run_.empty() && late_.empty())
    refill();
  if (late_.empty())
    return run_.back().time;
  if (run_.empty())
    return late_.front().time;
  return std::min(run_.back().time, late_.front().time);
}

Event Calendar::pop() {
  assert(!empty());
  if (run_.empty() && late_.empty())
    refill();
  --size_;
  if (!late_.empty() && (run_.empty() || fires_before(late_.front(), run_.back()))) {
    std::pop_heap(late_.begin(), late_.end(), later_first);
    const Event event = late_.back();
    late_.pop_back();
    return event;
  }
  const Event event = run_.back();
  run_.pop_back();
  return event;
}

void Calendar::refill() {
  std::size_t bucket = find_occupied_bucket(next_bucket_);
  if (bucket == bucket_count_) {
    rebuild_window();
    bucket = find_occupied_bucket(0);
    assert(bucket < bucket_count_);
  }
  open_bucket(bucket);
}

void Calendar::open_bucket(std::size_t bucket) {
  Bucket& list = buckets_[bucket];
  run_.clear();
  for (std::uint32_t chunk = list.head; chunk != no_chunk;) {
    const Chunk& c = chunks_[chunk];
    run_.insert(run_.end(), c.events, c.events + c.count);
    free_chunks_.push_back(chunk);
    chunk = c.next;
  }
  list = Bucket{};
  occupied_[bucket >> 6] &= ~(std::uint64_t{1} << (bucket & 63));
  std::sort(run_.begin(), run_.end(), later_first);
  next_bucket_ = bucket + 1;
  // Saturate: the bucket holding Time::max() would otherwise end past the int64 range.
  const std::uint64_t end_offset = std::uint64_t{next_bucket_} << shift_;
  const std::uint64_t room =
      static_cast<std::uint64_t>(Time::max().ps()) - static_cast<std::uint64_t>(window_start_.ps());
  front_end_ = end_offset >= room ? Time::max()
                                  : window_start_ + Time::from_ps(static_cast<std::int64_t>(end_offset));
}

std::size_t Calendar::find_occupied_bucket(std::size_t from) const {
  std::size_t word = from >> 6;
  if (word >= occupied_.size() || from >= bucket_count_)
    return bucket_count_;
  std::uint64_t bits = occupied_[word] & (~std::uint64_t{0} << (from & 63));
  const std::size_t words = (bucket_count_ + 63) >> 6;
  while (bits == 0) {
    if (++word >= words)
      return bucket_count_;
    bits = occupied_[word];
  }
  return std::min(bucket_count_, (word << 6) + static_cast<std::size_t>(std::countr_zero(bits)));
}

void Calendar::rebuild_window() {
  // Every bucket has been consumed, so all pending events are in far_.
  assert(!far_.empty());
  const std::size_t n = far_.size();
  // Span the window over all but the latest eighth of the far list, so that a few distant events (timeouts)
  // do not stretch the buckets; they stay in far_ until the window reaches them. The quantile is estimated from
  // an evenly strided sample: exact order is not needed, only a sensible width, and a full selection would cost
  // more than the distribution pass itself.
  Time first = far_.front().time;
  for (const Event& event : far_)
    first = std::min(first, event.time);
  std::array<std::int64_t, quantile_samples> sample{};
  const std::size_t sampled = std::min(n, quantile_samples);
  for (std::size_t i = 0; i < sampled; ++i)
    sample[i] = far_[i * n / sampled].time.ps();
  std::sort(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(sampled));
  const Time last_covered = Time::from_ps(sample[sampled - 1 - sampled / 8]);

  bucket_count_ = std::clamp(std::bit_ceil(n / events_per_bucket), min_buckets, max_buckets);
  if (buckets_.size() < bucket_count_) {
    buckets_.resize(bucket_count_);
    occupied_.resize((bucket_count_ + 63) >> 6, 0);
  }
  const auto span_ps = static_cast<std::uint64_t>((last_covered - first).ps()) + 1;
  const std::uint64_t width_ps = (span_ps + bucket_count_ - 1) / bucket_count_;
  shift_ = std::bit_width(width_ps - 1); // 2^shift_ >= width_ps
  window_start_ = first;
  next_bucket_ = 0;
  front_end_ = first;

  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Event& event = far_[i];
    const std::uint64_t bucket = static_cast<std::uint64_t>((event.time - first).ps()) >> shift_;
    if (bucket < bucket_count_)
      push_to_bucket(bucket, event);
    else
      far_[kept++] = event;
  }
  far_.resize(kept);
}

} // namespace sim
