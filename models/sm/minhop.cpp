// min-hop (OpenSM's default engine, osm_ucast_mgr.c): shortest paths, spread over equal-hop ports by the number
// of routes each already carries. Deadlock-free only where shortest paths are (trees); the credit-loop check says
// when they are not.
#include "models/sm/ucast_mgr.h"

namespace ib::sm {
namespace {

class MinHop : public Engine {
public:
  Routing route(const RoutingInput& input) override {
    Routing routing;
    const SwitchIndex index(input.topology);
    const detail::SwitchGraph graph(input.topology, index);
    detail::ShortestHops hops(graph);
    detail::build_lfts(input, index, graph, hops, {}, routing);
    return routing;
  }
};

} // namespace

extern const EngineInfo minhop_engine{"minhop", "shortest paths, balanced by routes per port (OpenSM's default)", false,
                                      [] { return std::unique_ptr<Engine>(std::make_unique<MinHop>()); }};

} // namespace ib::sm
