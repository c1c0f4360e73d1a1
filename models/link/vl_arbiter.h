// VL arbitration of one IB output port (IBA vol 1 §7.6.9; table format §14.2.5.9, VLHighLimit in PortInfo
// §14.2.5.6): a pure state machine that picks which VL sends the next packet among those the port model reports
// ready (packet at the head and enough credits), by a high- and a low-priority weighted round robin plus the
// high-priority limit. VL15 always goes first. It leaves out flow-control packets (outside data arbitration),
// time, credits and buffers (the port's job), and VLArbHighCap/LowCap (tables are taken as given, up to 64).
#pragma once

#include <array>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ib::link {

/// The management VL: never in an arbitration table, always sent first (IBA §7.6.9).
inline constexpr std::uint8_t management_vl = 15;
/// Entries per table at most: 2 blocks of 32 (IBA §14.2.5.9; ib_vlarb_table_max_entries, OpenSM ib_types.h).
inline constexpr std::size_t vlarb_table_max_entries = 64;
/// Bytes per unit of an entry's weight (IBA §14.2.5.9; ib_vlarb_weight_unit).
inline constexpr std::uint32_t vlarb_weight_unit_bytes = 64;
/// Bytes per unit of VLHighLimit (IBA §14.2.5.6; ib_vlarb_high_limit_unit).
inline constexpr std::uint32_t vlarb_high_limit_unit_bytes = 4096;
/// VLHighLimit value meaning "no limit": low priority may starve (IBA §7.6.9; OpenSM QoS_management_in_OpenSM.txt).
inline constexpr std::uint8_t vlarb_high_limit_unbounded = 255;

/// One (VL, weight) pair of an arbitration table. `weight` is in 64-byte units, 0..255; 0 = skip the entry.
struct VlArbEntry {
  std::uint8_t vl;
  std::uint8_t weight;
};

/// A port's arbitration configuration, as a subnet manager programs it.
struct VlArbConfig {
  std::vector<VlArbEntry> high; ///< high-priority table, up to 64 entries
  std::vector<VlArbEntry> low;  ///< low-priority table, up to 64 entries
  std::uint8_t high_limit;      ///< VLHighLimit, 4096-byte units; 0 = one packet, 255 = unbounded (IBA §7.6.9)
  std::uint8_t data_vls;        ///< operational data VLs (1, 2, 4, 8 or 15); entries for VLs >= data_vls are skipped

  /// What OpenSM 3.3.24 (linux-rdma/opensm fa74b98) programs with QoS on (-Q) and no qos_* options on a port with
  /// `data_vls` operational VLs: its 15-entry default templates (osm_base.h), each entry's VL masked as osm_qos.c
  /// does. A port whose VLArbHighCap/LowCap is below 15 would get only that many entries; not applied here.
  /// Throws std::invalid_argument if `data_vls` is not 1, 2, 4, 8 or 15.
  static VlArbConfig opensm_default(std::uint8_t data_vls);
};

/// "" when `config` is valid, else a message naming the rule it breaks (table longer than 64 entries, a VL >= 15
/// in a table, data_vls not in {1, 2, 4, 8, 15}). The profile loader turns it into a sim::InputError.
std::string validate(const VlArbConfig& config);

/// The arbiter. No allocation after construction; pick() and on_sent() take time independent of the tables' length.
/// Laid out so that a switch output's usual packet (one VL ready, tables whose entries share one weight, as
/// OpenSM's defaults do) reads and writes the arbiter's first cache line only.
class alignas(64) VlArbiter {
public:
  /// Throws std::invalid_argument with validate()'s message if `config` is invalid (validate input first).
  explicit VlArbiter(const VlArbConfig& config);

  /// The VL to send next. Bit v of `ready` set = VL v has a packet at its head that fits the receiver's credits.
  /// VL15 always wins; -1 if no VL may send. Bits of non-operational data VLs are ignored. Changes nothing, so
  /// the caller may ask again (with another mask) when nothing was sent.
  int pick(std::uint16_t ready) const;

  /// Records that the VL returned by the last pick() sent a packet of `wire_bytes` (LRH through VCRC):
  /// advances the entry's used weight, the table position and the VLHighLimit counter. Call it before the next
  /// pick() whose answer is acted on.
  void on_sent(int vl, std::uint32_t wire_bytes);

  /// Starts loading the line a pick() and on_sent() of the usual packet touch.
  void prefetch() const { __builtin_prefetch(this); }

private:
  enum TableIndex : std::uint8_t { high_table = 0, low_table = 1 };
  /// One table's turn and summary. The tables' entries, with weight-0 entries and entries for non-operational
  /// VLs removed (they never hold the turn, so removing them changes no decision), live in entries_.
  struct TableState {
    std::uint8_t size = 0;
    std::uint8_t position = 0;    ///< index of the entry whose turn it is
    std::uint16_t vl_mask = 0;    ///< bit v set = some entry serves VL v
    std::uint32_t used_bytes = 0; ///< bytes the entry at `position` has sent in its current turn
    /// Every entry's weight in bytes if all entries carry one weight, so a charge reads no entry; 0 = they differ.
    std::uint32_t uniform_weight_bytes = 0;
  };

  void add_table(TableIndex t, const std::vector<VlArbEntry>& entries, std::uint8_t data_vls);
  /// Index of the entry of table `t` that sends next among those whose VL is in `ready` (which must meet the
  /// table's vl_mask).
  std::uint8_t next_entry(TableIndex t, std::uint16_t ready) const;
  /// Index of the entry pick() chose for `vl` in table `t`: the first for `vl` at or after the table's position.
  std::uint8_t find_entry(TableIndex t, int vl) const;
  /// Charges `wire_bytes` to the entry of table `t` at `index`, which takes the turn.
  void charge(TableIndex t, std::uint8_t index, std::uint32_t wire_bytes);
  bool high_may_send() const { return high_sent_bytes_ < high_limit_bytes_; }
  /// Counts a packet of `wire_bytes` from the high (or low) table against VLHighLimit.
  void charge_high_limit(bool high, std::uint32_t wire_bytes);

  // First line: what the usual packet touches.
  // What the last pick() chose, so on_sent() need not search the table again: a cache, hence mutable.
  static constexpr std::uint8_t no_choice = 0xff;
  mutable std::uint8_t chosen_vl_ = no_choice;
  mutable std::uint8_t chosen_index_ = 0;
  mutable bool chosen_high_ = false;
  bool single_data_vl_ = false;    ///< one data VL: no tables, VL0 sends whenever ready (IBA §7.6.9)
  std::uint16_t data_vl_mask_ = 0; ///< bit v set = data VL v is operational
  std::array<TableState, 2> tables_{};
  std::uint64_t high_limit_bytes_ = 0; ///< high-priority bytes allowed before a low packet's chance
  std::uint64_t high_sent_bytes_ = 0;  ///< high-priority bytes since the last low-priority chance
  /// [v][t]: bit i set = entry i of table t serves VL v, so the next entry for a set of VLs is a bit scan. VL0's
  /// pair ends the first line.
  std::array<std::array<std::uint64_t, 2>, management_vl> entries_of_vl_{};
  // Read only when several VLs are ready or weights differ.
  std::array<std::array<VlArbEntry, vlarb_table_max_entries>, 2> entries_{};

  friend struct VlArbiterLayout;
};

// Per packet, inline: a switch output picks and charges once for every packet it sends.

/// Index of the first set bit of `entries` at or after `position`, wrapping around; `entries` must not be 0.
inline std::uint8_t vlarb_first_from(std::uint64_t entries, std::uint8_t position) {
  const std::uint64_t from_position = entries >> position;
  return static_cast<std::uint8_t>(from_position != 0 ? position + std::countr_zero(from_position)
                                                      : std::countr_zero(entries));
}
inline std::uint8_t VlArbiter::next_entry(TableIndex t, std::uint16_t ready) const {
  assert((ready & tables_[t].vl_mask) != 0);
  // The entry whose turn it is keeps it while its VL is ready (its used weight is always below its weight here:
  // charge() moves on as soon as it is not). If its VL is not ready, the turn passes to the next entry in table
  // order whose VL is ready, and whatever weight the skipped entries had left is forfeited.
  std::uint64_t candidates = 0;
  for (auto vls = static_cast<std::uint16_t>(ready & tables_[t].vl_mask); vls != 0;
       vls &= static_cast<std::uint16_t>(vls - 1))
    candidates |= entries_of_vl_[static_cast<std::size_t>(std::countr_zero(vls))][t];
  return vlarb_first_from(candidates, tables_[t].position);
}

inline int VlArbiter::pick(std::uint16_t ready) const {
  if (ready & (1u << management_vl))
    return management_vl;
  ready &= data_vl_mask_;
  if (single_data_vl_)
    return (ready & 1u) ? 0 : -1;
  const auto ready_high = static_cast<std::uint16_t>(ready & tables_[high_table].vl_mask);
  const auto ready_low = static_cast<std::uint16_t>(ready & tables_[low_table].vl_mask);
  // High priority goes first until VLHighLimit is reached; then one low packet gets its chance, and if no low VL
  // is ready, high priority simply continues (on_sent then restarts the count). A VL in neither table never sends.
  const bool high = ready_high != 0 && (high_may_send() || ready_low == 0);
  if (!high && ready_low == 0)
    return -1;
  const TableIndex t = high ? high_table : low_table;
  const auto candidates = high ? ready_high : ready_low;
  const std::uint8_t index = next_entry(t, candidates);
  // With one VL ready the entry's VL is known without reading the entry.
  chosen_vl_ = (candidates & (candidates - 1)) == 0 ? static_cast<std::uint8_t>(std::countr_zero(candidates))
                                                    : entries_[t][index].vl;
  chosen_high_ = high;
  chosen_index_ = index;
  return chosen_vl_;
}

inline std::uint8_t VlArbiter::find_entry(TableIndex t, int vl) const {
  // pick() chose the first entry for `vl` at or after the current position: every entry before it had a VL that
  // was not ready, or pick() would have chosen that one. So the entry can be found again without the mask.
  const std::uint64_t entries = entries_of_vl_[static_cast<std::size_t>(vl)][t];
  assert(entries != 0 && "on_sent for a VL that pick() did not return");
  return vlarb_first_from(entries, tables_[t].position);
}

inline void VlArbiter::charge(TableIndex t, std::uint8_t index, std::uint32_t wire_bytes) {
  TableState& table = tables_[t];
  if (index != table.position) {
    table.position = index;
    table.used_bytes = 0;
  }
  // The weight is charged in exact wire bytes, not rounded up to whole 64-byte credits, and a packet that starts
  // with any weight left completes even if it overruns the weight (packets are never split). The overrun is not
  // carried over to the entry's next turn.
  table.used_bytes += wire_bytes;
  const std::uint32_t weight_bytes = table.uniform_weight_bytes != 0
                                         ? table.uniform_weight_bytes
                                         : std::uint32_t{entries_[t][index].weight} * vlarb_weight_unit_bytes;
  if (table.used_bytes >= weight_bytes) {
    table.position = static_cast<std::uint8_t>(index + 1 == table.size ? 0 : index + 1);
    table.used_bytes = 0;
  }
}

inline void VlArbiter::on_sent(int vl, std::uint32_t wire_bytes) {
  assert(vl >= 0 && vl <= management_vl);
  assert(wire_bytes > 0);
  // VL15 is outside data arbitration: it touches neither the tables nor the VLHighLimit count.
  if (vl == management_vl || single_data_vl_)
    return;
  const auto bit = static_cast<std::uint16_t>(1u << vl);
  assert((bit & data_vl_mask_) != 0);
  // The usual case: the packet is the one the last pick() chose, whose table and entry it remembered.
  if (chosen_vl_ == vl) {
    chosen_vl_ = no_choice;
    charge_high_limit(chosen_high_, wire_bytes);
    charge(chosen_high_ ? high_table : low_table, chosen_index_, wire_bytes);
    return;
  }
  // Otherwise redo pick()'s choice between the tables. A VL listed in both is sent as high priority unless the
  // limit was reached, in which case pick() gave the low table its chance and this VL, being ready, took it.
  const bool in_high = (tables_[high_table].vl_mask & bit) != 0;
  const bool in_low = (tables_[low_table].vl_mask & bit) != 0;
  if (!in_high && !in_low) {
    assert(false && "on_sent for a VL in neither table: pick() never returns it");
    return;
  }
  const bool high = in_high && (high_may_send() || !in_low);
  const TableIndex t = high ? high_table : low_table;
  charge_high_limit(high, wire_bytes);
  charge(t, find_entry(t, vl), wire_bytes);
}

inline void VlArbiter::charge_high_limit(bool high, std::uint32_t wire_bytes) {
  if (!high)
    high_sent_bytes_ = 0; // a low packet went: the next high burst may use the whole limit again
  else if (high_may_send())
    high_sent_bytes_ += wire_bytes;
  else
    // The limit was reached but no low VL was ready, so the low table's chance passed unused: the count restarts
    // with this packet. A low VL that becomes ready waits for at most one more limit's worth of high traffic.
    high_sent_bytes_ = wire_bytes;
}

/// The layout the class comment promises, checked where the members are visible.
struct VlArbiterLayout {
  static_assert(offsetof(VlArbiter, entries_of_vl_) + sizeof(VlArbiter::entries_of_vl_[0]) <= 64,
                "the usual packet's arbitration state (scalars and VL0's entry masks) fits one cache line");
};

} // namespace ib::link
