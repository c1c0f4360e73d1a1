#include "models/link/link_rate.h"

#include <array>

namespace ib::link {

namespace {

struct SpeedRow {
  Speed speed;
  std::string_view name;
  LaneCode code;
};

// Lane signalling rates and codes (docs/references.md, exact-spec unless noted).
constexpr std::array<SpeedRow, 8> speed_table{{
    {Speed::sdr, "SDR", {2'500'000'000, 8, 10}},       // 8b/10b
    {Speed::ddr, "DDR", {5'000'000'000, 8, 10}},       // 8b/10b
    {Speed::qdr, "QDR", {10'000'000'000, 8, 10}},      // 8b/10b
    {Speed::fdr10, "FDR10", {10'312'500'000, 64, 66}}, // 64b/66b at 10.3125 Gb/s: 40 Gb/s at 4x (vendor claim)
    {Speed::fdr, "FDR", {14'062'500'000, 64, 66}},     // 64b/66b
    {Speed::edr, "EDR", {25'781'250'000, 64, 66}},     // 64b/66b: exactly 25 Gb/s per lane
    // HDR and NDR: PAM4 with 256b/257b transcoding and RS(544,514) FEC: 514/544 × 256/257 = 16/17 exactly,
    // so 53.125 and 106.25 Gb/s lanes carry exactly 50 and 100 Gb/s (Intel AN 846 §5.3.1: 50 × 66/64 × 34/33 =
    // 53.125; Linux ib_rate_to_mbps: 4x NDR signals at 425,000 Mb/s; docs/references.md ib_ndr_4x_data_rate).
    {Speed::hdr, "HDR", {53'125'000'000, 16, 17}},
    {Speed::ndr, "NDR", {106'250'000'000, 16, 17}},
}};

struct WidthRow {
  Width width;
  std::string_view name;
  std::uint32_t lanes;
};

// IBA vol 1 §5.1: link widths (2x came with HDR).
constexpr std::array<WidthRow, 5> width_table{{
    {Width::x1, "1x", 1},
    {Width::x2, "2x", 2},
    {Width::x4, "4x", 4},
    {Width::x8, "8x", 8},
    {Width::x12, "12x", 12},
}};

} // namespace

std::uint32_t lanes(Width width) {
  return width_table[static_cast<std::size_t>(width)].lanes;
}

LaneCode lane_code(Speed speed) {
  return speed_table[static_cast<std::size_t>(speed)].code;
}

sim::Rate data_rate(Width width, Speed speed) {
  const LaneCode code = lane_code(speed);
  return sim::Rate::from_line_code(code.signalling_bps, lanes(width), code.payload_bits, code.total_bits);
}

std::optional<Width> parse_width(std::string_view text) {
  for (const WidthRow& row : width_table)
    if (row.name == text)
      return row.width;
  return std::nullopt;
}

std::optional<Speed> parse_speed(std::string_view text) {
  for (const SpeedRow& row : speed_table)
    if (row.name == text)
      return row.speed;
  return std::nullopt;
}

namespace {

/// Splits `list` at commas and ORs in bit_of(item) for each; nullopt on an empty list, an unknown or a repeated item.
template <class Set, class BitOf>
std::optional<Set> parse_set(std::string_view list, BitOf bit_of) {
  Set set = 0;
  while (true) {
    const std::size_t comma = list.find(',');
    const std::optional<Set> bit = bit_of(list.substr(0, comma));
    if (!bit || (set & *bit) != 0)
      return std::nullopt;
    set = static_cast<Set>(set | *bit);
    if (comma == std::string_view::npos)
      return set;
    list.remove_prefix(comma + 1);
  }
}

} // namespace

std::optional<WidthSet> parse_width_set(std::string_view list) {
  return parse_set<WidthSet>(list, [](std::string_view item) -> std::optional<WidthSet> {
    const std::optional<Width> w = parse_width(item);
    return w ? std::optional<WidthSet>(width_bit(*w)) : std::nullopt;
  });
}

std::optional<SpeedSet> parse_speed_set(std::string_view list) {
  return parse_set<SpeedSet>(list, [](std::string_view item) -> std::optional<SpeedSet> {
    const std::optional<Speed> s = parse_speed(item);
    return s ? std::optional<SpeedSet>(speed_bit(*s)) : std::nullopt;
  });
}

std::string_view to_string(Width width) {
  return width_table[static_cast<std::size_t>(width)].name;
}
std::string_view to_string(Speed speed) {
  return speed_table[static_cast<std::size_t>(speed)].name;
}

} // namespace ib::link
