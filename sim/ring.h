// A FIFO ring buffer of small values (handles, port/VL pairs), for the per-port and per-VL queues of the models
// (STYLE rule 28). Capacity is a power of two and doubles when full, so a queue allocates only while it grows to
// its working size, never per item in steady state.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>

namespace sim {

template <class T>
class Ring {
public:
  Ring() = default;
  explicit Ring(std::uint32_t initial_capacity) { reserve(initial_capacity); }

  bool empty() const { return size_ == 0; }
  std::uint32_t size() const { return size_; }
  std::uint32_t capacity() const { return mask_ + (items_ ? 1 : 0); }

  T& front() {
    assert(size_ > 0);
    return items_[head_];
  }
  const T& front() const {
    assert(size_ > 0);
    return items_[head_];
  }
  /// The i-th item from the front.
  const T& operator[](std::uint32_t i) const {
    assert(i < size_);
    return items_[(head_ + i) & mask_];
  }
  T& operator[](std::uint32_t i) {
    assert(i < size_);
    return items_[(head_ + i) & mask_];
  }

  void push_back(const T& item) {
    if (!items_ || size_ == mask_ + 1) {
      reserve(items_ ? 2 * (mask_ + 1) : 4);
    }
    items_[(head_ + size_) & mask_] = item;
    ++size_;
  }
  void pop_front() {
    assert(size_ > 0);
    // Emptied, the ring starts again at its first slot: a FIFO that once grew keeps reusing the lines it touched
    // last rather than sweeping its whole capacity, each line a cache miss when it comes round again.
    head_ = --size_ == 0 ? 0 : (head_ + 1) & mask_;
  }

  /// Grows to hold at least `capacity` items (rounded up to a power of two) without further allocation.
  void reserve(std::uint32_t capacity) {
    std::uint32_t rounded = 4;
    while (rounded < capacity) {
      rounded *= 2;
    }
    if (items_ && rounded <= mask_ + 1) {
      return;
    }
    auto grown = std::make_unique<T[]>(rounded);
    for (std::uint32_t i = 0; i < size_; ++i) {
      grown[i] = items_[(head_ + i) & mask_];
    }
    items_ = std::move(grown);
    head_ = 0;
    mask_ = rounded - 1;
  }

private:
  std::unique_ptr<T[]> items_;
  std::uint32_t head_ = 0;
  std::uint32_t size_ = 0;
  std::uint32_t mask_ = 0;
};

} // namespace sim
