// IB link widths and speeds, and the data rate each pair carries after its line code (IBA vol 1 §5.1, vol 2
// §5.2-5.3 for the lane signalling rates and codes). Data rates are exact fractions (sim::Rate). Physical-layer
// idles and skip ordered sets are left out: they cost no data bandwidth beyond the code itself. FEC's latency is the
// cable profile's (cable.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/time.h"

namespace ib::link {

enum class Width : std::uint8_t { x1, x2, x4, x8, x12 };
enum class Speed : std::uint8_t { sdr, ddr, qdr, fdr10, fdr, edr, hdr, ndr };

/// A lane's signalling rate and its line code: `payload_bits` of data per `total_bits` on the wire.
struct LaneCode {
  std::uint64_t signalling_bps;
  std::uint32_t payload_bits;
  std::uint32_t total_bits;
};

std::uint32_t lanes(Width width);
LaneCode lane_code(Speed speed);
/// Data rate of a port of `width` lanes at `speed`: lanes × signalling × payload / total, exactly.
sim::Rate data_rate(Width width, Speed speed);

/// "1x", "2x", "4x", "8x", "12x" as ibnetdiscover writes them; nullopt otherwise.
std::optional<Width> parse_width(std::string_view text);
/// "SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR"; nullopt otherwise.
std::optional<Speed> parse_speed(std::string_view text);
/// Sets of widths and speeds a port supports: bit (1 << enum value).
using WidthSet = std::uint8_t;
using SpeedSet = std::uint16_t;
constexpr WidthSet width_bit(Width w) {
  return static_cast<WidthSet>(1u << static_cast<unsigned>(w));
}
constexpr SpeedSet speed_bit(Speed s) {
  return static_cast<SpeedSet>(1u << static_cast<unsigned>(s));
}
/// A comma-separated list as profiles write it ("1x,4x", "SDR,QDR,FDR,EDR"); nullopt when empty, when an item is
/// not a width (speed) or appears twice.
std::optional<WidthSet> parse_width_set(std::string_view list);
std::optional<SpeedSet> parse_speed_set(std::string_view list);

std::string_view to_string(Width width);
std::string_view to_string(Speed speed);

} // namespace ib::link
