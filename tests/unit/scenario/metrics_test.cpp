// Metric names (models/scenario/metrics.h): the wide scalars and the long rows of a report, on small hand-made
// reports whose every row is known.
#include <optional>

#include <catch2/catch.hpp>

#include "models/scenario/metrics.h"

namespace {

using Json = nlohmann::ordered_json;
using ib::scenario::LongRow;

Json fabric_report() {
  return Json::parse(R"({
    "ibnetsim": "0.1.0",
    "scenario": {"file": "s.json", "name": "s", "seed": 7},
    "config": {},
    "config_digest": "00000000000000ab",
    "results": {
      "simulated_time_us": 12.5, "drained_at_us": 13.0, "finished": true,
      "kernel_events_dispatched": 100, "program_wakeups": 4,
      "workloads": {
        "lat": {"type": "ib_write_lat", "results": [
          {"size_bytes": 2, "iterations": 10, "t_typical_us": 0.7},
          {"size_bytes": 64, "iterations": 10, "t_typical_us": 0.8}]},
        "one": {"type": "ib_write_bw", "results": [{"size_bytes": 4096, "bw_average_gbps": 96.5}]},
        "a2a": {"type": "all_to_all", "results": {
          "messages": 2, "message_latency": {"t_typical_us": 3.0},
          "flows": [{"source": "h0", "destination": "h1", "messages": 1, "gbps": 40.0},
                    {"source": "h1", "destination": "h0", "messages": 1, "gbps": 50.0}]}}
      },
      "pcie": {"messages_sent": 4, "per_message": {"doorbells": 1.0},
               "hosts": [{"host": "h0", "doorbells": 2}, {"host": "h1", "doorbells": 2}]},
      "faults": {"events": [{"type": "link_down", "at_us": 5.0, "link": ["a/1", "b/2"],
                             "subnet_manager": {"detection": "trap", "fault_to_rerouted_us": 3.5,
                                                "rerouted_at_us": null, "fell_back_to_minhop": true}}],
                 "packets_lost": {"total": 6}, "retransmitted_packets": 9},
      "ports": [{"port": "h0/1", "PortXmitData": 10, "vls": {"0": {"xmit_pkts": 3}},
                 "sls": {"0": {"PortXmitDataSL": 10}}}]
    }
  })");
}

/// The value of `metric` for `entity` in `rows`, or nothing if that row is absent.
std::optional<Json> row_value(const std::vector<LongRow>& rows, const std::string& metric, const std::string& entity) {
  for (const LongRow& row : rows)
    if (row.metric == metric && row.entity == entity)
      return row.value;
  return std::nullopt;
}

} // namespace

TEST_CASE("scenario::report_metrics: run-wide scalars, one perftest size, PCIe per message, fault totals",
          "[scenario][quick]") {
  const ib::scenario::Metrics metrics = ib::scenario::report_metrics(fabric_report());
  std::vector<std::string> names;
  for (const auto& [name, value] : metrics)
    names.push_back(name);
  // "lat" ran two sizes: no single value per name, so only the long form has it; flows likewise.
  CHECK(names == std::vector<std::string>{"one.size_bytes", "one.bw_average_gbps", "a2a.messages",
                                          "a2a.message_latency.t_typical_us", "pcie.doorbells", "pcie.messages_sent",
                                          "faults.packets_lost.total", "faults.retransmitted_packets",
                                          "simulated_time_us"});
  CHECK(ib::scenario::find_metric(fabric_report(), metrics, "one.bw_average_gbps") == Json(96.5));
  CHECK(ib::scenario::find_metric(fabric_report(), metrics, "/results/ports/0/PortXmitData") == Json(10));
  CHECK_FALSE(ib::scenario::find_metric(fabric_report(), metrics, "lat.t_typical_us"));
  CHECK_FALSE(ib::scenario::find_metric(fabric_report(), metrics, "/results/nothing"));
}

TEST_CASE("scenario::report_long: entities for sizes, flows, hosts, ports, lanes and faults, numbers only",
          "[scenario][quick]") {
  const std::vector<LongRow> rows = ib::scenario::report_long(fabric_report());
  CHECK(row_value(rows, "lat.t_typical_us", "2") == Json(0.7));
  CHECK(row_value(rows, "lat.t_typical_us", "64") == Json(0.8));
  CHECK(row_value(rows, "one.bw_average_gbps", "4096") == Json(96.5));
  CHECK_FALSE(row_value(rows, "lat.size_bytes", "2")); // the entity, not a metric
  CHECK(row_value(rows, "a2a.messages", "") == Json(2));
  CHECK(row_value(rows, "a2a.message_latency.t_typical_us", "") == Json(3.0));
  CHECK(row_value(rows, "a2a.flows.gbps", "h0->h1") == Json(40.0));
  CHECK(row_value(rows, "a2a.flows.gbps", "h1->h0") == Json(50.0));
  CHECK(row_value(rows, "pcie.doorbells", "") == Json(1.0));
  CHECK(row_value(rows, "pcie.hosts.doorbells", "h1") == Json(2));
  CHECK(row_value(rows, "pcie.messages_sent", "") == Json(4));
  CHECK(row_value(rows, "faults.events.at_us", "0") == Json(5.0));
  CHECK(row_value(rows, "faults.events.subnet_manager.fault_to_rerouted_us", "0") == Json(3.5));
  CHECK(row_value(rows, "faults.events.subnet_manager.fell_back_to_minhop", "0") == Json(1));
  CHECK_FALSE(row_value(rows, "faults.events.subnet_manager.detection", "0"));      // a name
  CHECK_FALSE(row_value(rows, "faults.events.subnet_manager.rerouted_at_us", "0")); // did not happen
  CHECK(row_value(rows, "faults.packets_lost.total", "") == Json(6));
  CHECK(row_value(rows, "finished", "") == Json(1));
  CHECK(row_value(rows, "drained_at_us", "") == Json(13.0));
  CHECK(row_value(rows, "ports.PortXmitData", "h0/1") == Json(10));
  CHECK(row_value(rows, "ports.vls.xmit_pkts", "h0/1/VL0") == Json(3));
  CHECK(row_value(rows, "ports.sls.PortXmitDataSL", "h0/1/SL0") == Json(10));
  for (const LongRow& row : rows)
    CHECK(row.value.is_number());
}

TEST_CASE("scenario::metrics_csv and long_csv: a header and rows, quoted where needed", "[scenario][quick]") {
  const std::string wide = ib::scenario::metrics_csv(fabric_report());
  CHECK(wide.starts_with("scenario,seed,config_digest,one.size_bytes,one.bw_average_gbps,"));
  CHECK(wide.find("\ns,7,00000000000000ab,4096,96.5,") != std::string::npos);
  const std::string tall = ib::scenario::long_csv(fabric_report());
  CHECK(tall.starts_with("metric,entity,value\nlat.iterations,2,10\nlat.t_typical_us,2,0.7\n"));
  CHECK(tall.find("\nports.vls.xmit_pkts,h0/1/VL0,3\n") != std::string::npos);
  CHECK(ib::scenario::csv_field("a,b") == "\"a,b\"");
  CHECK(ib::scenario::csv_field("say \"x\"") == "\"say \"\"x\"\"\"");
}
