#include "models/sm/routing.h"

namespace ib::sm {

std::unique_ptr<Engine> make_minhop_engine();
std::unique_ptr<Engine> make_dor_engine();
std::unique_ptr<Engine> make_updn_engine();
std::unique_ptr<Engine> make_ftree_engine();
std::unique_ptr<Engine> make_lash_engine();
std::unique_ptr<Engine> make_file_engine();

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

const std::vector<std::string_view>& engine_names() {
  static const std::vector<std::string_view> names = {"minhop", "updn", "ftree", "dor", "lash", "file"};
  return names;
}

std::unique_ptr<Engine> make_engine(std::string_view name) {
  if (name == "minhop")
    return make_minhop_engine();
  if (name == "updn")
    return make_updn_engine();
  if (name == "ftree")
    return make_ftree_engine();
  if (name == "dor")
    return make_dor_engine();
  if (name == "lash")
    return make_lash_engine();
  if (name == "file")
    return make_file_engine();
  return nullptr;
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
  // OpenSM's default SL2VL (ib_default_sl2vl: SL s -> VL s, SL15 -> VL7) reduced to the port's VLs.
  const std::uint8_t vl = sl == 15 ? 7 : sl;
  return static_cast<std::uint8_t>(vl % port_vls);
}

} // namespace ib::sm
