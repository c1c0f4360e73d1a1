// Entries addressed by a queue's 32-bit running index (a send queue's WQE number), for queues whose live entries,
// [first, end), never span more than the queue's depth. Storage is a power of two that doubles only when the live
// entries fill it, so a deep queue that holds one WQE at a time costs one entry, not its depth: a thousand idle or
// lightly used RC QPs per host would otherwise pay for every slot they never fill (docs/performance.md, "Memory of
// big runs").
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <utility>

namespace sim {

template <class T>
class SequenceRing {
public:
  T& operator[](std::uint32_t index) {
    assert(items_);
    return items_[index & mask_];
  }
  const T& operator[](std::uint32_t index) const {
    assert(items_);
    return items_[index & mask_];
  }
  std::uint32_t capacity() const { return items_ ? mask_ + 1 : 0; }

  /// Makes room for entry `end` beside the live ones [first, end), which keep their indices (the running index
  /// wraps at 2^32; masking by a power of two stays consistent across the wrap).
  void make_room(std::uint32_t first, std::uint32_t end) {
    const std::uint32_t live = end - first;
    if (live < capacity())
      return;
    const std::uint32_t grown_capacity = items_ ? 2 * capacity() : 1;
    auto grown = std::make_unique<T[]>(grown_capacity);
    for (std::uint32_t i = first; i != end; ++i)
      grown[i & (grown_capacity - 1)] = std::move(items_[i & mask_]);
    items_ = std::move(grown);
    mask_ = grown_capacity - 1;
  }

private:
  std::unique_ptr<T[]> items_;
  std::uint32_t mask_ = 0;
};

} // namespace sim
