#include "models/pcie/host_memory.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ib::pcie {

std::uint64_t HostMemory::allocate(std::uint64_t size_bytes, std::uint64_t alignment) {
  alignment = std::max<std::uint64_t>(alignment, 64);
  const std::uint64_t address = (next_ + alignment - 1) & ~(alignment - 1);
  regions_.push_back({address, size_bytes});
  if (keep_contents_)
    contents_.emplace_back(size_bytes, std::uint8_t{0});
  // A gap of one cache line between regions, so that an overrun is caught rather than landing in a neighbour.
  next_ = address + std::max<std::uint64_t>(size_bytes, 1) + 64;
  return address;
}

std::size_t HostMemory::find(std::uint64_t address, std::uint64_t size_bytes) const {
  auto after = std::upper_bound(regions_.begin(), regions_.end(), address,
                                [](std::uint64_t a, const Region& r) { return a < r.address; });
  if (after == regions_.begin())
    return none;
  const Region& r = *std::prev(after);
  if (address + size_bytes > r.address + r.size)
    return none;
  return static_cast<std::size_t>(std::prev(after) - regions_.begin());
}

bool HostMemory::contains(std::uint64_t address, std::uint64_t size_bytes) const {
  return find(address, size_bytes) != none;
}

void HostMemory::read(std::uint64_t address, std::span<std::uint8_t> out) const {
  const std::size_t r = find(address, out.size());
  if (r == none)
    throw std::out_of_range("host memory read outside any region at 0x" + std::to_string(address));
  if (keep_contents_)
    std::memcpy(out.data(), contents_[r].data() + (address - regions_[r].address), out.size());
  else
    std::fill(out.begin(), out.end(), std::uint8_t{0});
}

void HostMemory::write(std::uint64_t address, std::span<const std::uint8_t> in) {
  const std::size_t r = find(address, in.size());
  if (r == none)
    throw std::out_of_range("host memory write outside any region at 0x" + std::to_string(address));
  if (keep_contents_)
    std::memcpy(contents_[r].data() + (address - regions_[r].address), in.data(), in.size());
}

} // namespace ib::pcie
