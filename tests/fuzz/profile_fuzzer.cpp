// libFuzzer harness for hardware profiles (topologies/hardware, docs/scenario-reference.md): sim::parse_profile,
// which is load_profile() after reading the file; then, when the profile names a model of the registry
// (ib::scenario::profile_models()), that model's digest: the parameters read through its table
// (sim::read_checked_profile) and checked by its cross-field rules, as a run reports them. The same text, written
// to a temporary file, is then asked about by a topology's ProfileCatalog as a switch, an HCA and a cable, which reads
// port counts, widths and speeds from it. Bad input must be a sim::InputError.
#include <string>

#include "models/scenario/profile_models.h"
#include "models/topology/catalog.h"
#include "sim/profile.h"
#include "tests/fuzz/fuzz_support.h"

namespace {
std::string path;
}

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  fuzz::init();
  path = fuzz::temp_file(".json");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string label = fuzz::data_dir() + "/topologies/hardware/fuzz-input.json";
  bool loads = false;
  fuzz::expect_input_errors([&] {
    const sim::Profile profile = sim::parse_profile(sim::parse_json_text(label, fuzz::text(data, size)));
    loads = true;
    if (const sim::ProfileModel* model = ib::scenario::find_profile_model(profile.model))
      (void)model->digest(profile, {});
  });
  if (!loads)
    return 0;
  fuzz::write_file(path, fuzz::text(data, size));
  fuzz::expect_input_errors([&] {
    ib::topo::ProfileCatalog catalog; // a fresh one: the catalog caches each profile it has read
    (void)catalog.capabilities(ib::topo::NodeKind::switch_node, path);
    (void)catalog.capabilities(ib::topo::NodeKind::hca, path);
    (void)catalog.is_cable(path);
    (void)catalog.describe(path);
  });
  return 0;
}
