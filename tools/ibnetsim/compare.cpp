#include "tools/ibnetsim/compare.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "models/scenario/run.h"
#include "models/scenario/scenario.h"
#include "sim/errors.h"
#include "sim/report.h"
#include "tools/ibnetsim/experiment.h"
#include "tools/ibnetsim/options.h"
#include "tools/ibnetsim/output.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace cli {

using ib::scenario::load_scenario;
using ib::scenario::Scenario;
using ib::scenario::WorkloadType;

namespace {

using Json = nlohmann::ordered_json;

enum class Feature { inline_data, blueflame, postlist, unsignaled };

struct FeatureInfo {
  Feature feature;
  const char* name;
  const char* abbreviation; ///< in table headers when there are many variants
  const char* meaning;
};

constexpr FeatureInfo feature_table[] = {
    {Feature::inline_data, "inline", "inl", "payloads up to the inline size copied into the WQE"},
    {Feature::blueflame, "blueflame", "bf", "a lone WQE written with the doorbell by MMIO"},
    {Feature::postlist, "postlist", "pl", "WRs posted in lists, one doorbell per list"},
    {Feature::unsignaled, "unsignaled", "uns", "a completion for one WR in N"},
};

struct Settings {
  std::uint32_t inline_size_bytes = 220; // perftest's default for the latency tests
  std::uint32_t postlist = 16;           // Kalia et al.'s Doorbell batch
  std::uint32_t signal_every = 16;
};

struct Variant {
  std::string name;
  std::vector<std::string> overrides;
  std::string header; ///< the name as table headers show it
  unsigned mask = 0;  ///< features on (features mode)
  PointJob job;
  Json report;
};

bool is_perftest(const std::string& type) {
  return type.starts_with("ib_") && (type.ends_with("_lat") || type.ends_with("_bw"));
}
bool is_bandwidth_test(const std::string& type) {
  return is_perftest(type) && type.ends_with("_bw");
}
bool has_inline(const std::string& type) {
  return type == "ib_write_lat" || type == "ib_send_lat" || type == "ib_write_bw" || type == "ib_send_bw";
}

/// The override that turns `feature` on or off for workload `index` of `config`, or "" when it does not apply.
std::string feature_override(Feature feature, bool on, std::size_t index, const Json& config, const Settings& s) {
  const std::string type = config.at("type").get<std::string>();
  const std::string at = "/workloads/" + std::to_string(index) + "/";
  switch (feature) {
  case Feature::inline_data:
    return has_inline(type) ? at + "inline_size_bytes=" + std::to_string(on ? s.inline_size_bytes : 0) : "";
  case Feature::blueflame:
    return is_perftest(type) ? at + "blueflame=" + (on ? "true" : "false") : "";
  case Feature::postlist:
    return is_bandwidth_test(type) ? at + "post_list=" + std::to_string(on ? s.postlist : 1) : "";
  case Feature::unsignaled:
    return is_bandwidth_test(type) ? at + "cq_mod=" + std::to_string(on ? s.signal_every : 1) : "";
  }
  return "";
}

std::vector<Feature> parse_features(const std::string& text) {
  std::vector<Feature> features;
  std::stringstream list(text);
  std::string name;
  while (std::getline(list, name, ',')) {
    const auto found = std::find_if(std::begin(feature_table), std::end(feature_table),
                                    [&](const FeatureInfo& f) { return name == f.name; });
    if (found == std::end(feature_table))
      throw UsageError{"--features: unknown feature '" + name + "'; features: inline, blueflame, postlist, unsignaled"};
    if (std::find(features.begin(), features.end(), found->feature) != features.end())
      throw UsageError{"--features: '" + name + "' twice"};
    features.push_back(found->feature);
  }
  if (features.empty())
    throw UsageError{"--features expects a list such as inline,blueflame,postlist,unsignaled"};
  return features;
}

const FeatureInfo& feature_info(Feature f) {
  return *std::find_if(std::begin(feature_table), std::end(feature_table),
                       [&](const FeatureInfo& info) { return info.feature == f; });
}

const char* feature_name(Feature f) {
  return feature_info(f).name;
}

/// Every combination of `features`: the baseline first, then by the number of features on.
std::vector<Variant> feature_variants(const std::vector<Feature>& features, const std::vector<Json>& configs,
                                      const Settings& settings) {
  for (const Feature f : features) {
    bool applies = false;
    for (std::size_t i = 0; i < configs.size(); ++i)
      applies |= !feature_override(f, true, i, configs[i], settings).empty();
    if (!applies)
      throw UsageError{std::string("--features ") + feature_name(f) + ": no workload of the scenario has it (" +
                       (f == Feature::postlist || f == Feature::unsignaled ? "ib_*_bw tests"
                        : f == Feature::inline_data                        ? "ib_write_* and ib_send_* tests"
                                                                           : "perftest workloads") +
                       " do)"};
    if (f == Feature::postlist)
      for (const Json& c : configs)
        if (is_bandwidth_test(c.at("type").get<std::string>()) &&
            c.at("tx_depth").get<std::uint32_t>() < settings.postlist)
          throw UsageError{"--postlist " + std::to_string(settings.postlist) + " is above workload " +
                           c.at("name").get<std::string>() + "'s tx_depth (" + c.at("tx_depth").dump() + ")"};
  }
  std::vector<unsigned> masks;
  for (unsigned m = 0; m < (1u << features.size()); ++m)
    masks.push_back(m);
  std::stable_sort(masks.begin(), masks.end(),
                   [](unsigned a, unsigned b) { return std::popcount(a) < std::popcount(b); });
  std::vector<Variant> variants;
  const bool abbreviate = masks.size() > 4; // 16 full names do not fit a terminal
  for (const unsigned mask : masks) {
    Variant v;
    v.mask = mask;
    for (std::size_t k = 0; k < features.size(); ++k) {
      const bool on = (mask >> k) & 1u;
      if (on) {
        if (!v.name.empty()) {
          v.name += '+';
          v.header += '+';
        }
        v.name += feature_name(features[k]);
        v.header += abbreviate ? feature_info(features[k]).abbreviation : feature_name(features[k]);
      }
      for (std::size_t i = 0; i < configs.size(); ++i) {
        const std::string o = feature_override(features[k], on, i, configs[i], settings);
        if (!o.empty())
          v.overrides.push_back(o);
      }
    }
    if (v.name.empty())
      v.name = v.header = "baseline";
    variants.push_back(std::move(v));
  }
  return variants;
}

/// "NAME:/a=1;/b=2" -> a variant.
Variant parse_variant(const std::string& text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || text.compare(colon + 1, 1, "/") != 0)
    throw UsageError{"--variant expects NAME:/json/pointer=value[;/json/pointer=value...], got '" + text + "'"};
  Variant v;
  v.name = v.header = text.substr(0, colon);
  if (v.name == "baseline" || v.name.find('/') != std::string::npos)
    throw UsageError{"--variant: '" + v.name + "' cannot name a variant (baseline is the scenario as it is)"};
  std::stringstream list(text.substr(colon + 1));
  std::string assignment;
  while (std::getline(list, assignment, ';'))
    if (!assignment.empty())
      v.overrides.push_back(assignment);
  return v;
}

struct Row {
  Row(std::string label_, std::string pointer_, std::string metric_ = "", std::string entity_ = "")
      : label(std::move(label_)), pointer(std::move(pointer_)), metric(std::move(metric_)), entity(std::move(entity_)) {
  }
  std::string label;
  std::string pointer; ///< into the report; "" for a heading
  std::string metric;  ///< its name (models/scenario/metrics.h), as run and sweep give it
  std::string entity;  ///< as report_long() gives it: a perftest's message size, else ""
};

/// The figures each workload reports that a comparison is about, with their labels.
std::vector<Row> workload_rows(const Json& report) {
  static const std::pair<const char*, const char*> figures[] = {
      {"/t_typical_us", "median latency [us]"},
      {"/t_99_percent_us", "99% latency [us]"},
      {"/t_99_9_percent_us", "99.9% latency [us]"},
      {"/message_latency/t_typical_us", "median message latency [us]"},
      {"/message_latency/t_99_percent_us", "99% message latency [us]"},
      {"/msg_rate_mpps", "message rate [Mpps]"},
      {"/bw_average_gbps", "bandwidth [Gb/s]"},
      {"/aggregate_gbps", "aggregate throughput [Gb/s]"},
  };
  std::vector<Row> rows;
  for (const auto& [name, workload] : report.at("results").at("workloads").items()) {
    rows.push_back({name + " (" + workload.at("type").get<std::string>() + ")", ""});
    const Json& results = workload.at("results");
    const std::string base = "/results/workloads/" + name + "/results";
    const std::string workload_name = name; // a lambda cannot capture a structured binding before C++20 in clang 14
    const auto add = [&](const Json& entry, const std::string& at, const std::string& suffix,
                         const std::string& entity) {
      for (const auto& [pointer, label] : figures)
        if (entry.contains(Json::json_pointer(pointer))) {
          std::string metric = workload_name + pointer;
          std::replace(metric.begin(), metric.end(), '/', '.');
          rows.push_back({std::string("  ") + label + suffix, at + pointer, metric, entity});
        }
    };
    if (results.is_array())
      for (std::size_t i = 0; i < results.size(); ++i)
        add(results[i], base + "/" + std::to_string(i),
            results.size() > 1 ? ", " + results[i].at("size_bytes").dump() + " B" : "",
            results[i].at("size_bytes").dump());
    else
      add(results, base, "", "");
  }
  return rows;
}

/// PCIe rows named as report_metrics() names them: "pcie.<key>".
std::vector<Row> with_pcie_names(std::vector<Row> rows) {
  const std::string prefix = "/results/pcie/per_message/";
  for (Row& row : rows)
    if (row.pointer.starts_with(prefix))
      row.metric = "pcie." + row.pointer.substr(prefix.size());
  return rows;
}

const std::vector<Row>& pcie_rows() {
  static const std::vector<Row> rows = with_pcie_names({
      {"PCIe per message (both ends)", ""},
      {"  doorbells", "/results/pcie/per_message/doorbells"},
      {"  BlueFlame writes", "/results/pcie/per_message/blueflame_writes"},
      {"  CPU MMIO bytes", "/results/pcie/per_message/mmio_bytes"},
      {"  WQE reads", "/results/pcie/per_message/wqe_reads"},
      {"  payload reads", "/results/pcie/per_message/payload_reads"},
      {"  payload writes", "/results/pcie/per_message/payload_writes"},
      {"  RECV WQE reads", "/results/pcie/per_message/recv_wqe_reads"},
      {"  CQE writes", "/results/pcie/per_message/cqe_writes"},
      {"  MWr TLPs to the HCA", "/results/pcie/per_message/downstream_mwr_tlps"},
      {"    bytes", "/results/pcie/per_message/downstream_mwr_bytes"},
      {"  CplD TLPs to the HCA", "/results/pcie/per_message/downstream_cpld_tlps"},
      {"    bytes", "/results/pcie/per_message/downstream_cpld_bytes"},
      {"  MRd TLPs from the HCA", "/results/pcie/per_message/upstream_mrd_tlps"},
      {"    bytes", "/results/pcie/per_message/upstream_mrd_bytes"},
      {"  MWr TLPs from the HCA", "/results/pcie/per_message/upstream_mwr_tlps"},
      {"    bytes", "/results/pcie/per_message/upstream_mwr_bytes"},
  });
  return rows;
}

/// The transactions a variant is judged on in the one-line summaries: what it removed, and what it added.
const std::vector<Row>& transaction_rows() {
  static const std::vector<Row> rows = {
      {"doorbells", "/results/pcie/per_message/doorbells"},
      {"WQE reads", "/results/pcie/per_message/wqe_reads"},
      {"payload reads", "/results/pcie/per_message/payload_reads"},
      {"RECV WQE reads", "/results/pcie/per_message/recv_wqe_reads"},
      {"CQE writes", "/results/pcie/per_message/cqe_writes"},
      {"BlueFlame writes", "/results/pcie/per_message/blueflame_writes"},
      {"MWr TLPs to the HCA", "/results/pcie/per_message/downstream_mwr_tlps"},
      {"CplD TLPs to the HCA", "/results/pcie/per_message/downstream_cpld_tlps"},
      {"MRd TLPs from the HCA", "/results/pcie/per_message/upstream_mrd_tlps"},
      {"MWr TLPs from the HCA", "/results/pcie/per_message/upstream_mwr_tlps"},
      {"CPU MMIO bytes", "/results/pcie/per_message/mmio_bytes"},
  };
  return rows;
}

std::optional<double> value_at(const Json& report, const std::string& pointer) {
  const Json::json_pointer p(pointer);
  if (!report.contains(p) || !report.at(p).is_number())
    return std::nullopt;
  return report.at(p).get<double>();
}

/// Whole numbers as such (TLP counts of one post), fractions to 4 significant digits.
std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, v == std::floor(v) && std::abs(v) < 1e15 ? "%.0f" : "%.4g", v);
  return text;
}

std::string short_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

/// The change of `v` against `base` in percent; nullopt where there is none to give (a value missing, or a base
/// of 0 under a value that is not).
std::optional<double> change_percent(std::optional<double> base, std::optional<double> v) {
  if (!base || !v || (*base == 0 && *v != 0))
    return std::nullopt;
  return *base == 0 ? 0.0 : 100.0 * (*v - *base) / *base;
}

std::string change(std::optional<double> base, std::optional<double> v) {
  if (!base || !v)
    return "-";
  if (*base == 0)
    return *v == 0 ? "0" : "new";
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", *change_percent(base, v));
  return text;
}

/// "removes doorbells 1 -> 0, ...; adds ..." of `variant` against `base`.
std::string transaction_summary(const Json& base, const Json& variant) {
  std::string removed, added;
  for (const Row& row : transaction_rows()) {
    const auto b = value_at(base, row.pointer), v = value_at(variant, row.pointer);
    // Changes under 2 % are WQE reads coalescing a little differently, not something the variant removed.
    if (!b || !v || std::abs(*b - *v) <= 0.02 * std::max(std::abs(*b), std::abs(*v)))
      continue;
    std::string& list = *v < *b ? removed : added;
    list += (list.empty() ? "" : ", ") + row.label + " " + short_number(*b) + " -> " + short_number(*v);
  }
  std::string line = removed.empty() ? "removes no PCIe transaction" : "removes " + removed;
  if (!added.empty())
    line += "; adds " + added;
  return line + " (per message)";
}

/// Rows down, one column per header; `cell(row, column)` fills the rows that have a pointer.
void print_table(std::ostream& out, const std::vector<Row>& rows, const std::vector<std::string>& headers,
                 const std::function<std::string(const Row&, std::size_t)>& cell) {
  std::size_t label_width = 10;
  for (const Row& r : rows)
    label_width = std::max(label_width, r.label.size());
  const auto pad = [](const std::string& s, std::size_t width) {
    return std::string(width - std::min(width, s.size()), ' ') + s;
  };
  out << std::string(label_width, ' ');
  for (const std::string& h : headers)
    out << "  " << pad(h, std::max<std::size_t>(h.size(), 9));
  out << "\n";
  for (const Row& r : rows) {
    out << r.label;
    if (!r.pointer.empty()) {
      out << std::string(label_width - r.label.size(), ' ');
      for (std::size_t k = 0; k < headers.size(); ++k)
        out << "  " << pad(cell(r, k), std::max<std::size_t>(headers[k].size(), 9));
    }
    out << "\n";
  }
}

/// Everything the writers need: what was compared, the rows of figures, and the one-line summaries.
struct Comparison {
  std::vector<Feature> features; ///< empty for named variants
  std::vector<Variant> variants; ///< the baseline first
  std::vector<Row> rows;
  std::vector<std::pair<std::string, std::string>> summaries; ///< variant -> what it changed in PCIe
};

/// The comparison as one JSON document: the variants, every figure's values and changes, and the summaries.
void write_json(std::ostream& out, const Scenario& scenario, const Comparison& c) {
  const std::vector<Variant>& variants = c.variants;
  const std::vector<Row>& rows = c.rows;
  Json doc;
  doc["scenario"] = scenario.file;
  doc["seed"] = scenario.seed;
  Json list = Json::array();
  for (const Variant& variant : variants)
    list.push_back({{"name", variant.name}, {"overrides", variant.overrides}});
  doc["variants"] = list;
  Json table = Json::array();
  for (const Row& r : rows) {
    if (r.pointer.empty())
      continue;
    Json values = Json::array(), changes = Json::array();
    const auto base = value_at(variants.front().report, r.pointer);
    for (const Variant& variant : variants) {
      const auto x = value_at(variant.report, r.pointer);
      values.push_back(x ? Json(*x) : Json());
      const auto percent = change_percent(base, x);
      changes.push_back(percent ? Json(*percent) : Json());
    }
    table.push_back({{"metric", r.metric},
                     {"entity", r.entity},
                     {"pointer", r.pointer},
                     {"values", values},
                     {"change_percent", changes}});
  }
  doc["figures"] = table;
  Json lines = Json::object();
  for (const auto& [name, line] : c.summaries)
    lines[name] = line;
  doc["summaries"] = lines;
  out << doc.dump(2) << "\n";
}

/// Long (tidy) CSV: one row per variant and figure, named as `run --format long-csv` names it, with the change
/// against the baseline in percent (empty where there is none).
void write_csv(std::ostream& out, const Comparison& c) {
  out << "variant,metric,entity,value,change_percent\n";
  for (const Variant& variant : c.variants)
    for (const Row& r : c.rows) {
      if (r.pointer.empty())
        continue;
      const auto x = value_at(variant.report, r.pointer);
      if (!x)
        continue;
      const auto percent = change_percent(value_at(c.variants.front().report, r.pointer), x);
      out << csv_field(variant.name) << "," << csv_field(r.metric) << "," << csv_field(r.entity) << ","
          << cell_text(Json(*x)) << "," << (percent ? cell_text(Json(*percent)) : "") << "\n";
    }
}

/// For people: what each feature or variant is, the figures side by side, their changes, and the summaries.
void write_table(std::ostream& out, const Scenario& scenario, const Comparison& c, const Settings& settings,
                 std::size_t fixed_overrides) {
  const std::vector<Variant>& variants = c.variants;
  const std::vector<Row>& rows = c.rows;
  const std::vector<Feature>& features = c.features;
  out << "compare " << scenario.name << " (" << scenario.file << "): " << variants.size() << " variants, seed "
      << scenario.seed << "\n";
  if (!features.empty()) {
    for (const Feature f : features) {
      const FeatureInfo& info = feature_info(f);
      out << "  " << info.name;
      if (variants.front().header != variants.back().header && variants.size() > 4)
        out << " (" << info.abbreviation << ")";
      out << ": " << info.meaning;
      if (f == Feature::inline_data)
        out << " (" << settings.inline_size_bytes << " B; off: 0)";
      if (f == Feature::postlist)
        out << " (" << settings.postlist << " WRs per post; off: 1)";
      if (f == Feature::unsignaled)
        out << " (1 in " << settings.signal_every << "; off: every WR)";
      if (f == Feature::blueflame)
        out << " (off: doorbell and WQE read)";
      out << "\n";
    }
  } else {
    for (std::size_t k = 1; k < variants.size(); ++k) {
      out << "  " << variants[k].name << ":";
      for (std::size_t i = fixed_overrides; i < variants[k].overrides.size(); ++i)
        out << " " << variants[k].overrides[i];
      out << "\n";
    }
  }
  out << "\n";
  std::vector<std::string> names;
  for (const Variant& variant : variants)
    names.push_back(variant.header);
  print_table(out, rows, names, [&](const Row& r, std::size_t k) {
    const auto x = value_at(variants[k].report, r.pointer);
    return x ? number(*x) : "-";
  });
  out << "\nchange against baseline\n";
  print_table(out, rows, std::vector<std::string>(names.begin() + 1, names.end()), [&](const Row& r, std::size_t k) {
    return change(value_at(variants.front().report, r.pointer), value_at(variants[k + 1].report, r.pointer));
  });
  out << "\n"
      << (features.empty() ? "what each variant changes" : "what each feature alone changes")
      << " in PCIe, against baseline:\n";
  std::size_t name_width = 0;
  for (const auto& [name, line] : c.summaries)
    name_width = std::max(name_width, name.size());
  for (const auto& [name, line] : c.summaries)
    out << "  " << name << ":" << std::string(name_width - name.size() + 1, ' ') << line << "\n";
}

} // namespace

int command_compare(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options(
      "ibnetsim compare SCENARIO [--features LIST | --variant NAME:/p=v;... ...] [options]");
  options.add_options()("help,h", "show this help")(
      "features", po::value<std::string>(),
      "compare every combination of these, off and on, in the scenario's perftest workloads: inline, blueflame, "
      "postlist, unsignaled (default: those the workloads have)")(
      "variant", po::value<std::vector<std::string>>()->composing(),
      "a named variant: NAME:/json/pointer=value[;/json/pointer=value...], against the scenario as it is "
      "(repeatable; instead of --features)")("inline-size", po::value<std::string>()->default_value("220"),
                                             "inline: inline_size_bytes when on")(
      "postlist", po::value<std::string>()->default_value("16"), "postlist: WRs per post when on")(
      "unsignaled", po::value<std::string>()->default_value("16"), "unsignaled: one completion per this many WRs")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override the scenario for every variant")("seed", po::value<std::string>(), "override the scenario's seed")(
      "jobs,j", po::value<std::string>(), "variants run at once (default: the machine's cores)")(
      "out", po::value<std::string>(), "keep each variant's JSON report in DIR/VARIANT.json")(
      "format", po::value<std::string>()->default_value("table"),
      "stdout: table, json or csv")("quiet,q", "no progress on stderr");
  const Parsed parsed = parse_or_throw(args, options, 1);
  const po::variables_map& v = parsed.values;
  if (v.count("help")) {
    out << options << "\n";
    return sim::exit_ok;
  }
  if (parsed.positional.empty())
    throw UsageError{"compare needs a SCENARIO file"};
  const std::string format = v["format"].as<std::string>();
  if (format != "table" && format != "json" && format != "csv")
    throw UsageError{"--format expects table, json or csv, got '" + format + "'"};
  const std::vector<std::string> fixed =
      v.count("set") ? v["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  const std::optional<std::uint64_t> seed =
      v.count("seed") ? std::optional<std::uint64_t>(unsigned_option(v, "seed", 0, UINT64_MAX)) : std::nullopt;
  const Scenario scenario = load_scenario(parsed.positional[0], fixed, seed);
  if (scenario.workload != WorkloadType::fabric)
    throw UsageError{"compare needs a fabric scenario (one with workloads)"};
  std::vector<Json> configs;
  for (const auto& w : scenario.fabric.workloads)
    configs.push_back(w->config());

  Settings settings;
  settings.inline_size_bytes = static_cast<std::uint32_t>(unsigned_option(v, "inline-size", 0, 4096));
  settings.postlist = static_cast<std::uint32_t>(unsigned_option(v, "postlist", 2, 16384));
  settings.signal_every = static_cast<std::uint32_t>(unsigned_option(v, "unsignaled", 2, 16384));
  const auto parallel =
      v.count("jobs") ? static_cast<unsigned>(unsigned_option(v, "jobs", 1, 65536)) : default_parallelism();

  std::vector<Feature> features;
  std::vector<Variant> variants;
  if (v.count("variant")) {
    if (v.count("features"))
      throw UsageError{"--features or --variant, not both"};
    variants.push_back({"baseline", {}, "baseline", 0, {}, {}});
    for (const std::string& text : v["variant"].as<std::vector<std::string>>()) {
      variants.push_back(parse_variant(text));
      for (std::size_t k = 0; k + 1 < variants.size(); ++k)
        if (variants[k].name == variants.back().name)
          throw UsageError{"--variant: two variants named '" + variants.back().name + "'"};
    }
  } else {
    if (v.count("features")) {
      features = parse_features(v["features"].as<std::string>());
    } else {
      for (const FeatureInfo& f : feature_table)
        for (std::size_t i = 0; i < configs.size(); ++i)
          if (!feature_override(f.feature, true, i, configs[i], settings).empty() &&
              std::find(features.begin(), features.end(), f.feature) == features.end())
            features.push_back(f.feature);
      if (features.empty())
        throw UsageError{"the scenario has no perftest workload: name variants with --variant"};
    }
    variants = feature_variants(features, configs, settings);
  }
  // Every variant must be a valid scenario before anything runs, checked as `validate` checks it (its memory
  // budget, its fabric and the hosts its workloads name included), so a bad variant fails now rather than after the
  // others ran.
  for (Variant& variant : variants) {
    std::vector<Origin> origins;
    for (const std::string& o : fixed)
      origins.push_back({"--set", o.substr(0, o.find('='))});
    for (const std::string& o : variant.overrides)
      origins.push_back({v.count("variant") ? "--variant" : "--features", o.substr(0, o.find('='))});
    std::vector<std::string> all = fixed;
    all.insert(all.end(), variant.overrides.begin(), variant.overrides.end());
    variant.overrides = all;
    try {
      const Scenario checked = load_scenario(scenario.file, variant.overrides, seed);
      check_memory_budget(checked);
      (void)ib::scenario::config_digest(checked);
    } catch (const sim::InputError& e) {
      blame_override(e, scenario.file, variant.overrides, origins, "variant " + variant.name);
    }
  }

  const bool keep = v.count("out") > 0;
  std::string dir;
  if (keep) {
    dir = fs::absolute(v["out"].as<std::string>()).lexically_normal().string();
    make_output_directory(dir, "--out");
  } else {
    std::string pattern = (fs::temp_directory_path() / "ibnetsim-compare-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw sim::InputError(pattern, "", "a temporary directory", std::strerror(errno));
    dir = pattern;
  }
  std::vector<PointJob*> jobs;
  for (Variant& variant : variants) {
    variant.job.overrides = variant.overrides;
    variant.job.report_path = dir + "/" + variant.name + ".json";
    variant.job.log_path = dir + "/" + variant.name + ".log";
    jobs.push_back(&variant.job);
  }
  const bool quiet = v.count("quiet") > 0;
  std::size_t finished = 0;
  run_points(scenario.file, seed, jobs, parallel, [&](const PointJob& job) {
    ++finished;
    if (!quiet)
      err << "[compare] " << finished << "/" << jobs.size() << " " << fs::path(job.report_path).stem().string() << ": "
          << (job.exit_code == 0 ? "ok" : "FAILED: " + job.error) << "\n";
  });
  std::string failures;
  int worst = sim::exit_ok;
  for (Variant& variant : variants) {
    if (variant.job.exit_code != 0) {
      failures += "\n  " + variant.name + ": " + variant.job.error;
      worst = std::max(worst, variant.job.exit_code == sim::exit_invariant_violation ? 3
                              : variant.job.exit_code == sim::exit_input_error       ? 2
                                                                                     : 1);
      continue;
    }
    std::ifstream file(variant.job.report_path);
    variant.report = Json::parse(file);
  }
  if (!keep)
    fs::remove_all(dir);
  if (!failures.empty()) {
    err << "ibnetsim compare: variants failed:" << failures << "\n";
    return worst;
  }

  std::vector<Row> rows = workload_rows(variants.front().report);
  rows.insert(rows.end(), pcie_rows().begin(), pcie_rows().end());
  // The one-line summaries: each feature alone (or each named variant) against the baseline.
  std::vector<std::pair<std::string, std::string>> summaries;
  for (std::size_t k = 1; k < variants.size(); ++k)
    if (features.empty() || std::popcount(variants[k].mask) == 1)
      summaries.emplace_back(variants[k].name, transaction_summary(variants.front().report, variants[k].report));

  Comparison comparison{std::move(features), std::move(variants), std::move(rows), std::move(summaries)};
  if (format == "json")
    write_json(out, scenario, comparison);
  else if (format == "csv")
    write_csv(out, comparison);
  else
    write_table(out, scenario, comparison, settings, fixed.size());
  return sim::exit_ok;
}

} // namespace cli
