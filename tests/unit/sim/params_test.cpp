#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include "sim/errors.h"
#include "sim/json_reader.h"
#include "sim/params.h"

namespace {

using nlohmann::json;
using sim::JsonObjectReader;
using sim::Time;

/// A model's Params with one field of every member type.
struct DemoParams {
  std::uint32_t lp_count;
  std::uint64_t buffer_bytes;
  std::int64_t offset_count;
  double remote_fraction;
  bool trace;
  Time lookahead;
  Time window;
  std::string label;

  bool operator==(const DemoParams&) const = default;
};

const sim::ParamTable<DemoParams>& demo_table() {
  static const sim::ParamTable<DemoParams> table(
      "demo", {
                  // Max above UINT32_MAX on purpose: the table clamps it to the member's type.
                  {"lp_count", &DemoParams::lp_count, "count", "logical processes", 1, 1e12},
                  {"buffer_bytes", &DemoParams::buffer_bytes, "bytes", "buffer per port", 64, 1 << 20},
                  {"offset_count", &DemoParams::offset_count, "count", "signed offset", -100, 100},
                  {"remote_fraction", &DemoParams::remote_fraction, "fraction", "share of remote events", 0, 1},
                  {"trace", &DemoParams::trace, "bool", "record a trace", 0, 0},
                  {"lookahead_ns", &DemoParams::lookahead, "ns", "least delay between LPs", 0.5, 1e6},
                  {"window_us", &DemoParams::window, "us", "synchronisation window", 0,
                   std::numeric_limits<double>::infinity()},
                  {"label", &DemoParams::label, "text", "run label", 0, 0},
              });
  return table;
}

const char* const demo_json = R"({"lp_count": 8, "buffer_bytes": 4096, "offset_count": -7, "remote_fraction": 0.25,
                                  "trace": true, "lookahead_ns": 1.5, "window_us": 2, "label": "run1"})";

struct Want {
  std::string pointer;
  std::string expected;
  std::string got;
  std::string what;
};

void require_input_error(const std::function<void()>& f, const Want& want) {
  try {
    f();
  } catch (const sim::InputError& e) {
    CHECK(e.file() == "p.json");
    CHECK(e.json_pointer() == want.pointer);
    CHECK(e.expected() == want.expected);
    CHECK(e.got() == want.got);
    CHECK(std::string(e.what()) == want.what);
    return;
  }
  FAIL("no sim::InputError was thrown");
}

/// Reads `text` as the /demo object of p.json with the demo table and finishes the reader.
DemoParams read_demo(const json& value) {
  JsonObjectReader r("p.json", value, "/demo");
  const DemoParams p = demo_table().read(r);
  r.finish();
  return p;
}

json with(std::string_view key, json value) {
  json j = sim::parse_json_text("p.json", demo_json).root;
  j[std::string(key)] = std::move(value);
  return j;
}

} // namespace

TEST_CASE("sim::ParamTable: read fills every field", "[sim][quick]") {
  const DemoParams p = read_demo(sim::parse_json_text("p.json", demo_json).root);
  CHECK(p.lp_count == 8);
  CHECK(p.buffer_bytes == 4096);
  CHECK(p.offset_count == -7);
  CHECK(p.remote_fraction == 0.25);
  CHECK(p.trace);
  CHECK(p.lookahead.ps() == 1'500);
  CHECK(p.window.ps() == 2'000'000);
  CHECK(p.label == "run1");
  CHECK(demo_table().model() == "demo");
  CHECK(demo_table().fields().size() == 8);
  CHECK(sim::param_type(demo_table().fields()[0]) == sim::ParamType::integer);
  CHECK(sim::param_type(demo_table().fields()[3]) == sim::ParamType::number);
  CHECK(sim::param_type(demo_table().fields()[4]) == sim::ParamType::flag);
  CHECK(sim::param_type(demo_table().fields()[5]) == sim::ParamType::duration);
  CHECK(sim::param_type(demo_table().fields()[7]) == sim::ParamType::text);
}

TEST_CASE("sim::ParamTable: read(to_json(p)) gives p back", "[sim][quick]") {
  SECTION("whole units") {
    const DemoParams p{16, 1 << 20, -100, 1.0, false, Time::from_ns(7), Time::from_us(3), "x"};
    const json j = demo_table().to_json(p);
    CHECK(j.at("lookahead_ns") == 7);
    CHECK(j.at("lookahead_ns").is_number_integer());
    CHECK(j.at("window_us") == 3);
    CHECK(j.at("offset_count") == -100);
    CHECK(read_demo(j) == p);
  }
  SECTION("times that are not whole units, and type extremes") {
    const DemoParams p{std::numeric_limits<std::uint32_t>::max(),
                       64,
                       100,
                       0.1,
                       true,
                       Time::from_ps(1'500),
                       Time::from_ps(1'234'567'891),
                       "a \"quoted\" label"};
    const json j = demo_table().to_json(p);
    CHECK(j.at("lookahead_ns") == 1.5);
    CHECK(j.at("lookahead_ns").is_number_float());
    CHECK(j.at("window_us") == 1234.567891);
    CHECK(j.at("lp_count") == 4294967295u);
    CHECK(read_demo(j) == p);
  }
  SECTION("a picosecond in microseconds") {
    DemoParams p = read_demo(sim::parse_json_text("p.json", demo_json).root);
    p.window = Time::from_ps(1);
    const json j = demo_table().to_json(p);
    CHECK(j.at("window_us") == 0.000001);
    CHECK(read_demo(j) == p);
  }
  SECTION("to_json has exactly the table's keys") {
    const json j = demo_table().to_json(read_demo(sim::parse_json_text("p.json", demo_json).root));
    REQUIRE(j.size() == demo_table().fields().size());
    for (const auto& f : demo_table().fields()) {
      CHECK(j.contains(std::string(f.key)));
    }
  }
}

TEST_CASE("sim::ParamTable: uint32 fields reject values above UINT32_MAX", "[sim][quick]") {
  CHECK(read_demo(with("lp_count", 4294967295u)).lp_count == 4294967295u);
  require_input_error([] { read_demo(with("lp_count", 4294967296u)); },
                      {"/demo/lp_count", "an integer in [1, 4294967295]", "number 4294967296",
                       "p.json:/demo/lp_count: expected an integer in [1, 4294967295], got number 4294967296"});
}

TEST_CASE("sim::ParamTable: missing key", "[sim][quick]") {
  SECTION("integer") {
    json j = with("lp_count", 1);
    j.erase("lp_count");
    require_input_error([&] { read_demo(j); },
                        {"/demo/lp_count", "an integer in [1, 4294967295] (required key \"lp_count\")", "nothing",
                         "p.json:/demo/lp_count: expected an integer in [1, 4294967295] (required key \"lp_count\"), "
                         "got nothing"});
  }
  SECTION("duration") {
    json j = with("window_us", 1);
    j.erase("window_us");
    require_input_error([&] { read_demo(j); },
                        {"/demo/window_us", "a duration >= 0 us (required key \"window_us\")", "nothing",
                         "p.json:/demo/window_us: expected a duration >= 0 us (required key \"window_us\"), got "
                         "nothing"});
  }
}

TEST_CASE("sim::ParamTable: value out of range", "[sim][quick]") {
  SECTION("duration below min, in the key's unit") {
    require_input_error([] { read_demo(with("lookahead_ns", 0.25)); },
                        {"/demo/lookahead_ns", "a duration in [0.5, 1000000] ns", "number 0.25",
                         "p.json:/demo/lookahead_ns: expected a duration in [0.5, 1000000] ns, got number 0.25"});
  }
  SECTION("fraction above 1") {
    require_input_error([] { read_demo(with("remote_fraction", 1.5)); },
                        {"/demo/remote_fraction", "a number in [0, 1]", "number 1.5",
                         "p.json:/demo/remote_fraction: expected a number in [0, 1], got number 1.5"});
  }
  SECTION("signed below min") {
    require_input_error([] { read_demo(with("offset_count", -101)); },
                        {"/demo/offset_count", "an integer in [-100, 100]", "number -101",
                         "p.json:/demo/offset_count: expected an integer in [-100, 100], got number -101"});
  }
  SECTION("size below min") {
    require_input_error([] { read_demo(with("buffer_bytes", 32)); },
                        {"/demo/buffer_bytes", "an integer in [64, 1048576]", "number 32",
                         "p.json:/demo/buffer_bytes: expected an integer in [64, 1048576], got number 32"});
  }
  SECTION("empty text") {
    require_input_error([] { read_demo(with("label", "")); },
                        {"/demo/label", "a non-empty string", "string \"\"",
                         "p.json:/demo/label: expected a non-empty string, got string \"\""});
  }
  SECTION("flag of the wrong type") {
    require_input_error([] { read_demo(with("trace", 1)); }, {"/demo/trace", "a boolean", "number 1",
                                                              "p.json:/demo/trace: expected a boolean, got number 1"});
  }
}

TEST_CASE("sim::ParamTable: read_present overwrites only the fields present", "[sim][quick]") {
  DemoParams p = read_demo(sim::parse_json_text("p.json", demo_json).root);
  const DemoParams before = p;
  SECTION("two fields") {
    const json overrides = sim::parse_json_text("p.json", R"({"lookahead_ns": 250, "label": "run2"})").root;
    JsonObjectReader r("p.json", overrides, "/demo");
    demo_table().read_present(r, p);
    CHECK_NOTHROW(r.finish());
    CHECK(p.lookahead == Time::from_ns(250));
    CHECK(p.label == "run2");
    DemoParams rest = p;
    rest.lookahead = before.lookahead;
    rest.label = before.label;
    CHECK(rest == before);
  }
  SECTION("unknown key lists every table key, in table order") {
    const json overrides = sim::parse_json_text("p.json", R"({"lp_count": 2, "lookahed_ns": 250})").root;
    JsonObjectReader r("p.json", overrides, "/demo");
    demo_table().read_present(r, p);
    CHECK(p.lp_count == 2);
    const std::string keys =
        "one of the keys lp_count, buffer_bytes, offset_count, remote_fraction, trace, lookahead_ns, window_us, label";
    require_input_error([&] { r.finish(); },
                        {"/demo/lookahed_ns", keys, "unknown key \"lookahed_ns\"",
                         "p.json:/demo/lookahed_ns: expected " + keys + ", got unknown key \"lookahed_ns\""});
  }
  SECTION("present values are checked") {
    const json overrides = sim::parse_json_text("p.json", R"({"remote_fraction": -1})").root;
    JsonObjectReader r("p.json", overrides, "/demo");
    require_input_error([&] { demo_table().read_present(r, p); },
                        {"/demo/remote_fraction", "a number in [0, 1]", "number -1",
                         "p.json:/demo/remote_fraction: expected a number in [0, 1], got number -1"});
  }
}

TEST_CASE("sim::ParamTable: describe lists every key with unit, range and meaning", "[sim][quick]") {
  const std::string text = demo_table().describe();
  for (const auto& f : demo_table().fields()) {
    CHECK(text.find("  " + std::string(f.key) + " ") != std::string::npos);
  }
  CHECK(text == "parameters of demo:\n"
                "  key              unit      range            meaning\n"
                "  lp_count         count     [1, 4294967295]  logical processes\n"
                "  buffer_bytes     bytes     [64, 1048576]    buffer per port\n"
                "  offset_count     count     [-100, 100]      signed offset\n"
                "  remote_fraction  fraction  [0, 1]           share of remote events\n"
                "  trace            bool      true or false    record a trace\n"
                "  lookahead_ns     ns        [0.5, 1000000]   least delay between LPs\n"
                "  window_us        us        >= 0             synchronisation window\n"
                "  label            text      non-empty        run label\n");
}
