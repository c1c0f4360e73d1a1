#include "sim/calendar.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <limits>

namespace sim {

namespace {
// Sizes below were measured with tests/bench/calendar_bench on the CI machine class (2 cores); the optimum is
// broad, and these sit inside it.
// Aim for this many events per bucket or slice when sorting it: sorting a handful of events is cheap.
constexpr std::size_t events_per_slice = 8;
// A coarse bucket up to this size is sorted directly rather than split into fine slices.
constexpr std::size_t direct_sort_limit = 32;
// Few enough coarse buckets that the tail of every one stays in cache while events stream in.
constexpr std::size_t min_buckets = 64;
constexpr std::size_t max_buckets = 2048;
// Events sampled to estimate the far list's quantile at a rebuild.
constexpr std::size_t quantile_samples = 128;

// A function object, not a function pointer, so that the heap and sort algorithms inline it.
struct LaterFirst {
  bool operator()(const Event& a, const Event& b) const { return order_key(a) > order_key(b); }
};
constexpr LaterFirst later_first;

// Slices and buckets are nearly always small, and their events arrive in seq order, often in time order too:
// insertion sort is close to linear on them.
constexpr std::ptrdiff_t insertion_sort_limit = 24;

// Sorts [first, last) earliest first.
void sort_run(Event* first, Event* last) {
  if (last - first > insertion_sort_limit) {
    std::sort(first, last, [](const Event& a, const Event& b) { return order_key(a) < order_key(b); });
    return;
  }
  for (Event* i = first + 1; i < last; ++i) {
    const Event event = *i;
    const unsigned __int128 key = order_key(event);
    Event* j = i;
    for (; j > first && order_key(*(j - 1)) > key; --j)
      *j = *(j - 1);
    *j = event;
  }
}

// Buffers sized by the busiest bucket seen so far would otherwise keep growing a little as ever larger buckets
// turn up; growing to twice the next power of two makes that stop soon after warm-up.
template <class T>
void reserve_with_headroom(std::vector<T>& buffer, std::size_t size) {
  if (size > buffer.capacity())
    buffer.reserve(2 * std::bit_ceil(size));
}

// `start` + `offset` ps, saturating at Time::max() (a bucket may hold Time::max() itself).
Time saturating_add(Time start, std::uint64_t offset) {
  const std::uint64_t room = static_cast<std::uint64_t>(Time::max().ps()) - static_cast<std::uint64_t>(start.ps());
  return offset >= room ? Time::max() : start + Time::from_ps(static_cast<std::int64_t>(offset));
}
} // namespace

LadderQueue::LadderQueue()
    : run_end_(Time::from_ps(std::numeric_limits<std::int64_t>::min())),
      accept_end_(Time::from_ps(std::numeric_limits<std::int64_t>::min())),
      window_start_(Time::from_ps(std::numeric_limits<std::int64_t>::min())) {}

void LadderQueue::push(const Event& event) {
  ++size_;
  // Unsigned: before the first window, window_start_ is the most negative time and the difference would overflow.
  const std::uint64_t offset =
      static_cast<std::uint64_t>(event.time.ps()) - static_cast<std::uint64_t>(window_start_.ps());
  const std::uint64_t bucket = offset >> shift_;
  // Below accept_end_, or in a bucket already opened (the one holding Time::max() ends at a saturated
  // accept_end_): the event belongs beside the open run.
  if (event.time < accept_end_ || bucket < next_bucket_) {
    late_.push_back(event);
    std::push_heap(late_.begin(), late_.end(), later_first);
    return;
  }
  if (bucket < bucket_count_)
    push_to_bucket(bucket, event);
  else
    far_.push_back(event);
}

void LadderQueue::push_to_bucket(std::size_t bucket, const Event& event) {
  Bucket& list = buckets_[bucket];
  if (list.tail == no_chunk || at_chunk(list.tail).count == chunk_events) {
    std::uint32_t chunk;
    if (free_chunks_.empty()) {
      chunk = chunk_count_++;
      if ((chunk >> slab_shift) == slabs_.size())
        slabs_.push_back(std::make_unique<Chunk[]>(std::size_t{1} << slab_shift));
    } else {
      chunk = free_chunks_.back();
      free_chunks_.pop_back();
    }
    at_chunk(chunk).count = 0;
    at_chunk(chunk).next = no_chunk;
    if (list.tail == no_chunk) {
      list.head = chunk;
      occupied_[bucket >> 6] |= std::uint64_t{1} << (bucket & 63);
    } else {
      at_chunk(list.tail).next = chunk;
    }
    list.tail = chunk;
  }
  Chunk& tail = at_chunk(list.tail);
  tail.events[tail.count++] = event;
  ++list.size;
}

const Event& LadderQueue::peek() {
  assert(!empty());
  for (;;) {
    if (run_next_ != run_last_)
      return late_.empty() || later_first(late_.front(), *run_next_) ? *run_next_ : late_.front();
    if (late_is_next())
      return late_.front();
    refill();
  }
}

Event LadderQueue::pop() {
  assert(!empty());
  for (;;) {
    if (run_next_ != run_last_ && (late_.empty() || later_first(late_.front(), *run_next_))) {
      const Event event = *run_next_++;
      --size_;
      return event;
    }
    if (run_next_ != run_last_ || late_is_next()) {
      std::pop_heap(late_.begin(), late_.end(), later_first);
      const Event event = late_.back();
      late_.pop_back();
      --size_;
      return event;
    }
    refill();
  }
}

void LadderQueue::refill() {
  assert(run_next_ == run_last_ && unopened() > 0);
  if (open_next_fine_slice())
    return;
  std::size_t bucket = find_occupied_bucket(next_bucket_);
  if (bucket == bucket_count_) {
    rebuild_window();
    bucket = find_occupied_bucket(0);
    assert(bucket < bucket_count_);
  }
  open_coarse_bucket(bucket);
}

bool LadderQueue::open_next_fine_slice() {
  while (fine_next_ < fine_count_ && fine_offsets_[fine_next_] == fine_offsets_[fine_next_ + 1])
    ++fine_next_;
  if (fine_next_ == fine_count_)
    return false;
  // Sorted where it lies, and popped from there.
  run_next_ = fine_events_.data() + fine_offsets_[fine_next_];
  run_last_ = fine_events_.data() + fine_offsets_[fine_next_ + 1];
  sort_run(run_next_, run_last_);
  ++fine_next_;
  run_end_ = saturating_add(fine_start_, std::uint64_t{fine_next_} << fine_shift_);
  return true;
}

void LadderQueue::open_coarse_bucket(std::size_t bucket) {
  Bucket list = buckets_[bucket];
  buckets_[bucket] = Bucket{};
  occupied_[bucket >> 6] &= ~(std::uint64_t{1} << (bucket & 63));
  next_bucket_ = bucket + 1;
  const Time start = saturating_add(window_start_, std::uint64_t{bucket} << shift_);
  const Time end = saturating_add(window_start_, std::uint64_t{next_bucket_} << shift_);
  // From now on, pushes below the bucket's end go to late_: its chunks are about to be recycled.
  accept_end_ = end;

  if (list.size <= direct_sort_limit || shift_ == 0) {
    run_.clear();
    reserve_with_headroom(run_, list.size);
    for (std::uint32_t chunk = list.head; chunk != no_chunk; chunk = at_chunk(chunk).next) {
      run_.insert(run_.end(), at_chunk(chunk).events, at_chunk(chunk).events + at_chunk(chunk).count);
      free_chunks_.push_back(chunk);
    }
    run_next_ = run_.data();
    run_last_ = run_.data() + run_.size();
    sort_run(run_next_, run_last_);
    run_end_ = end;
    fine_count_ = fine_next_ = 0;
    return;
  }

  // Counting sort into fine slices: two passes over chunks that are hot in cache.
  const int slice_bits = std::min<int>(std::bit_width(std::bit_ceil(list.size / events_per_slice)) - 1, shift_);
  fine_count_ = std::size_t{1} << slice_bits;
  fine_shift_ = shift_ - slice_bits;
  fine_start_ = start;
  fine_next_ = 0;
  reserve_with_headroom(fine_offsets_, fine_count_ + 1);
  reserve_with_headroom(fine_cursor_, fine_count_ + 1);
  reserve_with_headroom(fine_events_, list.size);
  fine_offsets_.assign(fine_count_ + 1, 0);
  for (std::uint32_t chunk = list.head; chunk != no_chunk; chunk = at_chunk(chunk).next)
    for (std::uint32_t i = 0; i < at_chunk(chunk).count; ++i)
      ++fine_offsets_[1 + (static_cast<std::uint64_t>((at_chunk(chunk).events[i].time - start).ps()) >> fine_shift_)];
  for (std::size_t i = 1; i <= fine_count_; ++i)
    fine_offsets_[i] += fine_offsets_[i - 1];
  fine_cursor_.assign(fine_offsets_.begin(), fine_offsets_.end() - 1);
  if (fine_events_.size() < list.size) // never shrunk: resizing down and up again would clear it each time
    fine_events_.resize(list.size);
  for (std::uint32_t chunk = list.head; chunk != no_chunk;) {
    const Chunk& c = at_chunk(chunk);
    for (std::uint32_t i = 0; i < c.count; ++i) {
      const auto slice = static_cast<std::uint64_t>((c.events[i].time - start).ps()) >> fine_shift_;
      fine_events_[fine_cursor_[slice]++] = c.events[i];
    }
    free_chunks_.push_back(chunk);
    chunk = c.next;
  }
  [[maybe_unused]] const bool opened = open_next_fine_slice();
  assert(opened);
}

std::size_t LadderQueue::find_occupied_bucket(std::size_t from) const {
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

void LadderQueue::rebuild_window() {
  // Every bucket and slice has been consumed, so all unopened events are in far_.
  assert(!far_.empty());
  const std::size_t n = far_.size();
  // Span the window over all but the latest eighth of the far list, so that a few distant events (timeouts)
  // do not stretch the buckets; they stay in far_ until the window reaches them. The quantile is estimated from
  // an evenly strided sample: only a sensible width is needed, and a full selection would cost more than the
  // distribution pass itself.
  Time first = far_.front().time;
  for (const Event& event : far_)
    first = std::min(first, event.time);
  std::array<std::int64_t, quantile_samples> sample{};
  const std::size_t sampled = std::min(n, quantile_samples);
  for (std::size_t i = 0; i < sampled; ++i)
    sample[i] = far_[i * n / sampled].time.ps();
  std::sort(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(sampled));
  const Time last_covered = Time::from_ps(sample[sampled - 1 - sampled / 8]);

  bucket_count_ = std::clamp(std::bit_ceil(n / events_per_slice), min_buckets, max_buckets);
  if (buckets_.size() < bucket_count_) {
    buckets_.resize(bucket_count_);
    occupied_.resize((bucket_count_ + 63) >> 6, 0);
  }
  const auto span_ps = static_cast<std::uint64_t>((last_covered - first).ps()) + 1;
  const std::uint64_t width_ps = (span_ps + bucket_count_ - 1) / bucket_count_;
  shift_ = std::bit_width(width_ps - 1); // 2^shift_ >= width_ps
  window_start_ = first;
  next_bucket_ = 0;
  accept_end_ = first;
  run_end_ = first;

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

void Calendar::heap_insert(unsigned __int128 key, std::uint8_t lane) {
  std::size_t hole = heap_size_++;
  while (hole > 0 && key < heap_key_[(hole - 1) / 2]) {
    heap_key_[hole] = heap_key_[(hole - 1) / 2];
    heap_lane_[hole] = heap_lane_[(hole - 1) / 2];
    hole = (hole - 1) / 2;
  }
  heap_key_[hole] = key;
  heap_lane_[hole] = lane;
}

void Calendar::heap_pop() {
  --heap_size_;
  const unsigned __int128 last_key = heap_key_[heap_size_];
  heap_key_[heap_size_] = no_key;
  if (heap_size_ != 0)
    sift_down(0, last_key, heap_lane_[heap_size_]);
}

} // namespace sim
