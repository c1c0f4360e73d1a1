#include "models/fabric/fabric.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "models/link/cable.h"
#include "sim/errors.h"
#include "sim/profile.h"

namespace ib::fabric {

namespace {

/// Reads each profile once.
template <class P>
class ProfileCache {
public:
  ProfileCache(const sim::ParamTable<P>& table, std::string (*validate)(const P&),
               const sim::ProfileOverrides& overrides)
      : table_(table), validate_(validate), overrides_(overrides) {}
  const P& get(const std::string& name) {
    auto it = cache_.find(name);
    if (it == cache_.end()) {
      const sim::Profile profile = sim::load_profile(sim::profile_path(name));
      P params = sim::read_profile(table_, profile, sim::overrides_for(overrides_, name));
      if (validate_ != nullptr) {
        const std::string broken = validate_(params);
        if (!broken.empty())
          throw sim::InputError(profile.file, "/parameters", "a consistent profile", broken);
      }
      it = cache_.emplace(name, std::move(params)).first;
    }
    return it->second;
  }

private:
  const sim::ParamTable<P>& table_;
  std::string (*validate_)(const P&);
  const sim::ProfileOverrides& overrides_;
  std::map<std::string, P> cache_;
};

} // namespace

link::PortConfig hca_port_config(const hca::Params& params) {
  // A host consumes what arrives once its tail is in (no cut-through into host memory).
  return {params.input_buffer_bytes_per_port,
          static_cast<std::uint8_t>(params.vl_cap),
          params.vl15_buffer_packets,
          params.flow_control_refresh,
          true,
          sim::Time::zero(),
          params.xmit_wait_tick_symbols};
}

Fabric::Fabric(sim::Simulator& sim, link::PacketPool& pool, sim::ComponentType switch_type,
               const topo::Topology& topology, const sm::Subnet& subnet, HcaPorts& hcas,
               const sim::ProfileOverrides& profiles)
    : ordinal_(topology.node_count(), -1) {
  ProfileCache<sw::Params> switch_profiles(sw::param_table(), &sw::validate, profiles);
  ProfileCache<hca::Params> hca_profiles(hca::param_table(), &hca::validate, profiles);
  ProfileCache<link::CableParams> cable_profiles(link::param_table(), nullptr, profiles);

  for (topo::NodeIndex n = 0; n < topology.node_count(); ++n) {
    const topo::Node& node = topology.node(n);
    if (node.kind != topo::NodeKind::switch_node)
      continue;
    sw::Params params = switch_profiles.get(node.profile);
    params.port_count = node.port_count; // a node may use fewer ports than its profile's chassis has
    ordinal_[n] = static_cast<std::int32_t>(switches_.size());
    switches_.emplace_back(params, sim::Target{switch_type, static_cast<std::uint32_t>(switches_.size())},
                           sim.add_component(node.name), pool);
    switch_at_.push_back(&switches_.back());
    switch_names_.push_back(node.name);
    peers_.emplace_back(node.port_count + 1);
  }

  const auto port_of = [&](const topo::PortRef& end) -> link::Port& {
    const topo::Node& node = topology.node(end.node);
    if (node.kind == topo::NodeKind::switch_node)
      return switch_of(end.node).port(end.port);
    return hcas.hca_port(end.node, end.port, subnet.lids.base_lid(end.node, end.port), hca_profiles.get(node.profile));
  };
  for (const topo::Link& cable : topology.links()) {
    link::Port& a = port_of(cable.a);
    link::Port& b = port_of(cable.b);
    const link::LinkConfig config{link::data_rate(cable.width, cable.speed),
                                  link::link_delay(cable_profiles.get(cable.cable), cable.length_m, cable.speed),
                                  link::lanes(cable.width)};
    link::connect(a, b, config);
    links_.emplace_back(&a, &b);
    if (ordinal_[cable.a.node] >= 0 && ordinal_[cable.b.node] >= 0) {
      peers_[static_cast<std::size_t>(ordinal_[cable.a.node])][cable.a.port] = {ordinal_[cable.b.node], cable.b.port};
      peers_[static_cast<std::size_t>(ordinal_[cable.b.node])][cable.b.port] = {ordinal_[cable.a.node], cable.a.port};
    }
  }

  // The subnet manager's tables.
  for (topo::NodeIndex n = 0; n < topology.node_count(); ++n) {
    if (ordinal_[n] < 0)
      continue;
    sw::Switch& s = switch_of(n);
    s.set_forwarding_table(subnet.routing.lfts[n]);
    if (n >= subnet.routing.sl_to_vl.size() || subnet.routing.sl_to_vl[n].empty())
      continue;
    const unsigned ports = topology.node(n).port_count;
    for (unsigned out = 1; out <= ports; ++out) {
      if (!s.port(static_cast<std::uint8_t>(out)).connected())
        continue;
      std::array<std::uint8_t, 16> vl_by_sl{};
      for (std::uint8_t sl = 0; sl < 16; ++sl)
        vl_by_sl[sl] = sm::output_vl(subnet.routing, n, static_cast<topo::PortNumber>(out), sl,
                                     s.port(static_cast<std::uint8_t>(out)).data_vls());
      for (unsigned in = 1; in <= ports; ++in)
        if (in != out && s.port(static_cast<std::uint8_t>(in)).connected())
          s.set_sl_to_vl(static_cast<std::uint8_t>(in), static_cast<std::uint8_t>(out), vl_by_sl);
    }
  }
}

std::string Fabric::find_credit_deadlock() const {
  // Each blocked channel (switch, output, VL) waits on one input buffer downstream, whose head waits on one
  // channel: a functional graph, walked from every channel until it repeats (a cycle) or leaves the blocked ones.
  struct Channel {
    std::uint32_t sw;
    std::uint8_t port, vl;
    bool operator==(const Channel&) const = default;
  };
  const auto blocked = [&](const Channel& c) { return (switches_[c.sw].waiting_vls(c.port) >> c.vl & 1u) != 0; };
  const auto next = [&](const Channel& c, Channel& out) {
    const PortPeer& peer = peers_[c.sw][c.port];
    if (peer.switch_ordinal < 0)
      return false;
    const auto sw = static_cast<std::uint32_t>(peer.switch_ordinal);
    std::uint8_t port = 0, vl = 0;
    if (!switches_[sw].head_waits_for(peer.port, c.vl, port, vl))
      return false;
    out = {sw, port, vl};
    return blocked(out);
  };
  // 0: not seen; 1: on the walk in progress; 2: walked, on no cycle.
  std::unordered_map<std::uint64_t, std::uint8_t> state;
  const auto key = [](const Channel& c) { return std::uint64_t{c.sw} << 16 | std::uint64_t{c.port} << 8 | c.vl; };
  for (std::uint32_t s = 0; s < switches_.size(); ++s) {
    for (std::uint32_t p = 1; p < peers_[s].size(); ++p) {
      for (std::uint8_t vl = 0; vl < link::vl_slots; ++vl) {
        const Channel start{s, static_cast<std::uint8_t>(p), vl};
        if (!blocked(start) || state[key(start)] != 0)
          continue;
        std::vector<Channel> path{start};
        state[key(start)] = 1;
        Channel c = start;
        while (next(c, c)) {
          std::uint8_t& seen = state[key(c)];
          if (seen == 2)
            break;
          if (seen == 1) {
            const auto first = std::find(path.begin(), path.end(), c);
            std::string out;
            for (auto it = first; it != path.end(); ++it)
              out += switch_names_[it->sw] + "/" + std::to_string(it->port) + " VL" + std::to_string(it->vl) + " -> ";
            return out + "(back to " + switch_names_[first->sw] + "/" + std::to_string(first->port) + " VL" +
                   std::to_string(first->vl) + ")";
          }
          seen = 1;
          path.push_back(c);
        }
        for (const Channel& done : path)
          state[key(done)] = 2;
      }
    }
  }
  return "";
}

std::string Fabric::check_invariants(bool quiescent) const {
  std::string problems;
  for (const auto& [a, b] : links_) {
    problems += link::check_credit_conservation(*a, *b, quiescent);
    problems += link::check_credit_conservation(*b, *a, quiescent);
  }
  for (const sw::Switch& s : switches_)
    problems += s.check_invariants();
  return problems;
}

void Fabric::set_adaptive_routing(const sm::ArTables& tables) {
  for (std::size_t n = 0; n < ordinal_.size(); ++n)
    if (ordinal_[n] >= 0 && n < tables.group_of_lid.size())
      switch_of(static_cast<topo::NodeIndex>(n)).set_adaptive_routing(tables.group_of_lid[n], tables.groups[n]);
}

} // namespace ib::fabric
