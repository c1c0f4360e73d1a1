#include "models/pcie/pcie_rate.h"

#include <array>

namespace ib::pcie {

namespace {

struct GenerationRow {
  Generation generation;
  std::string_view name;
  LaneCode code;
};

// Transfer rates and line codes (PCIe Base Spec r5.0 §4.2.1 8b/10b, §4.2.2 128b/130b;
// docs/references.md pcie_gen<N>_transfer_rate and _encoding, exact-spec).
constexpr std::array<GenerationRow, 5> generation_table{{
    {Generation::gen1, "gen1", {2'500'000'000, 8, 10}},    // 8b/10b: 2.0 Gb/s per lane
    {Generation::gen2, "gen2", {5'000'000'000, 8, 10}},    // 8b/10b: 4.0 Gb/s per lane
    {Generation::gen3, "gen3", {8'000'000'000, 128, 130}}, // 128b/130b: 7.877 Gb/s per lane
    {Generation::gen4, "gen4", {16'000'000'000, 128, 130}},
    {Generation::gen5, "gen5", {32'000'000'000, 128, 130}},
}};

struct WidthRow {
  Width width;
  std::string_view name;
  std::uint32_t lanes;
};

// Link widths an HCA trains to (x12 and x32 exist in the PCIe Base Spec but not in shipping HCAs: left out).
constexpr std::array<WidthRow, 5> width_table{{
    {Width::x1, "x1", 1},
    {Width::x2, "x2", 2},
    {Width::x4, "x4", 4},
    {Width::x8, "x8", 8},
    {Width::x16, "x16", 16},
}};

} // namespace

LaneCode lane_code(Generation generation) {
  return generation_table[static_cast<std::size_t>(generation)].code;
}

std::uint32_t lanes(Width width) {
  return width_table[static_cast<std::size_t>(width)].lanes;
}

sim::Rate data_rate(Generation generation, Width width) {
  const LaneCode code = lane_code(generation);
  return sim::Rate::from_line_code(code.transfers_per_s, lanes(width), code.payload_bits, code.total_bits);
}

std::optional<Generation> parse_generation(std::string_view text) {
  for (const GenerationRow& row : generation_table)
    if (row.name == text)
      return row.generation;
  return std::nullopt;
}

std::optional<Width> parse_width(std::string_view text) {
  for (const WidthRow& row : width_table)
    if (row.name == text)
      return row.width;
  return std::nullopt;
}

std::string_view to_string(Generation generation) {
  return generation_table[static_cast<std::size_t>(generation)].name;
}

std::string_view to_string(Width width) {
  return width_table[static_cast<std::size_t>(width)].name;
}

} // namespace ib::pcie
