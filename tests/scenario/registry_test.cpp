// The variant registries against everything that lists their variants: the JSON Schemas' enums, the CLI's help and
// what a scenario accepts. A variant added to a registry but not to a schema (or the other way) fails here.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "models/scenario/profile_models.h"
#include "models/sm/routing.h"
#include "sim/profile.h"
#include "tests/scenario/cli_harness.h"

namespace {

nlohmann::json schema(const std::string& relative) {
  std::ifstream file(testing::source_path(relative));
  REQUIRE(file);
  return nlohmann::json::parse(file);
}

std::vector<std::string> strings(const nlohmann::json& list) {
  return list.get<std::vector<std::string>>();
}

/// What a scenario's routing can name: every registered engine (the file engine with an lft_file), then "opensm".
std::vector<std::string> scenario_engines() {
  std::vector<std::string> names;
  for (const ib::sm::EngineInfo* engine : ib::sm::engines())
    names.emplace_back(engine->name);
  names.emplace_back("opensm");
  return names;
}

} // namespace

TEST_CASE("registry: routing engines, each registered once with a name, a description and a factory",
          "[registry][quick]") {
  std::vector<std::string_view> seen;
  for (const ib::sm::EngineInfo* engine : ib::sm::engines()) {
    INFO(engine->name);
    CHECK(!engine->name.empty());
    CHECK(!engine->description.empty());
    CHECK(std::count(seen.begin(), seen.end(), engine->name) == 0);
    seen.push_back(engine->name);
    CHECK(ib::sm::find_engine(engine->name) == engine);
    CHECK(engine->make() != nullptr);
  }
  CHECK(seen == ib::sm::engine_names());
  CHECK(ib::sm::find_engine(ib::sm::default_engine) != nullptr);
  CHECK(ib::sm::find_engine("ospf") == nullptr);
}

TEST_CASE("registry: the schemas' routing enums are the registered engines a scenario can use", "[registry][quick]") {
  const std::vector<std::string> engines = scenario_engines();
  const nlohmann::json scenario = schema("scenarios/schema/scenario.schema.json");
  CHECK(strings(scenario.at(
            nlohmann::json::json_pointer("/oneOf/0/properties/subnet_manager/properties/routing/enum"))) == engines);
  const nlohmann::json report = schema("scenarios/schema/report.schema.json");
  CHECK(strings(report.at(nlohmann::json::json_pointer("/oneOf/0/properties/scenario/properties/routing/enum"))) ==
        engines);
  CHECK(strings(report.at(nlohmann::json::json_pointer(
            "/oneOf/0/properties/config/properties/subnet_manager/properties/routing/enum"))) == engines);
}

TEST_CASE("registry: every engine is in --routing's help, and a scenario names exactly the usable ones",
          "[registry][quick]") {
  const testing::CliResult help = testing::run_cli({"topo", "route", "--help"});
  REQUIRE(help.exit_code == 0);
  for (const ib::sm::EngineInfo* engine : ib::sm::engines()) {
    INFO(engine->name);
    // program_options wraps the descriptions; the name and the start of its description stay on one line.
    const std::string description(engine->description);
    CHECK_THAT(help.out,
               Catch::Contains(std::string(engine->name) + ": " + description.substr(0, description.find(' '))));
    const testing::CliResult run = testing::run_cli({"validate", testing::source_path("scenarios/default.json"),
                                                     "--set", "/subnet_manager/routing=" + std::string(engine->name)});
    if (engine->replays_file) {
      // Accepted, but it needs the dump to replay.
      CHECK(run.exit_code == 2);
      CHECK_THAT(run.err, Catch::Contains("/subnet_manager/lft_file: expected with routing \"file\""));
    } else {
      // ftree and the others may still refuse this fabric; the name itself must be accepted.
      CHECK_THAT(run.err, !Catch::Contains("expected one of"));
    }
  }
}

TEST_CASE("registry: profile models, one per parameter table, against the profile schema and every shipped profile",
          "[registry][quick]") {
  const nlohmann::json profile_schema = schema("topologies/schema/profile.schema.json");
  std::vector<std::string> hardware; // the models of hardware profiles: all but phold, the kernel's workload
  for (const sim::ProfileModel* model : ib::scenario::profile_models()) {
    INFO(model->name);
    CHECK(ib::scenario::find_profile_model(model->name) == model);
    CHECK(!model->description.empty());
    CHECK(!model->describe().empty());
    if (model->name != "phold")
      hardware.emplace_back(model->name);
    // The schema's rule for this model requires exactly the table's keys.
    for (const nlohmann::json& rule : profile_schema.at("allOf"))
      if (rule.at("if").at("properties").at("model").at("const") == model->name) {
        const std::vector<std::string_view> table_keys = model->keys();
        std::vector<std::string> keys(table_keys.begin(), table_keys.end());
        std::vector<std::string> required = strings(rule.at("then").at("properties").at("parameters").at("required"));
        std::sort(keys.begin(), keys.end());
        std::sort(required.begin(), required.end());
        CHECK(keys == required);
      }
  }
  CHECK(strings(profile_schema.at(nlohmann::json::json_pointer("/properties/model/enum"))) == hardware);
  CHECK(ib::scenario::find_profile_model("router") == nullptr);

  // Every shipped profile names a registered model and reads through it, rules included.
  std::size_t read = 0;
  for (const auto& entry : std::filesystem::directory_iterator(testing::source_path("topologies/hardware"))) {
    const sim::Profile profile = sim::load_profile(entry.path().string());
    INFO(profile.file);
    const sim::ProfileModel* model = ib::scenario::find_profile_model(profile.model);
    REQUIRE(model != nullptr);
    const nlohmann::json digest = model->digest(profile, {});
    CHECK(digest.size() == model->keys().size());
    ++read;
  }
  CHECK(read >= 15);

  // `ibnetsim params` lists every model, and `params MODEL` prints its table.
  const testing::CliResult list = testing::run_cli({"params"});
  REQUIRE(list.exit_code == 0);
  for (const sim::ProfileModel* model : ib::scenario::profile_models()) {
    CHECK_THAT(list.out, Catch::Contains("  " + std::string(model->name) + " "));
    const testing::CliResult one = testing::run_cli({"params", std::string(model->name)});
    CHECK(one.exit_code == 0);
    CHECK(one.out == model->describe());
  }
}
