// The parameter table of STYLE rule 15. Each model's Params is a plain aggregate with no defaults in code; one
// ParamTable next to it lists each field once (JSON key with its unit, member, unit, meaning, range), and that
// table drives parsing and validation, --set overrides (applied to the JSON before reading), the configuration
// digest (to_json) and the `ibnetsim params MODEL` listing (describe). Defaults live in profile files
// (docs/scenario-reference.md).
#pragma once

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/json_reader.h"
#include "sim/time.h"

namespace sim {

/// What kind of value a field holds, from its member's type: integer (uint32, uint64, int64), number (double),
/// duration (Time), flag (bool) or text (std::string).
enum class ParamType { integer, number, duration, flag, text };

/// One row of a parameter table.
template <class P>
struct ParamField {
  /// JSON key carrying its unit: "lookahead_ns", "lp_count", "remote_fraction". A Time member's key must end in
  /// _ps, _ns, _us, _ms or _s, which sets the unit of its JSON value.
  std::string_view key;
  std::variant<std::uint32_t P::*, std::uint64_t P::*, std::int64_t P::*, double P::*, bool P::*, Time P::*,
               std::string P::*>
      member;
  /// Printable unit: "ns", "count", "bytes", "fraction", "Gb/s", "bool", "text".
  std::string_view unit;
  /// One line saying what the parameter is.
  std::string_view meaning;
  /// Inclusive range; for Time members in the key's unit. Integer members are further clamped to their type, so
  /// a uint32 member never takes a value above 4294967295. Ignored for bool and string members.
  double min;
  double max;
};

namespace param_detail {

/// The shortest text that reads back as `d`.
inline std::string format_number(double d) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, result.ptr);
}

/// [min, max] of a table row as a range of integer type T: rounded inwards and clamped to T.
template <class T>
std::pair<T, T> integer_bounds(double min, double max) {
  // T's lowest is exact as a double; T's highest rounds up to 2^bits for 64 bits, and every double below that
  // converts to T without overflow.
  const double lowest = static_cast<double>(std::numeric_limits<T>::min());
  const double highest = static_cast<double>(std::numeric_limits<T>::max());
  const auto clamp = [&](double v) {
    return v <= lowest    ? std::numeric_limits<T>::min()
           : v >= highest ? std::numeric_limits<T>::max()
                          : static_cast<T>(v);
  };
  return {clamp(std::ceil(min)), clamp(std::floor(max))};
}

/// `value` in the unit of duration `key` as a Time, rounded to the picosecond and clamped to Time's range.
inline Time duration_bound(double value, std::string_view key) {
  const double ps = value * static_cast<double>(duration_unit_ps(key));
  // 2^63 exactly; anything at or beyond it saturates.
  constexpr double limit = 9223372036854775808.0;
  if (ps >= limit) {
    return Time::max();
  }
  if (ps <= -limit) {
    return Time::from_ps(std::numeric_limits<std::int64_t>::min());
  }
  return Time::from_ps(std::llround(ps));
}

template <class T>
std::string bounds_text(const T& lo, const T& hi, const T& lowest, const T& highest, std::string (*show)(const T&)) {
  // Built by appending: GCC 12 warns falsely (-Wrestrict, bug 105329) on "literal" + std::string here.
  std::string text;
  if (lo > lowest && hi < highest) {
    text = "[";
    text += show(lo);
    text += ", ";
    text += show(hi);
    text += ']';
  } else if (lo > lowest) {
    text = ">= ";
    text += show(lo);
  } else if (hi < highest) {
    text = "<= ";
    text += show(hi);
  } else {
    text = "any";
  }
  return text;
}

template <class T>
std::string show_integer(const T& v) {
  return std::to_string(v);
}

inline std::string show_number(const double& v) {
  return format_number(v);
}

} // namespace param_detail

/// The type of value a field holds.
template <class P>
ParamType param_type(const ParamField<P>& field) {
  constexpr ParamType by_index[] = {ParamType::integer, ParamType::integer,  ParamType::integer, ParamType::number,
                                    ParamType::flag,    ParamType::duration, ParamType::text};
  return by_index[field.member.index()];
}

/// The parameter table of one model: reads, checks, writes and lists its Params.
template <class P>
class ParamTable {
public:
  /// A malformed table (duplicate key, Time key without a unit suffix, min above max) is a programming bug.
  ParamTable(std::string_view model, std::vector<ParamField<P>> fields) : model_(model), fields_(std::move(fields)) {
    for (std::size_t i = 0; i < fields_.size(); ++i) {
      [[maybe_unused]] const ParamField<P>& f = fields_[i];
      assert(!f.key.empty() && !f.unit.empty() && !f.meaning.empty());
      assert((param_type(f) != ParamType::duration || duration_unit_ps(f.key) > 0) && "Time key needs a unit suffix");
      assert(f.min <= f.max);
      for (std::size_t j = 0; j < i; ++j) {
        assert(fields_[j].key != f.key && "duplicate key in parameter table");
      }
    }
  }

  std::string_view model() const { return model_; }
  const std::vector<ParamField<P>>& fields() const { return fields_; }

  /// Reads every field as required (defaults were merged in from profiles, so a missing key is an error) and
  /// checks its range. Does not call reader.finish(): the caller may read more keys.
  P read(JsonObjectReader& reader) const {
    P params{};
    for (const ParamField<P>& f : fields_) {
      read_field(reader, f, params, true);
    }
    return params;
  }

  /// Reads only the fields present into `into`, with the same checks (to layer overrides over a profile). Absent
  /// fields still count as known keys for reader.finish().
  void read_present(JsonObjectReader& reader, P& into) const {
    for (const ParamField<P>& f : fields_) {
      read_field(reader, f, into, false);
    }
  }

  /// Every field by key, in the key's unit (a Time is an integer when it is a whole number of that unit, else the
  /// exact decimal). read() of the result gives `params` back. For the configuration digest and reports.
  nlohmann::json to_json(const P& params) const {
    nlohmann::json out = nlohmann::json::object();
    for (const ParamField<P>& f : fields_) {
      std::visit([&](auto member) { out[std::string(f.key)] = value_json(f.key, params.*member); }, f.member);
    }
    return out;
  }

  /// The listing for `ibnetsim params MODEL`: a title line, then aligned columns key, unit, range, meaning.
  std::string describe() const {
    std::vector<std::vector<std::string>> rows = {{"key", "unit", "range", "meaning"}};
    for (const ParamField<P>& f : fields_) {
      rows.push_back({std::string(f.key), std::string(f.unit), range_text(f), std::string(f.meaning)});
    }
    std::size_t widths[3] = {0, 0, 0};
    for (const auto& row : rows) {
      for (std::size_t c = 0; c < 3; ++c) {
        widths[c] = std::max(widths[c], row[c].size());
      }
    }
    std::string text = "parameters of " + std::string(model_) + ":\n";
    for (const auto& row : rows) {
      text += "  ";
      for (std::size_t c = 0; c < 3; ++c) {
        text += row[c] + std::string(widths[c] - row[c].size() + 2, ' ');
      }
      text += row[3] + "\n";
    }
    return text;
  }

private:
  /// Whether P can hold a member of type T at all. std::visit compiles the reader for every member type; skipping
  /// those larger than P (a std::string in the 8-byte cable Params) spares GCC 12 a false -Warray-bounds on code
  /// that can never run.
  template <class T>
  static constexpr bool fits_in = sizeof(T) <= sizeof(P);

  static void read_field(JsonObjectReader& reader, const ParamField<P>& f, P& into, bool required) {
    std::visit(
        [&](auto member) {
          using T = std::remove_cvref_t<decltype(into.*member)>;
          if constexpr (fits_in<T>) {
            if (auto v = read_value<T>(reader, f, required)) {
              into.*member = std::move(*v);
            }
          }
        },
        f.member);
  }

  /// The value under f.key as a T, range-checked; nullopt when absent and not required.
  template <class T>
  static std::optional<T> read_value(JsonObjectReader& reader, const ParamField<P>& f, bool required) {
    if constexpr (std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t>) {
      const auto [lo, hi] = param_detail::integer_bounds<T>(f.min, f.max);
      const auto v =
          required ? std::optional(reader.required_uint(f.key, lo, hi)) : reader.optional_uint(f.key, lo, hi);
      return v ? std::optional<T>(static_cast<T>(*v)) : std::nullopt;
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      const auto [lo, hi] = param_detail::integer_bounds<T>(f.min, f.max);
      return required ? std::optional(reader.required_int(f.key, lo, hi)) : reader.optional_int(f.key, lo, hi);
    } else if constexpr (std::is_same_v<T, double>) {
      return required ? std::optional(reader.required_double(f.key, f.min, f.max))
                      : reader.optional_double(f.key, f.min, f.max);
    } else if constexpr (std::is_same_v<T, bool>) {
      return required ? std::optional(reader.required_bool(f.key)) : reader.optional_bool(f.key);
    } else if constexpr (std::is_same_v<T, Time>) {
      const Time lo = param_detail::duration_bound(f.min, f.key);
      const Time hi = param_detail::duration_bound(f.max, f.key);
      return required ? std::optional(reader.required_duration(f.key, lo, hi))
                      : reader.optional_duration(f.key, lo, hi);
    } else {
      static_assert(std::is_same_v<T, std::string>);
      return required ? std::optional(reader.required_string(f.key)) : reader.optional_string(f.key);
    }
  }

  template <class T>
  static nlohmann::json value_json(std::string_view key, const T& value) {
    if constexpr (std::is_same_v<T, Time>) {
      const std::int64_t unit_ps = std::max<std::int64_t>(duration_unit_ps(key), 1);
      if (value.ps() % unit_ps == 0) {
        return value.ps() / unit_ps;
      }
      // The nearest double to the exact decimal, whose shortest text is that decimal again for up to 15
      // significant digits, which is what the reader turns back into the same picoseconds.
      const std::string exact = format_duration(value, key);
      double d = 0;
      std::from_chars(exact.data(), exact.data() + exact.size(), d);
      return d;
    } else {
      return value;
    }
  }

  static std::string range_text(const ParamField<P>& f) {
    using namespace param_detail;
    switch (f.member.index()) {
    case 0: {
      const auto [lo, hi] = integer_bounds<std::uint32_t>(f.min, f.max);
      // Bounded by the type, so always shown as a closed range, as the reader's errors do.
      return bounds_text<std::uint64_t>(lo, hi, 0, std::numeric_limits<std::uint64_t>::max(),
                                        show_integer<std::uint64_t>);
    }
    case 1: {
      const auto [lo, hi] = integer_bounds<std::uint64_t>(f.min, f.max);
      return bounds_text<std::uint64_t>(lo, hi, 0, std::numeric_limits<std::uint64_t>::max(),
                                        show_integer<std::uint64_t>);
    }
    case 2: {
      const auto [lo, hi] = integer_bounds<std::int64_t>(f.min, f.max);
      return bounds_text<std::int64_t>(lo, hi, std::numeric_limits<std::int64_t>::min(),
                                       std::numeric_limits<std::int64_t>::max(), show_integer<std::int64_t>);
    }
    case 3:
      return bounds_text<double>(f.min, f.max, std::numeric_limits<double>::lowest(),
                                 std::numeric_limits<double>::max(), show_number);
    case 4:
      return "true or false";
    case 5: {
      const Time lo = duration_bound(f.min, f.key);
      const Time hi = duration_bound(f.max, f.key);
      const std::string key(f.key);
      const auto lowest = Time::from_ps(std::numeric_limits<std::int64_t>::min());
      if (lo > lowest && hi < Time::max()) {
        return "[" + format_duration(lo, key) + ", " + format_duration(hi, key) + "]";
      }
      return lo > lowest        ? ">= " + format_duration(lo, key)
             : hi < Time::max() ? "<= " + format_duration(hi, key)
                                : "any";
    }
    default:
      return "non-empty";
    }
  }

  std::string model_;
  std::vector<ParamField<P>> fields_;
};

} // namespace sim
