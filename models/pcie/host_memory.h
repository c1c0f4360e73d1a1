// Host memory as the HCA's DMA engine and the CPU see it: an address space of regions the host allocates (queues,
// buffers). Timing lives in the bus (models/pcie/bus.h); this holds only where things are and, in verification
// mode, their bytes, so that tests can check what a transfer delivered and not only how much. Addresses start
// above 4 GiB, so DMA TLPs carry 64-bit addresses as on a real server.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ib::pcie {

class HostMemory {
public:
  static constexpr std::uint64_t base_address = 0x1'0000'0000ull;

  /// `keep_contents`: regions carry their bytes (verification mode); otherwise reads yield zeros and writes only
  /// check bounds.
  explicit HostMemory(bool keep_contents) : keep_contents_(keep_contents) {}

  bool keeps_contents() const { return keep_contents_; }
  /// A new zeroed region of `size_bytes`, aligned to `alignment` (a power of two, at least 64: a cache line).
  std::uint64_t allocate(std::uint64_t size_bytes, std::uint64_t alignment = 4096);
  /// Whether [address, address + size_bytes) lies within one region.
  bool contains(std::uint64_t address, std::uint64_t size_bytes) const;
  /// Copies bytes in or out. Throws std::out_of_range when the span leaves its region (a model bug: the HCA
  /// checks remote accesses against registered memory before it touches memory).
  void read(std::uint64_t address, std::span<std::uint8_t> out) const;
  void write(std::uint64_t address, std::span<const std::uint8_t> in);
  std::uint64_t allocated_bytes() const { return next_ - base_address; }

private:
  struct Region {
    std::uint64_t address;
    std::uint64_t size;
  };
  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  /// The index of the region holding [address, address + size_bytes), or `none`.
  std::size_t find(std::uint64_t address, std::uint64_t size_bytes) const;

  bool keep_contents_;
  std::uint64_t next_ = base_address;
  // Two regions per QP (its queues): a million QPs make this the largest vector of a run, so the bytes of
  // verification mode live apart and a region is 16 bytes.
  std::vector<Region> regions_;                     ///< by address
  std::vector<std::vector<std::uint8_t>> contents_; ///< beside regions_, if keep_contents_
};

} // namespace ib::pcie
