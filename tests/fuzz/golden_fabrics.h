// The fabrics of tools/opensm/netfiles that the golden OpenSM outputs (tools/opensm/golden) were taken on, imported
// with their GUIDs: what the harnesses of OpenSM's dump and guid2lid files check their input against.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/topology/catalog.h"
#include "models/topology/ibnetdiscover.h"
#include "tests/fuzz/fuzz_support.h"

namespace fuzz {

inline std::vector<ib::topo::Topology> golden_fabrics() {
  std::vector<ib::topo::Topology> fabrics;
  ib::topo::ProfileCatalog catalog;
  for (const char* net : {"ft2", "ft3", "mesh3x3", "ring6"}) {
    const std::string file = source_dir() + "/tools/opensm/netfiles/" + net + ".net";
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
      std::fprintf(stderr, "fuzz: cannot read %s\n", file.c_str());
      std::abort();
    }
    const ib::topo::ImportOptions options{std::nullopt, std::nullopt, 2.0,         "copper-dac",
                                          net,          std::nullopt, std::nullopt};
    fabrics.push_back(ib::topo::import_ibnetdiscover(text.str(), file, options, catalog).topology);
  }
  return fabrics;
}

} // namespace fuzz
