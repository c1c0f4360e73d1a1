// Strict JSON reading for every loader: topologies, scenarios and hardware profiles (docs/development.md
// "Conventions"). Every failure is a sim::InputError naming the file, the RFC 6901 pointer of the offending value, what
// was expected and what was found. Unknown keys are errors: a JsonObjectReader remembers the keys it was asked about
// and finish() rejects any other. Duplicate keys are parse errors. Nothing here supplies a default: defaults come from
// profile files, merged in before reading.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/time.h"

namespace sim {

/// A parsed input file: its name (as printed in errors) and its root value.
struct JsonDocument {
  std::string file;
  nlohmann::json root;
  std::string pointer; ///< where `root` lies in `file`: "" for the whole file, "/topology" for a scenario's inline one
};

/// Reads and parses `path`. Unreadable file, malformed JSON (with line and column) or a duplicate key: InputError.
JsonDocument load_json_file(const std::string& path);
/// The text load_json_file() parses, with its errors for a file it cannot read or that is too large.
std::string read_json_file_text(const std::string& path);
/// Parses `text` as if read from a file named `file_label`; errors as load_json_file().
JsonDocument parse_json_text(std::string file_label, std::string_view text);

/// `pointer` extended by one object key, escaped per RFC 6901 (~ as ~0, / as ~1).
std::string json_pointer_append(std::string_view pointer, std::string_view key);
/// `pointer` extended by one array index.
std::string json_pointer_append(std::string_view pointer, std::size_t index);

/// A compact description of a value for error messages: `string "fast"`, `number -3`, `number 3.0`, `object`,
/// `array of 4`, `null`, `boolean true`. Long values are cut to about 60 characters.
std::string describe_json_value(const nlohmann::json& v);

/// Picoseconds per unit of a duration key's suffix: _ps 1, _ns 10^3, _us 10^6, _ms 10^9, _s 10^12; 0 without one.
std::int64_t duration_unit_ps(std::string_view key);
/// `t` written exactly as a decimal number in the unit of `key`'s suffix (1500 ps for "x_ns" is "1.5").
std::string format_duration(Time t, std::string_view key);

/// Reads one JSON object. Each key must be asked about (read, looked up optionally or skipped) before finish(),
/// which rejects the rest. The reader refers to `value`, which must outlive it.
class JsonObjectReader {
public:
  /// `pointer` locates `value` in `file`. A value that is not an object: InputError (expected "an object").
  JsonObjectReader(std::string file, const nlohmann::json& value, std::string pointer);

  /// Whether the object holds `key`; does not count as asking about it.
  bool has(std::string_view key) const;
  /// The pointer of the value under `key`.
  std::string pointer_to(std::string_view key) const;
  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }
  /// The object itself, for objects used as maps from names to values (ask about each key with skip()).
  const nlohmann::json& value() const { return *value_; }

  /// A missing key, a value of the wrong JSON type or out of [min, max]: InputError. A JSON float such as 3.0 is
  /// not an integer.
  std::uint64_t required_uint(std::string_view key, std::uint64_t min, std::uint64_t max);
  std::int64_t required_int(std::string_view key, std::int64_t min, std::int64_t max);
  /// Any JSON number (integers included) in [min, max].
  double required_double(std::string_view key, double min, double max);
  bool required_bool(std::string_view key);
  /// A non-empty string.
  std::string required_string(std::string_view key);
  /// A string equal to one of `choices`.
  std::string required_enum(std::string_view key, std::initializer_list<std::string_view> choices);
  /// As above, for choices listed at run time (a registry's names).
  std::string required_enum(std::string_view key, std::span<const std::string_view> choices);
  /// A JSON number in the unit of the key's suffix (_ps, _ns, _us, _ms, _s), converted exactly to whole
  /// picoseconds; a value that is not a whole number of picoseconds is an error. A key without a suffix is a bug.
  Time required_duration(std::string_view key, Time min, Time max);
  /// A nested object, read by its own reader.
  JsonObjectReader required_object(std::string_view key);
  /// An array of [min_size, max_size] elements; its elements are the caller's to check.
  const nlohmann::json& required_array(std::string_view key, std::size_t min_size, std::size_t max_size);

  /// As the required_* readers, but std::nullopt (or nullptr) when the key is absent.
  std::optional<std::uint64_t> optional_uint(std::string_view key, std::uint64_t min, std::uint64_t max);
  std::optional<std::int64_t> optional_int(std::string_view key, std::int64_t min, std::int64_t max);
  std::optional<double> optional_double(std::string_view key, double min, double max);
  std::optional<bool> optional_bool(std::string_view key);
  std::optional<std::string> optional_string(std::string_view key);
  std::optional<std::string> optional_enum(std::string_view key, std::initializer_list<std::string_view> choices);
  std::optional<std::string> optional_enum(std::string_view key, std::span<const std::string_view> choices);
  std::optional<Time> optional_duration(std::string_view key, Time min, Time max);
  std::optional<JsonObjectReader> optional_object(std::string_view key);
  const nlohmann::json* optional_array(std::string_view key, std::size_t min_size, std::size_t max_size);

  /// Marks `key` as known without reading it (for values handled elsewhere).
  void skip(std::string_view key);
  /// Throws InputError for the first key not asked about, listing the keys that were, in the order asked.
  /// Keys are visited in nlohmann::json's order, which is sorted rather than document order.
  void finish() const;

private:
  /// Records `key` as asked about and returns its value, or nullptr when absent.
  const nlohmann::json* lookup(std::string_view key);
  /// As lookup(), but a missing key is an InputError expecting `expected`.
  const nlohmann::json& lookup_required(std::string_view key, const std::string& expected);

  std::string file_;
  const nlohmann::json* value_;
  std::string pointer_;
  /// Keys asked about, in the order first asked; objects have few keys, so a vector beats a set.
  std::vector<std::string> asked_;
};

/// Applies one `--set` override, "ASSIGNMENT" being "/json/pointer=value". The value is parsed as JSON when it is
/// valid JSON and is otherwise taken as a plain string (so /workload/type=phold works). The pointer's parent must
/// exist and be an object (the key may be new; strict reading of the result rejects unknown keys later) or an
/// array indexed within its size. Anything else: InputError with file `source_label` and pointer the pointer text.
void apply_override(nlohmann::json& root, std::string_view assignment, const std::string& source_label);

} // namespace sim
