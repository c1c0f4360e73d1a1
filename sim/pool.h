// Typed object pools with 32-bit handles (docs/models/kernel.md, STYLE rule 19). Packets, TLPs and work requests live
// here and cross ports as handles: no copy per hop, no raw pointer, no allocation per packet once warm. A pool grows in
// chunks, so a reference stays valid while the object is held, and never gives memory back to the system. Exactly one
// component owns a handle at a time; debug builds catch double frees and use after free.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <vector>

namespace sim {

template <class T>
struct Handle {
  std::uint32_t value = invalid_value;
  static constexpr std::uint32_t invalid_value = 0xffffffffu;
  constexpr bool valid() const { return value != invalid_value; }
  constexpr bool operator==(const Handle&) const = default;
};

template <class T, std::uint32_t ChunkSize = 4096>
class Pool {
  static_assert((ChunkSize & (ChunkSize - 1)) == 0, "chunk size must be a power of two");

public:
  Pool() = default;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  /// A default-initialised object; the caller owns it until release().
  Handle<T> acquire() { return acquire(T{}); }
  /// An object equal to `value`, written once (not first cleared, then assigned).
  Handle<T> acquire(const T& value) {
    if (free_.empty())
      grow();
    const std::uint32_t index = free_.back();
    free_.pop_back();
#ifndef NDEBUG
    assert(!in_use_[index] && "pool handed out a live object");
    in_use_[index] = true;
#endif
    ++live_;
    (*this)[Handle<T>{index}] = value;
    return Handle<T>{index};
  }

  /// Ends ownership; the handle must not be used again.
  void release(Handle<T> handle) {
    assert(handle.valid() && handle.value < capacity());
#ifndef NDEBUG
    assert(in_use_[handle.value] && "double release of a pool handle");
    in_use_[handle.value] = false;
#endif
    --live_;
    free_.push_back(handle.value);
  }

  T& operator[](Handle<T> handle) {
    assert(handle.valid() && handle.value < capacity());
#ifndef NDEBUG
    assert(in_use_[handle.value] && "use of a released pool handle");
#endif
    return chunks_[handle.value / ChunkSize][handle.value % ChunkSize];
  }
  const T& operator[](Handle<T> handle) const {
    return const_cast<Pool&>(*this)[handle];
  }

  /// Objects currently owned by someone: at the end of a run, anything above zero leaked.
  std::uint32_t live() const {
    return live_;
  }
  std::uint32_t capacity() const {
    return static_cast<std::uint32_t>(chunks_.size()) * ChunkSize;
  }

private:
  void grow() {
    const std::uint32_t first = capacity();
    assert(first <= Handle<T>::invalid_value - ChunkSize && "pool exhausted the 32-bit handle space");
    chunks_.push_back(std::make_unique<T[]>(ChunkSize));
    free_.reserve(capacity());
    // Hand out low indices first, so a small run touches a small, contiguous part of the pool.
    for (std::uint32_t i = ChunkSize; i-- > 0;)
      free_.push_back(first + i);
#ifndef NDEBUG
    in_use_.resize(capacity(), false);
#endif
  }

  std::vector<std::unique_ptr<T[]>> chunks_;
  std::vector<std::uint32_t> free_;
  std::uint32_t live_ = 0;
#ifndef NDEBUG
  std::vector<bool> in_use_;
#endif
};

} // namespace sim
