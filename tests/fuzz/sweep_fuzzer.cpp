// libFuzzer harness for sweep files (scenarios/schema/sweep.schema.json, docs/user-guide.md): cli::read_sweep, which
// is read_sweep_file() after reading the file; then, for a sweep that loads, its points (cli::expand) and the
// sweep.json a sweep writes into its output directory (cli::sweep_document), which a resumed sweep and every Slurm
// task read back: that document must read back to the same sweep and the same points. Bad input must be a
// sim::InputError. The input is labelled <data>/scenarios/experiments/fuzz-input.sweep.json, so that a relative
// "scenario" such as "write_lat.json" names a shipped file as it does from scenarios/experiments/.
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_support.h"
#include "tools/ibnetsim/sweep.h"

namespace {

bool same_axes(const std::vector<cli::SweepAxis>& a, const std::vector<cli::SweepAxis>& b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].columns != b[i].columns || a[i].pointers != b[i].pointers || a[i].rows.size() != b[i].rows.size())
      return false;
    for (std::size_t r = 0; r < a[i].rows.size(); ++r)
      if (a[i].rows[r].values != b[i].rows[r].values || a[i].rows[r].overrides != b[i].rows[r].overrides)
        return false;
  }
  return true;
}

bool same_sweep(const cli::Sweep& a, const cli::Sweep& b) {
  if (a.name != b.name || a.description != b.description || a.scenario != b.scenario || a.fixed != b.fixed ||
      a.seed != b.seed || a.metrics != b.metrics || a.plots.size() != b.plots.size() || !same_axes(a.axes, b.axes))
    return false;
  for (std::size_t i = 0; i < a.plots.size(); ++i)
    if (a.plots[i].spec != b.plots[i].spec)
      return false;
  return true;
}

bool same_points(const std::vector<cli::SweepPoint>& a, const std::vector<cli::SweepPoint>& b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].values != b[i].values || a[i].overrides != b[i].overrides)
      return false;
  return true;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  fuzz::init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string label = fuzz::data_dir() + "/scenarios/experiments/fuzz-input.sweep.json";
  fuzz::expect_input_errors([&] {
    const cli::Sweep sweep = cli::read_sweep(sim::parse_json_text(label, fuzz::text(data, size)));
    const std::vector<cli::SweepPoint> points = cli::expand(sweep);
    // What the sweep writes must read back: a failure here is the program's, not the input's.
    const std::string written = cli::sweep_document(sweep).dump(2);
    cli::Sweep again;
    try {
      again = cli::read_sweep(sim::parse_json_text(label, written));
    } catch (const sim::InputError& e) {
      fuzz::broken(std::string("the sweep's own sweep.json does not read back: ") + e.what() + "\n" + written);
    }
    if (!same_sweep(sweep, again) || !same_points(points, cli::expand(again)))
      fuzz::broken("the sweep's own sweep.json reads back as another sweep:\n" + written);
  });
  return 0;
}
