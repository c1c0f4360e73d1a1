// Runs the scenario named on the command line through the installed libraries and prints one figure of its report.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "models/scenario/run.h"
#include "models/scenario/scenario.h"
#include "sim/errors.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: consumer SCENARIO [/json/pointer=value...]\n";
    return 2;
  }
  try {
    const std::vector<std::string> overrides(argv + 2, argv + argc);
    const ib::scenario::Scenario scenario = ib::scenario::load_scenario(argv[1], overrides, std::nullopt);
    const ib::scenario::RunResult result = ib::scenario::run(scenario);
    std::cout << "consumer: simulated_time_us " << result.report["results"]["simulated_time_us"] << "\n";
  } catch (const sim::InputError& e) {
    std::cerr << "consumer: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
