#include "models/pcie/tlp.h"

namespace ib::pcie {

bool carries_payload(TlpKind kind) {
  switch (kind) {
  case TlpKind::mwr:
  case TlpKind::cpld:
    return true;
  case TlpKind::mrd:
  case TlpKind::cpl:
    return false;
  }
  return false;
}

std::uint32_t header_bytes(TlpKind kind, bool address64) {
  switch (kind) {
  case TlpKind::mwr:
  case TlpKind::mrd:
    return address64 ? header_4dw_bytes : header_3dw_bytes;
  case TlpKind::cpld:
  case TlpKind::cpl:
    // Completions are routed by requester ID and carry only the low 7 address bits (§2.2.9).
    return header_3dw_bytes;
  }
  return 0;
}

std::uint32_t wire_bytes(TlpKind kind, std::uint32_t payload_bytes, bool address64, bool ecrc) {
  assert(payload_bytes == 0 || carries_payload(kind));
  return tlp_link_overhead_bytes + header_bytes(kind, address64) + padded_payload_bytes(payload_bytes) +
         (ecrc ? ecrc_bytes : 0);
}

std::uint32_t wire_bytes(DllpKind /*kind*/) {
  return dllp_bytes;
}

std::optional<CompletionSplit> parse_completion_split(std::string_view text) {
  if (text == "rcb")
    return CompletionSplit::rcb;
  if (text == "mps")
    return CompletionSplit::mps;
  return std::nullopt;
}

std::string_view to_string(CompletionSplit split) {
  switch (split) {
  case CompletionSplit::rcb:
    return "rcb";
  case CompletionSplit::mps:
    return "mps";
  }
  return "?";
}

std::string_view to_string(TlpKind kind) {
  switch (kind) {
  case TlpKind::mwr:
    return "MWr";
  case TlpKind::mrd:
    return "MRd";
  case TlpKind::cpld:
    return "CplD";
  case TlpKind::cpl:
    return "Cpl";
  }
  return "?";
}

std::string_view to_string(DllpKind kind) {
  switch (kind) {
  case DllpKind::ack:
    return "Ack";
  case DllpKind::update_fc:
    return "UpdateFC";
  }
  return "?";
}

namespace tlp_detail {

std::uint64_t request_count(std::uint64_t address, std::uint64_t size_bytes, std::uint32_t max_bytes) {
  if (size_bytes == 0)
    return 0;
  const auto ceil_div = [](std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; };
  // Greedy cutting restarts at every 4 KiB boundary, and max_bytes divides 4096: count the first block's part, the
  // whole blocks and the last block's part separately.
  const std::uint64_t first = std::min(size_bytes, address_boundary_bytes - address % address_boundary_bytes);
  const std::uint64_t rest = size_bytes - first;
  return ceil_div(first, max_bytes) + rest / address_boundary_bytes * (address_boundary_bytes / max_bytes) +
         ceil_div(rest % address_boundary_bytes, max_bytes);
}

} // namespace tlp_detail

std::uint64_t write_tlp_count(std::uint64_t address, std::uint64_t size_bytes, std::uint32_t mps) {
  assert(valid_max_size(mps));
  return tlp_detail::request_count(address, size_bytes, mps);
}

std::uint64_t read_request_count(std::uint64_t address, std::uint64_t size_bytes, std::uint32_t mrrs) {
  assert(valid_max_size(mrrs));
  return tlp_detail::request_count(address, size_bytes, mrrs);
}

std::uint32_t completion_count(std::uint64_t address, std::uint32_t size_bytes, std::uint32_t mps, std::uint32_t rcb,
                               CompletionSplit split) {
  assert(valid_max_size(mps) && valid_rcb(rcb) && size_bytes > 0);
  const std::uint64_t end = address + size_bytes;
  if (split == CompletionSplit::rcb) {
    // One CplD per RCB-aligned block the request touches.
    return static_cast<std::uint32_t>((end + rcb - 1) / rcb - address / rcb);
  }
  if (size_bytes <= mps)
    return 1;
  // The first CplD ends at the last RCB boundary within MPS; from there every start is RCB-aligned and MPS is a
  // multiple of RCB, so each further CplD carries MPS bytes except the last.
  const std::uint64_t first_end = (address + mps) / rcb * rcb;
  return static_cast<std::uint32_t>(1 + (end - first_end + mps - 1) / mps);
}

std::uint32_t completion_sizes(std::uint64_t address, std::uint32_t size_bytes, std::uint32_t mps, std::uint32_t rcb,
                               CompletionSplit split, std::span<std::uint32_t> sizes) {
  std::uint32_t count = 0;
  for_each_completion(address, size_bytes, mps, rcb, split, [&](std::uint64_t, std::uint32_t size) {
    if (count < sizes.size())
      sizes[count] = size;
    ++count;
  });
  return count;
}

} // namespace ib::pcie
