#include "tools/ibnetsim/sweep.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <system_error>

#include "models/scenario/run.h"
#include "models/scenario/scenario.h"
#include "sim/data_dir.h"
#include "sim/errors.h"
#include "sim/json_reader.h"
#include "sim/report.h"
#include "tools/ibnetsim/experiment.h"
#include "tools/ibnetsim/options.h"
#include "tools/ibnetsim/output.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace cli {

using ib::scenario::load_scenario;
using ib::scenario::Scenario;

namespace {

constexpr std::size_t max_points = 100'000;
constexpr std::size_t max_values = 10'000;

/// "/workloads/0/size_bytes" -> "size_bytes": the column a parameter gets unless named.
std::string last_token(const std::string& pointer) {
  return pointer.substr(pointer.rfind('/') + 1);
}

std::string override_text(const std::string& pointer, const nlohmann::json& value) {
  return pointer + "=" + value.dump();
}

/// A number as JSON: integral values stay integers, so "size_bytes" reads them as such.
nlohmann::json number_value(double v) {
  if (std::abs(v) < 9e15 && v == std::floor(v))
    return static_cast<std::int64_t>(v);
  // Round away the binary noise of repeated steps (0.1 + 0.2) at 12 significant digits.
  char text[32];
  std::snprintf(text, sizeof text, "%.12g", v);
  return std::strtod(text, nullptr);
}

/// from..to by adding `step` (> 0) or multiplying by `factor` (> 1), to at most `to` (with a little slack for
/// rounding). Errors name `file` and `pointer`.
std::vector<nlohmann::json> range_values(double from, double to, std::optional<double> step,
                                         std::optional<double> factor, const std::string& file,
                                         const std::string& pointer) {
  if (to < from)
    throw sim::InputError(file, pointer, "a range whose end is at least its start",
                          std::to_string(from) + ".." + std::to_string(to));
  if (factor && from <= 0)
    throw sim::InputError(file, pointer, "a geometric range that starts above 0", std::to_string(from));
  std::vector<nlohmann::json> values;
  const double slack = 1e-9 * std::max(std::abs(to), 1.0);
  for (std::size_t i = 0;; ++i) {
    const double v = step ? from + static_cast<double>(i) * *step : from * std::pow(*factor, static_cast<double>(i));
    if (v > to + slack)
      break;
    if (values.size() == max_values)
      throw sim::InputError(file, pointer, "a range of at most " + std::to_string(max_values) + " values", "more");
    values.push_back(number_value(v));
  }
  return values;
}

/// A pointer into the scenario, at `at` in `file`. Each becomes an override "pointer=value", which is split at its
/// first '=' (sim::apply_override, as --set): a pointer holding one would set another value than the file names.
void check_pointer(const std::string& file, const std::string& at, const std::string& pointer) {
  if (!pointer.starts_with("/") || pointer.find('=') != std::string::npos)
    throw sim::InputError(file, at, "a JSON pointer into the scenario (\"/...\", without '=')", "\"" + pointer + "\"");
}

/// Reads one parameter {name?, pointer, values | range}.
struct Parameter {
  std::string name;
  std::string pointer;
  std::vector<nlohmann::json> values;
  std::vector<Origin> origins; ///< where each value was given
};

Parameter read_parameter(sim::JsonObjectReader& r) {
  Parameter p;
  p.pointer = r.required_string("pointer");
  check_pointer(r.file(), r.pointer_to("pointer"), p.pointer);
  p.name = r.optional_string("name").value_or("");
  const nlohmann::json* values = r.optional_array("values", 1, max_values);
  auto range = r.optional_object("range");
  if ((values != nullptr) == range.has_value())
    throw sim::InputError(r.file(), r.pointer(), "exactly one of \"values\" and \"range\"",
                          values ? "both" : "neither");
  if (values) {
    p.values.assign(values->begin(), values->end());
    for (std::size_t i = 0; i < p.values.size(); ++i)
      p.origins.push_back({r.file(), sim::json_pointer_append(r.pointer_to("values"), i)});
  } else {
    const double from = range->required_double("from", -1e18, 1e18);
    const double to = range->required_double("to", -1e18, 1e18);
    const std::optional<double> step = range->optional_double("step", 1e-12, 1e18);
    const std::optional<double> factor = range->optional_double("times", 1.000001, 1e9);
    if (step.has_value() == factor.has_value())
      throw sim::InputError(r.file(), range->pointer(), "exactly one of \"step\" and \"times\"",
                            step ? "both" : "neither");
    range->finish();
    p.values = range_values(from, to, step, factor, r.file(), r.pointer_to("range"));
    p.origins.assign(p.values.size(), {r.file(), r.pointer_to("range")});
  }
  r.finish();
  return p;
}

SweepAxis parameters_axis(const std::vector<Parameter>& parameters, const std::string& file,
                          const std::string& pointer) {
  SweepAxis axis;
  for (const Parameter& p : parameters) {
    if (p.values.size() != parameters.front().values.size())
      throw sim::InputError(file, pointer,
                            "zipped parameters with as many values each (" +
                                std::to_string(parameters.front().values.size()) + ")",
                            std::to_string(p.values.size()) + " values for " + p.pointer);
    axis.columns.push_back(p.name);
    axis.pointers.push_back(p.pointer);
  }
  for (std::size_t i = 0; i < parameters.front().values.size(); ++i) {
    SweepAxis::Row row;
    for (const Parameter& p : parameters) {
      row.values.push_back(p.values[i]);
      row.overrides.push_back(override_text(p.pointer, p.values[i]));
      row.origins.push_back(p.origins[i]);
    }
    axis.rows.push_back(std::move(row));
  }
  return axis;
}

std::vector<std::string> read_overrides(sim::JsonObjectReader& set, std::vector<Origin>& origins) {
  std::vector<std::string> overrides;
  for (const auto& [pointer, value] : set.value().items()) {
    check_pointer(set.file(), set.pointer_to(pointer), pointer);
    overrides.push_back(override_text(pointer, value));
    origins.push_back({set.file(), set.pointer_to(pointer)});
    set.skip(pointer);
  }
  return overrides;
}

SweepAxis read_axis(const sim::JsonDocument& doc, const nlohmann::json& value, const std::string& pointer) {
  sim::JsonObjectReader r(doc.file, value, pointer);
  if (r.has("zip")) {
    const nlohmann::json& zip = r.required_array("zip", 1, 64);
    std::vector<Parameter> parameters;
    for (std::size_t i = 0; i < zip.size(); ++i) {
      sim::JsonObjectReader p(doc.file, zip[i], sim::json_pointer_append(r.pointer_to("zip"), i));
      parameters.push_back(read_parameter(p));
    }
    r.finish();
    return parameters_axis(parameters, doc.file, r.pointer_to("zip"));
  }
  if (r.has("variants")) {
    SweepAxis axis;
    axis.columns.push_back(r.required_string("name"));
    const nlohmann::json& variants = r.required_array("variants", 1, max_values);
    std::set<std::string> seen;
    for (std::size_t i = 0; i < variants.size(); ++i) {
      sim::JsonObjectReader v(doc.file, variants[i], sim::json_pointer_append(r.pointer_to("variants"), i));
      SweepAxis::Row row;
      const std::string name = v.required_string("name");
      if (!seen.insert(name).second)
        throw sim::InputError(doc.file, v.pointer_to("name"), "a name no other variant has", "\"" + name + "\"");
      row.values.push_back(name);
      if (auto set = v.optional_object("set"))
        row.overrides = read_overrides(*set, row.origins);
      v.finish();
      axis.rows.push_back(std::move(row));
    }
    r.finish();
    return axis;
  }
  std::vector<Parameter> one = {read_parameter(r)};
  return parameters_axis(one, doc.file, pointer);
}

/// Unnamed parameters take their pointer's last token, or the whole pointer where that would be ambiguous.
void name_columns(Sweep& sweep) {
  std::map<std::string, int> uses;
  for (std::size_t a = 0; a < sweep.axes.size(); ++a)
    for (std::size_t c = 0; c < sweep.axes[a].columns.size(); ++c)
      if (sweep.axes[a].columns[c].empty())
        ++uses[last_token(sweep.axes[a].pointers[c])];
  for (std::size_t a = 0; a < sweep.axes.size(); ++a)
    for (std::size_t c = 0; c < sweep.axes[a].columns.size(); ++c)
      if (sweep.axes[a].columns[c].empty()) {
        const std::string& p = sweep.axes[a].pointers[c];
        sweep.axes[a].columns[c] = uses[last_token(p)] > 1 ? p : last_token(p);
      }
}

void check_columns(const Sweep& sweep, const std::string& file) {
  std::set<std::string> seen;
  for (const std::string& column : axis_columns(sweep)) {
    if (column == "point" || column == "status" || column == "error")
      throw sim::InputError(file, "/axes", "axis names other than point, status and error", "\"" + column + "\"");
    if (!seen.insert(column).second)
      throw sim::InputError(file, "/axes", "a name no other axis has", "\"" + column + "\" twice");
  }
}

SweepPlot read_plot(sim::JsonObjectReader& r, const Sweep& sweep) {
  SweepPlot plot;
  const std::string file = r.required_string("file");
  const bool known_format = file.ends_with(".png") || file.ends_with(".svg") || file.ends_with(".pdf");
  if (!known_format || file.find('/') != std::string::npos)
    throw sim::InputError(r.file(), r.pointer_to("file"),
                          "a file name ending in .png, .svg or .pdf (written in the sweep's directory)",
                          "\"" + file + "\"");
  plot.spec["file"] = file;
  std::set<std::string> columns;
  for (const std::string& c : axis_columns(sweep))
    columns.insert(c);
  for (const std::string& m : sweep.metrics)
    columns.insert(m);
  // With every metric in the CSV, metric names are only known once points have run.
  const auto check = [&](const std::string& pointer, const std::string& column) {
    if (!sweep.metrics.empty() && !columns.contains(column))
      throw sim::InputError(r.file(), pointer, "an axis name or one of the sweep's metrics", "\"" + column + "\"");
  };
  plot.spec["x"] = r.required_string("x");
  check(r.pointer_to("x"), plot.spec["x"]);
  plot.spec["y"] = r.required_string("y");
  check(r.pointer_to("y"), plot.spec["y"]);
  // Lines and panels: every other axis that varies is given panels or refused by plot_sweep.py.
  for (const char* key : {"series", "facet"})
    if (const nlohmann::json* list = r.optional_array(key, 0, 8)) {
      for (std::size_t i = 0; i < list->size(); ++i) {
        const std::string pointer = sim::json_pointer_append(r.pointer_to(key), i);
        if (!(*list)[i].is_string())
          throw sim::InputError(r.file(), pointer, "a column name", sim::describe_json_value((*list)[i]));
        check(pointer, (*list)[i].get<std::string>());
      }
      plot.spec[key] = *list;
    }
  if (auto where = r.optional_object("where")) {
    for (const auto& [column, value] : where->value().items()) {
      if (!value.is_string() && !value.is_number() && !value.is_boolean())
        throw sim::InputError(r.file(), where->pointer_to(column),
                              "the value of the rows to plot (a string, number or boolean)",
                              sim::describe_json_value(value));
      check(where->pointer_to(column), column);
      where->skip(column);
    }
    where->finish();
    plot.spec["where"] = where->value();
  }
  for (const char* flag : {"logx", "logy"})
    if (auto v = r.optional_bool(flag))
      plot.spec[flag] = *v;
  for (const char* text : {"title", "xlabel", "ylabel"})
    if (auto v = r.optional_string(text))
      plot.spec[text] = *v;
  r.finish();
  return plot;
}

std::string slurp(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// The config_digest a finished point's report records; "" if the report cannot be read.
std::string recorded_digest(const std::string& report_path) {
  try {
    const nlohmann::json report = nlohmann::json::parse(slurp(report_path));
    return report.value("config_digest", std::string());
  } catch (const nlohmann::json::exception&) {
    return "";
  }
}

/// Points are files NNNNN.json, so a directory listing sorts like the CSV.
std::string point_stem(const std::string& dir, std::size_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "%05zu", index);
  return dir + "/points/" + name;
}

/// `path` (absolute) relative to `directory` (absolute), as the sweep directory's sweep.json and points.json store
/// the scenario: a directory copied or moved together with its scenario still finds it.
std::string path_from(const std::string& directory, const std::string& path) {
  const fs::path relative = fs::path(path).lexically_relative(directory);
  return relative.empty() ? path : relative.string();
}

/// `text` quoted for bash.
std::string shell_quoted(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

/// "0-3, 7, 9-10": the indices (ascending) as ranges.
std::string index_ranges(const std::vector<std::size_t>& indices) {
  std::ostringstream text;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1)
      ++j;
    text << (i == 0 ? "" : ", ") << indices[i];
    if (j > i)
      text << "-" << indices[j];
    i = j + 1;
  }
  return text.str();
}

/// Where the sweep's metrics were given, for errors about them: the sweep file at /metrics/i, or --metric.
struct MetricSource {
  std::string file; ///< the sweep file, or "--metric"
  bool in_file = false;
  std::string pointer(std::size_t i) const { return in_file ? sim::json_pointer_append("/metrics", i) : ""; }
};

/// Each metric must be able to name a value of the points' reports: a JSON pointer into one of a report's sections,
/// or, for a fabric, "WORKLOAD.key" of a workload the scenario has (in some point), "pcie.key" or
/// "simulated_time_us". What lies below is known once points have run: metrics_found_nowhere() checks that.
void check_metric_names(const Sweep& sweep, const std::set<std::string>& workloads, bool fabric,
                        const MetricSource& source) {
  static const std::set<std::string> sections = {"ibnetsim", "scenario", "config", "config_digest", "results"};
  std::string names;
  for (const std::string& w : workloads)
    names += (names.empty() ? "" : ", ") + w;
  for (std::size_t i = 0; i < sweep.metrics.size(); ++i) {
    const std::string& m = sweep.metrics[i];
    bool ok = false;
    if (m.starts_with("/")) {
      try {
        (void)nlohmann::json::json_pointer(m);
        const std::string section =
            m.substr(1, m.find('/', 1) == std::string::npos ? std::string::npos : m.find('/', 1) - 1);
        ok = sections.contains(section);
      } catch (const nlohmann::json::exception&) {
      }
      if (!ok)
        throw sim::InputError(source.file, source.pointer(i),
                              "a JSON pointer into a report: /results/..., /config/..., /scenario/..., "
                              "/config_digest or /ibnetsim",
                              "\"" + m + "\"");
      continue;
    }
    if (!fabric)
      continue; // a phold report's figures are flat: known once points have run
    ok = m == "simulated_time_us" || m.starts_with("pcie.");
    for (const std::string& w : workloads)
      ok = ok || (m.starts_with(w + ".") && m.size() > w.size() + 1);
    if (!ok)
      throw sim::InputError(source.file, source.pointer(i),
                            "a metric WORKLOAD.key of a workload of the scenario (" + names +
                                "), pcie.key, simulated_time_us, or a JSON pointer into the report",
                            "\"" + m + "\"");
  }
}

/// Writes DIR/results.csv from every point's report; returns the number of points without one. `unmatched` gets
/// the indices of the sweep's metrics that named no value in any point's report (when some point has one).
std::size_t write_csv(const Sweep& sweep, const std::vector<SweepPoint>& points, const std::string& dir,
                      const std::vector<PointJob>& jobs, std::vector<std::size_t>& unmatched) {
  std::vector<nlohmann::ordered_json> reports(points.size());
  std::vector<std::string> metric_columns = sweep.metrics;
  std::set<std::string> known(metric_columns.begin(), metric_columns.end());
  std::vector<Metrics> metrics(points.size());
  std::size_t missing = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string path = jobs[i].report_path;
    if (!fs::exists(path)) {
      ++missing;
      continue;
    }
    reports[i] = nlohmann::ordered_json::parse(slurp(path));
    metrics[i] = report_metrics(reports[i]);
    if (sweep.metrics.empty())
      for (const auto& [name, value] : metrics[i])
        if (known.insert(name).second)
          metric_columns.push_back(name);
  }
  std::ostringstream csv;
  csv << "point,status";
  for (const std::string& c : axis_columns(sweep))
    csv << "," << csv_field(c);
  for (const std::string& m : metric_columns)
    csv << "," << csv_field(m);
  csv << ",error\n";
  std::vector<bool> matched(metric_columns.size(), false);
  bool any_report = false;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const bool ok = !reports[i].is_null();
    any_report |= ok;
    std::string status = "ok";
    if (!ok)
      status = jobs[i].exit_code > 0   ? "failed (exit " + std::to_string(jobs[i].exit_code) + ")"
               : jobs[i].error.empty() ? "not run"
                                       : "failed"; // collected: its log is there, its exit code is not
    csv << i << "," << csv_field(status);
    for (const nlohmann::json& v : points[i].values)
      csv << "," << csv_field(cell_text(v));
    for (std::size_t c = 0; c < metric_columns.size(); ++c) {
      csv << ",";
      if (ok)
        if (const auto v = find_metric(reports[i], metrics[i], metric_columns[c])) {
          csv << csv_field(cell_text(*v));
          matched[c] = true;
        }
    }
    csv << "," << csv_field(ok ? "" : jobs[i].error) << "\n";
  }
  write_file_atomically(dir + "/results.csv", csv.str());
  for (std::size_t c = 0; c < sweep.metrics.size(); ++c)
    if (any_report && !matched[c])
      unmatched.push_back(c);
  return missing;
}

std::string point_label(const Sweep& sweep, const SweepPoint& point) {
  std::string label;
  const std::vector<std::string> columns = axis_columns(sweep);
  for (std::size_t c = 0; c < columns.size(); ++c)
    label += (c == 0 ? "" : ", ") + columns[c] + "=" + cell_text(point.values[c]);
  return label;
}

/// How the Slurm array runs a sweep's points: `per_task` consecutive points per task, at most `throttle` tasks at once
/// (0: no limit), and the user's #SBATCH options (checked: --key=value or --flag).
struct SlurmArray {
  std::size_t per_task = 1;
  bool batched_automatically = false; ///< per_task chosen to keep within slurm_default_max_array_size
  std::size_t throttle = 0;
  std::vector<std::string> options;
};

/// The key of a --slurm-option ("--time=1:00:00" -> "time"), or a UsageError (exit 2) for what is not an option of
/// the form --key=value or --flag, or sets what the script sets from the sweep (--array, --output).
std::string slurm_option_key(const std::string& option) {
  const std::size_t equals = option.find('=');
  const bool dashes = option.starts_with("--"); // then `equals`, if any, is past them
  const std::string key = dashes ? option.substr(2, equals == std::string::npos ? std::string::npos : equals - 2) : "";
  bool ok = dashes && !key.empty() && std::isalpha(static_cast<unsigned char>(key[0]));
  for (const char c : key)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_');
  // An #SBATCH line is one line, and an option without its value would take the next line's words.
  ok = ok && (equals == std::string::npos || equals + 1 < option.size());
  for (const char c : option)
    ok = ok && !std::iscntrl(static_cast<unsigned char>(c));
  if (!ok)
    throw UsageError{"--slurm-option expects one sbatch option as --key=value or --flag (for example "
                     "--slurm-option=--time=01:00:00), got '" +
                     option + "'"};
  if (key == "array" || key == "output" || key == "error")
    throw UsageError{"--slurm-option " + option + ": the script sets --" + key +
                     " itself (use --points-per-task and --array-throttle for the array; logs go to "
                     "DIR/slurm/%A_%a.out)"};
  return key;
}

void write_slurm(const std::string& path, const Sweep& sweep, const std::string& dir, std::size_t points,
                 const SlurmArray& array) {
  const std::string exe = self_executable();
  const std::string sweep_file = dir + "/sweep.json";
  const std::size_t tasks = (points + array.per_task - 1) / array.per_task;
  std::set<std::string> keys;
  for (const std::string& o : array.options)
    keys.insert(slurm_option_key(o));
  std::ostringstream script;
  script << "#!/bin/bash\n"
         << "# Slurm array job for ibnetsim sweep \"" << sweep.name << "\": " << points << " points, " << tasks
         << " tasks of " << array.per_task << " consecutive point" << (array.per_task == 1 ? "" : "s")
         << " (task I runs points I*" << array.per_task << " up to the next task's first).\n";
  if (array.batched_automatically)
    script << "# Batched automatically: one task per point would exceed Slurm's default MaxArraySize of "
           << slurm_default_max_array_size << " (--points-per-task sets the batch).\n";
  script << "# Submit:  sbatch " << path << "\n"
         << "# Collect: " << exe << " sweep " << sweep_file
         << " --collect   (runs nothing: writes results.csv, lists the points without a report)\n";
  // The user's options replace the defaults they name; #SBATCH lines must come before the first command.
  if (!keys.contains("job-name"))
    script << "#SBATCH --job-name=ibnetsim-" << sweep.name << "\n";
  script << "#SBATCH --array=0-" << tasks - 1;
  if (array.throttle > 0)
    script << "%" << array.throttle;
  script << "\n";
  if (!keys.contains("ntasks"))
    script << "#SBATCH --ntasks=1\n";
  if (!keys.contains("cpus-per-task"))
    script << "#SBATCH --cpus-per-task=1\n";
  // Job id and task index: a resubmitted array does not overwrite the logs of the one before.
  script << "#SBATCH --output=" << dir << "/slurm/%A_%a.out\n";
  for (const std::string& o : array.options)
    script << "#SBATCH " << o << "\n";
  script << "set -euo pipefail\n";
  // The data directory this sweep reads (from --data-dir or the environment), for the tasks and the collection.
  if (const char* data_dir = std::getenv(sim::data_dir_environment); data_dir != nullptr && *data_dir != '\0')
    script << "export " << sim::data_dir_environment << "=" << shell_quoted(data_dir) << "\n";
  script << "exec " << shell_quoted(exe) << " sweep " << shell_quoted(sweep_file) << " --out " << shell_quoted(dir)
         << " --task \"${SLURM_ARRAY_TASK_ID}\" --points-per-task " << array.per_task
         << " -j \"${SLURM_CPUS_PER_TASK:-1}\" --quiet\n";
  make_output_directory(dir + "/slurm", "the sweep's Slurm logs");
  write_file_atomically(path, script.str());
  fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add);
}

/// The exit code of a sweep whose points ended with `codes`: 0 when all succeeded, else the gravest failure
/// (an invariant broken, 3, before bad input, 2, before anything else, 1).
int sweep_exit_code(const std::vector<PointJob>& jobs) {
  bool any = false, input = false, invariant = false;
  for (const PointJob& j : jobs) {
    any |= j.exit_code > 0;
    input |= j.exit_code == sim::exit_input_error;
    invariant |= j.exit_code == sim::exit_invariant_violation;
  }
  return invariant ? sim::exit_invariant_violation : input ? sim::exit_input_error : any ? 1 : sim::exit_ok;
}

MetricSource metric_source_of(bool from_command_line, const std::string& sweep_file) {
  return {from_command_line ? "--metric" : sweep_file, !from_command_line};
}

/// points.json's list: what each point of the directory is.
nlohmann::ordered_json manifest_points(const std::vector<SweepPoint>& points) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < points.size(); ++i)
    list.push_back({{"point", i}, {"overrides", points[i].overrides}});
  return list;
}

/// Whether the manifest at `path` is of the sweep `manifest` describes: the same scenario contents, seed and points.
/// Not the same path: a sweep directory moved, or its sweep.json pointed at the scenario's new place, resumes (a
/// file the scenario names that changed still reruns its points, by their config_digest).
bool same_manifest(const std::string& path, const nlohmann::ordered_json& manifest) {
  try {
    const nlohmann::ordered_json old = nlohmann::ordered_json::parse(slurp(path));
    for (const char* key : {"scenario_digest", "seed", "points"})
      if (!old.contains(key) || old[key] != manifest[key])
        return false;
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

/// Throws the exit-2 error for the first of the sweep's metrics that named no value in any point's report.
void check_unmatched(const Sweep& sweep, const std::vector<std::size_t>& unmatched, const MetricSource& source,
                     const std::string& dir) {
  if (unmatched.empty())
    return;
  const std::string& m = sweep.metrics[unmatched.front()];
  throw sim::InputError(source.file, source.pointer(unmatched.front()),
                        "a metric that names a value of the points' reports, as the CSV of a sweep without "
                        "metrics names them (" +
                            dir + "/points/ holds the reports)",
                        "\"" + m + "\", found in none" +
                            (unmatched.size() > 1 ? " (nor " + std::to_string(unmatched.size() - 1) + " more)" : ""));
}

/// `sweep --collect`: results.csv from the reports in `dir`, running nothing (on a login node, or while array tasks
/// still run). 0 when every point has its report, 1 when some have none (they are listed).
int collect_sweep(const Sweep& sweep, const std::vector<SweepPoint>& points, const std::string& dir,
                  const MetricSource& metric_source, std::ostream& out) {
  const std::string manifest_path = dir + "/points.json";
  if (!fs::exists(manifest_path))
    throw sim::InputError(manifest_path, "",
                          "a sweep directory (its points.json is written when the sweep runs or emits its Slurm "
                          "script)",
                          "no such file");
  nlohmann::ordered_json manifest;
  try {
    manifest = nlohmann::ordered_json::parse(slurp(manifest_path));
  } catch (const nlohmann::json::exception& e) {
    throw sim::InputError(manifest_path, "", "the JSON a sweep writes", e.what());
  }
  if (!manifest.is_object() || !manifest.contains("points") || manifest["points"] != manifest_points(points))
    throw sim::InputError(manifest_path, "/points",
                          "the points of sweep " + sweep.name + " (" + metric_source.file + ")",
                          "another sweep's points");
  std::vector<PointJob> jobs(points.size());
  std::vector<std::size_t> missing, failed;
  for (std::size_t i = 0; i < points.size(); ++i) {
    jobs[i].report_path = point_stem(dir, i) + ".json";
    jobs[i].log_path = point_stem(dir, i) + ".log";
    if (fs::exists(jobs[i].report_path))
      continue;
    missing.push_back(i);
    // A failed run keeps its log beside where its report would be.
    if (fs::exists(jobs[i].log_path)) {
      failed.push_back(i);
      jobs[i].error = "no report: see points/" + fs::path(jobs[i].log_path).filename().string();
    }
  }
  std::vector<std::size_t> unmatched;
  (void)write_csv(sweep, points, dir, jobs, unmatched);
  out << "sweep " << sweep.name << ": collected " << points.size() - missing.size() << " of " << points.size()
      << " points into " << dir << "/results.csv (nothing run)\n";
  if (!missing.empty()) {
    out << "  missing " << missing.size() << " point" << (missing.size() == 1 ? "" : "s") << ": "
        << index_ranges(missing) << "\n";
    if (!failed.empty())
      out << "  of which failed (a log in points/): " << index_ranges(failed) << "\n";
    out << "  run them: ibnetsim sweep " << dir << "/sweep.json (or resubmit the Slurm array: finished points are "
        << "skipped)\n";
  }
  check_unmatched(sweep, unmatched, metric_source, dir);
  return missing.empty() ? sim::exit_ok : 1;
}

} // namespace

PointRange task_points(std::size_t task, std::size_t per_task, std::size_t points) {
  const std::size_t first = std::min(task * per_task, points);
  return {first, std::min(first + per_task, points)};
}

std::size_t default_points_per_task(std::size_t points) {
  return std::max<std::size_t>(1, (points + slurm_default_max_array_size - 1) / slurm_default_max_array_size);
}

std::vector<std::string> axis_columns(const Sweep& sweep) {
  std::vector<std::string> columns;
  for (const SweepAxis& axis : sweep.axes)
    columns.insert(columns.end(), axis.columns.begin(), axis.columns.end());
  return columns;
}

Sweep read_sweep_file(const std::string& path) {
  return read_sweep(sim::load_json_file(path));
}

Sweep read_sweep(const sim::JsonDocument& doc, bool scenario_must_exist) {
  const std::string& path = doc.file;
  sim::JsonObjectReader top(doc.file, doc.root, "");
  top.skip("$schema");
  Sweep sweep;
  sweep.name = top.required_string("name");
  sweep.description = top.optional_string("description").value_or("");
  const std::string scenario = top.required_string("scenario");
  const fs::path scenario_path(scenario);
  sweep.scenario =
      fs::absolute(scenario_path.is_relative() ? fs::path(path).parent_path() / scenario_path : scenario_path)
          .lexically_normal()
          .string();
  // Without the error_code, a name the system refuses (too long, say) would throw filesystem_error: not bad input.
  std::error_code error;
  if (scenario_must_exist && !fs::is_regular_file(sweep.scenario, error))
    throw sim::InputError(doc.file, "/scenario", "a scenario file (relative paths from the sweep's directory)",
                          "\"" + scenario + "\", " + (error ? error.message() : "which does not exist"));
  sweep.seed = top.optional_uint("seed", 0, UINT64_MAX);
  if (auto set = top.optional_object("set"))
    sweep.fixed = read_overrides(*set, sweep.fixed_origins);
  const nlohmann::json& axes = top.required_array("axes", 1, 32);
  for (std::size_t i = 0; i < axes.size(); ++i)
    sweep.axes.push_back(read_axis(doc, axes[i], sim::json_pointer_append("/axes", i)));
  name_columns(sweep);
  check_columns(sweep, doc.file);
  if (const nlohmann::json* metrics = top.optional_array("metrics", 1, 1000))
    for (std::size_t i = 0; i < metrics->size(); ++i) {
      if (!(*metrics)[i].is_string() || (*metrics)[i].get<std::string>().empty())
        throw sim::InputError(doc.file, sim::json_pointer_append("/metrics", i),
                              "a metric name (as the CSV of a sweep without \"metrics\" names them) or a JSON "
                              "pointer into the report",
                              sim::describe_json_value((*metrics)[i]));
      sweep.metrics.push_back((*metrics)[i].get<std::string>());
    }
  if (const nlohmann::json* plots = top.optional_array("plots", 1, 100))
    for (std::size_t i = 0; i < plots->size(); ++i) {
      sim::JsonObjectReader p(doc.file, (*plots)[i], sim::json_pointer_append("/plots", i));
      sweep.plots.push_back(read_plot(p, sweep));
    }
  top.finish();
  std::size_t count = 1;
  for (const SweepAxis& axis : sweep.axes) {
    count *= axis.rows.size();
    if (count > max_points)
      throw sim::InputError(doc.file, "/axes", "at most " + std::to_string(max_points) + " points", "more");
  }
  return sweep;
}

std::vector<nlohmann::json> parse_value_list(const std::string& text, const std::string& option) {
  // A range: FROM..TO*FACTOR or FROM..TO+STEP.
  const std::size_t dots = text.find("..");
  if (dots != std::string::npos && text.find_first_of(",[{\"") == std::string::npos) {
    const std::size_t op = text.find_first_of("*+", dots + 2);
    char* end = nullptr;
    const std::string from_text = text.substr(0, dots);
    const std::string to_text = text.substr(dots + 2, op == std::string::npos ? std::string::npos : op - dots - 2);
    const double from = std::strtod(from_text.c_str(), &end);
    const bool from_ok = !from_text.empty() && *end == '\0';
    const double to = std::strtod(to_text.c_str(), &end);
    const bool to_ok = !to_text.empty() && *end == '\0';
    const std::string by_text = op == std::string::npos ? "" : text.substr(op + 1);
    const double by = std::strtod(by_text.c_str(), &end);
    const bool by_ok = !by_text.empty() && *end == '\0' && (text[op] == '*' ? by > 1 : by > 0);
    if (!from_ok || !to_ok || !by_ok)
      throw sim::InputError(option, "", "a range FROM..TO*FACTOR (FACTOR > 1) or FROM..TO+STEP (STEP > 0)",
                            "\"" + text + "\"");
    return range_values(from, to, text[op] == '+' ? std::optional<double>(by) : std::nullopt,
                        text[op] == '*' ? std::optional<double>(by) : std::nullopt, option, "");
  }
  // Split at commas outside brackets and quotes.
  std::vector<std::string> items;
  std::string current;
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\' && i + 1 < text.size())
        current += text[i++];
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      items.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  items.push_back(current);
  std::vector<nlohmann::json> values;
  for (const std::string& item : items) {
    if (item.empty())
      throw sim::InputError(option, "", "a comma-separated list of values without empty items", "\"" + text + "\"");
    try {
      values.push_back(nlohmann::json::parse(item));
    } catch (const nlohmann::json::exception&) {
      values.push_back(item);
    }
  }
  return values;
}

std::vector<SweepPoint> expand(const Sweep& sweep) {
  std::vector<SweepPoint> points(1);
  points.front().overrides = sweep.fixed;
  points.front().origins = sweep.fixed_origins;
  for (const SweepAxis& axis : sweep.axes) {
    std::vector<SweepPoint> next;
    next.reserve(points.size() * axis.rows.size());
    for (const SweepPoint& p : points)
      for (const SweepAxis::Row& row : axis.rows) {
        SweepPoint q = p;
        q.values.insert(q.values.end(), row.values.begin(), row.values.end());
        q.overrides.insert(q.overrides.end(), row.overrides.begin(), row.overrides.end());
        q.origins.insert(q.origins.end(), row.origins.begin(), row.origins.end());
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  return points;
}

nlohmann::ordered_json sweep_document(const Sweep& sweep, const std::string& directory) {
  nlohmann::ordered_json doc;
  doc["name"] = sweep.name;
  if (!sweep.description.empty())
    doc["description"] = sweep.description;
  doc["scenario"] = directory.empty() ? sweep.scenario : path_from(directory, sweep.scenario);
  if (sweep.seed)
    doc["seed"] = *sweep.seed;
  if (!sweep.fixed.empty()) {
    nlohmann::ordered_json set = nlohmann::ordered_json::object();
    for (const std::string& o : sweep.fixed)
      set[o.substr(0, o.find('='))] = nlohmann::ordered_json::parse(o.substr(o.find('=') + 1));
    doc["set"] = set;
  }
  nlohmann::ordered_json axes = nlohmann::ordered_json::array();
  for (const SweepAxis& axis : sweep.axes) {
    nlohmann::ordered_json a;
    if (axis.pointers.empty()) {
      a["name"] = axis.columns.front();
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const SweepAxis::Row& row : axis.rows) {
        nlohmann::ordered_json set = nlohmann::ordered_json::object();
        for (const std::string& o : row.overrides)
          set[o.substr(0, o.find('='))] = nlohmann::ordered_json::parse(o.substr(o.find('=') + 1));
        list.push_back({{"name", row.values.front()}, {"set", set}});
      }
      a["variants"] = list;
    } else {
      nlohmann::ordered_json zip = nlohmann::ordered_json::array();
      for (std::size_t c = 0; c < axis.columns.size(); ++c) {
        nlohmann::ordered_json values = nlohmann::ordered_json::array();
        for (const SweepAxis::Row& row : axis.rows)
          values.push_back(nlohmann::ordered_json::parse(row.values[c].dump()));
        zip.push_back({{"name", axis.columns[c]}, {"pointer", axis.pointers[c]}, {"values", values}});
      }
      if (zip.size() == 1)
        a = zip.front();
      else
        a["zip"] = zip;
    }
    axes.push_back(a);
  }
  doc["axes"] = axes;
  if (!sweep.metrics.empty())
    doc["metrics"] = sweep.metrics;
  if (!sweep.plots.empty()) {
    nlohmann::ordered_json plots = nlohmann::ordered_json::array();
    for (const SweepPlot& p : sweep.plots)
      plots.push_back(p.spec);
    doc["plots"] = plots;
  }
  return doc;
}

int command_sweep(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options("ibnetsim sweep SWEEP.json [options]\n"
                                  "ibnetsim sweep SCENARIO.json --sweep /json/pointer=v1,v2,... [options]");
  options.add_options()("help,h", "show this help")(
      "sweep", po::value<std::vector<std::string>>()->composing(),
      "an axis: /json/pointer=v1,v2,... or =FROM..TO*FACTOR or =FROM..TO+STEP (repeatable: Cartesian product)")(
      "zip", po::value<std::vector<std::string>>()->composing(),
      "a parameter that varies together with the other --zip ones (one axis; as many values each)")(
      "set", po::value<std::vector<std::string>>()->composing(), "a fixed override for every point (repeatable)")(
      "seed", po::value<std::string>(), "override the scenario's seed")(
      "metric", po::value<std::vector<std::string>>()->composing(),
      "a CSV metric column: a name as an unfiltered sweep's CSV shows it, or a /json/pointer into the report "
      "(repeatable; default: every scalar figure)")("name", po::value<std::string>(),
                                                    "the sweep's name (default: the scenario's)")(
      "out", po::value<std::string>(), "output directory (default: ./NAME.sweep)")(
      "jobs,j", po::value<std::string>(), "points run at once (default: the machine's cores)")(
      "point", po::value<std::string>(), "run only this point (0-based); no CSV")(
      "points", po::value<std::string>(), "run only points FIRST-LAST (0-based, inclusive); no CSV")(
      "task", po::value<std::string>(), "run the points of Slurm array task I (see --points-per-task); no CSV")(
      "collect", "run nothing: write results.csv from the finished points and list the missing ones (exit 1 if any)")(
      "emit-slurm", po::value<std::string>(), "write a Slurm array job running the points to FILE, and stop")(
      "points-per-task", po::value<std::string>(),
      "consecutive points per array task: task I runs points I*N.. (default: 1, or as many as keep the array "
      "within Slurm's default MaxArraySize of 1001 tasks)")("array-throttle", po::value<std::string>(),
                                                            "at most K array tasks at once (--array=0-M%K)")(
      "slurm-option", po::value<std::vector<std::string>>()->composing(),
      "an #SBATCH line of the array job, as --slurm-option=--key=value or =--flag (repeatable; for example "
      "--slurm-option=--time=01:00:00 --slurm-option=--partition=compute)")(
      "restart", "forget finished points (a sweep otherwise resumes, running only the points not yet done)")(
      "quiet,q", "no progress on stderr");
  const Parsed parsed = parse_or_throw(args, options, 1);
  const po::variables_map& v = parsed.values;
  if (v.count("help")) {
    out << options << "\n";
    return sim::exit_ok;
  }
  if (parsed.positional.empty())
    throw UsageError{"sweep needs a SWEEP.json file, or a SCENARIO with --sweep"};
  const bool from_command_line = v.count("sweep") || v.count("zip");
  const auto strings = [&](const char* key) {
    return v.count(key) ? v[key].as<std::vector<std::string>>() : std::vector<std::string>{};
  };

  Sweep sweep;
  if (from_command_line) {
    const Scenario scenario = load_scenario(parsed.positional[0], strings("set"), std::nullopt);
    sweep.name = v.count("name") ? v["name"].as<std::string>() : scenario.name;
    sweep.scenario = fs::absolute(parsed.positional[0]).lexically_normal().string();
    // Each --set as a SWEEP.json's "set" gives it, pointer=JSON with a plain string quoted (the same value: --set
    // takes what is not JSON as a string): the sweep.json written below, and a resumed sweep or a Slurm task reading
    // it back, then have this sweep's points exactly.
    for (const std::string& assignment : strings("set")) {
      const std::size_t equals = assignment.find('='); // there is one: load_scenario() applied it
      const std::string text = assignment.substr(equals + 1);
      nlohmann::json value = nlohmann::json::parse(text, nullptr, false);
      if (value.is_discarded())
        value = text;
      sweep.fixed.push_back(override_text(assignment.substr(0, equals), value));
    }
    for (const std::string& o : sweep.fixed)
      sweep.fixed_origins.push_back({"--set", o.substr(0, o.find('='))});
    const auto parameter = [](const std::string& assignment, const char* option) {
      const std::size_t equals = assignment.find('=');
      if (equals == std::string::npos || !assignment.starts_with("/"))
        throw UsageError{std::string("--") + option + " expects /json/pointer=v1,v2,..., got '" + assignment + "'"};
      Parameter p{"",
                  assignment.substr(0, equals),
                  parse_value_list(assignment.substr(equals + 1),
                                   std::string("--") + option + " " + assignment.substr(0, equals)),
                  {}};
      p.origins.assign(p.values.size(), {std::string("--") + option, p.pointer});
      return p;
    };
    for (const std::string& s : strings("sweep")) {
      std::vector<Parameter> one = {parameter(s, "sweep")};
      sweep.axes.push_back(parameters_axis(one, "--sweep", one.front().pointer));
    }
    if (v.count("zip")) {
      std::vector<Parameter> zipped;
      for (const std::string& s : strings("zip"))
        zipped.push_back(parameter(s, "zip"));
      sweep.axes.push_back(parameters_axis(zipped, "--zip", ""));
    }
    name_columns(sweep);
    check_columns(sweep, "--sweep");
    sweep.metrics = strings("metric");
  } else {
    if (v.count("set") || v.count("metric") || v.count("name"))
      throw UsageError{"--set, --metric and --name go in the SWEEP.json file (or use a SCENARIO with --sweep)"};
    // Collecting needs the grid only, not the scenario (a sweep directory copied away from it still collects).
    sweep = read_sweep(sim::load_json_file(parsed.positional[0]), !v.count("collect"));
  }
  if (v.count("seed"))
    sweep.seed = unsigned_option(v, "seed", 0, UINT64_MAX);
  const bool collect = v.count("collect") > 0;
  const bool emit = v.count("emit-slurm") > 0;
  // A Slurm array task runs some points (--point, --points, --task): those of `range` (below), when `subset`.
  const bool subset = v.count("point") + v.count("points") + v.count("task") > 0;
  if (v.count("point") + v.count("points") + v.count("task") > 1)
    throw UsageError{"give one of --point, --points and --task"};
  if (subset && (collect || emit))
    throw UsageError{"--point, --points and --task run points: not with --collect or --emit-slurm"};
  if (collect && (emit || v.count("restart")))
    throw UsageError{"--collect only collects: not with --emit-slurm or --restart"};
  if (!emit && (v.count("array-throttle") || v.count("slurm-option")))
    throw UsageError{"--array-throttle and --slurm-option shape the script of --emit-slurm"};
  if (v.count("points-per-task") && !emit && !v.count("task"))
    throw UsageError{"--points-per-task goes with --emit-slurm or --task"};
  for (const std::string& o : strings("slurm-option"))
    (void)slurm_option_key(o); // bad options exit 2 before anything is written
  // Points per array task, 0 when not given.
  const std::size_t per_task = v.count("points-per-task") ? unsigned_option(v, "points-per-task", 1, max_points) : 0;
  const std::size_t task_batch = per_task > 0 ? per_task : 1;
  const auto parallel =
      v.count("jobs") ? static_cast<unsigned>(unsigned_option(v, "jobs", 1, 65536)) : default_parallelism();

  const std::vector<SweepPoint> points = expand(sweep);
  if (points.size() > max_points)
    throw UsageError{"a sweep of at most " + std::to_string(max_points) + " points; this one has " +
                     std::to_string(points.size())};
  PointRange range{0, points.size()};
  if (v.count("point")) {
    range.first = unsigned_option(v, "point", 0, max_points - 1);
    range.end = range.first + 1;
  } else if (v.count("points")) {
    const std::string text = v["points"].as<std::string>();
    const std::size_t dash = text.find('-');
    char* end = nullptr;
    const unsigned long long first = std::strtoull(text.c_str(), &end, 10);
    const bool first_ok = dash != std::string::npos && dash > 0 && end == text.c_str() + dash;
    const unsigned long long last = first_ok ? std::strtoull(text.c_str() + dash + 1, &end, 10) : 0;
    if (!first_ok || *end != '\0' || dash + 1 == text.size() || last < first ||
        !std::isdigit(static_cast<unsigned char>(text[0])) || !std::isdigit(static_cast<unsigned char>(text[dash + 1])))
      throw UsageError{"--points expects FIRST-LAST (0-based, FIRST <= LAST), got '" + text + "'"};
    range = {static_cast<std::size_t>(first), static_cast<std::size_t>(last) + 1};
  } else if (v.count("task")) {
    const std::size_t task = unsigned_option(v, "task", 0, max_points - 1);
    range = task_points(task, task_batch, points.size());
    if (range.first == range.end)
      throw UsageError{"--task " + std::to_string(task) + ": a sweep of " + std::to_string(points.size()) +
                       " points has tasks 0.." + std::to_string((points.size() - 1) / task_batch) +
                       " with --points-per-task " + std::to_string(task_batch)};
  }
  if (subset && range.end > points.size()) // before anything is written
    throw UsageError{
        "--point" +
        std::string(v.count("points") ? "s " + v["points"].as<std::string>() : " " + std::to_string(range.first)) +
        ": the sweep has points 0.." + std::to_string(points.size() - 1)};
  const auto in_range = [&](std::size_t i) { return i >= range.first && i < range.end; };
  // The directory a sweep.json inside a sweep directory belongs to is its default output directory.
  std::string default_dir = sweep.name + ".sweep";
  if (!from_command_line && fs::path(parsed.positional[0]).filename() == "sweep.json" &&
      fs::exists(fs::path(parsed.positional[0]).parent_path() / "points.json"))
    default_dir = fs::path(parsed.positional[0]).parent_path().string();
  const std::string dir =
      fs::absolute(v.count("out") ? v["out"].as<std::string>() : default_dir).lexically_normal().string();
  if (collect)
    return collect_sweep(sweep, points, dir, metric_source_of(from_command_line, parsed.positional[0]), out);
  // Every point must be a valid scenario before anything runs or a Slurm script is written, checked as `validate`
  // checks it (its memory budget, its fabric and the hosts its workloads name included): bad values fail here, with
  // exit 2. The digest each point's run will report comes with it, for resuming. A Slurm task (--point) checks its
  // own points only: the sweep that emitted the array checked them all.
  std::vector<std::string> digests(points.size());
  std::set<std::string> workload_names;
  bool fabric = false;
  for (std::size_t i = 0; i < points.size(); ++i) {
    try {
      const Scenario scenario = load_scenario(sweep.scenario, points[i].overrides, sweep.seed);
      fabric = scenario.workload == ib::scenario::WorkloadType::fabric;
      for (const auto& w : scenario.fabric.workloads)
        workload_names.insert(w->name());
      if (in_range(i)) {
        check_memory_budget(scenario);
        digests[i] = ib::scenario::config_digest(scenario);
      }
    } catch (const sim::InputError& e) {
      // A value the sweep gave the scenario is at fault where the sweep gave it, not in the scenario file.
      blame_override(e, sweep.scenario, points[i].overrides, points[i].origins, "point " + std::to_string(i));
    }
  }
  const MetricSource metric_source = metric_source_of(from_command_line, parsed.positional[0]);
  check_metric_names(sweep, workload_names, fabric, metric_source);

  make_output_directory(dir + "/points", "--out");
  // One sweep at a time in a directory, or else both would run every point and race on their reports; the tasks
  // of a Slurm array (--task, --point, --points) each write their own points, so they share it.
  const DirectoryLock lock(dir, !subset, "sweep");
  // The manifest: what this directory's points are. A different sweep in the same directory would mix results.
  nlohmann::ordered_json manifest;
  manifest["scenario"] = path_from(dir, sweep.scenario);
  manifest["scenario_digest"] = sim::digest_hex(slurp(sweep.scenario));
  manifest["seed"] = sweep.seed ? nlohmann::ordered_json(*sweep.seed) : nlohmann::ordered_json();
  manifest["points"] = manifest_points(points);
  const std::string manifest_path = dir + "/points.json";
  const std::string manifest_text = manifest.dump(2) + "\n";
  if (v.count("restart")) {
    fs::remove_all(dir + "/points");
    make_output_directory(dir + "/points", "--out");
  } else if (fs::exists(manifest_path) && !same_manifest(manifest_path, manifest)) {
    throw sim::InputError(manifest_path, "",
                          "the same sweep (same scenario contents, seed and points) to resume; use another --out, or "
                          "--restart to discard its results",
                          "a different sweep");
  }
  write_file_atomically(manifest_path, manifest_text);
  write_file_atomically(dir + "/sweep.json", sweep_document(sweep, dir).dump(2) + "\n");

  if (emit) {
    const std::string path = fs::absolute(v["emit-slurm"].as<std::string>()).lexically_normal().string();
    SlurmArray array;
    array.per_task = per_task > 0 ? per_task : default_points_per_task(points.size());
    array.batched_automatically = per_task == 0 && array.per_task > 1;
    array.throttle = v.count("array-throttle") ? unsigned_option(v, "array-throttle", 1, max_points) : 0;
    array.options = strings("slurm-option");
    write_slurm(path, sweep, dir, points.size(), array);
    const std::size_t tasks = (points.size() + array.per_task - 1) / array.per_task;
    out << "wrote " << path << ": a Slurm array of " << tasks << " tasks (" << array.per_task << " point"
        << (array.per_task == 1 ? "" : "s") << " each) for the " << points.size() << " points of sweep " << sweep.name
        << " into " << dir << "\n";
    if (array.batched_automatically)
      out << "  batched automatically: one task per point (" << points.size()
          << " tasks) would exceed Slurm's default MaxArraySize of " << slurm_default_max_array_size
          << " (--points-per-task sets the batch)\n";
    else if (tasks > slurm_default_max_array_size)
      out << "  note: " << tasks << " tasks exceed Slurm's default MaxArraySize of " << slurm_default_max_array_size
          << "; the cluster must allow more\n";
    return sim::exit_ok;
  }

  std::vector<PointJob> jobs(points.size());
  std::vector<PointJob*> to_run;
  std::size_t resumed = 0;
  std::size_t stale = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    jobs[i].overrides = points[i].overrides;
    jobs[i].report_path = point_stem(dir, i) + ".json";
    jobs[i].log_path = point_stem(dir, i) + ".log";
    if (!in_range(i))
      continue;
    if (fs::exists(jobs[i].report_path)) {
      // Done, unless what it was run from has changed since: a topology file or a hardware profile the scenario
      // only names. Its report would then mix into results from other inputs, so it runs again. The digest is
      // the one `validate` prints, computed as a run computes it: with the workloads' defaults filled in on the
      // fabric (a pattern's hosts), which the scenario alone does not know.
      if (recorded_digest(jobs[i].report_path) == digests[i]) {
        ++resumed;
        jobs[i].exit_code = 0;
        continue;
      }
      fs::remove(jobs[i].report_path);
      ++stale;
    }
    to_run.push_back(&jobs[i]);
  }

  const bool quiet = v.count("quiet") > 0;
  const auto started = std::chrono::steady_clock::now();
  std::size_t finished = 0, failed = 0;
  const std::size_t peak = run_points(sweep.scenario, sweep.seed, to_run, parallel, [&](const PointJob& job) {
    ++finished;
    failed += job.exit_code != 0;
    if (quiet)
      return;
    const std::size_t index = static_cast<std::size_t>(&job - jobs.data());
    // Points of one sweep take similar times, so the mean so far predicts the rest.
    const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    char eta[48] = "";
    if (finished < to_run.size())
      std::snprintf(eta, sizeof eta, ", ETA %.0f s",
                    elapsed_s / static_cast<double>(finished) * static_cast<double>(to_run.size() - finished));
    err << "[sweep " << sweep.name << "] " << finished << "/" << to_run.size() << eta << ": point " << index << " ("
        << point_label(sweep, points[index]) << ") "
        << (job.exit_code == 0 ? "ok" : "FAILED (exit " + std::to_string(job.exit_code) + "): " + job.error) << "\n";
  });
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (subset)
    return sweep_exit_code(jobs);

  std::vector<std::size_t> unmatched;
  const std::size_t missing = write_csv(sweep, points, dir, jobs, unmatched);
  char line[200];
  std::snprintf(line, sizeof line,
                "%zu points: %zu run (%zu failed), %zu already done; %.1f s wall, %zu at once (-j %u)\n", points.size(),
                to_run.size(), failed, resumed, wall_s, peak, parallel);
  out << "sweep " << sweep.name << " (" << sweep.scenario << "): " << line;
  if (stale > 0)
    out << "  " << stale << " of them ran again: their reports came from a topology file or hardware profile that "
        << "has changed since\n";
  out << "  " << dir << "/results.csv"
      << (missing > 0 ? " (" + std::to_string(missing) + " points without a report)" : "") << "\n  " << dir
      << "/points/NNNNN.json: each point's report\n";
  if (!sweep.plots.empty())
    out << "  plots: tools/plot_sweep.py " << dir << "\n";
  // The results are written: now a metric whose column came out empty in every row is bad input, not a silent gap.
  check_unmatched(sweep, unmatched, metric_source, dir);
  return sweep_exit_code(jobs);
}

} // namespace cli
