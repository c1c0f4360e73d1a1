// ibnetsim._core: the scenario runner for Python (tools/python/ibnetsim/__init__.py is the face users see; docs in
// docs/python.md). Reports cross as JSON text, which Python's json module reads back to the same numbers, so a report
// from Python equals `ibnetsim run --format json`'s. Errors cross as (status, payload) pairs with the CLI's exit
// codes, for the Python side to raise as its own exception classes.
//
// run() runs in this process with the GIL released; Ctrl-C (SIGINT) interrupts it at the runner's next progress
// check. run_many() runs each job in a child process of its own (fork), several at a time: a point that dies
// (SimGrid aborts on some resource limits) leaves the interpreter and the other points alive.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <tuple>
#include <unistd.h>
#include <vector>

#include "models/scenario/budget.h"
#include "models/scenario/metrics.h"
#include "models/scenario/run.h"
#include "models/scenario/scenario.h"
#include "sim/data_dir.h"
#include "sim/errors.h"
#include "sim/json_reader.h"
#include "sim/program_engine.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace py = pybind11;

namespace {

/// Exit statuses as the CLI has them (sim/errors.h), and the one a Ctrl-C gives.
constexpr int status_other_error = 1;
constexpr int status_interrupted = 130;

/// What to run: a scenario file, or a scenario's JSON text read as if from file `label`.
struct Source {
  std::string path_or_text;
  bool is_text = false;
  std::string label;
  std::vector<std::string> overrides;
  std::optional<std::uint64_t> seed;
};

using Outcome = std::pair<int, std::string>; ///< (status, report JSON or error JSON)

ib::scenario::Scenario load(const Source& source) {
  if (source.is_text)
    return ib::scenario::read_scenario(sim::parse_json_text(source.label, source.path_or_text), source.overrides,
                                       source.seed);
  return ib::scenario::load_scenario(source.path_or_text, source.overrides, source.seed);
}

/// The memory budget as `ibnetsim run` checks it: `max_memory_bytes`, else the machine's available memory.
void check_budget(const ib::scenario::Scenario& scenario, std::optional<std::uint64_t> max_memory_bytes) {
  const ib::scenario::MemoryEstimate estimate = ib::scenario::estimate_memory(scenario);
  if (max_memory_bytes) {
    ib::scenario::check_memory(scenario, estimate, *max_memory_bytes, "max_memory");
  } else if (const auto available = ib::scenario::available_memory_bytes()) {
    ib::scenario::check_memory(scenario, estimate, *available,
                               "the machine's available memory; max_memory sets the limit");
  }
}

std::string input_error_json(const sim::InputError& e) {
  return nlohmann::json{{"file", e.file()},
                        {"pointer", e.json_pointer()},
                        {"expected", e.expected()},
                        {"got", e.got()},
                        {"message", e.what()}}
      .dump();
}

std::string invariant_json(const sim::InvariantViolation& e) {
  return nlohmann::json{
      {"id", e.id()}, {"component", e.component()}, {"detail", e.detail()}, {"state", e.state()}, {"message", e.what()}}
      .dump();
}

/// Runs `source` to its end, or until `hook` says stop; every failure becomes an Outcome.
Outcome run_source(const Source& source, std::optional<std::uint64_t> max_memory_bytes, const std::string& trace,
                   bool (*hook)(void*, const sim::Simulator&), void* hook_context) {
  try {
    const ib::scenario::Scenario scenario = load(source);
    check_budget(scenario, max_memory_bytes);
    std::unique_ptr<sim::Tracer> tracer;
    if (!trace.empty()) {
      if (scenario.workload != ib::scenario::WorkloadType::fabric)
        throw sim::InputError(source.label, "", "a fabric scenario (one with workloads) to trace", "a phold scenario");
      tracer = std::make_unique<sim::Tracer>(trace, sim::TraceFilter{});
    }
    ib::scenario::RunOptions options;
    options.progress_hook = hook;
    options.progress_context = hook_context;
    options.tracer = tracer.get();
    ib::scenario::RunResult result = ib::scenario::run(scenario, options);
    if (tracer)
      tracer->finish();
    if (result.partial)
      return {status_interrupted, ""};
    return {sim::exit_ok, result.report.dump()};
  } catch (const sim::InputError& e) {
    return {sim::exit_input_error, input_error_json(e)};
  } catch (const sim::InvariantViolation& e) {
    return {sim::exit_invariant_violation, invariant_json(e)};
  } catch (const std::exception& e) {
    return {status_other_error, nlohmann::json{{"message", e.what()}}.dump()};
  }
}

/// The runner's progress hook in the interpreter: a pending Ctrl-C stops the run (Python raises it afterwards).
bool python_signals_hook(void* context, const sim::Simulator&) {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) {
    *static_cast<bool*>(context) = true;
    return false;
  }
  return true;
}

Source make_source(const std::string& scenario, bool is_text, const std::string& label,
                   const std::vector<std::string>& overrides, std::optional<std::uint64_t> seed) {
  return Source{scenario, is_text, is_text ? label : scenario, overrides, seed};
}

py::tuple run(const std::string& scenario, bool is_text, const std::string& label,
              const std::vector<std::string>& overrides, std::optional<std::uint64_t> seed,
              std::optional<std::uint64_t> max_memory_bytes, const std::string& trace) {
  const Source source = make_source(scenario, is_text, label, overrides, seed);
  bool interrupted = false;
  Outcome outcome;
  {
    py::gil_scoped_release release;
    outcome = run_source(source, max_memory_bytes, trace, &python_signals_hook, &interrupted);
  }
  if (interrupted)
    throw py::error_already_set(); // the KeyboardInterrupt PyErr_CheckSignals raised
  return py::make_tuple(outcome.first, py::bytes(outcome.second));
}

py::tuple validate(const std::string& scenario, bool is_text, const std::string& label,
                   const std::vector<std::string>& overrides, std::optional<std::uint64_t> seed,
                   std::optional<std::uint64_t> max_memory_bytes) {
  const Source source = make_source(scenario, is_text, label, overrides, seed);
  try {
    const ib::scenario::Scenario loaded = load(source);
    check_budget(loaded, max_memory_bytes);
    return py::make_tuple(sim::exit_ok, ib::scenario::config_digest(loaded));
  } catch (const sim::InputError& e) {
    return py::make_tuple(sim::exit_input_error, input_error_json(e));
  } catch (const std::exception& e) {
    return py::make_tuple(status_other_error, nlohmann::json{{"message", e.what()}}.dump());
  }
}

/// A child's outcome file: the status, a newline, the payload.
void write_outcome(const std::string& path, const Outcome& outcome) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << outcome.first << "\n" << outcome.second;
}

Outcome read_outcome(const std::string& path, int wait_status) {
  std::ifstream file(path, std::ios::binary);
  int status = -1;
  if (file >> status) {
    file.get();
    std::stringstream payload;
    payload << file.rdbuf();
    return {status, payload.str()};
  }
  // The child died before it could say how it ended.
  const std::string how = WIFSIGNALED(wait_status) ? std::string("killed by signal ") + strsignal(WTERMSIG(wait_status))
                                                   : "exit " + std::to_string(WEXITSTATUS(wait_status));
  return {status_other_error, nlohmann::json{{"message", "the run's process ended without a result: " + how}}.dump()};
}

/// Never returns: the child's whole life. No Python, no exit handlers of the interpreter.
[[noreturn]] void child_main(const Source& source, std::optional<std::uint64_t> max_memory_bytes,
                             const std::string& outcome_path) {
  std::signal(SIGINT, SIG_DFL); // the parent stops its children with SIGTERM; a Ctrl-C to the group ends them too
  const Outcome outcome = run_source(source, max_memory_bytes, "", nullptr, nullptr);
  write_outcome(outcome_path, outcome);
  std::_Exit(outcome.first == sim::exit_ok ? 0 : outcome.first);
}

/// Runs every job (scenario, is_text, label, overrides, seed) in a child process, at most `parallel` at a time, and
/// returns their outcomes in job order. `progress(done, total)` is called (with the GIL) as each finishes.
std::vector<py::tuple>
run_many(const std::vector<
             std::tuple<std::string, bool, std::string, std::vector<std::string>, std::optional<std::uint64_t>>>& jobs,
         unsigned parallel, std::optional<std::uint64_t> max_memory_bytes, const py::object& progress) {
  std::string dir_pattern = "/tmp/ibnetsim-py-XXXXXX";
  if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && *tmp != '\0')
    dir_pattern = std::string(tmp) + "/ibnetsim-py-XXXXXX";
  if (::mkdtemp(dir_pattern.data()) == nullptr)
    throw std::runtime_error("cannot make a temporary directory " + dir_pattern + ": " + std::strerror(errno));
  const std::string dir = dir_pattern;
  const auto outcome_path = [&](std::size_t i) { return dir + "/" + std::to_string(i); };

  // Each child then starts with SimGrid loaded (sim/program_engine.h), as the CLI's sweeps do.
  sim::preload_program_engine();
  std::vector<Outcome> outcomes(jobs.size());
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0, finished = 0;
  const auto stop_all = [&] {
    for (const auto& [pid, index] : running)
      ::kill(pid, SIGTERM);
    for (const auto& [pid, index] : running) {
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      ::unlink(outcome_path(index).c_str());
    }
    running.clear();
  };
  const auto cleanup = [&] {
    for (std::size_t i = 0; i < jobs.size(); ++i)
      ::unlink(outcome_path(i).c_str());
    ::rmdir(dir.c_str());
  };
  try {
    while (next < jobs.size() || !running.empty()) {
      while (running.size() < std::max(parallel, 1u) && next < jobs.size()) {
        const auto& [scenario, is_text, label, overrides, seed] = jobs[next];
        const Source source = make_source(scenario, is_text, label, overrides, seed);
        const std::string path = outcome_path(next);
        std::fflush(nullptr);
        const pid_t pid = ::fork();
        if (pid < 0)
          throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
        if (pid == 0)
          child_main(source, max_memory_bytes, path);
        running[pid] = next++;
      }
      int status = 0;
      pid_t pid;
      {
        py::gil_scoped_release release;
        pid = ::waitpid(-1, &status, 0);
      }
      if (pid < 0) {
        if (errno != EINTR)
          throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
        if (PyErr_CheckSignals() != 0)
          throw py::error_already_set();
        continue;
      }
      const auto found = running.find(pid);
      if (found == running.end())
        continue; // not one of ours
      const std::size_t index = found->second;
      running.erase(found);
      outcomes[index] = read_outcome(outcome_path(index), status);
      ::unlink(outcome_path(index).c_str());
      ++finished;
      if (!progress.is_none())
        progress(finished, jobs.size());
      if (PyErr_CheckSignals() != 0)
        throw py::error_already_set();
    }
  } catch (...) {
    stop_all();
    cleanup();
    throw;
  }
  cleanup();
  std::vector<py::tuple> result;
  result.reserve(outcomes.size());
  for (const Outcome& o : outcomes)
    result.push_back(py::make_tuple(o.first, py::bytes(o.second)));
  return result;
}

nlohmann::ordered_json parse_report(const std::string& report_json) {
  return nlohmann::ordered_json::parse(report_json);
}

/// report_long() as three columns (metric, entity, value), ready for a DataFrame.
py::tuple long_columns(const std::string& report_json) {
  const std::vector<ib::scenario::LongRow> rows = ib::scenario::report_long(parse_report(report_json));
  py::list metrics, entities, values;
  for (const ib::scenario::LongRow& row : rows) {
    metrics.append(row.metric);
    entities.append(row.entity);
    values.append(row.value.get<double>());
  }
  return py::make_tuple(metrics, entities, values);
}

/// report_metrics() as (name, JSON text of the value) pairs, in report order.
std::vector<std::pair<std::string, std::string>> wide_metrics(const std::string& report_json) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, value] : ib::scenario::report_metrics(parse_report(report_json)))
    out.emplace_back(name, value.dump());
  return out;
}

py::tuple data_directory() {
  try {
    return py::make_tuple(sim::exit_ok, sim::data_directory());
  } catch (const sim::InputError& e) {
    return py::make_tuple(sim::exit_input_error, input_error_json(e));
  }
}

} // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "ibnetsim's scenario runner (use the ibnetsim package, not this module)";
  m.attr("version") = IBNETSIM_VERSION;
  m.def("run", &run, py::arg("scenario"), py::arg("is_text"), py::arg("label"), py::arg("overrides"), py::arg("seed"),
        py::arg("max_memory_bytes"), py::arg("trace"));
  m.def("validate", &validate, py::arg("scenario"), py::arg("is_text"), py::arg("label"), py::arg("overrides"),
        py::arg("seed"), py::arg("max_memory_bytes"));
  m.def("run_many", &run_many, py::arg("jobs"), py::arg("parallel"), py::arg("max_memory_bytes"), py::arg("progress"));
  m.def("long_columns", &long_columns, py::arg("report_json"));
  m.def("wide_metrics", &wide_metrics, py::arg("report_json"));
  m.def("set_data_directory", &sim::set_data_directory, py::arg("path"));
  m.def("data_directory", &data_directory);
}
