#include "models/sm/routing.h"

namespace ib::sm {

// Defined beside each engine's code (minhop.cpp, updn.cpp, ...).
extern const EngineInfo minhop_engine, updn_engine, ftree_engine, dor_engine, lash_engine, file_engine;

namespace {
// The one list of engines, in the order the CLI lists them (OpenSM's routing_modules[]).
constexpr const EngineInfo* all_engines[] = {&minhop_engine, &updn_engine, &ftree_engine,
                                             &dor_engine,    &lash_engine, &file_engine};
} // namespace

SwitchIndex::SwitchIndex(const topo::Topology& t) : ordinal_of_node(t.node_count(), -1) {
  for (topo::NodeIndex n = 0; n < t.node_count(); ++n) {
    if (t.node(n).kind == topo::NodeKind::switch_node) {
      ordinal_of_node[n] = static_cast<std::int32_t>(switches.size());
      switches.push_back(n);
    }
  }
  for (topo::NodeIndex n = 0; n < t.node_count(); ++n) {
    if (t.node(n).kind != topo::NodeKind::hca)
      continue;
    for (unsigned p = 1; p <= t.node(n).port_count; ++p) {
      const topo::PortRef peer = t.peer(n, static_cast<topo::PortNumber>(p));
      if (peer.node != topo::no_node && t.node(peer.node).kind == topo::NodeKind::switch_node) {
        ordinal_of_node[n] = ordinal_of_node[peer.node];
        break;
      }
    }
  }
}

std::span<const EngineInfo* const> engines() {
  return all_engines;
}

const EngineInfo* find_engine(std::string_view name) {
  for (const EngineInfo* info : all_engines)
    if (info->name == name)
      return info;
  return nullptr;
}

std::unique_ptr<Engine> make_engine(std::string_view name) {
  const EngineInfo* info = find_engine(name);
  return info == nullptr ? nullptr : info->make();
}

const std::vector<std::string_view>& engine_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const EngineInfo* info : all_engines)
      out.push_back(info->name);
    return out;
  }();
  return names;
}

std::uint8_t path_sl(const Routing& routing, const SwitchIndex& index, const LidMap& lids, Lid src, Lid dst) {
  if (routing.path_sl_by_switch.empty())
    return 0;
  const std::int32_t a = index.ordinal_of_node[lids.owner(src).node];
  const std::int32_t b = index.ordinal_of_node[lids.owner(dst).node];
  if (a < 0 || b < 0)
    return 0;
  return routing.path_sl_by_switch[static_cast<std::size_t>(a) * index.switches.size() + static_cast<std::size_t>(b)];
}

std::uint8_t output_vl(const Routing& routing, topo::NodeIndex node, topo::PortNumber out_port, std::uint8_t sl,
                       unsigned port_vls) {
  if (node < routing.sl_to_vl.size() && out_port < routing.sl_to_vl[node].size())
    return routing.sl_to_vl[node][out_port][sl];
  return link::default_vl(sl, port_vls);
}

} // namespace ib::sm
