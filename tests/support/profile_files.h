// The shipped hardware profiles (topologies/hardware/*.json), for tests that check every profile of a model.
#pragma once

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/json_reader.h"
#include "sim/params.h"
#include "sim/profile.h"

namespace testing {

/// Every profile file shipped, sorted by name.
inline std::vector<std::filesystem::path> profile_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(sim::profile_directory())) {
    if (entry.path().extension() == ".json") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// The profiles of `model`, by name.
inline std::set<std::string> profiles_of(const std::string& model) {
  std::set<std::string> names;
  for (const auto& path : profile_files()) {
    const sim::Profile p = sim::load_profile(path.string());
    if (p.model == model) {
      names.insert(p.name);
    }
  }
  return names;
}

/// Every key of `table` has a non-empty source in `profile`.
template <class P>
void check_sources(const sim::ParamTable<P>& table, const sim::Profile& profile) {
  for (const auto& field : table.fields()) {
    const auto source = profile.sources.find(std::string(field.key));
    REQUIRE(source != profile.sources.end());
    CHECK_FALSE(source->second.empty());
  }
}

/// The keys profile.schema.json requires of `model`'s profiles (also checking they are exactly the allowed ones).
inline std::vector<std::string> schema_keys(const std::string& model) {
  const nlohmann::json schema =
      sim::load_json_file(std::string(IBNETSIM_SOURCE_DIR) + "/topologies/schema/profile.schema.json").root;
  for (const nlohmann::json& rule : schema.at("allOf")) {
    if (rule.at("if").at("properties").at("model").at("const") == model) {
      const nlohmann::json& parameters = rule.at("then").at("properties").at("parameters");
      CHECK(parameters.at("required") == parameters.at("propertyNames").at("enum"));
      return parameters.at("required").get<std::vector<std::string>>();
    }
  }
  FAIL("no schema rule for model " << model);
  return {};
}

/// The keys of `table`, in its order.
template <class P>
std::vector<std::string> table_keys(const sim::ParamTable<P>& table) {
  std::vector<std::string> keys;
  for (const auto& field : table.fields()) {
    keys.emplace_back(field.key);
  }
  return keys;
}

} // namespace testing
