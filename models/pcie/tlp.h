// The bytes a PCIe transaction layer packet (TLP) or data link layer packet (DLLP) occupies on the link, and how
// DMA transfers split into TLPs (PCIe Base Spec r5.0 §2.2 TLP formats, §2.3.1.1 completion splitting, §2.2.7 the
// 4 KiB rule, §3.5 ACK/UpdateFC DLLPs). Byte costs follow pcie-model (Neugebauer et al., SIGCOMM 2018,
// model/pcie.py): per TLP 8 B of link overhead (sequence number 2, LCRC 4, framing 2; the Gen3+ STP token
// comes to the same 8), a 12 or 16 B header, an optional 4 B ECRC; DLLPs 8 B. Left out: the other TLP types
// (I/O, configuration, messages, atomics), the TLP prefix, and SKP/EIEIO ordered sets (bandwidth_model.h).
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace ib::pcie {

/// TLP header sizes (PCIe Base Spec r5.0 §2.2.1: 3 DW without a 64-bit address, 4 DW with one).
inline constexpr std::uint32_t header_3dw_bytes = 12;
inline constexpr std::uint32_t header_4dw_bytes = 16;
/// Per-TLP link overhead (pcie-model DLLP_Hdr): at 8b/10b STP 1 + sequence number 2 + LCRC 4 + END 1; at
/// 128b/130b a 4 B STP token that carries the sequence number + LCRC 4. 8 either way.
inline constexpr std::uint32_t tlp_link_overhead_bytes = 8;
/// Optional end-to-end CRC digest (§2.7.1; pcie-model TLP_Dig).
inline constexpr std::uint32_t ecrc_bytes = 4;
/// An ACK/NAK or UpdateFC DLLP on the link: 4 B DLLP + 2 B CRC16 + 2 B framing (§3.5; pcie-model Ack_Size).
inline constexpr std::uint32_t dllp_bytes = 8;
/// Payloads are whole DWs: the Length field counts DWs and byte enables mask the ends (§2.2.2).
inline constexpr std::uint32_t dw_bytes = 4;
/// Memory requests must not cross a 4 KiB address boundary (§2.2.7).
inline constexpr std::uint64_t address_boundary_bytes = 4096;
/// Addresses from here up need the 64-bit (4 DW) header; below it the 32-bit form is required (§2.2.4.1).
inline constexpr std::uint64_t first_64bit_address = std::uint64_t{1} << 32;

enum class TlpKind : std::uint8_t { mwr, mrd, cpld, cpl };
enum class DllpKind : std::uint8_t { ack, update_fc };

/// Whether a memory request to `address` needs a 4 DW header: addresses >= 4 GiB do, and the spec forbids the
/// 64-bit form below 4 GiB (§2.2.4.1).
constexpr bool needs_4dw_header(std::uint64_t address) {
  return address >= first_64bit_address;
}
/// Whether TLPs of `kind` carry data (MWr, CplD).
bool carries_payload(TlpKind kind);
/// Header bytes: memory requests 12 or 16 by `address64`; completions always 12 (they carry no address).
std::uint32_t header_bytes(TlpKind kind, bool address64);
/// `payload_bytes` rounded up to whole DWs (a DW-aligned start assumed).
constexpr std::uint32_t padded_payload_bytes(std::uint32_t payload_bytes) {
  return (payload_bytes + dw_bytes - 1) / dw_bytes * dw_bytes;
}
/// Wire bytes of one TLP: link overhead + header + payload in whole DWs + ECRC if `ecrc`.
/// Precondition: payload_bytes == 0 unless carries_payload(kind).
std::uint32_t wire_bytes(TlpKind kind, std::uint32_t payload_bytes, bool address64, bool ecrc);
/// Wire bytes of one DLLP (8).
std::uint32_t wire_bytes(DllpKind kind);

/// How a completer splits a read completion: at every RCB-aligned address ("rcb", seen on older chipsets), or
/// into the fewest completions the spec allows, each at most MPS and ending at an RCB-aligned address ("mps").
enum class CompletionSplit : std::uint8_t { rcb, mps };
/// "rcb" or "mps"; nullopt otherwise.
std::optional<CompletionSplit> parse_completion_split(std::string_view text);
std::string_view to_string(CompletionSplit split);
std::string_view to_string(TlpKind kind);
std::string_view to_string(DllpKind kind);

/// Whether `bytes` is a legal Max_Payload_Size or Max_Read_Request_Size: 128, 256, ..., 4096 (§7.5.3.4).
constexpr bool valid_max_size(std::uint32_t bytes) {
  return bytes >= 128 && bytes <= 4096 && (bytes & (bytes - 1)) == 0;
}
/// Whether `bytes` is a legal Read Completion Boundary: 64 or 128 (§2.3.1.1, §7.5.3.7).
constexpr bool valid_rcb(std::uint32_t bytes) {
  return bytes == 64 || bytes == 128;
}

namespace tlp_detail {
/// The longest request from `address` of at most `max_bytes` and `remaining` bytes that stays inside one 4 KiB
/// block.
constexpr std::uint32_t request_chunk(std::uint64_t address, std::uint64_t remaining, std::uint32_t max_bytes) {
  const std::uint64_t to_boundary = address_boundary_bytes - address % address_boundary_bytes;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>({remaining, max_bytes, to_boundary}));
}
/// The number of requests of at most `max_bytes` (a power of two dividing 4096) covering [address, address+size)
/// without crossing a 4 KiB boundary, greedily as request_chunk() cuts them.
std::uint64_t request_count(std::uint64_t address, std::uint64_t size_bytes, std::uint32_t max_bytes);
} // namespace tlp_detail

/// Calls f(address, size_bytes) for each MWr of a DMA write of `size_bytes` at `address`: greedily the longest TLP
/// of at most `mps` bytes that does not cross a 4 KiB boundary (the fewest TLPs the spec allows; an unaligned start
/// is not realigned to MPS). Precondition: valid_max_size(mps).
template <class F>
void for_each_write_tlp(std::uint64_t address, std::uint64_t size_bytes, std::uint32_t mps, F&& f) {
  assert(valid_max_size(mps));
  while (size_bytes > 0) {
    const std::uint32_t chunk = tlp_detail::request_chunk(address, size_bytes, mps);
    f(address, chunk);
    address += chunk;
    size_bytes -= chunk;
  }
}
/// The number of MWr TLPs for_each_write_tlp() produces, in O(1).
std::uint64_t write_tlp_count(std::uint64_t address, std::uint64_t size_bytes, std::uint32_t mps);

/// Calls f(address, size_bytes) for each MRd of a DMA read, split as writes are but at `mrrs` (§2.2.7).
/// Precondition: valid_max_size(mrrs).
template <class F>
void for_each_read_request(std::uint64_t address, std::uint64_t size_bytes, std::uint32_t mrrs, F&& f) {
  for_each_write_tlp(address, size_bytes, mrrs, f);
}
/// The number of MRd TLPs for_each_read_request() produces, in O(1).
std::uint64_t read_request_count(std::uint64_t address, std::uint64_t size_bytes, std::uint32_t mrrs);

/// Calls f(address, size_bytes) for each CplD answering one read request of `size_bytes` at `address`.
/// The spec (§2.3.1.1) lets a completer split a completion only where an address is RCB-aligned, and no CplD may
/// exceed MPS. "rcb": a CplD ends at every RCB-aligned address (RCB-sized completions, the first one shorter if
/// the start is unaligned). "mps": each CplD is the longest legal one: the rest of the request if it fits in
/// MPS, else up to the last RCB-aligned address within MPS of its start. An aligned request gives MPS-sized
/// CplDs, as pcie-model assumes (ceil(size / MPS)); an unaligned one a shorter first CplD, then MPS-sized ones.
/// Preconditions: valid_max_size(mps), valid_rcb(rcb), 0 < size_bytes, and the request does not cross 4 KiB.
template <class F>
void for_each_completion(std::uint64_t address, std::uint32_t size_bytes, std::uint32_t mps, std::uint32_t rcb,
                         CompletionSplit split, F&& f) {
  assert(valid_max_size(mps) && valid_rcb(rcb) && size_bytes > 0);
  assert(address % address_boundary_bytes + size_bytes <= address_boundary_bytes);
  const std::uint64_t end = address + size_bytes;
  while (address < end) {
    // "rcb": end at the next RCB-aligned address. "mps": the rest in one CplD if it fits, else end at the last
    // RCB-aligned address within MPS (there is always one: RCB <= MPS).
    const std::uint64_t reach = split == CompletionSplit::rcb ? address + rcb : address + mps;
    const std::uint64_t cut = split == CompletionSplit::mps && end <= reach ? end : std::min(end, reach / rcb * rcb);
    f(address, static_cast<std::uint32_t>(cut - address));
    address = cut;
  }
}
/// The number of CplDs for_each_completion() produces, in O(1).
std::uint32_t completion_count(std::uint64_t address, std::uint32_t size_bytes, std::uint32_t mps, std::uint32_t rcb,
                               CompletionSplit split);
/// The payload sizes for_each_completion() produces, in order, into `sizes` (at most sizes.size() of them);
/// returns completion_count(). A request of at most 4096 B has at most 4096 / 64 = 64 completions.
std::uint32_t completion_sizes(std::uint64_t address, std::uint32_t size_bytes, std::uint32_t mps, std::uint32_t rcb,
                               CompletionSplit split, std::span<std::uint32_t> sizes);

} // namespace ib::pcie
