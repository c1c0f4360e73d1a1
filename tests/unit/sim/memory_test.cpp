#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "sim/memory.h"

namespace {

/// The VmFlags of the mapping holding `address`, from /proc/self/smaps; "" if none holds it.
std::string vm_flags_of(const void* address) {
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t low = 0;
    std::uintptr_t high = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> low >> dash >> high && dash == '-') {
      inside = low <= a && a < high;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

} // namespace

TEST_CASE("sim::back_heap_with_huge_pages: later blocks land in memory marked for huge pages", "[sim][quick]") {
  const auto* const old_break = static_cast<const unsigned char*>(sbrk(0));
  constexpr std::uintptr_t huge_mask = (std::uintptr_t{2} << 20) - 1;
  const std::size_t marked = sim::back_heap_with_huge_pages(std::size_t{256} << 20);
  // Whole huge pages or nothing (a sanitizer build, another allocator or platform: then there is nothing to check).
  CHECK(marked % (std::size_t{2} << 20) == 0);
#if defined(__linux__) && defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
  CHECK(marked >= (std::size_t{254} << 20)); // the reservation, less the alignment to 2 MiB at either end
#endif
  if (marked == 0)
    return;
  // Blocks that used to get mappings of their own now come from the marked heap (all but its first, unaligned,
  // up to 2 MiB, which small blocks fill first).
  for (const std::size_t bytes : {std::size_t{8} << 20, std::size_t{24} << 20}) {
    auto* block = static_cast<unsigned char*>(std::malloc(bytes));
    REQUIRE(block != nullptr);
    // The marking starts at the first huge page past the old break. Free space below it, which earlier test cases
    // of this process may have left (ctest runs each case alone), can hold all or part of a block.
    const unsigned char* const marked_from = old_break + (-reinterpret_cast<std::uintptr_t>(old_break) & huge_mask);
    const unsigned char* const from = std::max<const unsigned char*>(block, marked_from);
    if (block + bytes <= from + (std::size_t{2} << 20)) {
      WARN("a block of " << bytes << " bytes came from free space below the marked heap; run this case alone");
      std::free(block);
      continue;
    }
    std::memset(block, 0xa5, bytes);
    CHECK(block[bytes - 1] == 0xa5);
    INFO("block of " << bytes << " bytes");
    CHECK(vm_flags_of(from + (block + bytes - from) / 2).find(" hg") != std::string::npos);
    std::free(block);
  }
}

TEST_CASE("sim::keep_heap_top_off_huge_pages: the next blocks from the heap's top are kept on small pages",
          "[sim][quick]") {
  // Inside the reservation the first test case made (or this one makes, if run alone).
  const bool reserved =
      sim::back_heap_with_huge_pages(std::size_t{256} << 20) != 0 || sim::keep_heap_top_off_huge_pages(1) != 0;
  if (!reserved)
    return; // a sanitizer build, another allocator or platform: nothing to check
  // The heap's top past the reservation's unaligned first 2 MiB, where a model's state would have put it.
  void* const state = std::malloc(std::size_t{3} << 20);
  REQUIRE(state != nullptr);
  const std::size_t kept = sim::keep_heap_top_off_huge_pages(std::size_t{8} << 20);
  CHECK(kept >= (std::size_t{8} << 20));
  // As a program's stack: large, its far end barely touched.
  auto* block = static_cast<unsigned char*>(std::malloc(std::size_t{68} << 10));
  REQUIRE(block != nullptr);
  if (block < state) { // a hole that earlier test cases of this process left (ctest runs each case alone)
    WARN("a program's stack came from free space below the heap's top; run this case alone");
    std::free(block);
    std::free(state);
    return;
  }
  block[0] = 1; // the block's first page may share the page of malloc's header, left as it was
  CHECK(vm_flags_of(block + (std::size_t{34} << 10)).find(" nh") != std::string::npos);
  CHECK(vm_flags_of(block + (std::size_t{34} << 10)).find(" hg") == std::string::npos);
  std::free(block);
  std::free(state);
  CHECK(sim::keep_heap_top_off_huge_pages(0) == 0);
}
