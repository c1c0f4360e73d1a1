// Path SLs and layer counts of our subnet manager against a saved OpenSM run (tools/opensm/run_opensm.sh): the SL of
// every SA PathRecord between CA LIDs (path_records.txt, kept for lash, dfsssp, sssp and nue) and, for lash, the
// "Lanes needed" OpenSM logs. Shared by the golden test and opensm_crosscheck.
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/opensm_compare.h"

namespace ib::testing {

struct SlComparison {
  std::uint64_t paths = 0, sl_mismatches = 0; ///< PathRecords in path_records.txt
  int their_layers = -1;                      ///< lash's "Lanes needed" in opensm.log; -1 when absent
  unsigned our_layers = 0;                    ///< Routing::vls_needed
  std::vector<std::string> notes;             ///< the first few differences
};

inline SlComparison compare_path_sls(const std::string& dir, const OpenSmComparison& c) {
  SlComparison r;
  const sm::SwitchIndex index(c.topology);
  std::istringstream records(read_text(dir + "/path_records.txt"));
  for (std::string line; std::getline(records, line);) {
    std::istringstream in(line);
    std::string slid_key, dlid_key, sl_key, sl_text;
    unsigned slid = 0, dlid = 0;
    if (!(in >> slid_key >> slid >> dlid_key >> dlid >> sl_key >> sl_text) || slid_key != "slid")
      continue;
    const auto theirs = static_cast<unsigned>(std::strtoul(sl_text.c_str(), nullptr, 16));
    const unsigned ours =
        sm::path_sl(c.ours.routing, index, c.ours.lids, static_cast<sm::Lid>(slid), static_cast<sm::Lid>(dlid));
    ++r.paths;
    if (ours != theirs) {
      ++r.sl_mismatches;
      if (r.notes.size() < 8)
        r.notes.push_back("SL from LID " + std::to_string(slid) + " to " + std::to_string(dlid) + ": OpenSM " +
                          std::to_string(theirs) + ", ours " + std::to_string(ours));
    }
  }
  const std::string log = read_text(dir + "/opensm.log");
  const std::string key = "Lanes needed: ";
  if (const std::size_t at = log.find(key); at != std::string::npos)
    r.their_layers = std::atoi(log.c_str() + at + key.size());
  r.our_layers = c.ours.routing.vls_needed;
  return r;
}

} // namespace ib::testing
