// OpenSM's congestion control options (models/sm/congestion.h) as the SM turns them into what switches and CAs
// apply, and the A10 arithmetic they use (models/link/congestion.h): the CCTI's rise and timer, the injection
// delay, the switch's threshold.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "models/link/congestion.h"
#include "models/sm/congestion.h"
#include "sim/profile.h"
#include "tests/support/profile_files.h"

namespace {

// Out of line: a table's std::visit inlined into a test body makes GCC 12 warn about alternatives that never run.
[[gnu::noinline]] ib::sm::cc::Params defaults() {
  return sim::read_checked_profile(ib::sm::cc::param_table(), sim::load_profile(sim::profile_path("opensm-cc")), {},
                                   &ib::sm::cc::validate);
}

} // namespace

TEST_CASE("congestion control: OpenSM's defaults configure nothing, and a switch or CA told them does nothing",
          "[sm][congestion]") {
  const ib::sm::cc::Params p = defaults();
  ::testing::check_sources(ib::sm::cc::param_table(), sim::load_profile(sim::profile_path("opensm-cc")));
  CHECK(::testing::profiles_of("cc") == std::set<std::string>{"opensm-cc"});
  CHECK_FALSE(p.congestion_control);
  CHECK(ib::sm::cc::validate(p).empty());
  CHECK_FALSE(ib::sm::cc::switch_setting(p).enabled);
  ib::sm::cc::Params on = p;
  on.congestion_control = true;
  // With every Control_Map bit clear, no field is valid: threshold 0 marks nothing, and no SL is throttled.
  const ib::link::cc::SwitchSetting s = ib::sm::cc::switch_setting(on);
  CHECK(s.enabled);
  CHECK(s.threshold == 0);
  const ib::link::cc::CaSetting ca = ib::sm::cc::ca_setting(on);
  CHECK_FALSE(ca.applies_to(0));
  CHECK(ca.ccti_limit() == 0);
}

TEST_CASE("congestion control: the switch fields count only where Control_Map says they are valid",
          "[sm][congestion]") {
  ib::sm::cc::Params p = defaults();
  p.congestion_control = true;
  p.sw_threshold = 15;
  p.sw_packet_size = 8;
  p.sw_marking_rate = 3;
  p.sw_victim_mask = "0x1FFFFFFFFE";
  p.sw_control_map = 0x4; // threshold and packet size only
  ib::link::cc::SwitchSetting s = ib::sm::cc::switch_setting(p);
  CHECK(s.threshold == 15);
  CHECK(s.packet_size_bytes == 512);
  CHECK(s.marking_rate == 0);
  CHECK(s.victim_mask.none());
  p.sw_control_map = 0x1d;
  s = ib::sm::cc::switch_setting(p);
  CHECK(s.marking_rate == 3);
  CHECK(s.victim_mask.count() == 36); // ports 1..36, as OpenSM reads the hex right-aligned
  CHECK_FALSE(s.victim_mask.test(0));
  CHECK(s.victim_mask.test(36));
  CHECK_FALSE(s.victim_mask.test(37));
}

TEST_CASE("congestion control: cc_cct and the CA settings become the table, timer and limits CAs apply",
          "[sm][congestion]") {
  ib::sm::cc::Params p = defaults();
  p.congestion_control = true;
  p.cct = "0:0,0:1,1:2,3:0x10";
  p.ca_control_map = 0x3;
  p.ca_ccti_timer = 150;
  p.ca_ccti_increase = 2;
  p.ca_ccti_min = 1;
  REQUIRE(ib::sm::cc::validate(p).empty());
  const ib::link::cc::CaSetting ca = ib::sm::cc::ca_setting(p);
  CHECK(ca.ccti_limit() == 3);
  CHECK(ca.table[3].shift == 3);
  CHECK(ca.table[3].multiplier == 16);
  CHECK(ca.ccti_timer == sim::Time::from_ns(153'600)); // 150 x 1.024 us
  CHECK(ca.applies_to(1));
  CHECK_FALSE(ca.applies_to(2));
  CHECK_FALSE(ca.per_sl);
}

TEST_CASE("congestion control: settings it cannot apply are refused with the key and the reason", "[sm][congestion]") {
  ib::sm::cc::Params p = defaults();
  p.cct = "0:0,4:1";
  CHECK(ib::sm::cc::validate(p).starts_with("cc_cct: expected"));
  p.cct = "0:0,0:16384";
  CHECK(ib::sm::cc::validate(p).starts_with("cc_cct: expected"));
  p.cct = "0:0,";
  CHECK(ib::sm::cc::validate(p).starts_with("cc_cct: expected"));
  std::string long_table = "0:0";
  for (int i = 1; i < 129; ++i)
    long_table += ",0:" + std::to_string(i);
  p.cct = long_table;
  CHECK(ib::sm::cc::validate(p).find("at most 128 entries") != std::string::npos);
  p = defaults();
  p.sw_victim_mask = "0xZZ";
  CHECK(ib::sm::cc::validate(p).starts_with("cc_sw_cong_setting_victim_mask: "));
  p = defaults();
  p.sw_control_map = 0x2;
  p.sw_credit_mask = "0x6";
  CHECK(ib::sm::cc::validate(p).find("credit starvation is not modelled") != std::string::npos);
  p = defaults();
  p.ca_control_map = 1;
  p.ca_ccti_min = 2; // beyond CCTI_Limit 0
  CHECK(ib::sm::cc::validate(p).starts_with("cc_ca_cong_setting_ccti_min: "));
}

TEST_CASE("congestion control: the CCTI rises per BECN to its limit and drops one per timer expiry to its minimum",
          "[link][congestion]") {
  ib::link::cc::CaSetting s;
  s.enabled = true;
  s.sl_mask = 1;
  s.table.resize(8);
  s.ccti_increase = 3;
  s.ccti_min = 1;
  s.ccti_timer = sim::Time::from_us(10);
  ib::link::cc::Ccti ccti;
  CHECK(ccti.at(sim::Time::zero(), s) == 1); // never below CCTI_Min
  CHECK(ccti.on_becn(sim::Time::from_us(5), s) == 4);
  CHECK(ccti.on_becn(sim::Time::from_us(6), s) == 7);
  CHECK(ccti.on_becn(sim::Time::from_us(7), s) == 7); // CCTI_Limit: the table's last index
  // The timer runs freely from time zero: it expires at 10, 20, 30 ... us.
  CHECK(ccti.at(sim::Time::from_ps(9'999'999), s) == 7);
  CHECK(ccti.at(sim::Time::from_us(10), s) == 6);
  CHECK(ccti.at(sim::Time::from_us(45), s) == 3); // expiries at 10, 20, 30, 40 us since the BECN at 7 us
  CHECK(ccti.at(sim::Time::from_us(1000), s) == 1);
  s.ccti_timer = sim::Time::zero(); // never decremented
  CHECK(ccti.at(sim::Time::from_us(1000), s) == 7);
}

TEST_CASE("congestion control: the injection delay is (T_packet >> CCT_Shift) x CCT_Multiplier", "[link][congestion]") {
  const sim::Time packet_time = sim::Time::from_ps(331'040); // a 4138-byte packet at 4x EDR
  CHECK(ib::link::cc::injection_delay({0, 0}, packet_time) == sim::Time::zero());
  CHECK(ib::link::cc::injection_delay({0, 3}, packet_time) == sim::Time::from_ps(993'120));
  CHECK(ib::link::cc::injection_delay({2, 5}, packet_time) == sim::Time::from_ps(82'760 * 5));
  // Threshold 15: a sixteenth of a VL's buffer; 1: fifteen sixteenths.
  CHECK(ib::link::cc::congested_bytes(15, 17408) == 1088);
  CHECK(ib::link::cc::congested_bytes(1, 17408) == 16320);
}
