// A sequence that grows at the back in fixed chunks, so that an element never moves (references stay valid while it
// grows) and a growth allocates once per chunk. std::deque gives the same stability but, for elements above its
// 512-byte node size, allocates one node per element: an HCA's 376-byte QPs cost a malloc each, a million of them
// in a 1,024-host all-to-all, and a free each at the end.
#pragma once

#include <cassert>
#include <cstddef>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace sim {

template <class T, std::size_t ChunkSize = 64>
class StableVector {
  static_assert((ChunkSize & (ChunkSize - 1)) == 0, "chunk size must be a power of two");

public:
  StableVector() = default;
  StableVector(const StableVector&) = delete;
  StableVector& operator=(const StableVector&) = delete;
  ~StableVector() { clear(); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  T& operator[](std::size_t i) {
    assert(i < size_);
    return *slot(i);
  }
  const T& operator[](std::size_t i) const { return const_cast<StableVector&>(*this)[i]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == chunks_.size() * ChunkSize)
      chunks_.push_back(std::unique_ptr<Chunk>(new Chunk)); // left uninitialised: each element is constructed in it
    T* item = ::new (static_cast<void*>(raw(size_))) T(std::forward<Args>(args)...);
    ++size_;
    return *item;
  }
  void push_back(T&& item) { emplace_back(std::move(item)); }
  void push_back(const T& item) { emplace_back(item); }

  /// Destroys every element, first to last, and gives the chunks back.
  void clear() {
    for (std::size_t i = 0; i < size_; ++i)
      slot(i)->~T();
    size_ = 0;
    std::vector<std::unique_ptr<Chunk>>().swap(chunks_);
  }

  template <bool Const>
  class Iterator {
  public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = std::conditional_t<Const, const T*, T*>;
    using reference = std::conditional_t<Const, const T&, T&>;
    using Owner = std::conditional_t<Const, const StableVector, StableVector>;
    Iterator() = default;
    Iterator(Owner* owner, std::size_t index) : owner_(owner), index_(index) {}
    reference operator*() const { return (*owner_)[index_]; }
    pointer operator->() const { return &(*owner_)[index_]; }
    Iterator& operator++() {
      ++index_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator before = *this;
      ++index_;
      return before;
    }
    bool operator==(const Iterator& other) const { return index_ == other.index_; }

  private:
    Owner* owner_ = nullptr;
    std::size_t index_ = 0;
  };
  using iterator = Iterator<false>;
  using const_iterator = Iterator<true>;
  iterator begin() { return {this, 0}; }
  iterator end() { return {this, size_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

private:
  struct Chunk {
    alignas(T) std::byte bytes[sizeof(T) * ChunkSize];
  };
  std::byte* raw(std::size_t i) { return chunks_[i / ChunkSize]->bytes + (i % ChunkSize) * sizeof(T); }
  T* slot(std::size_t i) { return std::launder(reinterpret_cast<T*>(raw(i))); }

  std::vector<std::unique_ptr<Chunk>> chunks_;
  std::size_t size_ = 0;
};

} // namespace sim
