// libFuzzer harness for OpenSM's LFT dumps (models/sm/dump.h): opensm-lfts.dump and dump_lfts.sh / ibroute output,
// as `topo check --routing file --lft-file` reads them. ib::sm::read_lft_dump parses the text; then every fabric of
// tools/opensm/netfiles (imported once at start) that has a switch the dump names is routed by the file engine from
// the same text (written to a temporary file, the engine's only input), with LMC 1 when the dump routes LIDs beyond
// the fabric's LMC 0 range, and the subnet manager's route and credit-loop check walks the replayed tables. Bad input
// must be an ib::sm::SmError (or an InputError).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "models/sm/dump.h"
#include "models/sm/sm_error.h"
#include "models/sm/subnet.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/golden_fabrics.h"

namespace {

struct Fabric {
  ib::topo::Topology topology;
  std::unordered_set<std::uint64_t> switch_guids;
  ib::sm::Lid max_lid = 0; ///< with LMC 0
};

std::vector<Fabric> fabrics;
std::string path;

} // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  fuzz::init();
  path = fuzz::temp_file(".dump");
  // The fabrics the golden dumps (tools/opensm/golden) were taken on, with their GUIDs.
  for (ib::topo::Topology& topology : fuzz::golden_fabrics()) {
    Fabric fabric{std::move(topology), {}};
    for (const ib::topo::Node& node : fabric.topology.nodes())
      if (node.kind == ib::topo::NodeKind::switch_node)
        fabric.switch_guids.insert(node.node_guid);
    fabric.max_lid = ib::sm::assign_lids(fabric.topology, {}).max_lid();
    fabrics.push_back(std::move(fabric));
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<ib::sm::DumpedLft> tables;
  bool parsed = false;
  fuzz::expect_input_errors<ib::sm::SmError>([&] {
    std::istringstream in{std::string(fuzz::text(data, size))};
    tables = ib::sm::read_lft_dump(in, "fuzz-input.dump");
    parsed = true;
  });
  if (!parsed)
    return 0;
  fuzz::write_file(path, fuzz::text(data, size));
  for (const Fabric& fabric : fabrics) {
    bool named = false;
    ib::sm::Lid highest = 0;
    for (const ib::sm::DumpedLft& table : tables) {
      named = named || fabric.switch_guids.contains(table.switch_guid);
      for (const ib::sm::DumpedLft::Entry& entry : table.entries)
        highest = std::max(highest, entry.lid);
    }
    if (!named)
      continue;
    fuzz::expect_input_errors<ib::sm::SmError>([&] {
      ib::sm::SmOptions options;
      options.engine = "file";
      // A dump taken with LMC 1 routes LIDs beyond the fabric's LMC 0 range (tools/opensm/golden/*-lmc1).
      options.lids.lmc = highest > fabric.max_lid ? 1 : 0;
      options.routing.lft_file = path;
      (void)ib::sm::run_subnet_manager(fabric.topology, options);
    });
  }
  return 0;
}
