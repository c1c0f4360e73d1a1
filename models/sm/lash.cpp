// lash (LAyered SHortest path, Skeie et al.): OpenSM's osm_ucast_lash.c (3.3.23) reproduced step for step, so
// that the LFTs, the layer (SL) of every switch pair and the number of layers equal OpenSM's (tools/opensm/golden).
//  1. Switches in OpenSM's GUID order; each switch's links to switches in port order (parallel links apart).
//  2. Routes: for each switch r in turn, a breadth-first tree from r (links in order); every switch of the tree
//     routes to each switch below it through the first link to the child above that switch, unless an earlier
//     tree already set that entry. So routes are shortest paths, but not minhop's balanced ones.
//  3. Layers: switch pairs (a < b, a first) take the first layer whose channel dependency graph (channels are
//     switch-to-switch hops, parallel links merged) stays acyclic with both directions' paths; a new layer opens
//     when none does. Then OpenSM moves pairs from the fullest to the emptiest layer, chosen by rand() (glibc's,
//     never seeded: the sequence of seed 1), until they differ by less than 6 routes or no move fits; this
//     keeps OpenSM's dependency bookkeeping, quirks included, since they decide which moves fit.
//  4. LFTs: every LID goes the way of its switch (an HCA's LID: its switch's route, then the HCA's port).
// Layer k is SL k and runs on VL k (OpenSM's lash_start_vl 0). Refuses when the pairs need more layers than VLs.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "models/sm/sm_error.h"
#include "models/sm/ucast_mgr.h"

namespace ib::sm {
namespace {

using topo::NodeIndex;
using topo::NodeKind;
using topo::PortNumber;
using topo::PortRef;

constexpr unsigned none = 9999; // OpenSM's NONE: no route, no lane yet

/// glibc's random() (TYPE_3 additive feedback generator, r[i] = r[i-3] + r[i-31]), which rand() is; OpenSM never
/// seeds it, so lash's balancing draws the sequence of seed 1.
class GlibcRandom {
public:
  explicit GlibcRandom(std::uint32_t seed = 1) {
    state_[0] = static_cast<std::int32_t>(seed == 0 ? 1 : seed);
    for (std::size_t i = 1; i < state_.size(); ++i) {
      const std::int64_t hi = state_[i - 1] / 127773;
      const std::int64_t lo = state_[i - 1] % 127773;
      std::int64_t word = 16807 * lo - 2836 * hi;
      if (word < 0)
        word += 2147483647;
      state_[i] = static_cast<std::int32_t>(word);
    }
    for (int i = 0; i < 310; ++i)
      next();
  }
  std::int32_t next() {
    const std::uint32_t value = static_cast<std::uint32_t>(state_[front_]) + static_cast<std::uint32_t>(state_[rear_]);
    state_[front_] = static_cast<std::int32_t>(value);
    front_ = (front_ + 1) % state_.size();
    rear_ = (rear_ + 1) % state_.size();
    return static_cast<std::int32_t>(value >> 1);
  }

private:
  std::array<std::int32_t, 31> state_{};
  std::size_t front_ = 3, rear_ = 0;
};

/// A channel (switch `from` to its neighbour `to`) in one layer's dependency graph, with OpenSM's counters:
/// how many paths use it, which channels follow it on some path (a fixed array of slots, reused as OpenSM does),
/// and which of those were added by the pair being tried.
struct Vertex {
  bool temp = true;
  int num_temp_depend = 0;
  int num_using_vertex = 0;
  int num_deps = 0;
  struct Dep {
    std::int32_t channel = -1; ///< from * switches + to
    int num_used = 0;
  };
  std::vector<Dep> deps; ///< slots; those at num_deps and after may keep stale contents
  int visiting_number = 0;
  bool seen = false;
};

class Lash : public Engine {
public:
  Routing route(const RoutingInput& input) override;

private:
  struct Link {
    std::uint32_t to;
    std::uint8_t port;
  };
  std::size_t n_ = 0;
  std::vector<std::vector<Link>> links_;                  // per lash switch, in port order
  std::vector<unsigned> out_link_, lane_;                 // per (switch, destination switch)
  std::vector<std::vector<std::unique_ptr<Vertex>>> cdg_; // per layer, per channel from * n + to
  std::vector<std::vector<std::uint8_t>> location_;       // per layer, per pair: OpenSM's virtual_location
  std::array<int, 16> in_lane_{};                         // OpenSM's num_mst_in_lane (paths, both directions)
  std::vector<Vertex*> marked_; // vertices the cycle search marked (OpenSM clears the whole layer)

  std::uint32_t next_switch(std::uint32_t sw, std::uint32_t dest) const {
    return links_[sw][out_link_[sw * n_ + dest]].to;
  }
  Vertex* vertex(unsigned lane, std::uint32_t from, std::uint32_t to) const { return cdg_[lane][from * n_ + to].get(); }

  void shortest_paths();
  void generate_cdg(std::uint32_t sw, std::uint32_t dest, unsigned lane);
  void set_permanent(std::uint32_t sw, std::uint32_t dest, unsigned lane);
  void remove_temp(std::uint32_t sw, std::uint32_t dest, unsigned lane);
  void remove_semipermanent(std::uint32_t sw, std::uint32_t dest, unsigned lane);
  bool cycle_from(unsigned lane, Vertex* start);
  bool pair_cycles(unsigned lane, std::uint32_t a, std::uint32_t b);
  void balance(unsigned lanes_needed);
};

void Lash::shortest_paths() {
  out_link_.assign(n_ * n_, none);
  std::vector<std::uint32_t> queue, parent(n_);
  std::vector<std::uint8_t> queued(n_);
  std::vector<std::vector<std::uint32_t>> children(n_);
  for (std::uint32_t root = 0; root < n_; ++root) {
    queued.assign(n_, 0);
    for (auto& c : children)
      c.clear();
    queue.assign(1, root);
    queued[root] = 1;
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const std::uint32_t sw = queue[head];
      for (const Link& l : links_[sw]) {
        if (!queued[l.to]) {
          queued[l.to] = 1;
          queue.push_back(l.to);
          children[sw].push_back(l.to);
        }
      }
    }
    // Each switch of the tree routes to every switch below a child through its first link to that child.
    std::vector<std::uint32_t> below;
    const auto fill = [&](auto&& self, std::uint32_t sw) -> void {
      for (std::uint32_t child : children[sw]) {
        const std::size_t mark = below.size();
        self(self, child);
        unsigned link = 0;
        while (links_[sw][link].to != child)
          ++link;
        for (std::size_t i = mark; i < below.size(); ++i)
          if (out_link_[sw * n_ + below[i]] == none)
            out_link_[sw * n_ + below[i]] = link;
      }
      below.push_back(sw);
    };
    fill(fill, root);
  }
}

void Lash::generate_cdg(std::uint32_t sw, std::uint32_t dest, unsigned lane) {
  if (cdg_[lane].empty())
    cdg_[lane].resize(n_ * n_); // layers are allocated as they open
  Vertex* prev = nullptr;
  while (sw != dest) {
    const std::uint32_t next = next_switch(sw, dest);
    std::unique_ptr<Vertex>& slot = cdg_[lane][sw * n_ + next];
    if (!slot)
      slot = std::make_unique<Vertex>();
    Vertex* v = slot.get();
    ++v->num_using_vertex;
    if (prev) {
      const auto channel = static_cast<std::int32_t>(sw * n_ + next);
      bool exists = false;
      for (int j = 0; j < prev->num_deps; ++j) {
        if (prev->deps[static_cast<std::size_t>(j)].channel == channel) {
          exists = true;
          ++prev->deps[static_cast<std::size_t>(j)].num_used;
        }
      }
      if (!exists) {
        if (static_cast<std::size_t>(prev->num_deps) == prev->deps.size())
          prev->deps.emplace_back(); // OpenSM allocates all switches - 1 slots at once; growing is the same
        Vertex::Dep& d = prev->deps[static_cast<std::size_t>(prev->num_deps)];
        d.channel = channel;
        ++d.num_used; // OpenSM adds to whatever count the reused slot kept
        ++prev->num_deps;
        if (!prev->temp)
          ++prev->num_temp_depend;
      }
    }
    sw = next;
    prev = v;
  }
}

void Lash::set_permanent(std::uint32_t sw, std::uint32_t dest, unsigned lane) {
  while (sw != dest) {
    const std::uint32_t next = next_switch(sw, dest);
    Vertex* v = vertex(lane, sw, next);
    if (v->temp)
      v->temp = false;
    else
      v->num_temp_depend = 0;
    sw = next;
  }
}

void Lash::remove_temp(std::uint32_t sw, std::uint32_t dest, unsigned lane) {
  while (sw != dest) {
    const std::uint32_t next = next_switch(sw, dest);
    std::unique_ptr<Vertex>& slot = cdg_[lane][sw * n_ + next];
    if (slot) { // a path that revisits a new channel finds it already gone
      if (slot->temp) {
        slot.reset();
      } else {
        Vertex* v = slot.get();
        v->num_deps -= v->num_temp_depend;
        v->num_temp_depend = 0;
        --v->num_using_vertex;
        for (std::size_t i = static_cast<std::size_t>(v->num_deps); i < v->deps.size(); ++i)
          v->deps[i].num_used = 0;
      }
    }
    sw = next;
  }
}

void Lash::remove_semipermanent(std::uint32_t sw, std::uint32_t dest, unsigned lane) {
  while (sw != dest) {
    const std::uint32_t next = next_switch(sw, dest);
    std::unique_ptr<Vertex>& slot = cdg_[lane][sw * n_ + next];
    if (slot) {
      Vertex* v = slot.get();
      if (v->num_using_vertex == 1) {
        slot.reset();
      } else {
        --v->num_using_vertex;
        if (next != dest) {
          const auto channel = static_cast<std::int32_t>(next * n_ + next_switch(next, dest));
          int depend = -1;
          for (int i = 0; i < v->num_deps; ++i)
            if (v->deps[static_cast<std::size_t>(i)].channel == channel)
              depend = i;
          if (depend >= 0) {
            auto& deps = v->deps;
            if (deps[static_cast<std::size_t>(depend)].num_used == 1) {
              // Shift the later slots down; the last one keeps its old contents, as in OpenSM.
              for (int i = depend; i < v->num_deps - 1; ++i)
                deps[static_cast<std::size_t>(i)] = deps[static_cast<std::size_t>(i) + 1];
              --v->num_deps;
            } else {
              --deps[static_cast<std::size_t>(depend)].num_used;
            }
          }
        }
      }
    }
    sw = next;
  }
}

bool Lash::cycle_from(unsigned lane, Vertex* start) {
  // Depth first; a dependency back to a channel still on the stack closes a cycle. Marks persist until
  // pair_cycles clears them, as in OpenSM (a channel finished by the first search is not searched again).
  struct Frame {
    Vertex* v;
    int next_dep;
  };
  if (start->visiting_number > 0)
    return false;
  std::vector<Frame> stack{{start, 0}};
  start->visiting_number = 1;
  marked_.push_back(start);
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next_dep >= f.v->num_deps) {
      f.v->seen = true;
      stack.pop_back();
      continue;
    }
    const std::int32_t channel = f.v->deps[static_cast<std::size_t>(f.next_dep++)].channel;
    Vertex* w = cdg_[lane][static_cast<std::size_t>(channel)].get();
    if (w == nullptr)
      continue;
    if (w->visiting_number > 0) {
      if (!w->seen)
        return true;
      continue;
    }
    w->visiting_number = static_cast<int>(stack.size()) + 1;
    marked_.push_back(w);
    stack.push_back({w, 0});
  }
  return false;
}

bool Lash::pair_cycles(unsigned lane, std::uint32_t a, std::uint32_t b) {
  const bool found =
      cycle_from(lane, vertex(lane, a, next_switch(a, b))) || cycle_from(lane, vertex(lane, b, next_switch(b, a)));
  for (Vertex* v : marked_) {
    v->visiting_number = 0;
    v->seen = false;
  }
  marked_.clear();
  return found;
}

void Lash::balance(unsigned lanes_needed) {
  // balance_virtual_lanes: move random pairs from the fullest layer to the emptiest while they fit there.
  constexpr int balance_limit = 6;
  if (lanes_needed == 1)
    return;
  GlibcRandom rng;
  unsigned max_lane = 0;
  unsigned min_lane = lanes_needed - 1;
  int trials = in_lane_[max_lane];
  const auto at = [&](unsigned lane, std::size_t a, std::size_t b) -> std::uint8_t& {
    return location_[lane][a * n_ + b];
  };
  for (bool stop = false; !stop;) {
    std::size_t src = static_cast<std::size_t>(rng.next()) % n_;
    std::size_t dest = static_cast<std::size_t>(rng.next()) % n_;
    while (at(max_lane, src, dest) != 1) {
      const std::size_t start = dest;
      dest = dest == n_ - 1 ? 0 : dest + 1;
      while (dest != start && at(max_lane, src, dest) != 1)
        dest = dest == n_ - 1 ? 0 : dest + 1;
      if (at(max_lane, src, dest) != 1)
        src = src == n_ - 1 ? 0 : src + 1;
    }
    const auto s = static_cast<std::uint32_t>(src);
    const auto d = static_cast<std::uint32_t>(dest);
    generate_cdg(s, d, min_lane);
    generate_cdg(d, s, min_lane);
    if (pair_cycles(min_lane, s, d)) {
      remove_temp(s, d, min_lane);
      remove_temp(d, s, min_lane);
      at(max_lane, src, dest) = 2;
      at(max_lane, dest, src) = 2;
      trials -= 2;
    } else {
      set_permanent(s, d, min_lane);
      set_permanent(d, s, min_lane);
      in_lane_[max_lane] -= 2;
      in_lane_[min_lane] += 2;
      remove_semipermanent(s, d, max_lane);
      remove_semipermanent(d, s, max_lane);
      at(max_lane, src, dest) = 0;
      at(max_lane, dest, src) = 0;
      at(min_lane, src, dest) = 1;
      at(min_lane, dest, src) = 1;
      lane_[src * n_ + dest] = min_lane;
      lane_[dest * n_ + src] = min_lane;
    }
    if (trials == 0 || in_lane_[max_lane] - in_lane_[min_lane] < balance_limit)
      stop = true;
    const unsigned old_min = min_lane, old_max = max_lane;
    int fewest = 9999, most = 0;
    for (unsigned i = 0; i < lanes_needed; ++i) {
      if (in_lane_[i] < fewest) {
        fewest = in_lane_[i];
        min_lane = i;
      }
      if (in_lane_[i] > most) {
        most = in_lane_[i];
        max_lane = i;
      }
    }
    if (old_min != min_lane) {
      trials = in_lane_[max_lane];
      for (std::uint8_t& x : location_[max_lane])
        if (x == 2)
          x = 1;
    }
    if (old_max != max_lane) {
      trials = in_lane_[max_lane];
      for (std::uint8_t& x : location_[old_max])
        if (x == 2)
          x = 1;
    }
  }
}

Routing Lash::route(const RoutingInput& input) {
  const topo::Topology& t = input.topology;
  const SwitchIndex index(t);
  // Switches OpenSM would discover (any cabled port), in its GUID order.
  std::vector<NodeIndex> switches;
  for (NodeIndex s : index.switches) {
    bool cabled = false;
    for (unsigned p = 1; p <= t.node(s).port_count && !cabled; ++p)
      cabled = t.peer(s, static_cast<PortNumber>(p)).node != topo::no_node;
    if (cabled)
      switches.push_back(s);
  }
  std::sort(switches.begin(), switches.end(), [&](NodeIndex a, NodeIndex b) {
    return opensm_guid_order(t.node(a).node_guid) < opensm_guid_order(t.node(b).node_guid);
  });
  n_ = switches.size();
  std::vector<std::int32_t> id_of_node(t.node_count(), -1);
  for (std::size_t i = 0; i < n_; ++i)
    id_of_node[switches[i]] = static_cast<std::int32_t>(i);
  links_.assign(n_, {});
  for (std::size_t i = 0; i < n_; ++i) {
    for (unsigned p = 1; p <= t.node(switches[i]).port_count; ++p) {
      const PortRef peer = t.peer(switches[i], static_cast<PortNumber>(p));
      if (peer.node != topo::no_node && id_of_node[peer.node] >= 0)
        links_[i].push_back({static_cast<std::uint32_t>(id_of_node[peer.node]), static_cast<std::uint8_t>(p)});
    }
  }

  shortest_paths();
  const unsigned max_layers = std::min(input.options.data_vls, 15u);
  cdg_.clear();
  cdg_.resize(max_layers);
  location_.assign(max_layers, std::vector<std::uint8_t>(n_ * n_, 0));
  in_lane_.fill(0);
  lane_.assign(n_ * n_, none);
  unsigned lanes_needed = 1;
  for (std::uint32_t i = 0; i < n_; ++i) {
    for (std::uint32_t dest = i + 1; dest < n_; ++dest) {
      if (out_link_[i * n_ + dest] == none || out_link_[dest * n_ + i] == none)
        continue; // another part of a split fabric: no route, no layer
      unsigned lane = 0;
      bool placed = false;
      for (; lane < lanes_needed && !placed; ++lane) {
        generate_cdg(i, dest, lane);
        generate_cdg(dest, i, lane);
        if (pair_cycles(lane, i, dest)) {
          remove_temp(i, dest, lane);
          remove_temp(dest, i, lane);
        } else {
          set_permanent(i, dest, lane);
          set_permanent(dest, i, lane);
          in_lane_[lane] += 2;
          placed = true;
        }
      }
      if (placed) {
        --lane;
      } else {
        if (++lanes_needed > max_layers)
          throw SmError("lash needs more than " + std::to_string(max_layers) +
                        " layers (one VL each) to route this fabric without credit loops");
        generate_cdg(i, dest, lane);
        generate_cdg(dest, i, lane);
        set_permanent(i, dest, lane);
        set_permanent(dest, i, lane);
        in_lane_[lane] += 2;
      }
      lane_[i * n_ + dest] = lane;
      lane_[dest * n_ + i] = lane;
      location_[lane][i * n_ + dest] = 1;
      location_[lane][dest * n_ + i] = 1;
    }
  }
  balance(lanes_needed);

  Routing routing;
  routing.lfts.assign(t.node_count(), {});
  for (NodeIndex s : index.switches)
    routing.lfts[s].assign(std::size_t{input.lids.max_lid()} + 1, no_path);
  for (std::size_t i = 0; i < n_; ++i) {
    std::vector<std::uint8_t>& lft = routing.lfts[switches[i]];
    for (Lid lid = 1; lid <= input.lids.max_lid(); ++lid) {
      const PortRef owner = input.lids.owner(lid);
      if (owner.node == topo::no_node)
        continue;
      PortRef home = owner; // the switch the LID sits on
      if (t.node(owner.node).kind != NodeKind::switch_node)
        home = t.peer(owner.node, owner.port);
      if (home.node == topo::no_node || id_of_node[home.node] < 0)
        continue;
      const auto dst = static_cast<std::size_t>(id_of_node[home.node]);
      if (dst == i)
        lft[lid] = owner.node == home.node ? 0 : static_cast<std::uint8_t>(home.port);
      else if (out_link_[i * n_ + dst] != none)
        lft[lid] = links_[i][out_link_[i * n_ + dst]].port;
    }
  }
  const std::size_t count = index.switches.size();
  routing.path_sl_by_switch.assign(count * count, 0);
  for (std::size_t a = 0; a < n_; ++a) {
    for (std::size_t b = 0; b < n_; ++b) {
      if (a == b || lane_[a * n_ + b] == none)
        continue;
      const auto oa = static_cast<std::size_t>(index.ordinal_of_node[switches[a]]);
      const auto ob = static_cast<std::size_t>(index.ordinal_of_node[switches[b]]);
      routing.path_sl_by_switch[oa * count + ob] = static_cast<std::uint8_t>(lane_[a * n_ + b]);
    }
  }
  routing.vls_needed = lanes_needed;
  routing.sl_to_vl.assign(t.node_count(), {});
  SlToVl identity{};
  for (unsigned sl = 0; sl < 16; ++sl)
    identity[sl] = static_cast<std::uint8_t>(sl < routing.vls_needed ? sl : 0);
  for (NodeIndex n : index.switches)
    routing.sl_to_vl[n].assign(t.node(n).port_count + 1u, identity);
  return routing;
}

} // namespace

extern const EngineInfo lash_engine{"lash",
                                    "layered shortest paths: each switch pair on an SL whose layer stays deadlock-free",
                                    false, [] { return std::unique_ptr<Engine>(std::make_unique<Lash>()); }};

} // namespace ib::sm
