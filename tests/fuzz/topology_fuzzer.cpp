// libFuzzer harness for topology files (topologies/schema/topology.schema.json, docs/topology-reference.md):
// ib::topo::read_topology, which is load_topology() after reading the file, with the hardware profiles of a
// ProfileCatalog (nodes and links, or a "generator" block expanded by the generators); then, for a topology that
// loads, the file ibnetsim writes for it (to_json_text, used by `topo gen` and `topo import`), which must read back
// equal. Bad input must be a sim::InputError. The input is labelled <data>/topologies/examples/fuzz-input.json.
#include <string>

#include "models/topology/topology.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/shared_catalog.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  fuzz::init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string label = fuzz::data_dir() + "/topologies/examples/fuzz-input.json";
  fuzz::expect_input_errors([&] {
    ib::topo::ProfileCatalog& catalog = fuzz::shared_catalog();
    const ib::topo::Topology topology =
        ib::topo::read_topology(sim::parse_json_text(label, fuzz::text(data, size)), catalog);
    // What ibnetsim writes must read back equal: a failure here is the program's, not the input's.
    const std::string written = ib::topo::to_json_text(topology);
    try {
      if (!(ib::topo::read_topology(sim::parse_json_text(label, written), catalog) == topology))
        fuzz::broken("the topology file written for a topology reads back as another:\n" + written);
    } catch (const sim::InputError& e) {
      fuzz::broken(std::string("the topology file written for a topology does not read back: ") + e.what() + "\n" +
                   written);
    }
  });
  return 0;
}
