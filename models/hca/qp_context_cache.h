// The HCA's on-chip cache of QP contexts (docs/models/hca.md, "QP contexts"): the state of the QPs it served most
// recently, least recently used out first. A QP whose context is not cached waits for a DMA read of it from host
// memory (ICM) before its engines can work for it: what makes message rate fall once a host's active QPs outnumber
// the cache (Kalia et al. FaSST, OSDI'16; /work notes in docs/references.md, qp_context_cache_*). Fully associative;
// O(1) per lookup by an intrusive list over QP indices. Private to the HCA model.
#pragma once

#include <cstdint>
#include <vector>

namespace ib::hca {

class QpContextCache {
public:
  explicit QpContextCache(std::uint32_t capacity = 1) : capacity_(capacity) {}

  /// Makes room for QP indices below `qps`.
  void grow(std::uint32_t qps) {
    prev_.resize(qps, none);
    next_.resize(qps, none);
    cached_.resize(qps, 0);
  }
  bool contains(std::uint32_t qp) const { return cached_[qp] != 0; }
  /// Marks a cached QP as just used; false (and nothing changes) if it is not cached.
  bool touch(std::uint32_t qp) {
    if (cached_[qp] == 0)
      return false;
    if (head_ != qp) {
      unlink(qp);
      push_front(qp);
    }
    return true;
  }
  /// Caches a QP's context (just read, or just written by the driver's firmware command), evicting the least
  /// recently used one if full.
  void insert(std::uint32_t qp) {
    if (touch(qp))
      return;
    if (size_ == capacity_) {
      const std::uint32_t victim = tail_;
      unlink(victim);
      cached_[victim] = 0;
      --size_;
      ++evictions_;
    }
    cached_[qp] = 1;
    ++size_;
    push_front(qp);
  }
  std::uint64_t evictions() const { return evictions_; }

private:
  static constexpr std::uint32_t none = 0xffffffffu;
  void unlink(std::uint32_t qp) {
    if (prev_[qp] != none)
      next_[prev_[qp]] = next_[qp];
    else
      head_ = next_[qp];
    if (next_[qp] != none)
      prev_[next_[qp]] = prev_[qp];
    else
      tail_ = prev_[qp];
    prev_[qp] = next_[qp] = none;
  }
  void push_front(std::uint32_t qp) {
    prev_[qp] = none;
    next_[qp] = head_;
    if (head_ != none)
      prev_[head_] = qp;
    head_ = qp;
    if (tail_ == none)
      tail_ = qp;
  }

  std::uint32_t capacity_;
  std::uint32_t size_ = 0;
  std::uint32_t head_ = none, tail_ = none;
  std::vector<std::uint32_t> prev_, next_;
  std::vector<std::uint8_t> cached_;
  std::uint64_t evictions_ = 0;
};

} // namespace ib::hca
