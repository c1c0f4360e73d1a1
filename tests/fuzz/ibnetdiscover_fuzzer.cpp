// libFuzzer harness for ibnetdiscover output and ibsim net files (models/topology/ibnetdiscover.h, `ibnetsim topo
// import`): ib::topo::import_ibnetdiscover with the options `topo import` defaults to (profiles inferred from link
// speeds, 2 m copper-dac cables); then, for a fabric that imports, the topology file `topo import` writes
// (to_json_text), which must read back equal, and the exports back to the text formats (export_ibnetdiscover,
// export_ibsim_net), each imported again. The same bytes are also read as the side files `topo import` takes (a
// node name map, a cables table). Bad input must be a sim::InputError (a LineError naming the line).
#include <optional>
#include <string>

#include "models/topology/ibnetdiscover.h"
#include "models/topology/topology.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/shared_catalog.h"

namespace {

const std::string label = "fuzz-input.ibnetdiscover.txt";

ib::topo::ImportResult import(std::string_view text, ib::topo::Catalog& catalog) {
  const ib::topo::ImportOptions options{std::nullopt, std::nullopt, 2.0,         "copper-dac",
                                        "fuzz-input", std::nullopt, std::nullopt};
  return ib::topo::import_ibnetdiscover(text, label, options, catalog);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  fuzz::init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::expect_input_errors([&] { (void)ib::topo::parse_node_name_map(fuzz::text(data, size), "fuzz.map"); });
  fuzz::expect_input_errors([&] { (void)ib::topo::parse_cable_table(fuzz::text(data, size), "fuzz.csv"); });
  fuzz::expect_input_errors([&] {
    ib::topo::ProfileCatalog& catalog = fuzz::shared_catalog();
    const ib::topo::Topology topology = import(fuzz::text(data, size), catalog).topology;
    // What `topo import` writes must read back equal: a failure here is the program's, not the input's.
    const std::string written = ib::topo::to_json_text(topology);
    try {
      if (!(ib::topo::read_topology(sim::parse_json_text(label + ".json", written), catalog) == topology))
        fuzz::broken("the topology file written for an import reads back as another:\n" + written);
    } catch (const sim::InputError& e) {
      fuzz::broken(std::string("the topology file written for an import does not read back: ") + e.what() + "\n" +
                   written);
    }
    // The exports need not import to the same graph (names and cables may differ), but must not break the parser.
    for (const std::string& text : {ib::topo::export_ibnetdiscover(topology), ib::topo::export_ibsim_net(topology)})
      fuzz::expect_input_errors([&] { (void)import(text, catalog); });
  });
  return 0;
}
