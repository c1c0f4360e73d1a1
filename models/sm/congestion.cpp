#include "models/sm/congestion.h"

#include <charconv>
#include <optional>
#include <string_view>
#include <vector>

namespace ib::sm::cc {

namespace {

constexpr std::size_t max_cct_entries = 128; // OpenSM's OSM_CCT_ENTRY_MAX (include/opensm/osm_subnet.h)
constexpr std::uint32_t map_victim_mask = 1u << 0, map_credit_mask = 1u << 1, map_threshold = 1u << 2,
                        map_credit_starvation = 1u << 3, map_marking_rate = 1u << 4;

/// A 256-bit mask as OpenSM reads it (opts_parse_256bit): hex digits, optional 0x, right-aligned (the last digit
/// holds bits 3..0). nullopt when malformed.
std::optional<std::bitset<256>> parse_mask(std::string_view text) {
  if (text.starts_with("0x") || text.starts_with("0X"))
    text.remove_prefix(2);
  if (text.empty() || text.size() > 64)
    return std::nullopt;
  std::bitset<256> mask;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[text.size() - 1 - i];
    unsigned digit = 0;
    if (c >= '0' && c <= '9')
      digit = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f')
      digit = static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      digit = static_cast<unsigned>(c - 'A' + 10);
    else
      return std::nullopt;
    for (unsigned b = 0; b < 4; ++b)
      mask[i * 4 + b] = (digit >> b & 1u) != 0;
  }
  return mask;
}

/// One "shift:multiplier" entry (decimal or 0x hex, as strtoul base 0 reads them), or nullopt.
std::optional<link::cc::CctEntry> parse_entry(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos)
    return std::nullopt;
  const auto number = [](std::string_view s) -> std::optional<std::uint32_t> {
    int base = 10;
    if (s.starts_with("0x") || s.starts_with("0X")) {
      s.remove_prefix(2);
      base = 16;
    }
    std::uint32_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size())
      return std::nullopt;
    return v;
  };
  const auto shift = number(text.substr(0, colon)), multiplier = number(text.substr(colon + 1));
  if (!shift || !multiplier || *shift > 3 || *multiplier > 16383)
    return std::nullopt;
  return link::cc::CctEntry{static_cast<std::uint8_t>(*shift), static_cast<std::uint16_t>(*multiplier)};
}

/// cc_cct as OpenSM splits it (comma-separated entries); "" is an empty table. On error, `problem` says why.
std::vector<link::cc::CctEntry> parse_cct(std::string_view text, std::string& problem) {
  std::vector<link::cc::CctEntry> table;
  if (text.empty())
    return table;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    const auto entry = parse_entry(item);
    if (!entry) {
      problem = "cc_cct: expected comma-separated \"shift:multiplier\" entries (shift 0..3, multiplier 0..16383), "
                "got \"" +
                std::string(item) + "\" as entry " + std::to_string(table.size());
      return {};
    }
    table.push_back(*entry);
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  if (table.size() > max_cct_entries)
    problem = "cc_cct: expected at most 128 entries (OpenSM's OSM_CCT_ENTRY_MAX), got " + std::to_string(table.size());
  return table;
}

} // namespace

const sim::ParamTable<Params>& param_table() {
  static const sim::ParamTable<Params> table(
      "cc",
      {
          {"congestion_control", &Params::congestion_control, "bool",
           "the SM configures congestion control on every switch and CA (opensm.conf congestion_control)", 0, 1},
          {"cc_sw_cong_setting_control_map", &Params::sw_control_map, "bitmask",
           "switch fields that are valid: bit 0 victim mask, 1 credit mask, 2 threshold and packet size, 3 credit "
           "starvation, 4 marking rate",
           0, 31},
          {"cc_sw_cong_setting_victim_mask", &Params::sw_victim_mask, "hex",
           "256-bit mask of switch ports that mark FECN even as victims of congestion, not only as its root", 0, 0},
          {"cc_sw_cong_setting_credit_mask", &Params::sw_credit_mask, "hex",
           "256-bit mask of switch ports that apply credit starvation (not modelled: must be 0 when valid)", 0, 0},
          {"cc_sw_cong_setting_threshold", &Params::sw_threshold, "level",
           "how aggressively switches mark: 0 none, 1 loose .. 15 aggressive", 0, 15},
          {"cc_sw_cong_setting_packet_size", &Params::sw_packet_size, "credits",
           "packets smaller than this many 64-byte credits are never marked", 0, 255},
          {"cc_sw_cong_setting_credit_starvation_threshold", &Params::sw_cs_threshold, "level",
           "credit starvation threshold (not modelled: must be 0 when valid)", 0, 15},
          {"cc_sw_cong_setting_credit_starvation_return_delay", &Params::sw_cs_return_delay, "shift:multiplier",
           "credit starvation return delay (not modelled)", 0, 0},
          {"cc_sw_cong_setting_marking_rate", &Params::sw_marking_rate, "packets",
           "eligible packets left unmarked between two marked ones", 0, 65535},
          {"cc_ca_cong_setting_port_control", &Params::ca_port_control, "bitmask",
           "bit 0: 0 = a CCTI per QP, 1 = a CCTI per SL of the port", 0, 1},
          {"cc_ca_cong_setting_control_map", &Params::ca_control_map, "bitmask",
           "the SLs whose CA settings are configured (bit s: SL s); the others are never throttled", 0, 65535},
          {"cc_ca_cong_setting_ccti_timer", &Params::ca_ccti_timer, "1.024 us",
           "every configured SL: the CCTI drops by one each this many 1.024 us (0: never)", 0, 65535},
          {"cc_ca_cong_setting_ccti_increase", &Params::ca_ccti_increase, "count",
           "every configured SL: added to the CCTI per BECN", 0, 255},
          {"cc_ca_cong_setting_trigger_threshold", &Params::ca_trigger_threshold, "count",
           "every configured SL: a CCTI reaching it logs an event (counted)", 0, 255},
          {"cc_ca_cong_setting_ccti_min", &Params::ca_ccti_min, "count",
           "every configured SL: the lowest CCTI, a floor on the injection delay", 0, 255},
          {"cc_cct", &Params::cct, "shift:multiplier,...",
           "the CongestionControlTable, CCTI 0 first, up to 128 entries (CCTI_Limit is the last index)", 0, 0},
      });
  return table;
}

std::string validate(const Params& p) {
  if (!parse_mask(p.sw_victim_mask))
    return "cc_sw_cong_setting_victim_mask: expected up to 64 hex digits (256 bits, optional 0x), got \"" +
           p.sw_victim_mask + "\"";
  const auto credit_mask = parse_mask(p.sw_credit_mask);
  if (!credit_mask)
    return "cc_sw_cong_setting_credit_mask: expected up to 64 hex digits (256 bits, optional 0x), got \"" +
           p.sw_credit_mask + "\"";
  if (!parse_entry(p.sw_cs_return_delay))
    return "cc_sw_cong_setting_credit_starvation_return_delay: expected \"shift:multiplier\" (shift 0..3, "
           "multiplier 0..16383), got \"" +
           p.sw_cs_return_delay + "\"";
  // Credit starvation (A10.2.1.2) is not modelled: refused rather than silently ignored.
  if ((p.sw_control_map & map_credit_mask) != 0 && credit_mask->any())
    return "cc_sw_cong_setting_credit_mask: expected 0 (credit starvation is not modelled), got \"" + p.sw_credit_mask +
           "\"";
  if ((p.sw_control_map & map_credit_starvation) != 0 && p.sw_cs_threshold != 0)
    return "cc_sw_cong_setting_credit_starvation_threshold: expected 0 (credit starvation is not modelled), got " +
           std::to_string(p.sw_cs_threshold);
  std::string problem;
  const std::vector<link::cc::CctEntry> table = parse_cct(p.cct, problem);
  if (!problem.empty())
    return problem;
  const std::size_t limit = table.empty() ? 0 : table.size() - 1;
  if (p.ca_control_map != 0 && p.ca_ccti_min > limit)
    return "cc_ca_cong_setting_ccti_min: expected at most CCTI_Limit, the last index of cc_cct (" +
           std::to_string(limit) + "), got " + std::to_string(p.ca_ccti_min);
  return "";
}

link::cc::SwitchSetting switch_setting(const Params& p) {
  link::cc::SwitchSetting s;
  s.enabled = p.congestion_control;
  if (!s.enabled)
    return s;
  if ((p.sw_control_map & map_victim_mask) != 0)
    s.victim_mask = *parse_mask(p.sw_victim_mask);
  if ((p.sw_control_map & map_threshold) != 0) {
    s.threshold = static_cast<std::uint8_t>(p.sw_threshold);
    s.packet_size_bytes = p.sw_packet_size * 64;
  }
  if ((p.sw_control_map & map_marking_rate) != 0)
    s.marking_rate = static_cast<std::uint16_t>(p.sw_marking_rate);
  return s;
}

link::cc::CaSetting ca_setting(const Params& p) {
  link::cc::CaSetting s;
  s.enabled = p.congestion_control;
  if (!s.enabled)
    return s;
  std::string problem;
  s.table = parse_cct(p.cct, problem);
  s.per_sl = (p.ca_port_control & 1u) != 0;
  s.sl_mask = static_cast<std::uint16_t>(p.ca_control_map);
  s.ccti_timer = sim::Time::from_ps(static_cast<std::int64_t>(p.ca_ccti_timer) * 1'024'000);
  s.ccti_increase = static_cast<std::uint16_t>(p.ca_ccti_increase);
  s.ccti_min = static_cast<std::uint16_t>(p.ca_ccti_min);
  s.trigger_threshold = static_cast<std::uint16_t>(p.ca_trigger_threshold);
  return s;
}

const sim::ProfileModel profile_model = sim::profile_model<Params, &param_table, &validate>(
    "cc", "congestion control: OpenSM's cc_* options for switches and CAs (models/sm/congestion.h, IBA A10)");

} // namespace ib::sm::cc
