// What `ibnetsim sweep` and `ibnetsim compare` share: running many variants of one scenario, each as its own
// `ibnetsim run` process (so a crash or an invariant broken in one point leaves the others; forked from this one,
// which has loaded SimGrid for them), several at a time, each writing its JSON report; and reading figures back out
// of those reports as named metrics.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario/metrics.h"
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

/// The ibnetsim executable running now (/proc/self/exe): the points' argv[0], and what Slurm array scripts run.
std::string self_executable();

/// Runs `jobs` as `ibnetsim run scenario --set ... [--seed] --quiet --out report_path`, each in a forked child, at
/// most `parallel` at a time, in order of index. `done(job)` is called as each finishes. Returns the most that ran at
/// once. Children that cannot be started: InputError.
std::size_t run_points(const std::string& scenario, std::optional<std::uint64_t> seed, std::vector<PointJob*>& jobs,
                       unsigned parallel, const std::function<void(const PointJob&)>& done);

/// The number of processes to run at once by default: the machine's cores.
unsigned default_parallelism();

// Metric names, shared with run's CSV and the Python module (models/scenario/metrics.h).
using ib::scenario::cell_text;
using ib::scenario::csv_field;
using ib::scenario::find_metric;
using ib::scenario::Metrics;
using ib::scenario::report_metrics;

} // namespace cli
