#include "tools/ibnetsim/commands.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <boost/program_options.hpp>

#include "models/host/workloads.h"
#include "models/scenario/metrics.h"
#include "models/scenario/profile_models.h"
#include "models/scenario/run.h"
#include "models/scenario/scenario.h"
#include "sim/errors.h"
#include "sim/profile.h"
#include "sim/report.h"
#include "sim/trace.h"
#include "tools/ibnetsim/compare.h"
#include "tools/ibnetsim/options.h"
#include "tools/ibnetsim/output.h"
#include "tools/ibnetsim/perftest_command.h"
#include "tools/ibnetsim/sweep.h"
#include "tools/ibnetsim/topo_commands.h"

namespace po = boost::program_options;

namespace cli {

namespace {

using ib::scenario::load_scenario;
using ib::scenario::RunOptions;
using ib::scenario::RunResult;
using ib::scenario::Scenario;
using ib::scenario::WorkloadType;

constexpr const char* usage_text = R"(ibnetsim: a discrete-event simulator of InfiniBand fabrics

usage: ibnetsim [--data-dir DIR] COMMAND [options]
       ibnetsim --version | --help

commands:
  run SCENARIO       run a scenario file and report its results
  validate SCENARIO  check a scenario file (and overrides) without running it
  perftest TEST      run one perftest test (ib_write_bw, ib_send_lat, ...) with perftest's own options, on
                     two hosts through one switch (or --topology FILE): no scenario file needed
  params [MODEL]     list the models, or one model's parameters with units and ranges;
                     with --profile NAME, a hardware profile's values, units and sources
  sweep SWEEP.json   run a scenario over a grid of parameter values, in parallel: a CSV row and a JSON
                     report per point; resumes; --emit-slurm for clusters ('ibnetsim sweep --help')
  compare SCENARIO   the scenario with inline, BlueFlame, postlist and unsignaled completions off and on (or
                     named variants), side by side: latency, message rate, PCIe TLPs per message
  topo SUBCOMMAND    generate, import, export and summarise topologies ('ibnetsim topo --help')

global options (before or after COMMAND):
  --data-dir DIR     read hardware profiles and other data from DIR (holding topologies/hardware/);
                     default: $IBNETSIM_DATA_DIR, else <directory of the executable>/../share/ibnetsim
  --max-memory SIZE  refuse (exit 2) a scenario whose estimated peak memory exceeds SIZE (512M, 8G, ...);
                     default: the machine's available memory (MemAvailable)

'ibnetsim COMMAND --help' describes a command's options.
exit codes: 0 success, 2 bad input or options, 3 a model invariant was violated, 1 internal error,
            130/143 interrupted by SIGINT/SIGTERM (run writes a partial report).
)";

std::optional<std::uint64_t> parse_seed(const po::variables_map& values) {
  if (!values.count("seed"))
    return std::nullopt;
  const std::string text = values["seed"].as<std::string>();
  std::uint64_t seed = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seed);
  if (error != std::errc() || end != text.data() + text.size())
    throw UsageError{"--seed expects an unsigned 64-bit integer, got '" + text + "'"};
  return seed;
}

po::options_description scenario_options() {
  po::options_description options("scenario options");
  options.add_options()("set", po::value<std::vector<std::string>>()->composing(),
                        "override one value: /json/pointer=value (repeatable); validated like the file")(
      "seed", po::value<std::string>(), "override the scenario's seed");
  return options;
}

Scenario load_from(const Parsed& parsed, const std::string& command) {
  if (parsed.positional.empty())
    throw UsageError{command + " needs a SCENARIO file"};
  std::vector<std::string> overrides;
  if (parsed.values.count("set"))
    overrides = parsed.values["set"].as<std::vector<std::string>>();
  return load_scenario(parsed.positional[0], overrides, parse_seed(parsed.values));
}

/// The signal (SIGINT or SIGTERM) that asked a running simulation to stop; 0 while none has.
volatile std::sig_atomic_t interrupt_signal = 0;

extern "C" void on_interrupt_signal(int signal) {
  if (interrupt_signal != 0) { // asked twice: the run is not reaching its next check, so die by the signal now
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  interrupt_signal = signal;
}

/// While a run simulates, SIGINT and SIGTERM only set interrupt_signal; the progress hook then halts the run, whose
/// partial results are reported and written (docs/user-guide.md). The previous handlers come back afterwards.
class InterruptSignals {
public:
  InterruptSignals() {
    interrupt_signal = 0;
    struct sigaction action {};
    action.sa_handler = &on_interrupt_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, &previous_int_);
    sigaction(SIGTERM, &action, &previous_term_);
  }
  ~InterruptSignals() {
    sigaction(SIGINT, &previous_int_, nullptr);
    sigaction(SIGTERM, &previous_term_, nullptr);
  }
  InterruptSignals(const InterruptSignals&) = delete;
  InterruptSignals& operator=(const InterruptSignals&) = delete;

private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

// A progress line on stderr once a run has taken two seconds, refreshed every second (docs/user-guide.md); and
// the check, as often, for a signal that asks the run to stop.
struct Progress {
  std::ostream& err;
  sim::Time duration;
  bool quiet = false;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  double next_print_s = 2.0;
  bool printed = false;

  static bool hook(void* context, const sim::Simulator& sim) {
    if (interrupt_signal != 0)
      return false;
    static_cast<Progress*>(context)->update(sim);
    return true;
  }
  void update(const sim::Simulator& sim) {
    if (quiet)
      return;
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (wall_s < next_print_s)
      return;
    next_print_s = wall_s + 1.0;
    printed = true;
    char line[200];
    const double events_m = static_cast<double>(sim.events_dispatched()) / 1e6;
    if (duration == sim::Time::max()) // runs until its programs end: no ETA to give
      std::snprintf(line, sizeof line, "\r[ibnetsim] simulated %.3f us, %.1f M events, %.1f M events/s, %.1f s wall",
                    sim.now().us(), events_m, events_m / wall_s, wall_s);
    else
      std::snprintf(line, sizeof line,
                    "\r[ibnetsim] simulated %.3f of %.3f us (%.0f%%), %.1f M events, %.1f M events/s, %.1f s wall, "
                    "ETA %.0f s",
                    sim.now().us(), duration.us(), 100.0 * sim.now().us() / duration.us(), events_m, events_m / wall_s,
                    wall_s, wall_s * (duration.us() / std::max(sim.now().us(), 1e-9) - 1));
    err << line << std::flush;
  }
  void finish() {
    if (printed)
      err << "\n";
  }
};

sim::Time parse_us(const Parsed& parsed, const char* option) {
  const std::string text = parsed.values[option].as<std::string>();
  char* end = nullptr;
  const double us = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(us >= 0) || us > 8.64e10)
    throw UsageError{std::string("--") + option + " expects a time in microseconds, got '" + text + "'"};
  return sim::Time::from_ps(static_cast<std::int64_t>(us * 1e6 + 0.5));
}

sim::TraceFilter trace_filter(const Parsed& parsed) {
  sim::TraceFilter filter;
  if (parsed.values.count("trace-qp"))
    for (const std::string& text : parsed.values["trace-qp"].as<std::vector<std::string>>()) {
      std::uint32_t qpn = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), qpn);
      if (error != std::errc() || end != text.data() + text.size() || qpn > 0xffffff)
        throw UsageError{"--trace-qp expects a QP number (0..16777215), got '" + text + "'"};
      filter.qpns.insert(qpn);
    }
  if (parsed.values.count("trace-host"))
    for (const std::string& name : parsed.values["trace-host"].as<std::vector<std::string>>())
      filter.components.insert(name);
  if (parsed.values.count("trace-from-us"))
    filter.from = parse_us(parsed, "trace-from-us");
  if (parsed.values.count("trace-to-us"))
    filter.to = parse_us(parsed, "trace-to-us");
  if (filter.from > filter.to)
    throw UsageError{"--trace-from-us must not be after --trace-to-us: the window would hold nothing"};
  const bool filtered = parsed.values.count("trace-qp") || parsed.values.count("trace-host") ||
                        parsed.values.count("trace-from-us") || parsed.values.count("trace-to-us");
  if (filtered && !parsed.values.count("trace"))
    throw UsageError{"--trace-qp, --trace-host, --trace-from-us and --trace-to-us need --trace FILE"};
  return filter;
}

/// `run --counters`: perfquery's port counters of every port that sent or received a packet, one row each, with
/// the error counters as columns only when some port has errors (only faults make them).
void print_port_counters(std::ostream& out, const sim::ReportJson& ports) {
  static constexpr const char* error_names[] = {"LinkDownedCounter", "SymbolErrorCounter", "PortRcvErrors",
                                                "PortXmitDiscards", "PortRcvSwitchRelayErrors"};
  std::size_t name_width = 4;
  std::size_t idle = 0;
  bool errors = false;
  std::vector<const sim::ReportJson*> shown;
  for (const sim::ReportJson& row : ports) {
    if (row["PortXmitPkts"].get<std::uint64_t>() + row["PortRcvPkts"].get<std::uint64_t>() == 0 &&
        !row.contains("LinkDownedCounter")) {
      ++idle;
      continue;
    }
    shown.push_back(&row);
    name_width = std::max(name_width, row["port"].get<std::string>().size());
    errors = errors || row.contains("LinkDownedCounter");
  }
  out << "\nport counters (perfquery's names: data in 4-byte words; PortXmitWait in ticks of tick[ns], the device's "
         "PortSamplesControl.Tick + 1 symbol times)\n";
  char cell[64];
  std::string head = " port";
  head.append(name_width - 4, ' ');
  for (const char* name : {"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts", "PortXmitWait"}) {
    std::snprintf(cell, sizeof cell, " %14s", name);
    head += cell;
  }
  head += "  tick[ns]  wait[us]";
  if (errors)
    for (const char* name : error_names)
      head += std::string(" ") + name;
  out << head << "\n";
  for (const sim::ReportJson* row : shown) {
    const std::string name = (*row)["port"].get<std::string>();
    std::string line = " ";
    line += name;
    line.append(name_width - name.size(), ' ');
    for (const char* key : {"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts", "PortXmitWait"}) {
      std::snprintf(cell, sizeof cell, " %14llu", static_cast<unsigned long long>((*row)[key].get<std::uint64_t>()));
      line += cell;
    }
    std::snprintf(cell, sizeof cell, "  %8.3f  %8.3f", (*row)["PortXmitWait_tick_ns"].get<double>(),
                  (*row)["PortXmitWait_ns"].get<double>() / 1000);
    line += cell;
    if (errors)
      for (const char* key : error_names) {
        const std::uint64_t value = row->contains(key) ? (*row)[key].get<std::uint64_t>() : 0;
        std::snprintf(cell, sizeof cell, " %*llu", static_cast<int>(std::strlen(key)),
                      static_cast<unsigned long long>(value));
        line += cell;
      }
    out << line << "\n";
  }
  if (idle > 0)
    out << " (" << idle << " port" << (idle == 1 ? "" : "s") << " sent and received nothing: not shown)\n";
  out << "\n";
}

/// The table `run` prints for a fabric scenario: the fabric, each workload's own table, what the run cost.
void print_fabric_table(std::ostream& out, const sim::ReportJson& report, const RunResult& result,
                        const sim::ReportJson& performance, bool counters) {
  const sim::ReportJson& about = report["scenario"];
  out << "scenario " << about["name"].get<std::string>() << " (" << about["file"].get<std::string>()
      << "): " << about["hosts"] << " hosts, " << about["switches"] << " switches, "
      << about["routing"].get<std::string>() << " routing, seed " << about["seed"] << "\n\n";
  for (const std::string& line : result.table)
    out << line << "\n";
  const sim::ReportJson& r = report["results"];
  if (counters)
    print_port_counters(out, r["ports"]);
  const double wall_s = performance["wall_time_s"].get<double>();
  char line[240];
  const char* cut = report.contains("partial")  ? " (interrupted: partial results)"
                    : r["finished"].get<bool>() ? ""
                                                : " (stopped at duration_us)";
  std::snprintf(line, sizeof line,
                "simulated %.3f us%s; %llu events in %.2f s wall (%.2f M events/s), peak RSS %.0f MiB\n"
                "config digest %s\n",
                r["simulated_time_us"].get<double>(), cut, static_cast<unsigned long long>(result.events_dispatched),
                wall_s, static_cast<double>(result.events_dispatched) / std::max(wall_s, 1e-9) / 1e6,
                performance["peak_rss_mib"].get<double>(), report["config_digest"].get<std::string>().c_str());
  out << line;
  if (performance.contains("events_by_part")) {
    const sim::ReportJson& by = performance["events_by_part"];
    out << "events per message (" << by["messages"] << " messages):";
    const char* sep = " ";
    for (const auto& [part, counts] : by["parts"].items()) {
      std::snprintf(line, sizeof line, "%s%s %.2f", sep, part.c_str(), counts["per_message"].get<double>());
      out << line;
      sep = ", ";
    }
    out << "\n";
  }
}

/// What `run` prints on stdout: the table for people, or the report as JSON or CSV.
void print_report(std::ostream& out, sim::ReportFormat format, bool fabric, const sim::ReportJson& report,
                  const RunResult& result, const sim::ReportJson& performance, bool counters) {
  switch (format) {
  case sim::ReportFormat::table:
    // The table is for people: it always shows how long the run took.
    if (fabric) {
      print_fabric_table(out, report, result, performance, counters);
    } else {
      sim::ReportJson with_timing = report;
      with_timing["performance"] = performance;
      out << sim::report_to_table(with_timing);
    }
    break;
  case sim::ReportFormat::json:
    sim::write_report_json(out, report);
    break;
  case sim::ReportFormat::csv:
    out << ib::scenario::metrics_csv(report);
    break;
  case sim::ReportFormat::long_csv:
    out << ib::scenario::long_csv(report);
    break;
  }
}

/// The options of `run` that say what to print and write, shared with `perftest`. `perftest` takes -q as perftest's
/// --qp, so its --quiet has no letter.
po::options_description output_options(bool quiet_letter) {
  po::options_description options("output options");
  options.add_options()("out", po::value<std::string>(), "also write the full JSON report to FILE.json")(
      "format", po::value<std::string>()->default_value("table"),
      "stdout format: table, json, csv (one row of the run-wide metrics) or long-csv (metric, entity, value: "
      "every figure, ports and flows included)")(quiet_letter ? "quiet,q" : "quiet",
                                                 "print nothing on stdout (use with --out)")(
      "timing", "add wall time, events/s and peak memory to JSON and CSV reports (they then differ run to run)")(
      "events", "count events by part of the model (programs, PCIe, HCA, ports, switches), in total and per "
                "message: in the table, and in the report as results.kernel_events_by_part (a little slower)")(
      "counters", "add every active port's perfquery counters to the table (JSON and CSV always carry them)")(
      "trace", po::value<std::string>(),
      "write a timeline to FILE.json in Chrome trace-event format (open it in https://ui.perfetto.dev)")(
      "trace-qp", po::value<std::vector<std::string>>()->composing(),
      "trace only packets to and work of this QPN (repeatable)")(
      "trace-host", po::value<std::vector<std::string>>()->composing(),
      "trace only this host or switch, by name (repeatable)")("trace-from-us", po::value<std::string>(),
                                                              "trace from this simulated time, in us")(
      "trace-to-us", po::value<std::string>(), "trace until this simulated time, in us");
  return options;
}

/// --format, checked with --counters before the scenario is read.
sim::ReportFormat output_format(const Parsed& parsed) {
  sim::ReportFormat format;
  const std::string format_text = parsed.values["format"].as<std::string>();
  if (!sim::parse_report_format(format_text, format))
    throw UsageError{"--format expects table, json, csv or long-csv, got '" + format_text + "'"};
  if (parsed.values.count("counters") && format != sim::ReportFormat::table)
    throw UsageError{"--counters adds a table to --format table; JSON and CSV reports always carry the counters "
                     "(results.ports)"};
  return format;
}

/// Runs `scenario` and prints and writes what the output options of `parsed` ask for: all of `run` after it has
/// read the scenario, and all of `perftest` after it has built one.
int run_and_report(const Scenario& scenario, const Parsed& parsed, std::ostream& out, std::ostream& err) {
  const sim::ReportFormat format = output_format(parsed);
  const bool counters = parsed.values.count("counters") > 0;
  if (counters && scenario.workload != WorkloadType::fabric)
    throw UsageError{"--counters needs a fabric scenario (one with workloads); this one runs phold"};
  const ib::scenario::MemoryEstimate estimate = check_memory_budget(scenario);
  const bool fabric = scenario.workload == WorkloadType::fabric;
  if (!fabric && parsed.values.count("trace"))
    throw UsageError{"--trace needs a fabric scenario (one with workloads); this one runs phold"};
  // Every output is checked before the run (the trace file is opened now): a run must not end in "cannot write".
  const std::string out_path = parsed.values.count("out") ? parsed.values["out"].as<std::string>() : "";
  if (!out_path.empty())
    check_writable_file(out_path, "--out");
  std::unique_ptr<sim::Tracer> tracer;
  sim::TraceFilter filter = trace_filter(parsed);
  // QP numbers run from 2 on each HCA, up to the most QPs the workloads make on one host: others match nothing.
  for (const std::uint32_t qpn : filter.qpns)
    if (qpn < 2 || qpn > 1 + estimate.max_qps_per_host)
      throw sim::InputError("--trace-qp", "",
                            "the number of a QP of this run: 2 to " + std::to_string(1 + estimate.max_qps_per_host) +
                                " (QP numbers start at 2 on each HCA; its workloads make at most " +
                                std::to_string(estimate.max_qps_per_host) + " on a host)",
                            std::to_string(qpn));
  if (parsed.values.count("trace"))
    tracer = std::make_unique<sim::Tracer>(parsed.values["trace"].as<std::string>(), std::move(filter));

  const bool quiet = parsed.values.count("quiet") > 0;
  Progress progress{err, scenario.duration, quiet};
  RunOptions run_options;
  run_options.progress_hook = &Progress::hook; // also when quiet: it checks for SIGINT and SIGTERM
  run_options.progress_context = &progress;
  run_options.tracer = tracer.get();
  run_options.warnings = &err;
  const bool count_events = parsed.values.count("events") > 0;
  if (count_events && !fabric)
    throw UsageError{"--events needs a fabric scenario (one with workloads); this one runs phold"};
  run_options.count_events = count_events;
  const auto started = std::chrono::steady_clock::now();
  RunResult result;
  int stopped_by = 0; // the signal that interrupted the run (or came after it finished), else 0
  {
    const InterruptSignals signals;
    try {
      result = ib::scenario::run(scenario, run_options);
    } catch (...) {
      progress.finish();
      throw;
    }
    stopped_by = interrupt_signal;
  }
  progress.finish();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  sim::ReportJson performance;
  performance["wall_time_s"] = wall_s;
  performance["kernel_events_per_second"] = static_cast<double>(result.events_dispatched) / std::max(wall_s, 1e-9);
  performance["peak_rss_mib"] = static_cast<double>(sim::peak_rss_bytes()) / (1024.0 * 1024.0);
  sim::ReportJson report = std::move(result.report); // not copied: a big fabric's report weighs hundreds of MB
  if (result.partial)
    report["partial_reason"] = std::string("interrupted by ") + (stopped_by == SIGINT ? "SIGINT" : "SIGTERM");
  if (parsed.values.count("timing"))
    report["performance"] = performance;
  if (count_events) {
    report["results"]["kernel_events_by_part"] = result.events_by_part;
    performance["events_by_part"] = result.events_by_part;
  }
  // Results reach stdout before any file, so a failed write (exit 2) still shows them.
  if (!quiet)
    print_report(out, format, fabric, report, result, performance, counters);
  if (tracer) {
    tracer->finish();
    if (!quiet)
      err << "ibnetsim: trace of " << tracer->events_written() << " events written to "
          << parsed.values["trace"].as<std::string>() << " (open it in https://ui.perfetto.dev)\n";
  }
  if (!out_path.empty())
    write_file_atomically(out_path, [&report](std::ostream& file) { sim::write_report_json(file, report); });
  // With the results kept: a traced QP number that no HCA of the run gave left nothing in the trace.
  if (tracer && !result.partial)
    for (const std::uint32_t qpn : tracer->filter().qpns)
      if (qpn > result.max_qpn)
        throw sim::InputError("--trace-qp", "",
                              "the number of a QP the run made (2 to " + std::to_string(result.max_qpn) +
                                  "): nothing of QP " + std::to_string(qpn) + " is in the trace",
                              std::to_string(qpn));
  if (stopped_by != 0) {
    err << "ibnetsim: " << (stopped_by == SIGINT ? "SIGINT" : "SIGTERM")
        << (result.partial ? ": the run was interrupted; its partial results are reported"
                           : " after the run had finished; its results are complete")
        << (out_path.empty() ? "" : " (" + out_path + ")") << "\n";
    return 128 + stopped_by; // as a shell reports a process the signal ended
  }
  return sim::exit_ok;
}

int command_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options("ibnetsim run SCENARIO [options]");
  options.add_options()("help,h", "show this help");
  options.add(output_options(true));
  options.add(scenario_options());
  const Parsed parsed = parse_or_throw(args, options, 1);
  if (parsed.values.count("help")) {
    out << options << "\n";
    return sim::exit_ok;
  }
  output_format(parsed);
  return run_and_report(load_from(parsed, "run"), parsed, out, err);
}

/// `ibnetsim perftest TEST [perftest's options]`: the scenario perftest_scenario() builds, run as `run` runs a file.
int command_perftest(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options("ibnetsim perftest TEST [perftest's options] [options]");
  options.add_options()("help,h", "show this help");
  options.add(perftest_options());
  options.add(perftest_fabric_options());
  options.add(output_options(false));
  options.add(scenario_options());
  const Parsed parsed = parse_or_throw(args, options, 1);
  if (parsed.values.count("help")) {
    out << options << "\n";
    return sim::exit_ok;
  }
  output_format(parsed);
  std::vector<std::string> overrides;
  if (parsed.values.count("set"))
    overrides = parsed.values["set"].as<std::vector<std::string>>();
  const nlohmann::json built = perftest_scenario(parsed, err);
  try {
    const Scenario scenario = ib::scenario::read_scenario(sim::JsonDocument{perftest_scenario_file, built, ""},
                                                          overrides, parse_seed(parsed.values));
    if (parsed.values.count("print-scenario")) {
      out << scenario.resolved.dump(2) << "\n";
      return sim::exit_ok;
    }
    return run_and_report(scenario, parsed, out, err);
  } catch (const sim::InputError& e) {
    // A value the workload refuses is named by the option that gave it, not by a pointer into a file nobody wrote.
    const std::optional<std::string> option = perftest_option_of(e.json_pointer(), built);
    if (e.file() != perftest_scenario_file || !option)
      throw;
    throw UsageError{*option + ": expected " + e.expected() + ", got " + e.got()};
  }
}

int command_validate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options("ibnetsim validate SCENARIO [options]");
  options.add_options()("help,h", "show this help");
  options.add(scenario_options());
  const Parsed parsed = parse_or_throw(args, options, 1);
  if (parsed.values.count("help")) {
    out << options << "\n";
    return sim::exit_ok;
  }
  const Scenario scenario = load_from(parsed, "validate");
  check_memory_budget(scenario);
  // The digest a run of it would report; computing it checks the fabric, so nothing is printed before.
  std::vector<std::string> warnings;
  const std::string digest = ib::scenario::config_digest(scenario, &warnings);
  for (const std::string& w : warnings)
    err << "ibnetsim: warning: " << w << "\n";
  out << scenario.file << ": valid scenario \"" << scenario.name << "\", config digest " << digest << "\n";
  return sim::exit_ok;
}

/// The hardware profiles shipped in topologies/hardware, by name.
std::vector<std::string> profile_names() {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(sim::profile_directory(), error)) {
    if (entry.path().extension() == ".json") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) {
    text += (text.empty() ? "" : ", ") + item;
  }
  return text;
}

/// The profile --profile names. A bare name that is not shipped is a usage error listing those that are.
sim::Profile load_named_profile(const std::string& name) {
  const std::string path = sim::profile_path(name);
  std::error_code error; // a name too long for a file name is no profile either (not a filesystem_error)
  if (path != name && !std::filesystem::exists(path, error)) {
    throw UsageError{"unknown profile '" + name + "'; profiles: " + joined(profile_names())};
  }
  return sim::load_profile(path);
}

std::vector<sim::Override> parse_overrides(const po::variables_map& values) {
  std::vector<sim::Override> overrides;
  if (!values.count("set"))
    return overrides;
  for (const std::string& assignment : values["set"].as<std::vector<std::string>>()) {
    const std::size_t equals = assignment.find('=');
    if (equals == std::string::npos)
      throw UsageError{"--set expects /key=value, got '" + assignment + "'"};
    overrides.push_back({assignment.substr(0, equals), assignment.substr(equals + 1)});
  }
  return overrides;
}

/// `ibnetsim params MODEL [--profile NAME [--set /key=value]...]`: the table, or the profile read through it and
/// checked by the model's rules, with each value's unit and source.
int show_params(const sim::ProfileModel& model, const po::variables_map& values, std::ostream& out) {
  if (!values.count("profile")) {
    if (values.count("set"))
      throw UsageError{"--set needs --profile"};
    out << model.describe();
    return sim::exit_ok;
  }
  const sim::Profile profile = load_named_profile(values["profile"].as<std::string>());
  const nlohmann::json digest = model.digest(profile, parse_overrides(values));
  std::vector<std::vector<std::string>> rows = {{"key", "value", "unit", "source"}};
  for (const std::string_view key : model.keys()) {
    const nlohmann::json& row = digest.at(std::string(key));
    rows.push_back({std::string(key), row.at("value").dump(), row.at("unit").get<std::string>(),
                    row.at("source").get<std::string>()});
  }
  std::size_t widths[3] = {0, 0, 0};
  for (const auto& row : rows)
    for (std::size_t c = 0; c < 3; ++c)
      widths[c] = std::max(widths[c], row[c].size());
  out << profile.model << " profile " << profile.name << ": " << profile.description << "\n  file: " << profile.file
      << "\n";
  for (const auto& row : rows) {
    out << "  ";
    for (std::size_t c = 0; c < 3; ++c)
      out << row[c] << std::string(widths[c] - row[c].size() + 2, ' ');
    out << row[3] << "\n";
  }
  return sim::exit_ok;
}

/// `ibnetsim params workload [TYPE]`: the registered workload types, or one type's options (from its table).
int show_workload_params(const Parsed& parsed, std::ostream& out) {
  if (parsed.values.count("profile") || parsed.values.count("set"))
    throw UsageError{"--profile and --set are for hardware models; a scenario sets a workload's options"};
  if (parsed.positional.size() == 1) {
    out << ib::host::describe_workload_types();
    return sim::exit_ok;
  }
  const ib::host::WorkloadType* type = ib::host::find_workload_type(parsed.positional[1]);
  if (type == nullptr)
    throw UsageError{"unknown workload type '" + parsed.positional[1] + "'; 'ibnetsim params workload' lists them"};
  out << ib::host::describe_workload_options(*type);
  return sim::exit_ok;
}

int command_params(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description options("ibnetsim params [MODEL] [--profile NAME [--set /key=value]...]");
  options.add_options()("help,h", "show this help")(
      "profile", po::value<std::string>(),
      "show a hardware profile read through MODEL's table: NAME in topologies/hardware, or a path to a .json file")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override one profile parameter: /key=value (repeatable); validated like the file");
  const Parsed parsed = parse_or_throw(args, options, 2); // the second only for `params workload TYPE`
  if (parsed.values.count("help")) {
    out << options << "\n";
    return sim::exit_ok;
  }
  if (parsed.positional.size() == 2 && parsed.positional[0] != "workload")
    throw UsageError{"unexpected argument '" + parsed.positional[1] + "'"};
  if (parsed.positional.empty()) {
    if (parsed.values.count("profile") || parsed.values.count("set"))
      throw UsageError{"--profile and --set need a MODEL: ibnetsim params MODEL --profile NAME"};
    out << "models with parameters:\n";
    std::size_t width = std::string_view("workload").size();
    for (const sim::ProfileModel* model : ib::scenario::profile_models())
      width = std::max(width, model->name.size());
    const auto row = [&](std::string_view name, std::string_view description) {
      out << "  " << name << std::string(width + 1 - name.size(), ' ') << description << "\n";
    };
    for (const sim::ProfileModel* model : ib::scenario::profile_models())
      row(model->name, model->description);
    row("workload", "workloads of a fabric scenario; 'ibnetsim params workload [TYPE]' (models/host)");
    out << "hardware profiles (--profile NAME): " << joined(profile_names()) << "\n";
    return sim::exit_ok;
  }
  const std::string& model = parsed.positional[0];
  if (model == "workload")
    return show_workload_params(parsed, out);
  if (const sim::ProfileModel* found = ib::scenario::find_profile_model(model))
    return show_params(*found, parsed.values, out);
  throw UsageError{"unknown model '" + model + "'; 'ibnetsim params' lists them"};
}

} // namespace

namespace {

int dispatch(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string command;
  try {
    const GlobalOptionsScope global(take_global_options(args));
    command = args.empty() ? "" : args.front();
    if (args.empty()) {
      err << usage_text;
      return sim::exit_input_error;
    }
    if (command == "--help" || command == "-h" || command == "help") {
      out << usage_text;
      return sim::exit_ok;
    }
    if (command == "--version") {
      out << "ibnetsim " << IBNETSIM_VERSION << "\n";
      return sim::exit_ok;
    }
    args.erase(args.begin());
    if (command == "run")
      return command_run(args, out, err);
    if (command == "validate")
      return command_validate(args, out, err);
    if (command == "perftest")
      return command_perftest(args, out, err);
    if (command == "params")
      return command_params(args, out);
    if (command == "topo")
      return command_topo(args, out, err);
    if (command == "sweep")
      return command_sweep(args, out, err);
    if (command == "compare")
      return command_compare(args, out, err);
    throw UsageError{"unknown command '" + command + "'"};
  } catch (const UsageError& e) {
    err << "ibnetsim" << (command.empty() || command[0] == '-' ? "" : " " + command) << ": " << e.message << "\n"
        << "Try 'ibnetsim --help'.\n";
    return sim::exit_input_error;
  } catch (const sim::InputError& e) {
    err << "ibnetsim: error: " << e.what() << "\n";
    return sim::exit_input_error;
  } catch (const sim::InvariantViolation& e) {
    err << "ibnetsim: " << e.what() << "\n  state: " << e.state() << "\n";
    return sim::exit_invariant_violation;
  } catch (const std::exception& e) {
    err << "ibnetsim: internal error: " << e.what() << "\n";
    return 1;
  }
}

} // namespace

int run_command_line(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  const int code = dispatch(argc, argv, out, err);
  // Results go to stdout: losing them silently (a full disk, a closed pipe) would look like a successful run.
  out.flush();
  if (!out) {
    err << "ibnetsim: error: the results could not all be written to standard output\n";
    return code == sim::exit_ok ? sim::exit_input_error : code;
  }
  return code;
}

} // namespace cli
