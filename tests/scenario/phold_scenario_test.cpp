// Scenario-level checks of the kernel workload against analytic figures, run through the command line.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/scenario/cli_harness.h"

using testing::run_cli;

namespace {
nlohmann::json run_json(std::vector<std::string> extra) {
  std::vector<std::string> argv = {"run", testing::source_path("scenarios/phold.json"), "--format", "json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const auto r = run_cli(argv);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}
} // namespace

TEST_CASE("scenario phold: event rate matches population / mean delay", "[scenario][quick]") {
  // Each of the N·E events is re-sent after lookahead + Exp(mean): in steady state the rate is
  // N·E / (lookahead + mean) = 1024·16 / 100 ns = 163.84 events/ns.
  const auto report = run_json({"--set", "/duration_us=20"});
  const double rate_per_us = report["results"]["events_per_simulated_us"].get<double>();
  CHECK(rate_per_us == Approx(163'840).epsilon(0.02));
  CHECK(report["results"]["remote_fraction_observed"].get<double>() == Approx(0.9).margin(0.002));
}

TEST_CASE("scenario phold: host programs re-inject every Nth event from the CLI", "[scenario][quick]") {
  const auto r = run_cli(
      {"run", testing::source_path("scenarios/phold_programs.json"), "--format", "json", "--set", "/duration_us=5"});
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out);
  const auto& results = report["results"];
  const auto handled = results["events_handled"].get<std::uint64_t>();
  CHECK(results["events_to_programs"].get<std::uint64_t>() == handled / 100);
  // 16 programs at 5 ns per event serve 3.2 events/ns and are handed 1.6: about half busy, so only the events
  // handed over in the last few ns are still held at the end.
  CHECK(results["events_from_programs"].get<std::uint64_t>() <= handled / 100);
  CHECK(results["events_from_programs"].get<std::uint64_t>() + 100 >= handled / 100);
  CHECK(results["program_wakeups"].get<std::uint64_t>() > 0);
}
