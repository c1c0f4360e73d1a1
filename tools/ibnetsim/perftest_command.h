// `ibnetsim perftest TEST [perftest's options]`: a perftest command line turned into a fabric scenario with one
// workload of that test, so that running one needs no JSON file (docs/user-guide.md, "perftest without a scenario
// file"). The scenario is read by read_scenario(), so it gets every check of a file.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "tools/ibnetsim/options.h"

namespace cli {

/// The file name the built scenario reports (scenario.file) and its errors name.
inline constexpr const char* perftest_scenario_file = "command line";

/// perftest's own options, letters and long names: those the workload models, those ignored with a note and those
/// refused (exit 2).
boost::program_options::options_description perftest_options();
/// Where the test runs: --hca, --switch or --back-to-back, --cable, --length-m; or --topology with --client and
/// --server.
boost::program_options::options_description perftest_fabric_options();

/// The scenario of `ibnetsim perftest` with `parsed` options (its first positional argument is the test): a note
/// on `err` for each perftest option that has no meaning in a simulation. UsageError for a refused option, an
/// unknown test, or fabric options that do not go together.
nlohmann::json perftest_scenario(const Parsed& parsed, std::ostream& err);

/// The option that sets the value at `json_pointer` of `scenario`, the scenario perftest_scenario() built ("-s
/// (--size)" for /workloads/0/size_bytes, --hca for an HCA's profile), so that its errors name what the user typed;
/// nullopt for other pointers.
std::optional<std::string> perftest_option_of(const std::string& json_pointer, const nlohmann::json& scenario);

} // namespace cli
