#include <sstream>

#include <catch2/catch.hpp>

#include "sim/report.h"

namespace {
sim::ReportJson sample_report() {
  sim::ReportJson report;
  report["ibnetsim"] = "0.1.0";
  report["scenario"] = {{"name", "x,y"}, {"seed", 3}};
  report["results"] = {{"events_handled", 42}, {"rate_per_us", 1.5}, {"per_vl", {7, 8}}};
  return report;
}
} // namespace

TEST_CASE("sim::report_to_json: insertion order and a final newline", "[sim][quick]") {
  const std::string text = sim::report_to_json(sample_report());
  CHECK(text.back() == '\n');
  CHECK(text.find("\"scenario\"") < text.find("\"results\""));
  CHECK(text.find("\"events_handled\"") < text.find("\"rate_per_us\""));
  CHECK(sim::ReportJson::parse(text) == sample_report());
}

TEST_CASE("sim::write_report_json: the same text as report_to_json, and the stream's width is reset", "[sim][quick]") {
  sim::ReportJson report = sample_report();
  report["results"]["name with \"quotes\" and é"] = "tab\there";
  report["results"]["empty"] = sim::ReportJson::object();
  std::ostringstream out;
  sim::write_report_json(out, report);
  CHECK(out.str() == sim::report_to_json(report));
  out << 7; // nlohmann's operator<< consumes the indent set by setw: later output is unpadded
  CHECK(out.str().back() == '7');
  CHECK(out.str()[out.str().size() - 2] == '\n');
}

TEST_CASE("sim::write_report_json: a report many times its buffer, and a string longer than it, come out whole",
          "[sim][quick]") {
  sim::ReportJson report = sample_report();
  sim::ReportJson rows = sim::ReportJson::array();
  for (int i = 0; i < 20000; ++i)
    rows.push_back({{"port", "leaf" + std::to_string(i)}, {"PortXmitData", i * 7}});
  report["results"]["ports"] = std::move(rows);
  report["results"]["long"] = std::string(200000, 'x'); // past the 64 KiB buffer in one write
  std::ostringstream out;
  sim::write_report_json(out, report);
  CHECK(out.str().size() > 1000000);
  CHECK(out.str() == sim::report_to_json(report));
}

TEST_CASE("sim::report_to_table: scalars first then one aligned block per section", "[sim][quick]") {
  const std::string text = sim::report_to_table(sample_report());
  CHECK(text == "ibnetsim: 0.1.0\n"
                "\nscenario\n"
                "  name  x,y\n"
                "  seed  3\n"
                "\nresults\n"
                "  events_handled  42\n"
                "  rate_per_us     1.5\n"
                "  per_vl.0        7\n"
                "  per_vl.1        8\n");
}

TEST_CASE("sim::digest_hex: FNV-1a 64 published values", "[sim][quick]") {
  // Reference values of the FNV-1a 64 test suite (Fowler, Noll, Vo).
  CHECK(sim::digest_hex("") == "cbf29ce484222325");
  CHECK(sim::digest_hex("a") == "af63dc4c8601ec8c");
  CHECK(sim::digest_hex("foobar") == "85944171f73967e8");
}

TEST_CASE("sim::parse_report_format: the four formats and nothing else", "[sim][quick]") {
  sim::ReportFormat format = sim::ReportFormat::table;
  CHECK(sim::parse_report_format("csv", format));
  CHECK(format == sim::ReportFormat::csv);
  CHECK(sim::parse_report_format("long-csv", format));
  CHECK(format == sim::ReportFormat::long_csv);
  CHECK(sim::parse_report_format("json", format));
  CHECK(format == sim::ReportFormat::json);
  CHECK_FALSE(sim::parse_report_format("xml", format));
  CHECK(format == sim::ReportFormat::json);
}
