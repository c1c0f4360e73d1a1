// InfiniBand congestion control (IBA vol 1 Annex A10) as the fabric's nodes apply it, in the terms of the MADs the
// subnet manager sends them (models/sm/congestion.h reads OpenSM's options into these). A switch port that is
// the root of congestion marks packets with FECN (SwitchCongestionSetting); the destination CA returns a BECN
// (in the ACK of an RC packet, or a CNP); the source CA raises its congestion control table index (CCTI) by
// CCTI_Increase per BECN, lowers it by one each CCTI_Timer, and delays injection by the table's entry at the
// index: (T_packet >> CCT_Shift) x CCT_Multiplier after each packet of the throttled QP or SL (CACongestionSetting,
// CongestionControlTable). docs/models/congestion-control.md has the model and its sources.
#pragma once

#include <algorithm>
#include <array>
#include <bitset>
#include <cstdint>
#include <vector>

#include "sim/time.h"

namespace ib::link::cc {

/// SwitchCongestionSetting as a switch applies it (A10.4.3.6): only fields whose Control_Map bit is set count.
struct SwitchSetting {
  bool enabled = false;                ///< the SM configured congestion control at all
  std::bitset<256> victim_mask;        ///< bit p: port p marks even when it is a victim of congestion, not its root
  std::uint8_t threshold = 0;          ///< 0: no marking; 1 (loose) .. 15 (aggressive)
  std::uint32_t packet_size_bytes = 0; ///< packets smaller than this are never marked
  std::uint16_t marking_rate = 0;      ///< eligible packets left unmarked between two marked ones
};

/// The bytes waiting in a switch for one output VL (behind the packet leaving) at which it counts as congested, for
/// `threshold` 1..15: the detector is implementation-defined (A10 gives only "0 none, 1 loose .. 15 aggressive"),
/// so ours steps through one VL's input buffer in sixteenths: 15 is a sixteenth of it, 1 fifteen sixteenths.
constexpr std::uint64_t congested_bytes(std::uint8_t threshold, std::uint64_t vl_buffer_bytes) {
  return vl_buffer_bytes * (16u - threshold) / 16u;
}

/// One CongestionControlTable entry (A10.4.3.9): the injection rate delay is (T_packet >> shift) x multiplier.
struct CctEntry {
  std::uint8_t shift = 0;       ///< CCT_Shift, 0..3
  std::uint16_t multiplier = 0; ///< CCT_Multiplier, 0..16383
};

/// The delay a throttled flow leaves after a packet that took `packet_time` to serialize at its port's rate.
inline sim::Time injection_delay(const CctEntry& entry, sim::Time packet_time) {
  return sim::Time::from_ps((packet_time.ps() >> entry.shift) * entry.multiplier);
}

/// CACongestionSetting and the CongestionControlTable as a CA applies them (A10.4.3.8, A10.4.3.9).
struct CaSetting {
  bool enabled = false;
  bool per_sl = false;       ///< Port_Control bit 0: the CCTI is kept per SL of the port, not per QP
  std::uint16_t sl_mask = 0; ///< SLs the SM configured (Control_Map); the others are never throttled
  sim::Time ccti_timer;      ///< CCTI_Timer x 1.024 us: the CCTI drops by one each period (zero: never)
  std::uint16_t ccti_increase = 0;
  std::uint16_t ccti_min = 0;
  std::uint16_t trigger_threshold = 0; ///< the CA logs an event when the CCTI reaches it (counted)
  std::vector<CctEntry> table;         ///< index 0..CCTI_Limit
  std::uint16_t ccti_limit() const { return table.empty() ? 0 : static_cast<std::uint16_t>(table.size() - 1); }
  bool applies_to(std::uint8_t sl) const { return enabled && (sl_mask >> (sl & 15u) & 1u) != 0; }
};

/// A flow's CCTI (a QP's or an SL's). The CCTI_Timer runs freely from time zero, so the index at any instant
/// follows from the last BECN without an event per expiry.
class Ccti {
public:
  /// The index at `now`: the value after the last BECN, less the timer expiries since, not below CCTI_Min.
  std::uint16_t at(sim::Time now, const CaSetting& s) const {
    if (value_ <= s.ccti_min || s.ccti_timer == sim::Time::zero())
      return std::max(value_, s.ccti_min);
    const std::int64_t expiries = now.ps() / s.ccti_timer.ps() - changed_at_.ps() / s.ccti_timer.ps();
    return static_cast<std::uint16_t>(std::max<std::int64_t>(s.ccti_min, value_ - expiries));
  }
  /// A BECN arrived at `now`: the index rises by CCTI_Increase, up to CCTI_Limit. Returns the new index.
  std::uint16_t on_becn(sim::Time now, const CaSetting& s) {
    value_ = static_cast<std::uint16_t>(std::min<std::uint32_t>(at(now, s) + s.ccti_increase, s.ccti_limit()));
    changed_at_ = now;
    return value_;
  }

  /// For traces: whether `index` differs from the value last reported, which it becomes (the CCTI's counter track
  /// shows each change at the moment the flow acts on it, its decay included).
  bool changed_since_traced(std::uint16_t index) {
    if (index == traced_)
      return false;
    traced_ = index;
    return true;
  }

private:
  std::uint16_t value_ = 0;
  std::uint16_t traced_ = 0; // in the padding before changed_at_
  sim::Time changed_at_;
};

/// What a CA counts of congestion control (per host; totals in the report).
struct CaCounters {
  std::uint64_t fecn_received = 0;     ///< data packets that arrived marked
  std::uint64_t becn_sent = 0;         ///< ACKs with BECN, and CNPs, sent back
  std::uint64_t becn_received = 0;     ///< BECNs that raised a CCTI
  std::uint64_t trigger_events = 0;    ///< a CCTI reached Trigger_Threshold (the CA's cyclic event log)
  std::uint64_t throttled_packets = 0; ///< packets followed by a non-zero injection delay
  sim::Time throttled_time;            ///< the sum of those delays
  std::uint16_t max_ccti = 0;          ///< the highest CCTI any flow reached
  /// Totals over CAs (the highest CCTI is the highest of theirs).
  CaCounters& operator+=(const CaCounters& o) {
    fecn_received += o.fecn_received;
    becn_sent += o.becn_sent;
    becn_received += o.becn_received;
    trigger_events += o.trigger_events;
    throttled_packets += o.throttled_packets;
    throttled_time += o.throttled_time;
    max_ccti = std::max(max_ccti, o.max_ccti);
    return *this;
  }
};

} // namespace ib::link::cc
