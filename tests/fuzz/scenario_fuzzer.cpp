// libFuzzer harness for scenario files (docs/scenario-reference.md): ib::scenario::read_scenario, which is
// load_scenario() after reading the file, then, for a scenario that loads, config_digest(): everything `ibnetsim
// validate` checks before a run (the topology, inline, generated or from a file; the hardware profiles it uses with
// the scenario's "profiles" overrides; the subnet manager and its route check; the hosts every workload names).
// Bad input must be a sim::InputError. The input is labelled <data>/scenarios/fuzz-input.json, so that a relative
// "topology" such as "../topologies/examples/ft2-16.json" names a shipped file as it does from scenarios/.
#include <optional>

#include "models/scenario/run.h"
#include "models/scenario/scenario.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  fuzz::init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string label = fuzz::data_dir() + "/scenarios/fuzz-input.json";
  fuzz::expect_input_errors([&] {
    const ib::scenario::Scenario scenario =
        ib::scenario::read_scenario(sim::parse_json_text(label, fuzz::text(data, size)), {}, std::nullopt);
    (void)ib::scenario::config_digest(scenario);
  });
  return 0;
}
