// Hardware profiles (docs/scenario-reference.md): one JSON file per device class under topologies/hardware/, holding
// every parameter of one model with its unit in its key and a `source` (datasheet, paper, spec section or "estimate:
// why"). A profile is loaded strictly (unknown keys, a parameter without value or source, wrong types:
// sim::InputError), then read through the model's ParamTable with optional `--set` overrides layered on top. Errors
// point at `/parameters/<key>/value` in the profile file, or at the override that supplied the bad value.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/errors.h"
#include "sim/json_reader.h"
#include "sim/params.h"

namespace sim {

/// One loaded profile file.
struct Profile {
  std::string file;                           ///< the path it was loaded from, as printed in errors
  std::string name;                           ///< e.g. "switch-ib2-edr"
  std::string model;                          ///< the model whose ParamTable reads it: "switch", "cable"
  std::string description;                    ///< one line: the device class it stands for
  nlohmann::json values;                      ///< object: parameter key -> value, in the key's unit
  std::map<std::string, std::string> sources; ///< parameter key -> where its value comes from
};

/// The file label that errors in command-line overrides carry, as for scenario overrides.
inline constexpr std::string_view override_label = "--set";

/// One override of a profile parameter: `pointer` is relative to "parameters" ("/port_to_port_latency_ns")
/// and `value` is JSON text, or a plain string when it is not valid JSON (as for scenario overrides). Errors name
/// `origin` (a file, or "--set") at `origin_pointer` (empty: at `pointer`).
struct Override {
  Override(std::string pointer_, std::string value_, std::string origin_ = std::string(override_label),
           std::string origin_pointer_ = "")
      : pointer(std::move(pointer_)), value(std::move(value_)), origin(std::move(origin_)),
        origin_pointer(std::move(origin_pointer_)) {}
  std::string pointer;
  std::string value;
  std::string origin;
  std::string origin_pointer;
};

/// Overrides of profile parameters for one run, by profile name: a scenario's "profiles" member.
using ProfileOverrides = std::map<std::string, std::vector<Override>, std::less<>>;

/// Loads and checks the profile at `path` (not its parameters' types or ranges: read_profile() does that).
/// Unreadable file, bad JSON, unknown or missing keys, a parameter without value or source: InputError. Each text
/// is parsed once per process (a file read again with the same text gives a copy of what was parsed); thread-safe.
Profile load_profile(const std::string& path);
/// As load_profile(), for a parsed document (sim::parse_json_text).
Profile parse_profile(const JsonDocument& document);

/// The directory bare profile names resolve into: <data directory>/topologies/hardware (sim/data_dir.h). An
/// unusable data directory is a DataDirectoryError.
std::string profile_directory();
/// profile_directory() when the data directory is usable, else nullopt: for listing profiles in messages.
std::optional<std::string> find_profile_directory();
/// `name` as a path: a bare name ("quantum-hdr") becomes profile_directory()/<name>.json; a name containing '/' or
/// ending in ".json" is already a path and is returned unchanged.
std::string profile_path(std::string_view name);

/// Throws InputError about parameter `key` of `profile`: at the last override that set it, else at
/// /parameters/<key>/value in the profile file. For rules across fields that a table cannot check (sw::validate).
[[noreturn]] void reject_parameter(const Profile& profile, const std::vector<Override>& overrides, std::string_view key,
                                   std::string expected, std::string got);

namespace profile_detail {
/// profile.values with `overrides` applied in order; a malformed override is an InputError at the override.
nlohmann::json merge_overrides(const Profile& profile, const std::vector<Override>& overrides);
/// Throws `e` (raised while reading the merged values at "/parameters") again, pointing at the value in the
/// profile file, or at the last override that set the key.
[[noreturn]] void relocate(const InputError& e, const Profile& profile, const std::vector<Override>& overrides);
/// Throws InputError at "/model" unless the profile is for `model`.
void check_model(const Profile& profile, std::string_view model);
} // namespace profile_detail

/// The profile's parameters, with `overrides` applied in order, read through `table`: every key of the table is
/// required, no other key is allowed, and each value is type- and range-checked. The profile's model must be
/// table.model().
template <class P>
P read_profile(const ParamTable<P>& table, const Profile& profile, const std::vector<Override>& overrides = {}) {
  profile_detail::check_model(profile, table.model());
  const nlohmann::json merged = profile_detail::merge_overrides(profile, overrides);
  try {
    JsonObjectReader reader(profile.file, merged, "/parameters");
    P params = table.read(reader);
    reader.finish();
    return params;
  } catch (const InputError& e) {
    profile_detail::relocate(e, profile, overrides);
  }
}

/// The overrides `overrides` holds for profile `name` (none: an empty list).
const std::vector<Override>& overrides_for(const ProfileOverrides& overrides, std::string_view name);

/// The profile `name` (profile_path) read through `table`, with the overrides `overrides` holds for that name.
template <class P>
P read_named_profile(const ParamTable<P>& table, std::string_view name, const ProfileOverrides& overrides) {
  return read_profile(table, load_profile(profile_path(name)), overrides_for(overrides, name));
}

/// For the configuration digest and `ibnetsim params MODEL --profile`: each key of `table` -> {value (in the key's
/// unit), unit, source}. A value that differs from the profile's came from an override: its source is "override".
template <class P>
nlohmann::json digest(const ParamTable<P>& table, const P& params, const Profile& profile) {
  const nlohmann::json values = table.to_json(params);
  nlohmann::json out = nlohmann::json::object();
  for (const ParamField<P>& f : table.fields()) {
    const std::string key(f.key);
    const nlohmann::json& value = values.at(key);
    // nlohmann compares numbers by value across integer and float, so 90 in the file equals 90 read back.
    const bool from_profile = profile.values.contains(key) && profile.values.at(key) == value;
    const auto source = profile.sources.find(key);
    out[key] = {{"value", value},
                {"unit", std::string(f.unit)},
                {"source", from_profile && source != profile.sources.end() ? source->second : "override"}};
  }
  return out;
}

/// Raises a model's cross-field rule result `problem` ("" when the rules hold; else "key: expected ..., got ...",
/// located like a table error at the profile's value or the override that set it; any other text: InputError at
/// /parameters).
void check_rule(const Profile& profile, const std::vector<Override>& overrides, const std::string& problem);

/// read_profile(), then the model's cross-field rules `validate` (nullptr: none) through check_rule().
template <class P>
P read_checked_profile(const ParamTable<P>& table, const Profile& profile, const std::vector<Override>& overrides,
                       std::string (*validate)(const P&)) {
  P params = read_profile(table, profile, overrides);
  if (validate != nullptr)
    check_rule(profile, overrides, validate(params));
  return params;
}

/// A model whose parameters a profile file holds ("switch", "hca", "cable", ...), whatever its Params type: what
/// `ibnetsim params` lists and how the runner reports any profile of it. Each model defines one beside its
/// parameter table (profile_model<>() below); the composition root lists them once.
struct ProfileModel {
  std::string_view name;        ///< a profile's "model"
  std::string_view description; ///< one line, for `ibnetsim params`
  /// The parameter table as `ibnetsim params MODEL` prints it: keys, units, ranges, meanings.
  std::string (*describe)();
  /// The table's keys, in table order (digest() is a JSON object, whose keys are sorted).
  std::vector<std::string_view> (*keys)();
  /// `profile` with `overrides`, read through the table and the model's rules: each key -> {value, unit, source}.
  nlohmann::json (*digest)(const Profile& profile, const std::vector<Override>& overrides);
};

namespace profile_detail {
template <class P, const ParamTable<P>& (*Table)()>
std::string describe_table() {
  return Table().describe();
}
template <class P, const ParamTable<P>& (*Table)()>
std::vector<std::string_view> table_keys() {
  std::vector<std::string_view> keys;
  for (const ParamField<P>& field : Table().fields())
    keys.push_back(field.key);
  return keys;
}
template <class P, const ParamTable<P>& (*Table)(), std::string (*Validate)(const P&)>
nlohmann::json digest_profile(const Profile& profile, const std::vector<Override>& overrides) {
  return digest(Table(), read_checked_profile(Table(), profile, overrides, Validate), profile);
}
} // namespace profile_detail

/// The ProfileModel of the model whose table is `Table()` and whose cross-field rules are `Validate` (nullptr: none).
template <class P, const ParamTable<P>& (*Table)(), std::string (*Validate)(const P&) = nullptr>
constexpr ProfileModel profile_model(std::string_view name, std::string_view description) {
  return {name, description, &profile_detail::describe_table<P, Table>, &profile_detail::table_keys<P, Table>,
          &profile_detail::digest_profile<P, Table, Validate>};
}

} // namespace sim
