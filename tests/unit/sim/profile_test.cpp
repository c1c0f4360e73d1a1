// Hardware profiles with a demo table: loading, reading through a ParamTable with overrides, the digest, path
// resolution, and every rejected input with its file, JSON pointer and text.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <system_error>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/errors.h"
#include "sim/profile.h"

namespace {

using nlohmann::json;
using sim::Override;
using sim::Profile;
using sim::Time;

struct DemoParams {
  std::uint32_t port_count;
  Time latency;
  bool cut_through;
  double ratio;
};

const sim::ParamTable<DemoParams>& demo_table() {
  static const sim::ParamTable<DemoParams> table(
      "demo", {
                  {"port_count", &DemoParams::port_count, "count", "ports", 1, 64},
                  {"latency_ns", &DemoParams::latency, "ns", "port to port", 0, 1000},
                  {"cut_through", &DemoParams::cut_through, "bool", "forward early", 0, 0},
                  {"ratio", &DemoParams::ratio, "fraction", "a share", 0, 1},
              });
  return table;
}

json demo_profile() {
  return json::parse(R"({
    "$schema": "../schema/profile.schema.json",
    "name": "demo-1",
    "model": "demo",
    "description": "a demo device",
    "parameters": {
      "port_count": {"value": 36, "source": "datasheet table 3"},
      "latency_ns": {"value": 90.5, "source": "paper, section 7.1"},
      "cut_through": {"value": true, "source": "estimate: fast"},
      "ratio": {"value": 0.25, "source": "spec section 1.2"}
    }
  })");
}

/// A profile file in the temp directory, named after `label` and this process (test runs may overlap), removed
/// when it goes out of scope.
struct TempProfile {
  std::string path;
  TempProfile(const std::string& label, const json& document)
      : path((std::filesystem::temp_directory_path() /
              ("ibnetsim_profile_test_" + label + "_" + std::to_string(::getpid()) + ".json"))
                 .string()) {
    std::ofstream(path) << document.dump(2);
  }
  TempProfile(const TempProfile&) = delete;
  TempProfile& operator=(const TempProfile&) = delete;
  ~TempProfile() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

struct Want {
  std::string file;
  std::string pointer;
  std::string what;
};

void require_input_error(const std::function<void()>& f, const Want& want) {
  try {
    f();
  } catch (const sim::InputError& e) {
    CHECK(e.file() == want.file);
    CHECK(e.json_pointer() == want.pointer);
    CHECK(std::string(e.what()) == want.what);
    return;
  }
  FAIL("no sim::InputError was thrown");
}

/// Loads `file` and reads it with the demo table and `overrides`.
DemoParams load_and_read(const TempProfile& file, const std::vector<Override>& overrides = {}) {
  return sim::read_profile(demo_table(), sim::load_profile(file.path), overrides);
}

} // namespace

TEST_CASE("sim::Profile: load_profile keeps name, model, description, values and sources", "[sim][quick]") {
  const TempProfile file("load", demo_profile());
  const Profile p = sim::load_profile(file.path);
  CHECK(p.file == file.path);
  CHECK(p.name == "demo-1");
  CHECK(p.model == "demo");
  CHECK(p.description == "a demo device");
  CHECK(p.values == json{{"port_count", 36}, {"latency_ns", 90.5}, {"cut_through", true}, {"ratio", 0.25}});
  REQUIRE(p.sources.size() == 4);
  CHECK(p.sources.at("latency_ns") == "paper, section 7.1");
  CHECK(p.sources.at("cut_through") == "estimate: fast");
}

TEST_CASE("sim::Profile: load_profile sees a file rewritten at once, even to the same size, and its breakage",
          "[sim][quick]") {
  json document = demo_profile();
  const TempProfile file("reload", document);
  CHECK(sim::load_profile(file.path).values.at("port_count") == 36);
  CHECK(sim::load_profile(file.path).values.at("port_count") == 36); // parsed once, the same either way
  // Same length, same inode, within the file system clock's granularity: only the text tells the versions apart.
  document["parameters"]["port_count"]["value"] = 37;
  std::ofstream(file.path) << document.dump(2);
  CHECK(sim::load_profile(file.path).values.at("port_count") == 37);
  document["parameters"]["port_count"].erase("source");
  std::ofstream(file.path) << document.dump(2);
  CHECK_THROWS_AS(sim::load_profile(file.path), sim::InputError);
}

TEST_CASE("sim::Profile: read_profile reads every parameter and applies overrides in order", "[sim][quick]") {
  const TempProfile file("read", demo_profile());
  const Profile p = sim::load_profile(file.path);
  const DemoParams d = sim::read_profile(demo_table(), p);
  CHECK(d.port_count == 36);
  CHECK(d.latency.ps() == 90'500);
  CHECK(d.cut_through);
  CHECK(d.ratio == 0.25);

  const DemoParams o = sim::read_profile(
      demo_table(), p, {{"/latency_ns", "120"}, {"/cut_through", "false"}, {"/latency_ns", "130.25"}});
  CHECK(o.latency.ps() == 130'250);
  CHECK_FALSE(o.cut_through);
  CHECK(o.port_count == 36);
}

TEST_CASE("sim::Profile: digest gives value, unit and source, and marks overridden values", "[sim][quick]") {
  const TempProfile file("digest", demo_profile());
  const Profile p = sim::load_profile(file.path);
  const json plain = sim::digest(demo_table(), sim::read_profile(demo_table(), p), p);
  CHECK(plain.size() == 4);
  CHECK(plain.at("latency_ns") == json{{"value", 90.5}, {"unit", "ns"}, {"source", "paper, section 7.1"}});
  CHECK(plain.at("port_count") == json{{"value", 36}, {"unit", "count"}, {"source", "datasheet table 3"}});

  const json changed = sim::digest(demo_table(), sim::read_profile(demo_table(), p, {{"/port_count", "40"}}), p);
  CHECK(changed.at("port_count") == json{{"value", 40}, {"unit", "count"}, {"source", "override"}});
  CHECK(changed.at("ratio").at("source") == "spec section 1.2");
  // Overriding with the profile's own value changes nothing, so the profile stays the source.
  const json same = sim::digest(demo_table(), sim::read_profile(demo_table(), p, {{"/ratio", "0.25"}}), p);
  CHECK(same.at("ratio").at("source") == "spec section 1.2");
}

TEST_CASE("sim::Profile: profile_path resolves bare names into topologies/hardware", "[sim][quick]") {
  CHECK(sim::profile_directory() == std::string(IBNETSIM_TEST_DATA_DIR) + "/topologies/hardware");
  CHECK(sim::profile_path("quantum-hdr") == sim::profile_directory() + "/quantum-hdr.json");
  CHECK(sim::profile_path("./mine") == "./mine");
  CHECK(sim::profile_path("mine.json") == "mine.json");
  CHECK(sim::profile_path("/abs/dir/x.json") == "/abs/dir/x.json");
}

TEST_CASE("sim::Profile: a malformed profile file is rejected with its pointer", "[sim][quick]") {
  json doc = demo_profile();
  std::string label;
  std::string pointer;
  std::string text;
  SECTION("unknown top-level key") {
    doc["vendor"] = "x";
    label = "top_unknown";
    pointer = "/vendor";
    text = "expected one of the keys $schema, name, model, description, parameters, got unknown key \"vendor\"";
  }
  SECTION("missing description") {
    doc.erase("description");
    label = "no_description";
    pointer = "/description";
    text = "expected a non-empty string (required key \"description\"), got nothing";
  }
  SECTION("parameters not an object") {
    doc["parameters"] = json::array();
    label = "parameters_array";
    pointer = "/parameters";
    text = "expected an object, got array of 0";
  }
  SECTION("a parameter that is a bare value") {
    doc["parameters"]["ratio"] = 0.25;
    label = "bare_value";
    pointer = "/parameters/ratio";
    text = "expected an object, got number 0.25";
  }
  SECTION("a parameter without value") {
    doc["parameters"]["ratio"].erase("value");
    label = "no_value";
    pointer = "/parameters/ratio/value";
    text = "expected a number, boolean or string (required key \"value\"), got nothing";
  }
  SECTION("a value that is not a scalar") {
    doc["parameters"]["ratio"]["value"] = json::object();
    label = "object_value";
    pointer = "/parameters/ratio/value";
    text = "expected a number, boolean or string, got object";
  }
  SECTION("a parameter without source") {
    doc["parameters"]["ratio"].erase("source");
    label = "no_source";
    pointer = "/parameters/ratio/source";
    text = "expected a non-empty string (required key \"source\"), got nothing";
  }
  SECTION("an empty source") {
    doc["parameters"]["ratio"]["source"] = "";
    label = "empty_source";
    pointer = "/parameters/ratio/source";
    text = "expected a non-empty string, got string \"\"";
  }
  SECTION("an unknown key beside value and source") {
    doc["parameters"]["ratio"]["note"] = "x";
    label = "entry_unknown";
    pointer = "/parameters/ratio/note";
    text = "expected one of the keys value, source, got unknown key \"note\"";
  }
  const TempProfile file(label, doc);
  require_input_error([&] { sim::load_profile(file.path); },
                      {file.path, pointer, file.path + ":" + pointer + ": " + text});
}

TEST_CASE("sim::Profile: an unreadable profile file is rejected", "[sim][quick]") {
  require_input_error(
      [] { sim::load_profile("ibnetsim_profile_test_missing.json"); },
      {"ibnetsim_profile_test_missing.json", "",
       "ibnetsim_profile_test_missing.json:/: expected a readable file, got No such file or directory"});
}

TEST_CASE("sim::Profile: bad parameters point at /parameters/KEY/value in the profile", "[sim][quick]") {
  json doc = demo_profile();
  std::string label;
  std::string pointer;
  std::string text;
  SECTION("unknown key") {
    doc["parameters"]["bogus_ns"] = {{"value", 1}, {"source", "x"}};
    label = "param_unknown";
    pointer = "/parameters/bogus_ns/value";
    text = "expected one of the keys port_count, latency_ns, cut_through, ratio, got unknown key \"bogus_ns\"";
  }
  SECTION("missing key") {
    doc["parameters"].erase("latency_ns");
    label = "param_missing";
    pointer = "/parameters/latency_ns/value";
    text = "expected a duration in [0, 1000] ns (required key \"latency_ns\"), got nothing";
  }
  SECTION("wrong type") {
    doc["parameters"]["cut_through"]["value"] = "yes";
    label = "param_type";
    pointer = "/parameters/cut_through/value";
    text = "expected a boolean, got string \"yes\"";
  }
  SECTION("out of range") {
    doc["parameters"]["port_count"]["value"] = 65;
    label = "param_range";
    pointer = "/parameters/port_count/value";
    text = "expected an integer in [1, 64], got number 65";
  }
  SECTION("another model's profile") {
    doc["model"] = "cable";
    label = "param_model";
    pointer = "/model";
    text = "expected \"demo\" (the model it is read as), got string \"cable\"";
  }
  const TempProfile file(label, doc);
  require_input_error([&] { load_and_read(file); }, {file.path, pointer, file.path + ":" + pointer + ": " + text});
}

TEST_CASE("sim::Profile: bad overrides point at the override", "[sim][quick]") {
  std::vector<Override> overrides;
  std::string pointer;
  std::string text;
  SECTION("unknown key") {
    overrides = {{"/bogus_ns", "5"}};
    pointer = "/bogus_ns";
    text = "expected one of the keys port_count, latency_ns, cut_through, ratio, got unknown key \"bogus_ns\"";
  }
  SECTION("out of range, after a valid override of the same key") {
    overrides = {{"/latency_ns", "5"}, {"/latency_ns", "-5"}};
    pointer = "/latency_ns";
    text = "expected a duration in [0, 1000] ns, got number -5";
  }
  SECTION("wrong type") {
    overrides = {{"/port_count", "many"}};
    pointer = "/port_count";
    text = "expected an integer in [1, 64], got string \"many\"";
  }
  SECTION("a pointer into a value") {
    overrides = {{"/ratio/x", "1"}};
    pointer = "/ratio/x";
    text = "expected an existing object or array at /ratio, got number 0.25";
  }
  SECTION("not a pointer") {
    overrides = {{"ratio", "1"}};
    pointer = "ratio";
    text = "expected \"/json/pointer=value\", got \"ratio=1\"";
  }
  const TempProfile file("override", demo_profile());
  require_input_error([&] { load_and_read(file, overrides); }, {"--set", pointer, "--set:" + pointer + ": " + text});
}
