// How the process's memory is backed. A fabric's state (ports, buffers, packets, per-flow records) is spread over
// megabytes and touched at random, one cache line here and one there: with 4 KiB pages most of those touches also
// miss the TLB, and under virtualization every such miss walks two page tables. Transparent huge pages (2 MiB)
// cover the same state with a few entries.
#pragma once

#include <cstddef>

namespace sim {

/// Asks the kernel to back the heap with transparent huge pages from here on, where it allows them (Linux with
/// THP in "madvise" or "always" mode, glibc's malloc): reserves `reserve_bytes` (at most 1 GiB) of address space
/// at the heap's top and marks it MADV_HUGEPAGE; has malloc serve blocks up to 32 MiB from the heap rather than
/// from mappings of their own; and keeps the heap from being trimmed below the mark. Only address space is
/// reserved: memory is used as it is touched, in 2 MiB pages, and what the model frees stays with the process
/// for reuse. Beyond the reservation the heap grows as usual, in 4 KiB pages. Call it first thing in main(),
/// before the model is built. Returns the bytes marked, 0 if it did nothing (another platform or allocator, a
/// sanitizer build, or a kernel that refused): the run is then the same, only slower. Simulated results never
/// depend on it.
std::size_t back_heap_with_huge_pages(std::size_t reserve_bytes = std::size_t{1} << 30);

/// Keeps the next `bytes` the heap grows into (its top, where malloc carves blocks no freed block can serve) on
/// 4 KiB pages, and returns whatever of them is resident to the kernel: for blocks that are large but touched
/// sparsely, such as host programs' stacks, which in huge pages would be resident whole. A no-op outside
/// back_heap_with_huge_pages's reservation. Returns the bytes so kept.
std::size_t keep_heap_top_off_huge_pages(std::size_t bytes);

} // namespace sim
