// Congestion control as OpenSM configures it (IBA vol 1 Annex A10; opensm/osm_congestion_control.c): its
// opensm.conf options, with OpenSM's names and defaults, turned into the SwitchCongestionSetting every switch gets
// and the CACongestionSetting and CongestionControlTable every CA port gets (models/link/congestion.h). The SM
// sends them once, when it brings the subnet up, before any traffic. Defaults and sources live in
// topologies/hardware/opensm-cc.json (model "cc"); a scenario's subnet_manager sets any of them by the same name.
#pragma once

#include <cstdint>
#include <string>

#include "models/link/congestion.h"
#include "sim/params.h"
#include "sim/profile.h"

namespace ib::sm::cc {

/// OpenSM's congestion control options (opensm.conf), no defaults in code.
struct Params {
  bool congestion_control;            ///< congestion_control: configure CC at all
  std::uint32_t sw_control_map;       ///< cc_sw_cong_setting_control_map: which switch fields are valid
  std::string sw_victim_mask;         ///< cc_sw_cong_setting_victim_mask: 256-bit hex, bit p = port p
  std::string sw_credit_mask;         ///< cc_sw_cong_setting_credit_mask: 256-bit hex
  std::uint32_t sw_threshold;         ///< cc_sw_cong_setting_threshold: 0 none, 1 loose .. 15 aggressive
  std::uint32_t sw_packet_size;       ///< cc_sw_cong_setting_packet_size: 64-byte credits
  std::uint32_t sw_cs_threshold;      ///< cc_sw_cong_setting_credit_starvation_threshold
  std::string sw_cs_return_delay;     ///< cc_sw_cong_setting_credit_starvation_return_delay: "shift:multiplier"
  std::uint32_t sw_marking_rate;      ///< cc_sw_cong_setting_marking_rate
  std::uint32_t ca_port_control;      ///< cc_ca_cong_setting_port_control: bit 0 = 1: per SL, not per QP
  std::uint32_t ca_control_map;       ///< cc_ca_cong_setting_control_map: the SLs configured
  std::uint32_t ca_ccti_timer;        ///< cc_ca_cong_setting_ccti_timer: 1.024 us units
  std::uint32_t ca_ccti_increase;     ///< cc_ca_cong_setting_ccti_increase
  std::uint32_t ca_trigger_threshold; ///< cc_ca_cong_setting_trigger_threshold
  std::uint32_t ca_ccti_min;          ///< cc_ca_cong_setting_ccti_min
  std::string cct;                    ///< cc_cct: "shift:multiplier,..." up to 128 entries; "" none
};
const sim::ParamTable<Params>& param_table();
extern const sim::ProfileModel profile_model;
/// "" if `params` can be configured, else the broken rule, key first.
std::string validate(const Params& params);

/// What every switch is told (SwitchCongestionSetting, fields valid per Control_Map). Preconditions: validate().
link::cc::SwitchSetting switch_setting(const Params& params);
/// What every CA port is told (CACongestionSetting, CongestionControlTable). Preconditions: validate().
link::cc::CaSetting ca_setting(const Params& params);

} // namespace ib::sm::cc
