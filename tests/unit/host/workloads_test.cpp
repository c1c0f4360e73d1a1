// The workload registry against itself and against scenarios/schema/scenario.schema.json: every registered type
// reads with its options' defaults and reports them in its config; the schema lists exactly the registered types
// and, for each, exactly the options of its table with the same defaults, required keys, ranges and choices; the
// `ibnetsim params workload` listings come from the tables; a choice option's errors are the JSON reader's own.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "models/host/workloads.h"
#include "sim/errors.h"
#include "sim/json_reader.h"

using namespace ib::host;

namespace {

/// A workload object of `type` with its required options set (hosts h0 and h1, numbers at their minimum).
nlohmann::json minimal(const WorkloadType& type) {
  nlohmann::json w = {{"type", type.name}};
  int host = 0; // client and server differ
  for (const WorkloadOption& option : type.options().options) {
    if (option_use(option, type).kind != OptionUse::Kind::required)
      continue;
    if (option.kind == OptionKind::host)
      w[std::string(option.key)] = std::string(host++ == 0 ? "h0" : "h1");
    else if (option.kind == OptionKind::number)
      w[std::string(option.key)] = option.min;
    else
      FAIL("no minimal value for required option " << option.key);
  }
  return w;
}

std::unique_ptr<Workload> read(const nlohmann::json& w) {
  sim::JsonObjectReader reader("t.json", w, "/workloads/0");
  return read_workload(reader, "t.json", "/workloads/0", 1);
}

/// The schema's definition of a property: a $ref's target with the property's own keys over it.
nlohmann::json resolved(const nlohmann::json& defs, const nlohmann::json& property) {
  nlohmann::json out = nlohmann::json::object();
  if (property.contains("$ref")) {
    const std::string ref = property.at("$ref").get<std::string>();
    REQUIRE(ref.rfind("#/$defs/", 0) == 0);
    out = defs.at(ref.substr(8));
  }
  for (const auto& [key, value] : property.items())
    if (key != "$ref")
      out[key] = value;
  return out;
}

/// Counts every type of the registry that shares `type`'s option table: its family.
std::size_t family_size(const WorkloadType& type) {
  return static_cast<std::size_t>(std::count_if(workload_registry().begin(), workload_registry().end(),
                                                [&](const WorkloadType& t) { return t.options == type.options; }));
}

} // namespace

TEST_CASE("workloads: every registered type reads with its defaults and reports them in its config", "[host]") {
  REQUIRE(workload_registry().size() == workload_types().size());
  std::set<std::string> names;
  for (const WorkloadType& type : workload_registry()) {
    INFO(type.name);
    CHECK(names.insert(std::string(type.name)).second);
    CHECK(find_workload_type(type.name) == &type);
    CHECK(!type.description.empty());
    const auto workload = read(minimal(type));
    REQUIRE(workload);
    CHECK(workload->type() == type.name);
    const nlohmann::ordered_json config = workload->config();
    CHECK(config.at("type") == type.name);
    // Every key of the config but the derived ones is an option of the table, at its default.
    for (const auto& [key, value] : config.items()) {
      INFO(key);
      if (key == "type" || key == "sizes_bytes" || key == "size_weights")
        continue;
      const auto& options = type.options().options;
      const auto row = std::find_if(options.begin(), options.end(), [&](const auto& o) { return o.key == key; });
      REQUIRE(row != options.end());
      const OptionUse use = option_use(*row, type);
      REQUIRE(use.kind != OptionUse::Kind::absent);
      if (use.kind == OptionUse::Kind::value)
        CHECK(value == use.value);
      if (use.kind == OptionUse::Kind::type_name)
        CHECK(value == type.name);
    }
    // The message sizes derive from size_bytes's default.
    if (config.contains("sizes_bytes")) {
      const auto& options = type.options().options;
      const auto row =
          std::find_if(options.begin(), options.end(), [](const auto& o) { return o.key == "size_bytes"; });
      REQUIRE(row != options.end());
      CHECK(config.at("sizes_bytes") == nlohmann::json::array({option_use(*row, type).value}));
    }
  }
}

TEST_CASE("workloads: each option has one use for its whole family or one per type", "[host]") {
  for (const WorkloadType& type : workload_registry()) {
    INFO(type.name);
    CHECK(type.column < family_size(type));
    std::set<std::string_view> keys;
    for (const WorkloadOption& option : type.options().options) {
      INFO(option.key);
      CHECK(keys.insert(option.key).second);
      CHECK((option.uses.size() == 1 || option.uses.size() == family_size(type)));
      CHECK(!option.unit.empty());
      CHECK(!option.meaning.empty());
      CHECK(option.min <= option.max);
      CHECK((option.kind == OptionKind::choice) == !option.choices.empty());
    }
  }
}

TEST_CASE("workloads: the scenario schema lists exactly the registered types", "[host]") {
  std::ifstream file(IBNETSIM_SOURCE_DIR "/scenarios/schema/scenario.schema.json");
  REQUIRE(file);
  const nlohmann::json schema = nlohmann::json::parse(file);
  const nlohmann::json& workload = schema.at("$defs").at("workload");
  CHECK(workload.at("properties").at("type").at("enum").get<std::vector<std::string>>() == workload_types());
  std::vector<std::string> dispatched;
  for (const nlohmann::json& branch : workload.at("allOf")) {
    const std::string type = branch.at("if").at("properties").at("type").at("const").get<std::string>();
    CHECK(branch.at("then").at("$ref") == "#/$defs/" + type);
    dispatched.push_back(type);
  }
  CHECK(dispatched == workload_types());
}

TEST_CASE("workloads: the scenario schema gives each type exactly its table's options, defaults and ranges", "[host]") {
  std::ifstream file(IBNETSIM_SOURCE_DIR "/scenarios/schema/scenario.schema.json");
  REQUIRE(file);
  const nlohmann::json schema = nlohmann::json::parse(file);
  const nlohmann::json& defs = schema.at("$defs");
  for (const WorkloadType& type : workload_registry()) {
    INFO(type.name);
    const nlohmann::json& def = defs.at(std::string(type.name));
    CHECK(def.at("additionalProperties") == false);
    std::set<std::string> in_table = {"type"}, required = {"type"};
    for (const WorkloadOption& option : type.options().options) {
      const OptionUse use = option_use(option, type);
      if (use.kind == OptionUse::Kind::absent)
        continue;
      const std::string key(option.key);
      INFO(key);
      in_table.insert(key);
      if (use.kind == OptionUse::Kind::required)
        required.insert(key);
      if (!def.at("properties").contains(key))
        continue; // reported below, by the comparison of the key sets
      const nlohmann::json p = resolved(defs, def.at("properties").at(key));
      switch (use.kind) {
      case OptionUse::Kind::value:
        REQUIRE(p.contains("default"));
        CHECK(p.at("default") == use.value);
        break;
      case OptionUse::Kind::type_name:
        CHECK(p.value("default", nlohmann::json()) == type.name);
        break;
      default:
        CHECK(!p.contains("default"));
      }
      // A const is a value some other option forces (a latency test's tx_depth): the default, the only value.
      if (p.contains("const"))
        CHECK(p.at("const") == use.value);
      const double min = std::isnan(use.min) ? option.min : use.min;
      switch (option.kind) {
      case OptionKind::integer:
        if (p.contains("enum")) { // mtu_bytes: its powers of two span the range
          CHECK(p.at("enum").front() == min);
          CHECK(p.at("enum").back() == option.max);
        } else if (!p.contains("const")) {
          CHECK(p.at("type") == "integer");
          CHECK(p.at("minimum") == min);
          CHECK(p.at("maximum") == option.max);
        }
        break;
      case OptionKind::number:
      case OptionKind::duration:
        CHECK(p.at("type") == "number");
        CHECK(p.at("minimum") == min);
        CHECK(p.at("maximum") == option.max);
        break;
      case OptionKind::flag:
        if (!p.contains("const"))
          CHECK(p.at("type") == "boolean");
        break;
      case OptionKind::choice:
        CHECK(p.at("enum") == nlohmann::json(std::vector<std::string>(option.choices.begin(), option.choices.end())));
        break;
      case OptionKind::hosts:
        CHECK(p.at("type") == "array");
        CHECK(p.at("minItems") == min);
        CHECK(p.at("maxItems") == option.max);
        break;
      case OptionKind::host:
        CHECK(p.at("pattern").is_string());
        break;
      case OptionKind::text:
        CHECK(p.at("type") == "string");
        break;
      case OptionKind::size_distribution:
        CHECK(p.at("type") == "object");
        break;
      }
    }
    std::set<std::string> in_schema;
    for (const auto& [key, value] : def.at("properties").items())
      in_schema.insert(key);
    CHECK(in_schema == in_table);
    CHECK(def.at("required").get<std::set<std::string>>() == required);
  }
}

TEST_CASE("workloads: the params listings come from the registry and the tables", "[host]") {
  const std::string types = describe_workload_types();
  for (const WorkloadType& type : workload_registry()) {
    INFO(type.name);
    CHECK(types.find("  " + std::string(type.name) + " ") != std::string::npos);
    CHECK(types.find(std::string(type.description)) != std::string::npos);
    const std::string options = describe_workload_options(type);
    CHECK(options.rfind("options of workload " + std::string(type.name) + ": ", 0) == 0);
    for (const WorkloadOption& option : type.options().options)
      CHECK((options.find("\n  " + std::string(option.key) + " ") != std::string::npos) ==
            (option_use(option, type).kind != OptionUse::Kind::absent));
  }
  // The line of `key` in `type`'s listing, its columns separated by runs of spaces.
  const auto line = [](std::string_view type, const std::string& key) {
    const std::string text = describe_workload_options(*find_workload_type(type));
    const std::size_t at = text.find("\n  " + key + " ");
    if (at == std::string::npos)
      return std::string("no line");
    std::string out;
    for (std::size_t i = at + 3; i < text.size() && text[i] != '\n'; ++i)
      if (text[i] != ' ' || (text[i - 1] != ' ' && text[i + 1] != ' '))
        out += text[i];
      else if (out.back() != '|')
        out += '|';
    return out;
  };
  CHECK(line("ib_write_bw", "key") == "key|unit|default|range|meaning");
  // Per-type defaults and ranges: a bandwidth test's cq_mod is 100, a latency test's 1; an atomic is 8 bytes.
  CHECK(line("ib_write_bw", "cq_mod").rfind("cq_mod|count|100|[1, 16384]|perftest -Q: ", 0) == 0);
  CHECK(line("ib_write_lat", "cq_mod").rfind("cq_mod|count|1|[1, 16384]|perftest -Q: ", 0) == 0);
  CHECK(line("ib_atomic_lat", "size_bytes").rfind("size_bytes|bytes|8|[8, 1073741824]|", 0) == 0);
  CHECK(line("ib_atomic_lat", "all_sizes_max_bytes") == "no line");
  CHECK(line("incast", "receiver").rfind("receiver|host|required|a host of the topology|", 0) == 0);
  CHECK(line("ring_allreduce", "name").rfind("name|text|ring_allreduce|non-empty|", 0) == 0);
  CHECK(line("all_to_all", "start_us").rfind("start_us|us|0|[0, 86400000000]|", 0) == 0);
  CHECK(line("ib_send_bw", "connection").rfind("connection|text|RC|RC, UC or UD|", 0) == 0);
  // A SEND test takes 0 bytes (a header-only SEND), the others at least 1.
  CHECK(line("ib_send_bw", "size_bytes").rfind("size_bytes|bytes|65536|<= 1073741824|", 0) == 0);
  CHECK(line("ib_write_bw", "size_bytes").rfind("size_bytes|bytes|65536|[1, 1073741824]|", 0) == 0);
  // ib_atomic_bw: its own options, and none of the data tests' that it has no use for.
  CHECK(line("ib_atomic_bw", "counters").rfind("counters|count|1|[1, 1048576]|", 0) == 0);
  CHECK(line("ib_atomic_bw", "counter_stride_bytes").rfind("counter_stride_bytes|bytes|8|[8, 1048576]|", 0) == 0);
  CHECK(line("ib_atomic_bw", "extra_clients").rfind("extra_clients|host|-|1 to 4095 hosts|", 0) == 0);
  CHECK(line("ib_atomic_bw", "inline_size_bytes") == "no line");
  CHECK(line("ib_atomic_bw", "bidirectional") == "no line");
  CHECK(line("ib_write_bw", "counters") == "no line");
}

TEST_CASE("workloads: a choice option's and an unknown key's errors are the JSON reader's own", "[host]") {
  const auto message = [](const auto& action) -> std::string {
    try {
      action();
    } catch (const sim::InputError& e) {
      return e.what();
    }
    return "no error";
  };
  nlohmann::json w = {{"type", "ib_send_lat"}, {"client", "h0"}, {"server", "h1"}, {"connection", "XC"}};
  const std::string expected = message([&] {
    sim::JsonObjectReader r("t.json", w, "/workloads/0");
    r.optional_enum("connection", {"RC", "UC", "UD"});
  });
  CHECK(expected.find("expected one of \"RC\", \"UC\", \"UD\", got string \"XC\"") != std::string::npos);
  CHECK(message([&] { read(w); }) == expected);
  w.erase("connection");
  w["verb"] = 3;
  CHECK(message([&] { read(w); }) ==
        "t.json:/workloads/0/verb: expected one of the keys type, name, client, server, all_sizes, size_bytes, "
        "iterations, tx_depth, qps, inline_size_bytes, post_list, cq_mod, mtu_bytes, qp_timeout, retry_count, "
        "connection, blueflame, srq, "
        "bidirectional, atomic, client_ib_port, server_ib_port, start_us, after, got unknown key \"verb\"");
  nlohmann::json pattern = {{"type", "all_to_all"}, {"verb", 3}};
  const std::string verb = message([&] {
    sim::JsonObjectReader r("t.json", pattern, "/workloads/0");
    r.optional_enum("verb", {"write", "send"});
  });
  CHECK(message([&] { read(pattern); }) == verb);
  const nlohmann::json untyped = {{"client", "h0"}};
  CHECK(message([&] { read(untyped); }).find("t.json:/workloads/0/type: expected one of \"ib_write_lat\", ") == 0);
  CHECK(message([&] {
          read(untyped);
        }).find(", \"recursive_doubling_allreduce\" (required key \"type\"), got nothing") != std::string::npos);
}

TEST_CASE("summarize: perftest's figures, t_stdev the population standard deviation", "[host][quick]") {
  std::vector<sim::Time> samples;
  for (const int ns : {4000, 1000, 3000, 2000})
    samples.push_back(sim::Time::from_ns(ns));
  const LatencyStats s = summarize(samples);
  CHECK(s.samples == 4);
  CHECK(s.t_min_us == 1.0);
  CHECK(s.t_max_us == 4.0);
  CHECK(s.t_typical_us == 3.0); // the sample at index n / 2 of the sorted ones, as perftest takes it
  CHECK(s.t_avg_us == 2.5);
  CHECK(s.t_stdev_us == Approx(std::sqrt(1.25)));
  CHECK(summarize({}).t_stdev_us == 0);
}

TEST_CASE("rendezvous: each QP published is taken once, by name or by id, whatever the order", "[host][quick]") {
  Rendezvous r;
  // 40 hosts, every ordered pair, two tags: 3,120 entries, enough for several growths and long probe runs; taken in
  // a shuffled order so that deletions shift entries of every kind of run.
  std::vector<std::string> names;
  std::vector<Rendezvous::HostId> ids;
  for (int h = 0; h < 40; ++h) {
    names.push_back(std::string(1, 'h').append(std::to_string(h)));
    ids.push_back(r.id(names.back()));
  }
  CHECK(r.id("h7") == ids[7]); // interned: the same id again
  std::map<std::tuple<int, int, int>, std::pair<std::uint16_t, std::uint32_t>> expected;
  for (int h = 0; h < 40; ++h)
    for (int p = 0; p < 40; ++p)
      for (int tag = 0; tag < 2; ++tag)
        if (h != p) {
          const auto lid = static_cast<std::uint16_t>(h + 1);
          const auto qpn = static_cast<std::uint32_t>(1000 * h + 10 * p + tag);
          r.publish(ids[h], ids[p], tag, lid, qpn);
          expected[{h, p, tag}] = {lid, qpn};
        }
  r.publish("h3", "h4", 1, 99, 12345); // a second publish replaces the first
  expected[{3, 4, 1}] = {99, 12345};
  std::vector<std::tuple<int, int, int>> order;
  for (const auto& [key, qp] : expected)
    order.push_back(key);
  std::uint64_t state = 12345;
  for (std::size_t i = order.size(); i > 1; --i) { // Fisher-Yates with a fixed LCG
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    std::swap(order[i - 1], order[(state >> 33) % i]);
  }
  std::size_t taken = 0;
  for (const auto& [h, p, tag] : order) {
    const auto qp = taken % 2 == 0
                        ? r.take(ids[h], ids[p], tag)
                        : r.take(names[static_cast<std::size_t>(h)], names[static_cast<std::size_t>(p)], tag);
    CHECK(qp == expected.at({h, p, tag}));
    ++taken;
  }
  CHECK(taken == 40 * 39 * 2);
  CHECK_THROWS_WITH(r.take(ids[3], ids[4], 1), "h3 made no QP for h4 (or it was taken already)");
  CHECK_THROWS_WITH(r.take("h3", "nobody", 0), "h3 made no QP for nobody (or it was taken already)");
  r.publish(ids[1], ids[2], 0, 5, 6); // the emptied table takes entries again
  CHECK(r.take(ids[1], ids[2], 0) == std::pair<std::uint16_t, std::uint32_t>{5, 6});
}
