// `ibnetsim sweep`: one scenario run over a grid of parameter values (docs/user-guide.md). A sweep is a SWEEP.json
// file, or a scenario with --sweep/--zip options; it expands into points (the Cartesian product of its axes, an axis
// being one parameter, parameters zipped together, or named variants), runs each point as its own `ibnetsim run`
// process, and writes every point's JSON report and one CSV row per point into its output directory. Finished points
// are never run again, so an interrupted sweep resumes, and a Slurm array job can run the points on a cluster.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/json_reader.h"
#include "tools/ibnetsim/experiment.h"

namespace cli {

/// One dimension of a sweep. Each row sets the axis's columns to values and applies overrides to the scenario.
struct SweepAxis {
  std::vector<std::string> columns;
  std::vector<std::string> pointers; ///< the scenario value each column sets; empty for named variants
  struct Row {
    std::vector<nlohmann::json> values; ///< one per column
    std::vector<std::string> overrides; ///< "/json/pointer=value"
    std::vector<Origin> origins;        ///< where each override came from, for errors
  };
  std::vector<Row> rows;
};

/// A plot of the sweep's CSV that tools/plot_sweep.py draws.
struct SweepPlot {
  nlohmann::ordered_json spec; ///< {file, x, y, series, facet, where, logx, logy, title, xlabel, ylabel}, as checked
};

struct Sweep {
  std::string name;
  std::string description;
  std::string scenario;              ///< absolute path of the scenario file (sweep.json stores it relative)
  std::vector<std::string> fixed;    ///< overrides every point gets before its own
  std::vector<Origin> fixed_origins; ///< where each came from
  std::optional<std::uint64_t> seed; ///< overrides the scenario's seed (a "/seed" axis varies it)
  std::vector<SweepAxis> axes;
  std::vector<std::string> metrics; ///< CSV metric columns: report_metrics() names or report pointers; empty: all
  std::vector<SweepPlot> plots;
};

/// One point of the grid: its column values and its overrides (the fixed ones first).
struct SweepPoint {
  std::vector<nlohmann::json> values;
  std::vector<std::string> overrides;
  std::vector<Origin> origins; ///< where each override came from, for errors
};

/// Reads a SWEEP.json file strictly (errors: sim::InputError with the file and JSON pointer).
Sweep read_sweep_file(const std::string& path);
/// As read_sweep_file(), for a parsed document (sim::parse_json_text); a relative "scenario" is from the directory of
/// the document's file name. Without `scenario_must_exist` (collecting a sweep directory copied away from its
/// scenario needs only the grid), a scenario file that is not there is no error.
Sweep read_sweep(const sim::JsonDocument& doc, bool scenario_must_exist = true);

/// Parses one command-line list of values: "2,8,64", "2..4096*2" (geometric), "0.1..1+0.1" (arithmetic), with JSON
/// values ("[1,2]", "\"a,b\"") kept whole; what is not JSON is a string. Problems: sim::InputError about `option`.
std::vector<nlohmann::json> parse_value_list(const std::string& text, const std::string& option);

/// The sweep's points, in order: the last axis varies fastest.
std::vector<SweepPoint> expand(const Sweep& sweep);

/// All CSV columns that name swept values, in axis order.
std::vector<std::string> axis_columns(const Sweep& sweep);

/// The sweep as a SWEEP.json document that reads back to the same sweep (ranges written out as values). With a
/// `directory`, the scenario is written relative to it: the sweep.json of a sweep directory, which can then move
/// together with its scenario.
nlohmann::ordered_json sweep_document(const Sweep& sweep, const std::string& directory = "");

/// Which points array task `task` of a sweep of `points` points, `per_task` to a task, runs: [first, end).
struct PointRange {
  std::size_t first = 0;
  std::size_t end = 0;
};
PointRange task_points(std::size_t task, std::size_t per_task, std::size_t points);

/// Slurm's default MaxArraySize: array indices run to 1000, so an array of at most this many tasks submits anywhere.
constexpr std::size_t slurm_default_max_array_size = 1001;
/// Points per task that keep a sweep of `points` points within slurm_default_max_array_size tasks.
std::size_t default_points_per_task(std::size_t points);

/// `ibnetsim sweep ...` (after the command word); returns the exit code.
int command_sweep(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

} // namespace cli
