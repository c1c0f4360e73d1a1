// Compares our subnet manager with saved runs of the real OpenSM (directories written by
// tools/opensm/run_opensm.sh) and prints what differs. Usage: opensm_crosscheck [--exact-lfts] DIR...
// Exit 0 when, in every DIR, LIDs are equal, every route has OpenSM's hop count and HCA routes per switch port
// are within one of OpenSM's (and, with --exact-lfts, every LFT entry is equal and, where the run saved PathRecords,
// every path SL and lash's layer count too); 1 otherwise.
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>

#include "tests/support/opensm_compare.h"
#include "tests/validation/opensm_sl_compare.h"

int main(int argc, char** argv) {
  bool exact = false;
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--exact-lfts") == 0) {
      exact = true;
      continue;
    }
    const std::string dir = argv[i];
    try {
      const ib::testing::OpenSmComparison c = ib::testing::compare_with_opensm(dir);
      const bool ok = c.lids > 0 && c.lid_mismatches == 0 && c.routes > 0 && c.hop_mismatches == 0 &&
                      c.balance_difference <= 1 && (!exact || c.lft_mismatches == 0);
      std::printf(
          "%s %s: LIDs %llu/%llu equal, LFT entries %llu/%llu equal, hop counts %llu/%llu equal, balance "
          "within %u\n",
          ok ? "ok  " : "FAIL", dir.c_str(), static_cast<unsigned long long>(c.lids - c.lid_mismatches),
          static_cast<unsigned long long>(c.lids), static_cast<unsigned long long>(c.lft_entries - c.lft_mismatches),
          static_cast<unsigned long long>(c.lft_entries), static_cast<unsigned long long>(c.routes - c.hop_mismatches),
          static_cast<unsigned long long>(c.routes), c.balance_difference);
      for (const std::string& note : c.notes)
        std::printf("     %s\n", note.c_str());
      failures += !ok;
      if (std::filesystem::exists(dir + "/path_records.txt")) {
        const ib::testing::SlComparison s = ib::testing::compare_path_sls(dir, c);
        const bool same = s.sl_mismatches == 0 && (s.their_layers < 0 || s.their_layers == int(s.our_layers));
        std::printf("%s %s: path SLs %llu/%llu equal, layers OpenSM %d, ours %u\n", same || !exact ? "ok  " : "FAIL",
                    dir.c_str(), static_cast<unsigned long long>(s.paths - s.sl_mismatches),
                    static_cast<unsigned long long>(s.paths), s.their_layers, s.our_layers);
        for (const std::string& note : s.notes)
          std::printf("     %s\n", note.c_str());
        failures += exact && !same;
      }
    } catch (const std::exception& e) {
      std::printf("FAIL %s: %s\n", dir.c_str(), e.what());
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
