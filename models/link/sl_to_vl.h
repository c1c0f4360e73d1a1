// SL -> VL mapping (IBA 7.6.6, SL2VLMappingTable): each switch output (per input port) and each HCA port maps a
// packet's 4-bit SL to the VL it travels on. The SM programs the tables; until it does, or where its engine leaves
// them unset, every component uses the one default below, so a switch, the SM's route check and an HCA agree.
#pragma once

#include <array>
#include <cstdint>

namespace ib::link {

/// One SL2VL table: VL by SL.
using SlToVl = std::array<std::uint8_t, 16>;

/// The default VL of `sl` on a port running `data_vls` data VLs: OpenSM's default SL2VL (SL s -> VL s, and SL 15
/// -> VL 7, as ib_default_sl2vl in include/opensm/osm_base.h), reduced modulo the port's operational VLs when it
/// runs fewer (estimate: what firmware without an SM-programmed table is commonly described as doing). A port
/// reporting no data VLs is treated as running one.
constexpr std::uint8_t default_vl(std::uint8_t sl, unsigned data_vls) {
  const unsigned vl = (sl & 15u) == 15u ? 7u : (sl & 15u);
  return static_cast<std::uint8_t>(vl % (data_vls == 0 ? 1u : data_vls));
}

/// default_vl() for every SL: the table of a port running `data_vls` data VLs.
constexpr SlToVl default_sl_to_vl(unsigned data_vls) {
  SlToVl table{};
  for (std::uint8_t sl = 0; sl < 16; ++sl)
    table[sl] = default_vl(sl, data_vls);
  return table;
}

} // namespace ib::link
