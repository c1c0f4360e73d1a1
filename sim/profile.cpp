#include "sim/profile.h"

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "sim/data_dir.h"

namespace sim {

using nlohmann::json;

namespace {

/// The first reference token of `pointer` ("/a~1b/c" -> "a/b"), unescaped per RFC 6901.
std::string first_token(std::string_view pointer) {
  std::string token;
  for (std::size_t i = 1; i < pointer.size() && pointer[i] != '/'; ++i) {
    if (pointer[i] == '~' && i + 1 < pointer.size()) {
      token += pointer[++i] == '1' ? '/' : '~';
    } else {
      token += pointer[i];
    }
  }
  return token;
}

} // namespace

Profile load_profile(const std::string& path) {
  // A run reads the same few files many times over (the topology's catalogue, validation of the profiles they
  // name, the configuration's digests): each text is parsed once and copied per call. Keyed by the whole text, not
  // the file's timestamps, so that a file rewritten between two loads (within the clock's granularity, in a test
  // or a Python session) is never taken for the version parsed.
  std::string text = read_json_file_text(path);
  struct Parsed {
    std::string text;
    Profile profile;
  };
  static std::mutex mutex; // sweeps and the Python module may load profiles from several threads
  static std::map<std::string, Parsed, std::less<>> parsed;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = parsed.find(path); it != parsed.end() && it->second.text == text)
      return it->second.profile;
  }
  Profile profile = parse_profile(parse_json_text(path, text)); // a broken file throws and is not kept
  const std::lock_guard<std::mutex> lock(mutex);
  parsed.insert_or_assign(path, Parsed{std::move(text), profile});
  return profile;
}

Profile parse_profile(const JsonDocument& document) {
  Profile profile;
  profile.file = document.file;
  JsonObjectReader top(document.file, document.root, "");
  top.skip("$schema"); // editors use it to find topologies/schema/profile.schema.json
  profile.name = top.required_string("name");
  profile.model = top.required_string("model");
  profile.description = top.required_string("description");
  JsonObjectReader parameters = top.required_object("parameters");
  // The file's own shape first: an unknown top-level key is reported before anything inside "parameters".
  top.finish();

  // Values are only shape-checked here; their types and ranges belong to the model's table (read_profile).
  profile.values = json::object();
  for (const auto& [key, entry_json] : parameters.value().items()) {
    parameters.skip(key);
    JsonObjectReader entry(profile.file, entry_json, parameters.pointer_to(key));
    constexpr const char* value_expected = "a number, boolean or string";
    if (!entry.has("value")) {
      throw InputError(profile.file, entry.pointer_to("value"),
                       std::string(value_expected) + " (required key \"value\")", "nothing");
    }
    entry.skip("value");
    const json& value = entry.value().at("value");
    if (!value.is_number() && !value.is_boolean() && !value.is_string()) {
      throw InputError(profile.file, entry.pointer_to("value"), value_expected, describe_json_value(value));
    }
    profile.sources[key] = entry.required_string("source");
    entry.finish();
    profile.values[key] = value;
  }
  return profile;
}

std::string profile_directory() {
  return data_directory() + "/topologies/hardware";
}

std::optional<std::string> find_profile_directory() {
  const std::optional<std::string> data = find_data_directory();
  if (!data)
    return std::nullopt;
  return *data + "/topologies/hardware";
}

std::string profile_path(std::string_view name) {
  if (name.find('/') != std::string_view::npos || name.ends_with(".json")) {
    return std::string(name);
  }
  return profile_directory() + "/" + std::string(name) + ".json";
}

void reject_parameter(const Profile& profile, const std::vector<Override>& overrides, std::string_view key,
                      std::string expected, std::string got) {
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
    if (first_token(it->pointer) == key) {
      throw InputError(it->origin, it->origin_pointer.empty() ? it->pointer : it->origin_pointer, std::move(expected),
                       std::move(got));
    }
  }
  throw InputError(profile.file, json_pointer_append("/parameters", key) + "/value", std::move(expected),
                   std::move(got));
}

const std::vector<Override>& overrides_for(const ProfileOverrides& overrides, std::string_view name) {
  static const std::vector<Override> none;
  const auto found = overrides.find(name);
  return found == overrides.end() ? none : found->second;
}

namespace profile_detail {

json merge_overrides(const Profile& profile, const std::vector<Override>& overrides) {
  json merged = profile.values;
  for (const Override& o : overrides) {
    // apply_override() parses "pointer=value" exactly as scenario --set does, so both read values the same way.
    apply_override(merged, o.pointer + "=" + o.value, o.origin);
  }
  return merged;
}

void relocate(const InputError& e, const Profile& profile, const std::vector<Override>& overrides) {
  // Table reads and finish() report "/parameters/<key>", the key escaped; nothing deeper.
  constexpr std::string_view prefix = "/parameters";
  const std::string& pointer = e.json_pointer();
  if (!pointer.starts_with(prefix) || pointer.size() == prefix.size()) {
    throw e;
  }
  reject_parameter(profile, overrides, first_token(std::string_view(pointer).substr(prefix.size())), e.expected(),
                   e.got());
}

void check_model(const Profile& profile, std::string_view model) {
  if (profile.model != model) {
    throw InputError(profile.file, "/model", json(std::string(model)).dump() + " (the model it is read as)",
                     describe_json_value(json(profile.model)));
  }
}

} // namespace profile_detail

void check_rule(const Profile& profile, const std::vector<Override>& overrides, const std::string& problem) {
  if (problem.empty())
    return;
  constexpr std::string_view expected_text = ": expected ";
  constexpr std::string_view got_text = ", got ";
  const std::size_t expected_at = problem.find(expected_text);
  const std::size_t got_at = problem.rfind(got_text);
  if (expected_at != std::string::npos && got_at != std::string::npos && got_at > expected_at)
    reject_parameter(profile, overrides, problem.substr(0, expected_at),
                     problem.substr(expected_at + expected_text.size(), got_at - expected_at - expected_text.size()),
                     problem.substr(got_at + got_text.size()));
  throw InputError(profile.file, "/parameters", "parameters the " + profile.model + " model accepts", problem);
}

} // namespace sim
