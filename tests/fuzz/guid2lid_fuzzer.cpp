// libFuzzer harness for OpenSM's guid2lid files (models/sm/lid.h), as `--guid2lid-file` and a scenario's
// guid2lid_file read them: ib::sm::read_guid2lid parses the text; then the LIDs are assigned from it (written to a
// temporary file, assign_lids' only input) on every fabric of tools/opensm/netfiles, at LMC 0 and 1, and every LID
// handed out must belong to the port the file gave it to. Bad input must be an ib::sm::SmError.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/sm/lid.h"
#include "models/sm/sm_error.h"
#include "models/topology/topology.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/golden_fabrics.h"

namespace {

std::vector<ib::topo::Topology> fabrics;
std::string path;

} // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  fuzz::init();
  path = fuzz::temp_file(".guid2lid");
  fabrics = fuzz::golden_fabrics(); // the fabrics the golden guid2lid files were taken on, with their GUIDs
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<ib::sm::Guid2LidLine> lines;
  bool parsed = false;
  fuzz::expect_input_errors<ib::sm::SmError>([&] {
    std::istringstream in{std::string(fuzz::text(data, size))};
    lines = ib::sm::read_guid2lid(in, "fuzz-input.guid2lid");
    parsed = true;
  });
  if (!parsed || lines.empty())
    return 0;
  fuzz::write_file(path, fuzz::text(data, size));
  for (const ib::topo::Topology& t : fabrics) {
    for (unsigned lmc : {0u, 1u}) {
      ib::sm::LidOptions options;
      options.lmc = lmc;
      options.guid2lid_file = path;
      fuzz::expect_input_errors<ib::sm::SmError>([&] {
        const ib::sm::LidMap lids = ib::sm::assign_lids(t, options);
        // Every line's LIDs are owned by the port it names, and nothing else is.
        for (const ib::sm::Guid2LidLine& line : lines)
          for (unsigned lid = line.first; lid <= line.last; ++lid) {
            const ib::topo::PortRef owner = lids.owner(static_cast<ib::sm::Lid>(lid));
            const ib::topo::Node& node = t.node(owner.node);
            const std::uint64_t guid =
                node.kind == ib::topo::NodeKind::switch_node ? node.node_guid : node.port_guids.at(owner.port - 1u);
            if (guid != line.guid || lids.base_lid(owner.node, owner.port) != line.first)
              std::abort();
          }
      });
    }
  }
  return 0;
}
