#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "sim/errors.h"
#include "sim/json_reader.h"

namespace {

using nlohmann::json;
using sim::JsonObjectReader;
using sim::Time;

constexpr std::uint64_t uint_max = std::numeric_limits<std::uint64_t>::max();

json doc(std::string_view text) {
  return sim::parse_json_text("t.json", text).root;
}

/// What an InputError must carry: all four parts, what() spelled out in full.
struct Want {
  std::string file;
  std::string pointer;
  std::string expected;
  std::string got;
  std::string what;
};

void require_input_error(const std::function<void()>& f, const Want& want) {
  try {
    f();
  } catch (const sim::InputError& e) {
    CHECK(e.file() == want.file);
    CHECK(e.json_pointer() == want.pointer);
    CHECK(e.expected() == want.expected);
    CHECK(e.got() == want.got);
    CHECK(std::string(e.what()) == want.what);
    return;
  }
  FAIL("no sim::InputError was thrown");
}

/// A scratch directory for file tests, removed afterwards.
struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("ibnetsim_json_reader_test_" + std::to_string(::getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    const std::filesystem::path file = path / name;
    std::ofstream(file) << text;
    return file.string();
  }
};

} // namespace

TEST_CASE("sim::JsonObjectReader: reads every kind of value", "[sim][quick]") {
  const json root = doc(R"({"count": 8, "offset": -5, "big": 18446744073709551615, "fraction": 0.25, "whole": 2,
                            "on": true, "name": "fast", "mode": "b", "delay_ns": 12, "list": [1, 2, 3],
                            "sub": {"x": 1}})");
  JsonObjectReader r("t.json", root, "");
  CHECK(r.file() == "t.json");
  CHECK(r.pointer() == "");
  CHECK(r.has("count"));
  CHECK_FALSE(r.has("missing"));
  CHECK(r.required_uint("count", 1, 1024) == 8);
  CHECK(r.required_int("offset", -10, 10) == -5);
  CHECK(r.required_uint("big", 0, uint_max) == uint_max);
  CHECK(r.required_double("fraction", 0, 1) == 0.25);
  CHECK(r.required_double("whole", 0, 10) == 2.0);
  CHECK(r.required_bool("on"));
  CHECK(r.required_string("name") == "fast");
  CHECK(r.required_enum("mode", {"a", "b"}) == "b");
  CHECK(r.required_duration("delay_ns", Time::zero(), Time::max()) == Time::from_ns(12));
  CHECK(r.required_array("list", 1, 4).size() == 3);
  JsonObjectReader sub = r.required_object("sub");
  CHECK(sub.pointer() == "/sub");
  CHECK(sub.required_int("x", 0, 1) == 1);
  CHECK_NOTHROW(sub.finish());
  CHECK_NOTHROW(r.finish());
}

TEST_CASE("sim::JsonObjectReader: optional readers give nothing when absent and the value when present",
          "[sim][quick]") {
  const json root = doc(R"({"count": 8, "offset": -5, "fraction": 0.5, "on": false, "name": "n", "mode": "a",
                            "delay_us": 3, "sub": {}, "list": []})");
  JsonObjectReader r("t.json", root, "");
  SECTION("present") {
    CHECK(r.optional_uint("count", 0, 10) == std::optional<std::uint64_t>(8));
    CHECK(r.optional_int("offset", -5, 5) == std::optional<std::int64_t>(-5));
    CHECK(r.optional_double("fraction", 0, 1) == std::optional<double>(0.5));
    CHECK(r.optional_bool("on") == std::optional<bool>(false));
    CHECK(r.optional_string("name") == std::optional<std::string>("n"));
    CHECK(r.optional_enum("mode", {"a"}) == std::optional<std::string>("a"));
    CHECK(r.optional_duration("delay_us", Time::zero(), Time::max()) == std::optional<Time>(Time::from_us(3)));
    REQUIRE(r.optional_object("sub").has_value());
    CHECK(r.optional_object("sub")->pointer() == "/sub");
    REQUIRE(r.optional_array("list", 0, 0) != nullptr);
    CHECK(r.optional_array("list", 0, 0)->empty());
    CHECK_NOTHROW(r.finish());
  }
  SECTION("absent") {
    CHECK_FALSE(r.optional_uint("no_count", 0, 10).has_value());
    CHECK_FALSE(r.optional_int("no_offset", 0, 10).has_value());
    CHECK_FALSE(r.optional_double("no_fraction", 0, 1).has_value());
    CHECK_FALSE(r.optional_bool("no_on").has_value());
    CHECK_FALSE(r.optional_string("no_name").has_value());
    CHECK_FALSE(r.optional_enum("no_mode", {"a"}).has_value());
    CHECK_FALSE(r.optional_duration("no_delay_us", Time::zero(), Time::max()).has_value());
    CHECK_FALSE(r.optional_object("no_sub").has_value());
    CHECK(r.optional_array("no_list", 0, 1) == nullptr);
  }
}

TEST_CASE("sim::JsonObjectReader: skip marks a key as known without reading it", "[sim][quick]") {
  const json root = doc(R"({"handled_elsewhere": [1, "x"], "n": 1})");
  JsonObjectReader r("t.json", root, "");
  r.skip("handled_elsewhere");
  r.skip("not_there");
  CHECK(r.required_uint("n", 0, 1) == 1);
  CHECK_NOTHROW(r.finish());
}

TEST_CASE("sim::JsonObjectReader: nested objects and array elements give nested pointers", "[sim][quick]") {
  const json root = doc(R"({"workload": {"lp_count": "many"}, "hosts": [{"name": "h0"}, {"name": 3}]})");
  JsonObjectReader top("t.json", root, "");
  CHECK(top.pointer_to("workload") == "/workload");
  SECTION("object in object") {
    JsonObjectReader workload = top.required_object("workload");
    CHECK(workload.pointer_to("lp_count") == "/workload/lp_count");
    require_input_error([&] { workload.required_uint("lp_count", 1, 1024); },
                        {"t.json", "/workload/lp_count", "an integer in [1, 1024]", "string \"many\"",
                         "t.json:/workload/lp_count: expected an integer in [1, 1024], got string \"many\""});
  }
  SECTION("object in array") {
    const json& hosts = top.required_array("hosts", 1, 8);
    JsonObjectReader host(top.file(), hosts[1], sim::json_pointer_append(top.pointer_to("hosts"), std::size_t{1}));
    require_input_error([&] { host.required_string("name"); },
                        {"t.json", "/hosts/1/name", "a non-empty string", "number 3",
                         "t.json:/hosts/1/name: expected a non-empty string, got number 3"});
  }
}

TEST_CASE("sim::JsonObjectReader: keys with / and ~ are escaped in pointers", "[sim][quick]") {
  CHECK(sim::json_pointer_append("", "a/b") == "/a~1b");
  CHECK(sim::json_pointer_append("/x", "m~n") == "/x/m~0n");
  CHECK(sim::json_pointer_append("/x", "~1/") == "/x/~01~1");
  CHECK(sim::json_pointer_append("/x", std::size_t{12}) == "/x/12");
  const json root = doc(R"({"a/b": {"m~n": "slow"}})");
  JsonObjectReader top("t.json", root, "");
  JsonObjectReader inner = top.required_object("a/b");
  CHECK(inner.pointer() == "/a~1b");
  require_input_error([&] { inner.required_uint("m~n", 0, 9); },
                      {"t.json", "/a~1b/m~0n", "an integer in [0, 9]", "string \"slow\"",
                       "t.json:/a~1b/m~0n: expected an integer in [0, 9], got string \"slow\""});
}

TEST_CASE("sim::JsonObjectReader: durations convert exactly to whole picoseconds", "[sim][quick]") {
  const json root = doc(R"({"a_ns": 1.5, "b_us": 2, "c_ms": 3, "d_s": 1, "e_ps": 7, "f_ns": 1.001,
                            "g_s": 0.000001, "h_us": 2.0, "i_ns": -1.5, "j_ns": 1e3, "k_us": 1234.567891,
                            "l_s": 9000000, "m_ps": 0.0, "n_ms": 0.000000001})");
  JsonObjectReader r("t.json", root, "");
  const Time any_min = Time::from_ps(std::numeric_limits<std::int64_t>::min());
  CHECK(r.required_duration("a_ns", any_min, Time::max()).ps() == 1'500);
  CHECK(r.required_duration("b_us", any_min, Time::max()).ps() == 2'000'000);
  CHECK(r.required_duration("c_ms", any_min, Time::max()).ps() == 3'000'000'000);
  CHECK(r.required_duration("d_s", any_min, Time::max()).ps() == 1'000'000'000'000);
  CHECK(r.required_duration("e_ps", any_min, Time::max()).ps() == 7);
  CHECK(r.required_duration("f_ns", any_min, Time::max()).ps() == 1'001);
  CHECK(r.required_duration("g_s", any_min, Time::max()).ps() == 1'000'000);
  CHECK(r.required_duration("h_us", any_min, Time::max()).ps() == 2'000'000);
  CHECK(r.required_duration("i_ns", any_min, Time::max()).ps() == -1'500);
  CHECK(r.required_duration("j_ns", any_min, Time::max()).ps() == 1'000'000);
  CHECK(r.required_duration("k_us", any_min, Time::max()).ps() == 1'234'567'891);
  CHECK(r.required_duration("l_s", any_min, Time::max()).ps() == 9'000'000'000'000'000'000);
  CHECK(r.required_duration("m_ps", any_min, Time::max()).ps() == 0);
  CHECK(r.required_duration("n_ms", any_min, Time::max()).ps() == 1);

  CHECK(sim::duration_unit_ps("x_ps") == 1);
  CHECK(sim::duration_unit_ps("x_ns") == 1'000);
  CHECK(sim::duration_unit_ps("x_us") == 1'000'000);
  CHECK(sim::duration_unit_ps("x_ms") == 1'000'000'000);
  CHECK(sim::duration_unit_ps("x_s") == 1'000'000'000'000);
  CHECK(sim::duration_unit_ps("x_bytes") == 0);
  CHECK(sim::duration_unit_ps("_s") == 0);
  CHECK(sim::format_duration(Time::from_ps(1'500), "x_ns") == "1.5");
  CHECK(sim::format_duration(Time::from_us(2), "x_us") == "2");
  CHECK(sim::format_duration(Time::from_ps(-1), "x_ns") == "-0.001");
  CHECK(sim::format_duration(Time::from_ps(1'000'001), "x_s") == "0.000001000001");
  CHECK(sim::format_duration(Time::max(), "x_s") == "9223372.036854775807");
}

TEST_CASE("sim::describe_json_value: type and compact value", "[sim][quick]") {
  CHECK(sim::describe_json_value(json("fast")) == "string \"fast\"");
  CHECK(sim::describe_json_value(json(-3)) == "number -3");
  CHECK(sim::describe_json_value(json(3.0)) == "number 3.0");
  CHECK(sim::describe_json_value(json(0.5)) == "number 0.5");
  CHECK(sim::describe_json_value(json::object({{"a", 1}})) == "object");
  CHECK(sim::describe_json_value(json::array({1, 2, 3, 4})) == "array of 4");
  CHECK(sim::describe_json_value(json(nullptr)) == "null");
  CHECK(sim::describe_json_value(json(true)) == "boolean true");
  CHECK(sim::describe_json_value(json(false)) == "boolean false");
  CHECK(sim::describe_json_value(json("a\"b")) == "string \"a\\\"b\"");
  // 100 characters: cut to 57 bytes of the dump (the quote and 56 letters) and "...".
  CHECK(sim::describe_json_value(json(std::string(100, 'x'))) == "string \"" + std::string(56, 'x') + "...");
  // Never cut inside a UTF-8 sequence: é is 2 bytes, so the cut backs off to a whole character.
  std::string accents;
  for (int i = 0; i < 40; ++i) {
    accents += "\xc3\xa9";
  }
  CHECK(sim::describe_json_value(json(accents)) == "string \"" + accents.substr(0, 56) + "...");
}

TEST_CASE("sim::JsonObjectReader: unknown key", "[sim][quick]") {
  SECTION("after every other key was read") {
    const json root = doc(R"({"a": 1, "b": 2, "zz": 3})");
    JsonObjectReader r("t.json", root, "");
    r.required_uint("a", 0, 9);
    r.required_uint("b", 0, 9);
    require_input_error([&] { r.finish(); }, {"t.json", "/zz", "one of the keys a, b", "unknown key \"zz\"",
                                              "t.json:/zz: expected one of the keys a, b, got unknown key \"zz\""});
  }
  SECTION("keys are listed in the order asked, once each, absent optional ones included") {
    const json root = doc(R"({"b": 1, "a": 2, "typo": 3})");
    JsonObjectReader r("t.json", root, "");
    r.required_uint("b", 0, 9);
    r.optional_uint("c", 0, 9);
    r.skip("a");
    r.required_uint("b", 0, 9);
    require_input_error([&] { r.finish(); }, {"t.json", "/typo", "one of the keys b, c, a", "unknown key \"typo\"",
                                              "t.json:/typo: expected one of the keys b, c, a, got unknown key "
                                              "\"typo\""});
  }
  SECTION("has() alone does not make a key known") {
    const json root = doc(R"({"a": 1})");
    JsonObjectReader r("t.json", root, "");
    CHECK(r.has("a"));
    require_input_error([&] { r.finish(); }, {"t.json", "/a", "no keys in this object", "unknown key \"a\"",
                                              "t.json:/a: expected no keys in this object, got unknown key \"a\""});
  }
  SECTION("in a nested object, with an escaped key") {
    const json root = doc(R"({"sub": {"x": 1, "t/y": 2}})");
    JsonObjectReader r("t.json", root, "");
    JsonObjectReader sub = r.required_object("sub");
    sub.required_uint("x", 0, 9);
    require_input_error([&] { sub.finish(); },
                        {"t.json", "/sub/t~1y", "one of the keys x", "unknown key \"t/y\"",
                         "t.json:/sub/t~1y: expected one of the keys x, got unknown key \"t/y\""});
  }
  SECTION("the first of several unknown keys, in key order") {
    const json root = doc(R"({"k": 1, "zeta": 2, "alpha": 3})");
    JsonObjectReader r("t.json", root, "");
    r.required_uint("k", 0, 9);
    require_input_error([&] { r.finish(); }, {"t.json", "/alpha", "one of the keys k", "unknown key \"alpha\"",
                                              "t.json:/alpha: expected one of the keys k, got unknown key \"alpha\""});
  }
}

TEST_CASE("sim::JsonObjectReader: wrong JSON type", "[sim][quick]") {
  const json root = doc(R"({"s": "fast", "f": 3.0, "g": 2.5, "t": true, "n": 7, "z": null, "l": [1, 2],
                            "o": {"k": 1}, "d_ns": "10ns", "e": 1})");
  JsonObjectReader r("t.json", root, "/cfg");
  SECTION("string for an unsigned integer") {
    require_input_error([&] { r.required_uint("s", 1, 1024); },
                        {"t.json", "/cfg/s", "an integer in [1, 1024]", "string \"fast\"",
                         "t.json:/cfg/s: expected an integer in [1, 1024], got string \"fast\""});
  }
  SECTION("3.0 for an integer") {
    require_input_error([&] { r.required_int("f", -10, 10); },
                        {"t.json", "/cfg/f", "an integer in [-10, 10]", "number 3.0",
                         "t.json:/cfg/f: expected an integer in [-10, 10], got number 3.0"});
  }
  SECTION("2.5 for an unsigned integer") {
    require_input_error([&] { r.required_uint("g", 0, 9); },
                        {"t.json", "/cfg/g", "an integer in [0, 9]", "number 2.5",
                         "t.json:/cfg/g: expected an integer in [0, 9], got number 2.5"});
  }
  SECTION("boolean for a number") {
    require_input_error([&] { r.required_double("t", 0, 1); },
                        {"t.json", "/cfg/t", "a number in [0, 1]", "boolean true",
                         "t.json:/cfg/t: expected a number in [0, 1], got boolean true"});
  }
  SECTION("number for a string") {
    require_input_error([&] { r.required_string("n"); }, {"t.json", "/cfg/n", "a non-empty string", "number 7",
                                                          "t.json:/cfg/n: expected a non-empty string, got number 7"});
  }
  SECTION("null for a boolean") {
    require_input_error([&] { r.optional_bool("z"); },
                        {"t.json", "/cfg/z", "a boolean", "null", "t.json:/cfg/z: expected a boolean, got null"});
  }
  SECTION("array for an object") {
    require_input_error([&] { r.required_object("l"); }, {"t.json", "/cfg/l", "an object", "array of 2",
                                                          "t.json:/cfg/l: expected an object, got array of 2"});
  }
  SECTION("object for an array") {
    require_input_error([&] { r.required_array("o", 1, 4); },
                        {"t.json", "/cfg/o", "an array of 1 to 4 elements", "object",
                         "t.json:/cfg/o: expected an array of 1 to 4 elements, got object"});
  }
  SECTION("string for a duration") {
    require_input_error([&] { r.required_duration("d_ns", Time::zero(), Time::from_ns(1000)); },
                        {"t.json", "/cfg/d_ns", "a duration in [0, 1000] ns", "string \"10ns\"",
                         "t.json:/cfg/d_ns: expected a duration in [0, 1000] ns, got string \"10ns\""});
  }
  SECTION("number for a choice") {
    require_input_error(
        [&] {
          r.required_enum("e", {"a", "b"});
        },
        {"t.json", "/cfg/e", "one of \"a\", \"b\"", "number 1",
         "t.json:/cfg/e: expected one of \"a\", \"b\", got number 1"});
  }
}

TEST_CASE("sim::JsonObjectReader: value out of range", "[sim][quick]") {
  const json root = doc(R"({"big": 2000, "neg": -3, "low": -11, "huge": 9223372036854775808, "frac": 1.5,
                            "below": -0.5, "zero": 0, "mode": "c", "empty": "", "five": [1, 2, 3, 4, 5],
                            "slow_ns": 1001, "far_s": 10000000000, "farf_s": 1e10, "mid_ns": 3})");
  JsonObjectReader r("t.json", root, "");
  SECTION("unsigned above max") {
    require_input_error([&] { r.required_uint("big", 1, 1024); },
                        {"t.json", "/big", "an integer in [1, 1024]", "number 2000",
                         "t.json:/big: expected an integer in [1, 1024], got number 2000"});
  }
  SECTION("negative for unsigned") {
    require_input_error([&] { r.required_uint("neg", 0, 10); },
                        {"t.json", "/neg", "an integer in [0, 10]", "number -3",
                         "t.json:/neg: expected an integer in [0, 10], got number -3"});
  }
  SECTION("signed below min") {
    require_input_error([&] { r.required_int("low", -10, 10); },
                        {"t.json", "/low", "an integer in [-10, 10]", "number -11",
                         "t.json:/low: expected an integer in [-10, 10], got number -11"});
  }
  SECTION("beyond int64") {
    require_input_error(
        [&] {
          r.required_int("huge", std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
        },
        {"t.json", "/huge", "an integer", "number 9223372036854775808",
         "t.json:/huge: expected an integer, got number 9223372036854775808"});
  }
  SECTION("number above max") {
    require_input_error([&] { r.required_double("frac", 0, 1); },
                        {"t.json", "/frac", "a number in [0, 1]", "number 1.5",
                         "t.json:/frac: expected a number in [0, 1], got number 1.5"});
  }
  SECTION("number below a one-sided min") {
    require_input_error(
        [&] { r.required_double("below", 0, std::numeric_limits<double>::infinity()); },
        {"t.json", "/below", "a number >= 0", "number -0.5", "t.json:/below: expected a number >= 0, got number -0.5"});
  }
  SECTION("unsigned below a one-sided min") {
    require_input_error(
        [&] { r.required_uint("zero", 1, uint_max); },
        {"t.json", "/zero", "an integer >= 1", "number 0", "t.json:/zero: expected an integer >= 1, got number 0"});
  }
  SECTION("not one of the choices") {
    require_input_error(
        [&] {
          r.required_enum("mode", {"a", "b"});
        },
        {"t.json", "/mode", "one of \"a\", \"b\"", "string \"c\"",
         "t.json:/mode: expected one of \"a\", \"b\", got string \"c\""});
  }
  SECTION("empty string") {
    require_input_error([&] { r.required_string("empty"); },
                        {"t.json", "/empty", "a non-empty string", "string \"\"",
                         "t.json:/empty: expected a non-empty string, got string \"\""});
  }
  SECTION("array too long") {
    require_input_error([&] { r.required_array("five", 1, 4); },
                        {"t.json", "/five", "an array of 1 to 4 elements", "array of 5",
                         "t.json:/five: expected an array of 1 to 4 elements, got array of 5"});
  }
  SECTION("array of the wrong exact size") {
    require_input_error([&] { r.optional_array("five", 2, 2); },
                        {"t.json", "/five", "an array of exactly 2 elements", "array of 5",
                         "t.json:/five: expected an array of exactly 2 elements, got array of 5"});
  }
  SECTION("duration above max") {
    require_input_error([&] { r.required_duration("slow_ns", Time::zero(), Time::from_ns(1000)); },
                        {"t.json", "/slow_ns", "a duration in [0, 1000] ns", "number 1001",
                         "t.json:/slow_ns: expected a duration in [0, 1000] ns, got number 1001"});
  }
  SECTION("duration outside fractional bounds, shown in the key's unit") {
    require_input_error([&] { r.required_duration("mid_ns", Time::from_ps(1500), Time::from_ps(2250)); },
                        {"t.json", "/mid_ns", "a duration in [1.5, 2.25] ns", "number 3",
                         "t.json:/mid_ns: expected a duration in [1.5, 2.25] ns, got number 3"});
  }
  SECTION("integer duration beyond Time's range") {
    require_input_error([&] { r.required_duration("far_s", Time::zero(), Time::max()); },
                        {"t.json", "/far_s", "a duration >= 0 s", "number 10000000000",
                         "t.json:/far_s: expected a duration >= 0 s, got number 10000000000"});
  }
  SECTION("float duration beyond Time's range") {
    require_input_error([&] { r.required_duration("farf_s", Time::zero(), Time::max()); },
                        {"t.json", "/farf_s", "a duration >= 0 s", "number 10000000000.0",
                         "t.json:/farf_s: expected a duration >= 0 s, got number 10000000000.0"});
  }
}

TEST_CASE("sim::JsonObjectReader: missing required key", "[sim][quick]") {
  const json root = doc(R"({"workload": {}})");
  JsonObjectReader top("t.json", root, "");
  JsonObjectReader r = top.required_object("workload");
  SECTION("integer") {
    require_input_error([&] { r.required_uint("lp_count", 1, 1024); },
                        {"t.json", "/workload/lp_count", "an integer in [1, 1024] (required key \"lp_count\")",
                         "nothing",
                         "t.json:/workload/lp_count: expected an integer in [1, 1024] (required key \"lp_count\"), "
                         "got nothing"});
  }
  SECTION("object") {
    require_input_error([&] { top.required_object("topology"); },
                        {"t.json", "/topology", "an object (required key \"topology\")", "nothing",
                         "t.json:/topology: expected an object (required key \"topology\"), got nothing"});
  }
  SECTION("duration") {
    require_input_error([&] { r.required_duration("lookahead_ns", Time::zero(), Time::max()); },
                        {"t.json", "/workload/lookahead_ns", "a duration >= 0 ns (required key \"lookahead_ns\")",
                         "nothing",
                         "t.json:/workload/lookahead_ns: expected a duration >= 0 ns (required key "
                         "\"lookahead_ns\"), got nothing"});
  }
  SECTION("choice") {
    require_input_error(
        [&] {
          r.required_enum("type", {"phold", "pingpong"});
        },
        {"t.json", "/workload/type", "one of \"phold\", \"pingpong\" (required key \"type\")", "nothing",
         "t.json:/workload/type: expected one of \"phold\", \"pingpong\" (required key \"type\"), "
         "got nothing"});
  }
  SECTION("array") {
    require_input_error([&] { r.required_array("hosts", 1, std::numeric_limits<std::size_t>::max()); },
                        {"t.json", "/workload/hosts", "an array of at least 1 element (required key \"hosts\")",
                         "nothing",
                         "t.json:/workload/hosts: expected an array of at least 1 element (required key \"hosts\"), "
                         "got nothing"});
  }
}

TEST_CASE("sim::JsonObjectReader: not an object", "[sim][quick]") {
  SECTION("array") {
    const json v = json::array({1, 2});
    require_input_error([&] { JsonObjectReader("t.json", v, "/hosts"); },
                        {"t.json", "/hosts", "an object", "array of 2",
                         "t.json:/hosts: expected an object, got array "
                         "of 2"});
  }
  SECTION("the whole document is a number") {
    const json v = doc("5");
    require_input_error([&] { JsonObjectReader("t.json", v, ""); },
                        {"t.json", "", "an object", "number 5", "t.json:/: expected an object, got number 5"});
  }
  SECTION("null") {
    const json v = json(nullptr);
    require_input_error([&] { JsonObjectReader("t.json", v, "/x"); },
                        {"t.json", "/x", "an object", "null", "t.json:/x: expected an object, got null"});
  }
  SECTION("optional nested object that is a string") {
    const json root = doc(R"({"sub": "x"})");
    JsonObjectReader r("t.json", root, "");
    require_input_error([&] { r.optional_object("sub"); }, {"t.json", "/sub", "an object", "string \"x\"",
                                                            "t.json:/sub: expected an object, got string "
                                                            "\"x\""});
  }
}

TEST_CASE("sim::parse_json_text: malformed JSON reports line and column", "[sim][quick]") {
  const auto parse_error = [](std::string_view text, const std::string& got) {
    require_input_error([&] { sim::parse_json_text("bad.json", text); },
                        {"bad.json", "", "valid JSON", got, "bad.json:/: expected valid JSON, got " + got});
  };
  SECTION("bad literal on line 3") {
    parse_error("{\n  \"a\": 1,\n  \"b\": tru\n}",
                "parse error at line 3, column 11: syntax error while parsing value - invalid literal");
  }
  SECTION("trailing comma") {
    parse_error("{\"a\": 1,\n\"b\": 2,\n}",
                "parse error at line 3, column 1: syntax error while parsing object key - unexpected '}'; expected "
                "string literal");
  }
  SECTION("unterminated object") {
    parse_error("{\"a\": 1", "parse error at line 1, column 8: syntax error while parsing object - unexpected end "
                             "of input; expected '}'");
  }
  SECTION("empty text") {
    parse_error("", "parse error at line 1, column 1: syntax error while parsing value - unexpected end of input; "
                    "expected '[', '{', or a literal");
  }
  SECTION("raw newline inside a string") {
    parse_error("{\"a\": \"x\ny\"}", "parse error at line 1, column 9: syntax error while parsing value - invalid "
                                     "string: control character U+000A (LF) must be escaped to \\u000A or \\n");
  }
  SECTION("text after the value") {
    parse_error("{}\n\n  x", "parse error at line 3, column 3: syntax error while parsing value - invalid literal; "
                             "expected end of input");
  }
  SECTION("comments are not JSON") {
    parse_error("{\n/* c */}", "parse error at line 2, column 1: syntax error while parsing object key - invalid "
                               "literal; expected string literal");
  }
  SECTION("number too large for a double") {
    parse_error("[1e400]", "number overflow parsing '1e400'");
  }
}

TEST_CASE("sim::parse_json_text: duplicate keys", "[sim][quick]") {
  SECTION("in a nested object") {
    require_input_error([] { sim::parse_json_text("t.json", R"({"a": {"b": 1, "c": 2, "b": 3}})"); },
                        {"t.json", "/a/b", "unique keys in each object", "duplicate key \"b\"",
                         "t.json:/a/b: expected unique keys in each object, got duplicate key \"b\""});
  }
  SECTION("in an object inside an array") {
    require_input_error([] { sim::parse_json_text("t.json", R"({"l": [{"x": 1}, 7, {"x": 1, "x/": 1, "x": 2}]})"); },
                        {"t.json", "/l/2/x", "unique keys in each object", "duplicate key \"x\"",
                         "t.json:/l/2/x: expected unique keys in each object, got duplicate key \"x\""});
  }
  SECTION("same key in sibling objects is fine") {
    CHECK_NOTHROW(sim::parse_json_text("t.json", R"({"a": {"x": 1}, "b": {"x": 1}, "x": [{"x": 1}, {"x": 2}]})"));
  }
}

TEST_CASE("sim::load_json_file: reads a file, names it in errors", "[sim][quick]") {
  const TempDir dir;
  SECTION("good file") {
    const std::string path = dir.write("good.json", R"({"lp_count": 8})");
    const sim::JsonDocument d = sim::load_json_file(path);
    CHECK(d.file == path);
    CHECK(d.root.at("lp_count") == 8);
  }
  SECTION("malformed file") {
    const std::string path = dir.write("bad.json", "{\"lp_count\": 8,,}");
    const std::string got =
        "parse error at line 1, column 16: syntax error while parsing object key - unexpected ','; expected string "
        "literal";
    require_input_error([&] { sim::load_json_file(path); },
                        {path, "", "valid JSON", got, path + ":/: expected valid JSON, got " + got});
  }
}

TEST_CASE("sim::load_json_file: unreadable file", "[sim][quick]") {
  const TempDir dir;
  SECTION("missing file") {
    const std::string path = (dir.path / "missing.json").string();
    require_input_error([&] { sim::load_json_file(path); },
                        {path, "", "a readable file", "No such file or directory",
                         path + ":/: expected a readable file, got No such file or directory"});
  }
  SECTION("a directory") {
    const std::string path = dir.path.string();
    require_input_error(
        [&] { sim::load_json_file(path); },
        {path, "", "a readable file", "Is a directory", path + ":/: expected a readable file, got Is a directory"});
  }
}

TEST_CASE("sim::JsonObjectReader: duration not a whole number of picoseconds", "[sim][quick]") {
  const json root = doc(R"({"a_ns": 0.0005, "b_us": 1.0000005, "c_s": 1e-13, "d_ps": 0.5, "e_ps": 1.5})");
  JsonObjectReader r("t.json", root, "");
  const auto check = [&](const char* key, const std::string& got) {
    require_input_error([&] { r.required_duration(key, Time::zero(), Time::max()); },
                        {"t.json", std::string("/") + key, "a duration in whole picoseconds", got,
                         "t.json:/" + std::string(key) + ": expected a duration in whole picoseconds, got " + got});
  };
  SECTION("half a picosecond in ns") {
    check("a_ns", "number 0.0005");
  }
  SECTION("half a picosecond in us") {
    check("b_us", "number 1.0000005");
  }
  SECTION("a tenth of a picosecond in s") {
    check("c_s", "number 1e-13");
  }
  SECTION("half a picosecond") {
    check("d_ps", "number 0.5");
  }
  SECTION("one and a half picoseconds") {
    check("e_ps", "number 1.5");
  }
}

TEST_CASE("sim::apply_override: bad assignment", "[sim][quick]") {
  json root = doc(R"({"workload": {"lp_count": 8}, "list": [1, 2, 3], "none": []})");
  const json original = root;
  const auto bad = [&](std::string_view assignment, const std::string& pointer, const std::string& expected,
                       const std::string& got) {
    require_input_error([&] { sim::apply_override(root, assignment, "--set"); },
                        {"--set", pointer, expected, got,
                         "--set:" + (pointer.empty() ? "/" : pointer) + ": expected " + expected + ", got " + got});
    CHECK(root == original);
  };
  SECTION("no '='") {
    bad("workload/type", "workload/type", "\"/json/pointer=value\"", "\"workload/type\"");
  }
  SECTION("pointer without a leading '/'") {
    bad("workload/type=phold", "workload/type", "\"/json/pointer=value\"", "\"workload/type=phold\"");
  }
  SECTION("empty pointer") {
    bad("=5", "", "\"/json/pointer=value\"", "\"=5\"");
  }
  SECTION("parent is a number") {
    bad("/workload/lp_count/x=1", "/workload/lp_count/x", "an existing object or array at /workload/lp_count",
        "number 8");
  }
  SECTION("a number on the way to the parent") {
    bad("/workload/lp_count/x/y=1", "/workload/lp_count/x/y", "an existing object or array at /workload/lp_count/x",
        "number 8 at /workload/lp_count");
  }
  SECTION("array index past the end") {
    bad("/list/3=1", "/list/3", "an index in [0, 2] into the array at /list", "\"3\"");
  }
  SECTION("array index that is not a number") {
    bad("/list/x=1", "/list/x", "an index in [0, 2] into the array at /list", "\"x\"");
  }
  SECTION("append marker") {
    bad("/list/-=1", "/list/-", "an index in [0, 2] into the array at /list", "\"-\"");
  }
  SECTION("index with a leading zero") {
    bad("/list/01=1", "/list/01", "an index in [0, 2] into the array at /list", "\"01\"");
  }
  SECTION("index into an empty array") {
    bad("/none/0=1", "/none/0", "an index into the array at /none, which is empty", "\"0\"");
  }
  SECTION("array index past the end on the way to the parent") {
    bad("/list/7/x=1", "/list/7/x", "an existing object or array at /list/7", "nothing at /list/7");
  }
  SECTION("stray '~'") {
    bad("/workload/a~2=1", "/workload/a~2", "a JSON pointer with '~' written only as ~0 or ~1", "\"/workload/a~2\"");
  }
  SECTION("duplicate key in the value") {
    bad(R"(/workload={"a": 1, "a": 2})", "/workload/a", "unique keys in each object", "duplicate key \"a\"");
  }
}

TEST_CASE("sim::apply_override: sets numbers, strings, objects and array elements", "[sim][quick]") {
  json root = doc(R"({"workload": {"lp_count": 8, "type": "x"}, "list": [1, 2, 3]})");
  SECTION("number") {
    sim::apply_override(root, "/workload/lp_count=16", "--set");
    CHECK(root["workload"]["lp_count"] == 16);
    CHECK(root["workload"]["lp_count"].is_number_unsigned());
  }
  SECTION("fraction") {
    sim::apply_override(root, "/workload/lp_count=0.5", "--set");
    CHECK(root["workload"]["lp_count"] == 0.5);
  }
  SECTION("bare word is a string") {
    sim::apply_override(root, "/workload/type=phold", "--set");
    CHECK(root["workload"]["type"] == "phold");
  }
  SECTION("quoted string") {
    sim::apply_override(root, R"(/workload/type="16")", "--set");
    CHECK(root["workload"]["type"] == "16");
  }
  SECTION("string containing '='") {
    sim::apply_override(root, "/workload/type=a=b", "--set");
    CHECK(root["workload"]["type"] == "a=b");
  }
  SECTION("empty value is an empty string") {
    sim::apply_override(root, "/workload/type=", "--set");
    CHECK(root["workload"]["type"] == "");
  }
  SECTION("new key, boolean") {
    sim::apply_override(root, "/workload/trace=true", "--set");
    CHECK(root["workload"]["trace"] == true);
  }
  SECTION("missing objects on the way are created") {
    sim::apply_override(root, "/profiles/cx4/max_inline_data_bytes=256", "--set");
    sim::apply_override(root, "/workload/sub/x=1", "--set");
    CHECK(root["profiles"] == json::object({{"cx4", json::object({{"max_inline_data_bytes", 256}})}}));
    CHECK(root["workload"]["sub"] == json::object({{"x", 1}}));
  }
  SECTION("object") {
    sim::apply_override(root, R"(/workload={"lp_count": 2})", "--set");
    CHECK(root["workload"] == json::object({{"lp_count", 2}}));
  }
  SECTION("array element") {
    sim::apply_override(root, "/list/1=[4, 5]", "--set");
    CHECK(root["list"] == json::array({1, json::array({4, 5}), 3}));
  }
  SECTION("escaped keys") {
    sim::apply_override(root, "/workload/a~1b=1", "--set");
    sim::apply_override(root, "/workload/t~0x=2", "--set");
    CHECK(root["workload"]["a/b"] == 1);
    CHECK(root["workload"]["t~x"] == 2);
  }
  SECTION("a new key is caught by strict reading afterwards") {
    sim::apply_override(root, "/workload/lp_cuont=4", "--set");
    JsonObjectReader r("t.json", root.at("workload"), "/workload");
    r.required_uint("lp_count", 1, 1024);
    r.required_string("type");
    require_input_error([&] { r.finish(); },
                        {"t.json", "/workload/lp_cuont", "one of the keys lp_count, type", "unknown key \"lp_cuont\"",
                         "t.json:/workload/lp_cuont: expected one of the keys lp_count, type, got unknown key "
                         "\"lp_cuont\""});
  }
}

TEST_CASE("sim::parse_json_text: nesting deeper than 256 levels is bad input at its pointer, not a crash",
          "[sim][quick]") {
  const auto nested = [](std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  CHECK_NOTHROW(sim::parse_json_text("deep.json", nested(256)));
  // Far deeper (a hostile input) used to overflow the stack in code that walks the document recursively.
  for (const std::size_t depth : {257, 100'000}) {
    try {
      sim::parse_json_text("deep.json", nested(depth));
      FAIL("no InputError for depth " << depth);
    } catch (const sim::InputError& e) {
      CHECK(e.file() == "deep.json");
      CHECK(e.expected() == "objects and arrays nested at most 256 deep");
      CHECK(e.got() == "deeper nesting");
      CHECK(e.json_pointer().size() == 256 * 2); // "/0" per enclosing array
    }
  }
}

TEST_CASE("sim::load_json_file: an input without end (/dev/zero) is refused after 256 MiB", "[sim]") {
  if (!std::filesystem::is_character_file("/dev/zero"))
    return;
  try {
    sim::load_json_file("/dev/zero");
    FAIL("no InputError");
  } catch (const sim::InputError& e) {
    CHECK(e.file() == "/dev/zero");
    CHECK(e.expected() == "a JSON file of at most 256 MiB");
  }
}
