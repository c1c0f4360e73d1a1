#include "models/pcie/host_memory.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ib::pcie {

std::uint64_t HostMemory::allocate(std::uint64_t size_bytes, std::uint64_t alignment) {
  alignment = std::max<std::uint64_t>(alignment, 64);
  const std::uint64_t address = (next_ + alignment - 1) & ~(alignment - 1);
  Region region{address, size_bytes, {}};
  if (keep_contents_)
    region.bytes.assign(size_bytes, 0);
  regions_.push_back(std::move(region));
  // A gap of one cache line between regions, so that an overrun is caught rather than landing in a neighbour.
  next_ = address + std::max<std::uint64_t>(size_bytes, 1) + 64;
  return address;
}

const HostMemory::Region* HostMemory::find(std::uint64_t address, std::uint64_t size_bytes) const {
  auto after = std::upper_bound(regions_.begin(), regions_.end(), address,
                                [](std::uint64_t a, const Region& r) { return a < r.address; });
  if (after == regions_.begin())
    return nullptr;
  const Region& r = *std::prev(after);
  if (address + size_bytes > r.address + r.size)
    return nullptr;
  return &r;
}

bool HostMemory::contains(std::uint64_t address, std::uint64_t size_bytes) const {
  return find(address, size_bytes) != nullptr;
}

void HostMemory::read(std::uint64_t address, std::span<std::uint8_t> out) const {
  const Region* r = find(address, out.size());
  if (r == nullptr)
    throw std::out_of_range("host memory read outside any region at 0x" + std::to_string(address));
  if (keep_contents_)
    std::memcpy(out.data(), r->bytes.data() + (address - r->address), out.size());
  else
    std::fill(out.begin(), out.end(), std::uint8_t{0});
}

void HostMemory::write(std::uint64_t address, std::span<const std::uint8_t> in) {
  const Region* r = find(address, in.size());
  if (r == nullptr)
    throw std::out_of_range("host memory write outside any region at 0x" + std::to_string(address));
  if (keep_contents_)
    std::memcpy(const_cast<std::uint8_t*>(r->bytes.data()) + (address - r->address), in.data(), in.size());
}

} // namespace ib::pcie
