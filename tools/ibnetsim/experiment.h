// What `ibnetsim sweep` and `ibnetsim compare` share: running many variants of one scenario, each as its own
// `ibnetsim run` process (so a crash or an invariant broken in one point leaves the others), several at a time, each
// writing its JSON report; and reading figures back out of those reports as named metrics.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/errors.h"

namespace cli {

/// One run of the scenario with its overrides: what `ibnetsim run SCENARIO --set ... --out report` does.
struct PointJob {
  std::vector<std::string> overrides; ///< "/json/pointer=value", applied in order
  std::string report_path;            ///< where the finished report goes (written whole, or not at all)
  std::string log_path;               ///< the run's stderr; kept only when the run fails
  int exit_code = -1;                 ///< after run_points: the process's exit code (128 + signal if killed)
  std::string error;                  ///< after run_points: the first line of the log when the run failed
};

/// Where an override of a sweep point or compare variant came from, for errors: a sweep file and the JSON pointer of
/// the value there, or a command-line option ("--set", "--sweep") and the scenario pointer it sets.
struct Origin {
  std::string file;
  std::string pointer;
};

/// Rethrows `error`, met checking a point or variant (`what`: "point 3") of `scenario_file` with `overrides` applied,
/// as the fault of the override that set what the error is about, if one did: at that override's origin (an entry of
/// `origins`, which parallels `overrides`), with the scenario's file and pointer after it. Otherwise rethrows
/// `error` unchanged: the scenario itself is at fault.
[[noreturn]] void blame_override(const sim::InputError& error, const std::string& scenario_file,
                                 const std::vector<std::string>& overrides, const std::vector<Origin>& origins,
                                 const std::string& what);

/// The ibnetsim executable running now (/proc/self/exe), so children run exactly this build.
std::string self_executable();

/// Runs `jobs` as `ibnetsim run scenario --set ... [--seed] --quiet --out report_path`, at most `parallel` at a
/// time, in order of index. `done(job)` is called as each finishes. Returns the most that ran at once. Children
/// that cannot be started: InputError.
std::size_t run_points(const std::string& scenario, std::optional<std::uint64_t> seed, std::vector<PointJob*>& jobs,
                       unsigned parallel, const std::function<void(const PointJob&)>& done);

/// The number of processes to run at once by default: the machine's cores.
unsigned default_parallelism();

/// The scalar figures of a fabric report under short dotted names, in report order: each workload's results as
/// "<workload>.<key>" (nested objects as "<workload>.<key>.<key>"; arrays of one element flattened away, longer
/// arrays such as per-flow lists left out), "pcie.<key>" for PCIe per message, and "simulated_time_us". A phold
/// report's results are flat: each under its own key.
using Metrics = std::vector<std::pair<std::string, nlohmann::ordered_json>>;
Metrics report_metrics(const nlohmann::ordered_json& report);

/// A metric of `report` by name: a name report_metrics() gives, or a JSON pointer into the report ("/results/...").
/// nullopt when the report has no such value.
std::optional<nlohmann::ordered_json> find_metric(const nlohmann::ordered_json& report, const Metrics& metrics,
                                                  const std::string& name);

/// A JSON scalar as a CSV or table cell: strings bare, numbers as JSON prints them.
std::string cell_text(const nlohmann::ordered_json& value);
std::string cell_text(const nlohmann::json& value);

/// `text` as one CSV field (RFC 4180: quoted when it holds a comma, a quote or a newline).
std::string csv_field(const std::string& text);

} // namespace cli
