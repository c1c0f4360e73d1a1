#include "models/scenario/metrics.h"

#include <sstream>

namespace ib::scenario {

namespace {

using Json = nlohmann::ordered_json;

/// Scalars under `name`.key...: objects descend, an array of one element stands for its element, longer arrays
/// (per-flow lists, several message sizes) are left to the long form, nulls are skipped.
void flatten(const Json& value, const std::string& name, Metrics& out) {
  if (value.is_object()) {
    for (const auto& [key, member] : value.items())
      flatten(member, name + "." + key, out);
  } else if (value.is_array()) {
    if (value.size() == 1)
      flatten(value[0], name, out);
  } else if (!value.is_null()) {
    out.emplace_back(name, value);
  }
}

/// A perftest's results: one row per message size.
bool is_size_rows(const Json& results) {
  return results.is_array() && !results.empty() && results[0].is_object() && results[0].contains("size_bytes");
}

class LongWriter {
public:
  explicit LongWriter(std::vector<LongRow>& out) : out_(out) {}

  /// Numbers and booleans of `value` under `name`.key..., for `entity`; arrays are not descended (each has its own
  /// entities, added by the caller).
  void add(const Json& value, const std::string& name, const std::string& entity) {
    if (value.is_object()) {
      for (const auto& [key, member] : value.items())
        add(member, name + "." + key, entity);
    } else if (value.is_boolean()) {
      out_.push_back({name, entity, Json(value.get<bool>() ? 1 : 0)});
    } else if (value.is_number()) {
      out_.push_back({name, entity, value});
    }
  }

  /// Each object of `rows` as entity entity_of(row), without the members that make up the entity.
  template <class EntityOf>
  void add_rows(const Json& rows, const std::string& name, std::initializer_list<const char*> identity,
                EntityOf entity_of) {
    for (const Json& row : rows) {
      const std::string entity = entity_of(row);
      for (const auto& [key, member] : row.items()) {
        bool is_identity = false;
        for (const char* id : identity)
          is_identity = is_identity || key == id;
        if (!is_identity && !member.is_array())
          add(member, name + "." + key, entity);
      }
    }
  }

private:
  std::vector<LongRow>& out_;
};

std::string text_of(const Json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

} // namespace

Metrics report_metrics(const Json& report) {
  Metrics out;
  const Json& results = report.at("results");
  if (!results.contains("workloads")) { // a phold run: its figures are flat
    flatten(results, "", out);
    for (auto& [name, value] : out)
      name.erase(0, 1); // the leading "."
    return out;
  }
  for (const auto& [name, workload] : results.at("workloads").items())
    flatten(workload.at("results"), name, out);
  if (results.contains("pcie")) {
    flatten(results.at("pcie").at("per_message"), "pcie", out);
    out.emplace_back("pcie.messages_sent", results.at("pcie").at("messages_sent"));
  }
  if (results.contains("endpoints"))
    flatten(results.at("endpoints"), "endpoints", out);
  if (results.contains("faults"))
    for (const auto& [key, value] : results.at("faults").items())
      if (!value.is_array())
        flatten(value, "faults." + key, out);
  if (results.contains("simulated_time_us"))
    out.emplace_back("simulated_time_us", results.at("simulated_time_us"));
  return out;
}

std::optional<Json> find_metric(const Json& report, const Metrics& metrics, const std::string& name) {
  if (name.starts_with("/")) {
    try {
      const Json::json_pointer pointer(name);
      if (report.contains(pointer))
        return report.at(pointer);
    } catch (const Json::exception&) {
    }
    return std::nullopt;
  }
  for (const auto& [key, value] : metrics)
    if (key == name)
      return value;
  return std::nullopt;
}

std::vector<LongRow> report_long(const Json& report) {
  std::vector<LongRow> out;
  LongWriter writer(out);
  const Json& results = report.at("results");
  if (!results.contains("workloads")) {
    for (const auto& [name, value] : report_metrics(report))
      writer.add(value, name, "");
    return out;
  }
  for (const auto& [name, workload] : results.at("workloads").items()) {
    const Json& figures = workload.at("results");
    if (is_size_rows(figures)) {
      writer.add_rows(figures, name, {"size_bytes"}, [](const Json& row) { return text_of(row.at("size_bytes")); });
      continue;
    }
    for (const auto& [key, value] : figures.items()) {
      if (key == "flows" && value.is_array())
        writer.add_rows(value, name + ".flows", {"source", "destination"}, [](const Json& flow) {
          return text_of(flow.at("source")) + "->" + text_of(flow.at("destination"));
        });
      else
        writer.add(value, name + "." + key, "");
    }
  }
  if (results.contains("pcie")) {
    const Json& pcie = results.at("pcie");
    writer.add(pcie.at("per_message"), "pcie", "");
    writer.add(pcie.at("messages_sent"), "pcie.messages_sent", "");
    if (pcie.contains("hosts"))
      writer.add_rows(pcie.at("hosts"), "pcie.hosts", {"host"},
                      [](const Json& host) { return text_of(host.at("host")); });
  }
  if (results.contains("endpoints"))
    writer.add(results.at("endpoints"), "endpoints", "");
  if (results.contains("faults")) {
    const Json& faults = results.at("faults");
    for (const auto& [key, value] : faults.items())
      if (!value.is_array())
        writer.add(value, "faults." + key, "");
    if (faults.contains("events")) {
      std::size_t index = 0;
      for (const Json& event : faults.at("events")) {
        const std::string entity = std::to_string(index++);
        for (const auto& [key, value] : event.items())
          writer.add(value, "faults.events." + key, entity);
      }
    }
  }
  for (const char* key : {"simulated_time_us", "drained_at_us", "finished", "programs_blocked",
                          "kernel_events_dispatched", "program_wakeups"})
    if (results.contains(key))
      writer.add(results.at(key), key, "");
  if (results.contains("ports"))
    for (const Json& port : results.at("ports")) {
      const std::string name = text_of(port.at("port"));
      for (const auto& [key, value] : port.items()) {
        if (key == "port")
          continue;
        if ((key == "vls" || key == "sls") && value.is_object()) {
          const std::string lane = key == "vls" ? "/VL" : "/SL";
          for (const auto& [number, counters] : value.items())
            writer.add(counters, "ports." + key, name + lane + number);
        } else {
          writer.add(value, "ports." + key, name);
        }
      }
    }
  return out;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos)
    return text;
  std::string out = "\"";
  for (const char c : text)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string cell_text(const Json& value) {
  return text_of(value);
}

std::string cell_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string metrics_csv(const Json& report) {
  Metrics columns = {{"scenario", report.at("scenario").at("name")},
                     {"seed", report.at("scenario").at("seed")},
                     {"config_digest", report.at("config_digest")}};
  for (auto& metric : report_metrics(report))
    columns.push_back(std::move(metric));
  if (report.contains("partial"))
    columns.emplace_back("partial", report.at("partial"));
  if (report.contains("performance"))
    for (const auto& [key, value] : report.at("performance").items())
      if (value.is_primitive())
        columns.emplace_back("performance." + key, value);
  std::ostringstream header, row;
  const char* separator = "";
  for (const auto& [name, value] : columns) {
    header << separator << csv_field(name);
    row << separator << csv_field(text_of(value));
    separator = ",";
  }
  return header.str() + "\n" + row.str() + "\n";
}

std::string long_csv(const Json& report) {
  std::ostringstream out;
  out << "metric,entity,value\n";
  for (const LongRow& row : report_long(report))
    out << csv_field(row.metric) << "," << csv_field(row.entity) << "," << text_of(row.value) << "\n";
  return out.str();
}

} // namespace ib::scenario
