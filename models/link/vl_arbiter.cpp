// VL arbitration (IBA vol 1 §7.6.9). Where the spec leaves freedom, the choice made is stated next to the code
// that makes it; what the model leaves out is listed at the top of the header.
#include "models/link/vl_arbiter.h"

#include <bit>
#include <cassert>
#include <limits>
#include <stdexcept>

namespace ib::link {

namespace {

bool is_valid_data_vls(std::uint8_t data_vls) {
  return data_vls == 1 || data_vls == 2 || data_vls == 4 || data_vls == 8 || data_vls == 15;
}

std::string check_table(const std::vector<VlArbEntry>& table, const char* name) {
  if (table.size() > vlarb_table_max_entries)
    return std::string(name) + ": " + std::to_string(table.size()) + " entries, at most " +
           std::to_string(vlarb_table_max_entries) + " allowed (IBA 14.2.5.9)";
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i].vl >= management_vl)
      return std::string(name) + "[" + std::to_string(i) + "]: VL " + std::to_string(table[i].vl) +
             ", a table entry's VL must be 0..14 (IBA 7.6.9)";
  return {};
}

// OpenSM's default templates (include/opensm/osm_base.h, OSM_DEFAULT_QOS_VLARB_HIGH / _LOW / _HIGH_LIMIT;
// doc/QoS_management_in_OpenSM.txt §7; ib_constants.json ib_vlarb_default_high / _low): entry i serves VL i.
constexpr std::uint8_t opensm_default_high_limit = 0;
constexpr std::uint8_t opensm_default_high_weight(std::uint8_t vl) {
  return vl == 0 ? 4 : 0;
}
constexpr std::uint8_t opensm_default_low_weight(std::uint8_t vl) {
  return vl == 0 ? 0 : 4;
}
constexpr std::uint8_t opensm_template_entries = 15;

} // namespace

VlArbConfig VlArbConfig::opensm_default(std::uint8_t data_vls) {
  if (!is_valid_data_vls(data_vls))
    throw std::invalid_argument("ib::link::VlArbConfig::opensm_default: data_vls " + std::to_string(data_vls) +
                                ", expected 1, 2, 4, 8 or 15");
  // osm_qos.c (vlarb_update_table_block) ANDs every entry's VL with (1 << (OperationalVLs - 1)) - 1, where the
  // PortInfo code OperationalVLs is 1, 2, 3, 4, 5 for 1, 2, 4, 8, 15 VLs: so the mask is data_vls - 1, or 15.
  // With fewer than 15 VLs the template's entries for VLs >= data_vls therefore fold onto lower VLs instead of
  // being dropped (with 8 VLs, low entry 8:4 becomes 0:4).
  const std::uint8_t vl_mask = data_vls == 15 ? 15 : static_cast<std::uint8_t>(data_vls - 1);
  VlArbConfig config{{}, {}, opensm_default_high_limit, data_vls};
  config.high.reserve(opensm_template_entries);
  config.low.reserve(opensm_template_entries);
  for (std::uint8_t vl = 0; vl < opensm_template_entries; ++vl) {
    const auto masked = static_cast<std::uint8_t>(vl & vl_mask);
    config.high.push_back({masked, opensm_default_high_weight(vl)});
    config.low.push_back({masked, opensm_default_low_weight(vl)});
  }
  return config;
}

std::string validate(const VlArbConfig& config) {
  if (std::string error = check_table(config.high, "high"); !error.empty())
    return error;
  if (std::string error = check_table(config.low, "low"); !error.empty())
    return error;
  if (!is_valid_data_vls(config.data_vls))
    return "data_vls: " + std::to_string(config.data_vls) + ", expected 1, 2, 4, 8 or 15 (IBA 14.2.5.6)";
  return {};
}

VlArbiter::VlArbiter(const VlArbConfig& config) {
  if (std::string error = validate(config); !error.empty())
    throw std::invalid_argument("ib::link::VlArbiter: " + error);
  add_table(high_table, config.high, config.data_vls);
  add_table(low_table, config.low, config.data_vls);
  data_vl_mask_ = static_cast<std::uint16_t>((1u << config.data_vls) - 1);
  // A port with only VL0 has no arbitration tables (VLArbHighCap = LowCap = 0): VL15 first, then VL0 (IBA
  // 7.6.9; OpenSM's vlarb_update skips such ports). Tables given for it are ignored.
  single_data_vl_ = config.data_vls == 1;
  if (config.high_limit == vlarb_high_limit_unbounded)
    high_limit_bytes_ = std::numeric_limits<std::uint64_t>::max();
  else if (config.high_limit == 0)
    high_limit_bytes_ = 1; // "one packet": any high packet reaches the limit
  else
    high_limit_bytes_ = std::uint64_t{config.high_limit} * vlarb_high_limit_unit_bytes;
}

void VlArbiter::add_table(TableIndex t, const std::vector<VlArbEntry>& entries, std::uint8_t data_vls) {
  TableState& table = tables_[t];
  bool uniform = true;
  for (const VlArbEntry& entry : entries) {
    // Weight 0 means skip (IBA 7.6.9). For a VL the port does not operate, the IBA lets the port either skip the
    // entry or send from any VL; we skip.
    if (entry.weight == 0 || entry.vl >= data_vls)
      continue;
    uniform = uniform && (table.size == 0 || entry.weight == entries_[t][0].weight);
    entries_of_vl_[entry.vl][t] |= std::uint64_t{1} << table.size;
    entries_[t][table.size++] = entry;
    table.vl_mask = static_cast<std::uint16_t>(table.vl_mask | (1u << entry.vl));
  }
  table.uniform_weight_bytes = uniform && table.size > 0 ? entries_[t][0].weight * vlarb_weight_unit_bytes : 0;
}

} // namespace ib::link
