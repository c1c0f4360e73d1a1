#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "sim/data_dir.h"

// Test processes read bare-named hardware profiles from the build tree's staged data (<build>/share/ibnetsim), set
// in-process as --data-dir would: a test executable does not live in <build>/bin, and the ibnetsim processes the
// scenario tests start still find their data relative to their own executable, as installed ones do.
int main(int argc, char* argv[]) {
  sim::set_data_directory(IBNETSIM_TEST_DATA_DIR);
  return Catch::Session().run(argc, argv);
}
