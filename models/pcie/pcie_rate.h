// PCIe link generations and widths, and the data rate each pair carries after its line code (PCIe Base Spec
// r5.0 §4.2.1-4.2.2: 8b/10b at 2.5 and 5 GT/s, 128b/130b at 8, 16 and 32 GT/s). Rates are exact fractions (sim::Rate),
// so Gen3 x8 is 63.0153846... Gb/s, not a rounded figure. TLP and DLLP overheads, SKP ordered sets and the recommended
// ACK/UpdateFC rates are not in these rates: tlp.h and bandwidth_model.h count them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/time.h"

namespace ib::pcie {

enum class Generation : std::uint8_t { gen1, gen2, gen3, gen4, gen5 };
enum class Width : std::uint8_t { x1, x2, x4, x8, x16 };

/// A lane's transfer rate and its line code: `payload_bits` of data per `total_bits` on the wire.
struct LaneCode {
  std::uint64_t transfers_per_s;
  std::uint32_t payload_bits;
  std::uint32_t total_bits;
};

LaneCode lane_code(Generation generation);
std::uint32_t lanes(Width width);
/// Data rate of one direction of a link: lanes × transfer rate × payload / total, exactly.
sim::Rate data_rate(Generation generation, Width width);

/// "gen1" .. "gen5"; nullopt otherwise.
std::optional<Generation> parse_generation(std::string_view text);
/// "x1", "x2", "x4", "x8", "x16"; nullopt otherwise.
std::optional<Width> parse_width(std::string_view text);
std::string_view to_string(Generation generation);
std::string_view to_string(Width width);

} // namespace ib::pcie
