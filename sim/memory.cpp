#include "sim/memory.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>

#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace sim {

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized = true; // the sanitizer's allocator serves malloc: glibc's knobs do nothing
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif

#if defined(__linux__) && defined(__GLIBC__)
std::uintptr_t huge_first = 0, huge_last = 0; // the range marked MADV_HUGEPAGE, if any
#endif

} // namespace

std::size_t back_heap_with_huge_pages(std::size_t reserve_bytes) {
#if defined(__linux__) && defined(__GLIBC__)
  if (sanitized || reserve_bytes == 0)
    return 0;
  constexpr std::uintptr_t huge_page = std::uintptr_t{2} << 20;
  const int reserve = static_cast<int>(std::min<std::size_t>(reserve_bytes, std::size_t{1} << 30));
  // Blocks up to 32 MiB (glibc's largest mmap threshold) come from the heap, so the pools' chunks and the model's
  // arrays land in the marked range; and the heap is not trimmed below it (which would drop the marking when it
  // grew back) unless 2 GiB at its top are free.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
  // The next growth of the heap reserves `reserve` bytes beyond the request; a request larger than all the free
  // space malloc holds cannot reuse any of it, so it forces that growth now.
  const auto start = reinterpret_cast<std::uintptr_t>(sbrk(0));
  mallopt(M_TOP_PAD, reserve);
  void* volatile probe = std::malloc(mallinfo2().fordblks + (std::size_t{1} << 20)); // volatile: kept, not elided
  const auto end = reinterpret_cast<std::uintptr_t>(sbrk(0));
  std::free(probe);
  mallopt(M_TOP_PAD, 128 << 10); // later growth as usual
  const std::uintptr_t first = (start + huge_page - 1) & ~(huge_page - 1);
  const std::uintptr_t last = end & ~(huge_page - 1);
  if (start == static_cast<std::uintptr_t>(-1) || last <= first ||
      madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE) != 0)
    return 0;
  huge_first = first;
  huge_last = last;
  return last - first;
#else
  (void)reserve_bytes;
  return 0;
#endif
}

std::size_t keep_heap_top_off_huge_pages(std::size_t bytes) {
#if defined(__linux__) && defined(__GLIBC__)
  if (huge_last <= huge_first || bytes == 0)
    return 0;
  const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  // The top chunk is the free space that ends at the program break; its first bytes are malloc's header, the rest
  // holds nothing (as malloc_trim, which also gives such space back).
  const auto brk = reinterpret_cast<std::uintptr_t>(sbrk(0));
  const std::uintptr_t top = brk - mallinfo2().keepcost;
  const std::uintptr_t first = std::max((top + 64 + page - 1) & ~(page - 1), huge_first);
  const std::uintptr_t last = std::min({(first + bytes + page - 1) & ~(page - 1), huge_last, brk & ~(page - 1)});
  if (last <= first)
    return 0;
  void* const start = reinterpret_cast<void*>(first);
  if (madvise(start, last - first, MADV_NOHUGEPAGE) != 0 || madvise(start, last - first, MADV_DONTNEED) != 0)
    return 0;
  return last - first;
#else
  (void)bytes;
  return 0;
#endif
}

} // namespace sim
