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
  high_ = make_table(config.high, config.data_vls);
  low_ = make_table(config.low, config.data_vls);
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

VlArbiter::Table VlArbiter::make_table(const std::vector<VlArbEntry>& entries, std::uint8_t data_vls) {
  Table table;
  for (const VlArbEntry& entry : entries) {
    // Weight 0 means skip (IBA 7.6.9). For a VL the port does not operate, the IBA lets the port either skip the
    // entry or send from any VL; we skip.
    if (entry.weight == 0 || entry.vl >= data_vls)
      continue;
    table.entries_of_vl[entry.vl] |= std::uint64_t{1} << table.size;
    table.entries[table.size++] = entry;
    table.vl_mask = static_cast<std::uint16_t>(table.vl_mask | (1u << entry.vl));
  }
  return table;
}

namespace {
/// Index of the first set bit of `entries` at or after `position`, wrapping around; `entries` must not be 0.
std::uint8_t first_from(std::uint64_t entries, std::uint8_t position) {
  const std::uint64_t from_position = entries >> position;
  return static_cast<std::uint8_t>(from_position != 0 ? position + std::countr_zero(from_position)
                                                      : std::countr_zero(entries));
}
} // namespace

std::uint8_t VlArbiter::next_entry(const Table& table, std::uint16_t ready) {
  assert((ready & table.vl_mask) != 0);
  // The entry whose turn it is keeps it while its VL is ready (its used weight is always below its weight here:
  // charge() moves on as soon as it is not). If its VL is not ready, the turn passes to the next entry in table
  // order whose VL is ready, and whatever weight the skipped entries had left is forfeited.
  std::uint64_t candidates = 0;
  for (auto vls = static_cast<std::uint16_t>(ready & table.vl_mask); vls != 0;
       vls &= static_cast<std::uint16_t>(vls - 1))
    candidates |= table.entries_of_vl[static_cast<std::size_t>(std::countr_zero(vls))];
  return first_from(candidates, table.position);
}

int VlArbiter::pick(std::uint16_t ready) const {
  if (ready & (1u << management_vl))
    return management_vl;
  ready &= data_vl_mask_;
  if (single_data_vl_)
    return (ready & 1u) ? 0 : -1;
  const auto ready_high = static_cast<std::uint16_t>(ready & high_.vl_mask);
  const auto ready_low = static_cast<std::uint16_t>(ready & low_.vl_mask);
  // High priority goes first until VLHighLimit is reached; then one low packet gets its chance, and if no low VL
  // is ready, high priority simply continues (on_sent then restarts the count). A VL in neither table never sends.
  const bool high = ready_high != 0 && (high_may_send() || ready_low == 0);
  if (!high && ready_low == 0)
    return -1;
  const Table& table = high ? high_ : low_;
  const auto candidates = high ? ready_high : ready_low;
  const std::uint8_t index = next_entry(table, candidates);
  // With one VL ready the entry's VL is known without reading the entry (a cache line fewer per packet).
  chosen_vl_ = (candidates & (candidates - 1)) == 0 ? static_cast<std::uint8_t>(std::countr_zero(candidates))
                                                    : table.entries[index].vl;
  chosen_high_ = high;
  chosen_index_ = index;
  return chosen_vl_;
}

std::uint8_t VlArbiter::find_entry(const Table& table, int vl) {
  // pick() chose the first entry for `vl` at or after the current position: every entry before it had a VL that
  // was not ready, or pick() would have chosen that one. So the entry can be found again without the mask.
  assert(table.entries_of_vl[static_cast<std::size_t>(vl)] != 0 && "on_sent for a VL that pick() did not return");
  return first_from(table.entries_of_vl[static_cast<std::size_t>(vl)], table.position);
}

void VlArbiter::charge(Table& table, std::uint8_t index, std::uint32_t wire_bytes) {
  if (index != table.position) {
    table.position = index;
    table.used_bytes = 0;
  }
  // The weight is charged in exact wire bytes, not rounded up to whole 64-byte credits, and a packet that starts
  // with any weight left completes even if it overruns the weight (packets are never split). The overrun is not
  // carried over to the entry's next turn.
  table.used_bytes += wire_bytes;
  if (table.used_bytes >= std::uint32_t{table.entries[index].weight} * vlarb_weight_unit_bytes) {
    table.position = static_cast<std::uint8_t>(index + 1 == table.size ? 0 : index + 1);
    table.used_bytes = 0;
  }
}

void VlArbiter::on_sent(int vl, std::uint32_t wire_bytes) {
  assert(vl >= 0 && vl <= management_vl);
  assert(wire_bytes > 0);
  // VL15 is outside data arbitration: it touches neither the tables nor the VLHighLimit count.
  if (vl == management_vl || single_data_vl_)
    return;
  const auto bit = static_cast<std::uint16_t>(1u << vl);
  assert((bit & data_vl_mask_) != 0);
  // The usual case: the packet is the one the last pick() chose, whose table and entry it remembered.
  const bool as_chosen = chosen_vl_ == vl;
  chosen_vl_ = no_choice;
  // Otherwise redo pick()'s choice between the tables. A VL listed in both is sent as high priority unless the
  // limit was reached, in which case pick() gave the low table its chance and this VL, being ready, took it.
  const bool in_high = (high_.vl_mask & bit) != 0;
  const bool in_low = (low_.vl_mask & bit) != 0;
  if (!in_high && !in_low) {
    assert(false && "on_sent for a VL in neither table: pick() never returns it");
    return;
  }
  const bool high = as_chosen ? chosen_high_ : in_high && (high_may_send() || !in_low);
  Table& table = high ? high_ : low_;
  charge(table, as_chosen ? chosen_index_ : find_entry(table, vl), wire_bytes);
  if (!high)
    high_sent_bytes_ = 0; // a low packet went: the next high burst may use the whole limit again
  else if (high_may_send())
    high_sent_bytes_ += wire_bytes;
  else
    // The limit was reached but no low VL was ready, so the low table's chance passed unused: the count restarts
    // with this packet. A low VL that becomes ready waits for at most one more limit's worth of high traffic.
    high_sent_bytes_ = wire_bytes;
}

} // namespace ib::link
