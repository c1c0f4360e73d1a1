// Benchmark of the subnet manager at scale (issue: topologies and the subnet manager, item 8): LIDs, routing and
// the credit-loop check on a k-ary 3-tree (k = 20: 8,000 hosts, 1,200 switches of 40 ports). Prints the wall time
// of each step and the peak RSS. Usage: sm_bench [--k K] [--engine minhop|ftree|updn|...] (defaults 20, ftree).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "models/sm/credit_loops.h"
#include "models/sm/routing.h"
#include "sim/memory.h"
#include "sim/report.h"
#include "tests/support/sm_fabrics.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

int main(int argc, char** argv) {
  sim::back_heap_with_huge_pages(); // as ibnetsim runs
  using namespace ib;
  unsigned k = 20;
  std::string engine_name = "ftree";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--k") == 0) {
      k = static_cast<unsigned>(std::atoi(argv[i + 1]));
    } else if (std::strcmp(argv[i], "--engine") == 0) {
      engine_name = argv[i + 1];
    } else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  auto start = std::chrono::steady_clock::now();
  const topo::Topology t = testing::three_level_tree(k);
  std::printf("k-ary 3-tree, k = %u: %zu nodes, %zu links (built in %.2f s)\n", k, t.node_count(), t.link_count(),
              seconds_since(start));
  start = std::chrono::steady_clock::now();
  const sm::LidMap lids = sm::assign_lids(t, {});
  std::printf("LIDs: %u in %.3f s\n", lids.max_lid(), seconds_since(start));
  auto engine = sm::make_engine(engine_name);
  if (!engine) {
    std::fprintf(stderr, "unknown engine %s\n", engine_name.c_str());
    return 2;
  }
  start = std::chrono::steady_clock::now();
  sm::RoutingOptions options;
  const sm::Routing routing = engine->route({t, lids, options});
  std::printf("%s routing: %.2f s\n", engine_name.c_str(), seconds_since(start));
  start = std::chrono::steady_clock::now();
  const sm::RouteCheck check = sm::check_routes(t, lids, routing, options.data_vls);
  std::printf("credit-loop check: %.2f s, %llu channels, %llu dependencies, %s, %llu unrouted pairs, longest route "
              "%u hops\n",
              seconds_since(start), static_cast<unsigned long long>(check.channels),
              static_cast<unsigned long long>(check.dependencies),
              check.cycle.empty() ? "no credit loop" : "CREDIT LOOP",
              static_cast<unsigned long long>(check.unrouted_pairs), check.max_hops);
  std::printf("peak RSS: %.1f MiB\n", static_cast<double>(sim::peak_rss_bytes()) / (1024.0 * 1024.0));
  return check.cycle.empty() && check.unrouted_pairs == 0 && check.looping_pairs == 0 ? 0 : 3;
}
