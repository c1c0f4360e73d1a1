// A report's figures under one name each (docs/user-guide.md, "Metrics: one name everywhere"): the names `run
// --format csv`, `run --format long-csv`, sweeps, `compare` and the Python module all use, so that a figure found in
// one is found under the same name in the others.
//
// Two shapes of the same names:
//  - wide: the run-wide scalars, one value per name (a CSV row per run, a sweep's columns);
//  - long (tidy): one row per (metric, entity, value), where entity says what the value is about (a message size, a
//    flow, a host, a port, a VL), so the columns stay three however big the fabric.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ib::scenario {

/// The run-wide scalar figures of a report, in report order:
///  - fabric: each workload's results as "<workload>.<key>" (nested objects "<workload>.<key>.<key>"; a perftest's
///    rows only when it ran one size), "pcie.<key>" for PCIe per message (and "pcie.messages_sent", the messages they
///    are per), "faults.<key>" for a faulted run's totals, and "simulated_time_us";
///  - phold: each result under its own key.
using Metrics = std::vector<std::pair<std::string, nlohmann::ordered_json>>;
Metrics report_metrics(const nlohmann::ordered_json& report);

/// A metric of `report` by name: a name report_metrics() gives, or a JSON pointer into the report ("/results/...").
/// nullopt when the report has no such value.
std::optional<nlohmann::ordered_json> find_metric(const nlohmann::ordered_json& report, const Metrics& metrics,
                                                  const std::string& name);

/// One observation of a long (tidy) report.
struct LongRow {
  std::string metric;           ///< a report_metrics() name, or a per-entity one ("ports.PortXmitData")
  std::string entity;           ///< what the value is about ("" for the run as a whole); see report_long()
  nlohmann::ordered_json value; ///< a number as the report has it (booleans as 0 and 1)
};

/// Every numeric figure of a report, one row each. Entities:
///  - "" for the run-wide scalars of report_metrics() (but a perftest's);
///  - a perftest's rows ("<workload>.<key>"): the message size in bytes ("65536");
///  - "<workload>.flows.<key>": "SOURCE->DESTINATION";
///  - "pcie.hosts.<key>": the host;
///  - "ports.<key>": the port, "NODE/PORT" as in the topology; "ports.vls.<key>" and "ports.sls.<key>":
///    "NODE/PORT/VLn", "NODE/PORT/SLn";
///  - "faults.events.<key>" (nested: "faults.events.subnet_manager.<key>"): the fault's index in the report ("0").
/// Values that are not numbers or booleans (names, an SM's detection method) and nulls (what did not happen) have no
/// row.
std::vector<LongRow> report_long(const nlohmann::ordered_json& report);

/// `text` as one CSV field (RFC 4180: quoted when it holds a comma, a quote or a newline).
std::string csv_field(const std::string& text);

/// A JSON scalar as a CSV cell: strings bare, numbers as JSON prints them (the shortest text that reads back to the
/// same double).
std::string cell_text(const nlohmann::ordered_json& value);
std::string cell_text(const nlohmann::json& value);

/// `report` as the CSV `run --format csv` prints: a header and one row; columns "scenario", "seed", "config_digest",
/// then report_metrics() (and "performance.<key>" when the report has timings). Rows of several runs of one
/// scenario can be appended under one header.
std::string metrics_csv(const nlohmann::ordered_json& report);

/// `report` as the CSV `run --format long-csv` prints: "metric,entity,value" and report_long()'s rows.
std::string long_csv(const nlohmann::ordered_json& report);

} // namespace ib::scenario
