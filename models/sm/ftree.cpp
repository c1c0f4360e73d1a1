// ftree: OpenSM's fat-tree routing (osm_ucast_ftree.c, OpenSM 3.3.23; Zahavi et al.), reproduced decision for
// decision so that the LFTs equal OpenSM's on every fat tree it accepts (tools/opensm/golden, docs/models/
// subnet-manager.md). Outline, with OpenSM's orders (switches and HCAs by GUID in network byte order):
//  1. Ranks: breadth first from the switches with HCAs, reversed so that the farthest switches are roots (rank 0),
//     then breadth first again from those roots; leaves (switches with HCAs) must end at the highest rank.
//  2. Port groups: each switch's links to one neighbour form a group (parallel links share it), up, down or
//     sibling by rank; hops and balancing counters live on groups and ports.
//  3. Indexing: tuples (rank, digits...) handed out breadth first from the first leaf; leaves and every
//     group array are sorted by the neighbour's tuple.
//  4. Routes to each leaf's HCAs in port order, leaves in tuple order, then "dummy" routes for the HCAs a leaf
//     lacks compared with the fullest leaf (they only move counters), then routes to every switch LID. Each
//     destination is laid upwards from its leaf (the least-loaded up group, then its least-loaded port, counted
//     down), and downwards from every switch reached (least-loaded port per down group, counted up). Switch LIDs
//     take the same walk without moving the down counters, which is why two roots have no route to each other.
// A fabric OpenSM's ftree would refuse (it falls back to minhop there) is refused with SmError, naming the reason.
#include <algorithm>
#include <array>
#include <map>
#include <string>

#include "models/sm/sm_error.h"
#include "models/sm/ucast_mgr.h"

namespace ib::sm {
namespace {

using detail::unreachable;
using topo::NodeIndex;
using topo::NodeKind;
using topo::PortNumber;
using topo::PortRef;

constexpr std::uint32_t unranked = ~0u;
constexpr unsigned tuple_length = 8; // OpenSM keys its tuples as 64-bit integers: at most rank 8
constexpr std::uint8_t unassigned = 0xff;
using Tuple = std::array<std::uint8_t, tuple_length>;

struct GroupPort {
  std::uint8_t port = 0;        ///< on the group's own switch
  std::uint8_t remote_port = 0; ///< on the neighbour
  std::uint32_t counter_up = 0, counter_down = 0;
};

/// The links of one switch to one neighbour (OpenSM's port group). `remote` is a switch ordinal, or -1 for an HCA.
struct Group {
  std::int32_t remote = -1;
  Lid remote_lid = 0;
  std::vector<GroupPort> ports; // in port order
  std::uint32_t counter_up = 0, counter_down = 0;
};

struct FtSwitch {
  NodeIndex node = topo::no_node;
  Lid lid = 0;
  std::uint32_t rank = unranked;
  Tuple tuple{};
  bool leaf = false;
  std::vector<std::uint32_t> down, sibling, up; ///< group indices, in OpenSM's (re-sorted) order
  std::uint32_t min_counter_down = 0;
  bool counter_up_changed = false;
};

class FatTree : public Engine {
public:
  Routing route(const RoutingInput& input) override;

private:
  const topo::Topology* t_ = nullptr;
  const LidMap* lids_ = nullptr;
  std::vector<FtSwitch> sw_;             // in OpenSM's switch order
  std::vector<std::int32_t> sw_of_node_; // node -> index in sw_, -1
  std::vector<NodeIndex> hcas_;          // in OpenSM's order
  std::vector<Group> groups_;
  std::vector<std::uint32_t> leaves_; // leaf array, in tuple order
  std::map<Tuple, std::uint32_t> by_tuple_;
  std::uint32_t leaf_rank_ = 0;
  // ftree's own hop table, LID-major: routing one LID reads and writes its entries on every switch, which then
  // share a few cache lines instead of each being a miss a table's row (a switch's LIDs) apart.
  std::vector<std::uint8_t> hops_;
  std::uint8_t& hop(std::uint32_t s, Lid lid) { return hops_[std::size_t{lid} * sw_.size() + s]; }
  Routing* routing_ = nullptr;

  std::uint8_t& lft(std::uint32_t s, Lid lid) { return routing_->lfts[sw_[s].node][lid]; }

  std::string construct(const RoutingInput& input);
  void rank_breadth_first(std::vector<std::uint32_t> queue, std::uint32_t& max_rank);
  void add_switch_port(std::vector<std::uint32_t>& groups, std::int32_t remote, Lid remote_lid, std::uint8_t port,
                       std::uint8_t remote_port);
  void index_fabric();
  Tuple new_tuple(const Tuple& from, bool down) const;
  std::string validate() const;

  int compare_index(std::int32_t a, std::int32_t b) const {
    const Tuple& x = sw_[static_cast<std::size_t>(a)].tuple;
    const Tuple& y = sw_[static_cast<std::size_t>(b)].tuple;
    return x < y ? -1 : (y < x ? 1 : 0);
  }
  int compare_load_up(const Group& a, const Group& b) const {
    if (a.counter_up != b.counter_up)
      return a.counter_up > b.counter_up ? 1 : -1;
    return compare_index(a.remote, b.remote);
  }
  int compare_load_down(const Group& a, const Group& b) const {
    if (a.counter_down != b.counter_down)
      return a.counter_down > b.counter_down ? 1 : -1;
    // OpenSM then prefers the neighbour whose least-loaded down group is lighter, but only in one direction
    // (port_group_compare_load_down returns 1 when the first is heavier and falls through otherwise).
    if (sw_[static_cast<std::size_t>(a.remote)].min_counter_down >
        sw_[static_cast<std::size_t>(b.remote)].min_counter_down)
      return 1;
    return compare_index(a.remote, b.remote);
  }
  /// OpenSM's bubble sorts: swap neighbours while the later one compares lower (stable for equal keys).
  template <class Compare>
  void bubble_sort(std::vector<std::uint32_t>& a, Compare compare) const {
    for (bool swapped = true; swapped;) {
      swapped = false;
      for (std::size_t j = 1; j < a.size(); ++j) {
        if (compare(groups_[a[j]], groups_[a[j - 1]]) < 0) {
          std::swap(a[j], a[j - 1]);
          swapped = true;
        }
      }
    }
  }
  static GroupPort& least_loaded(Group& g, bool up) {
    GroupPort* best = &g.ports.front();
    for (GroupPort& p : g.ports)
      if ((up ? p.counter_up < best->counter_up : p.counter_down < best->counter_down))
        best = &p;
    return *best;
  }
  void recalculate_min_counter_down(std::uint32_t s) {
    std::uint32_t least = 1u << 30;
    for (std::uint32_t g : sw_[s].down)
      least = std::min(least, groups_[g].counter_down);
    sw_[s].min_counter_down = least;
  }

  bool route_upgoing_by_going_down(std::uint32_t s, std::int32_t previous, Lid lid, unsigned hops);
  bool route_downgoing_by_going_up(std::uint32_t s, std::int32_t previous, Lid lid, bool main_path, unsigned hops);
  void set_route(std::uint32_t s, Lid lid, std::uint8_t port, unsigned hops) {
    lft(s, lid) = port;
    hop(s, lid) = static_cast<std::uint8_t>(std::min(hops, 255u));
  }

  void rank_check_for_message(const RoutingInput& input) const;
};

void FatTree::rank_breadth_first(std::vector<std::uint32_t> queue, std::uint32_t& max_rank) {
  const topo::Topology& t = *t_;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const std::uint32_t s = queue[head];
    const NodeIndex n = sw_[s].node;
    for (unsigned p = 1; p <= t.node(n).port_count; ++p) {
      const PortRef peer = t.peer(n, static_cast<PortNumber>(p));
      if (peer.node == topo::no_node || sw_of_node_[peer.node] < 0)
        continue;
      FtSwitch& r = sw_[static_cast<std::size_t>(sw_of_node_[peer.node])];
      if (r.rank != unranked && r.rank <= sw_[s].rank + 1)
        continue;
      r.rank = sw_[s].rank + 1;
      max_rank = r.rank;
      queue.push_back(static_cast<std::uint32_t>(sw_of_node_[peer.node]));
    }
  }
}

void FatTree::add_switch_port(std::vector<std::uint32_t>& groups, std::int32_t remote, Lid remote_lid,
                              std::uint8_t port, std::uint8_t remote_port) {
  for (std::uint32_t g : groups) {
    if (groups_[g].remote_lid == remote_lid) {
      groups_[g].ports.push_back({port, remote_port});
      return;
    }
  }
  groups.push_back(static_cast<std::uint32_t>(groups_.size()));
  groups_.push_back({remote, remote_lid, {{port, remote_port}}});
}

Tuple FatTree::new_tuple(const Tuple& from, bool down) const {
  Tuple candidate = from;
  const unsigned digit = down ? from[0] + 1u : from[0];
  candidate[0] = static_cast<std::uint8_t>(down ? from[0] + 1 : from[0] - 1);
  if (digit >= tuple_length)
    throw SmError("ftree: not a fat tree: deeper than OpenSM's tuples can index");
  for (unsigned i = 0; i < 0xff; ++i) {
    candidate[digit] = static_cast<std::uint8_t>(i);
    if (!by_tuple_.contains(candidate))
      return candidate;
  }
  throw SmError("ftree: not a fat tree: more than 255 switches under one index");
}

void FatTree::index_fabric() {
  // The first leaf in switch order starts the breadth-first indexing: (leaf rank, 0, ..., 0).
  std::uint32_t first = 0;
  while (!sw_[first].leaf)
    ++first;
  Tuple start{};
  start.fill(unassigned);
  start[0] = static_cast<std::uint8_t>(sw_[first].rank);
  for (unsigned i = 1; i <= leaf_rank_ && i < tuple_length; ++i)
    start[i] = 0;
  sw_[first].tuple = start;
  by_tuple_[start] = first;
  const auto by_index = [&](std::uint32_t a, std::uint32_t b) {
    return compare_index(groups_[a].remote, groups_[b].remote) < 0;
  };
  std::vector<std::uint32_t> queue{first};
  for (std::size_t head = 0; head < queue.size(); ++head) {
    FtSwitch& s = sw_[queue[head]];
    if (s.rank < leaf_rank_) {
      for (std::uint32_t g : s.down) {
        const std::int32_t r = groups_[g].remote;
        if (r < 0 || sw_[static_cast<std::size_t>(r)].tuple[0] != unassigned)
          continue;
        const Tuple tuple = new_tuple(s.tuple, true);
        sw_[static_cast<std::size_t>(r)].tuple = tuple;
        by_tuple_[tuple] = static_cast<std::uint32_t>(r);
        queue.push_back(static_cast<std::uint32_t>(r));
      }
      std::sort(s.down.begin(), s.down.end(), by_index);
    }
    if (s.rank != 0) {
      for (std::uint32_t g : s.up) {
        const std::int32_t r = groups_[g].remote;
        if (sw_[static_cast<std::size_t>(r)].tuple[0] != unassigned)
          continue;
        const Tuple tuple = new_tuple(s.tuple, false);
        sw_[static_cast<std::size_t>(r)].tuple = tuple;
        by_tuple_[tuple] = static_cast<std::uint32_t>(r);
        queue.push_back(static_cast<std::uint32_t>(r));
      }
      std::sort(s.up.begin(), s.up.end(), by_index);
    }
  }
}

std::string FatTree::validate() const {
  // fabric_validate_topology: per rank, as the first switch of that rank (in switch order): as many up groups,
  // as many down groups (leaves may lack HCAs), up groups as wide as its first one, and (OpenSM compares only the
  // first) a first down group as wide as its first.
  std::vector<std::int32_t> reference(leaf_rank_ + 1, -1);
  for (std::uint32_t i = 0; i < sw_.size(); ++i) {
    const FtSwitch& s = sw_[i];
    if (s.rank == unranked)
      continue;
    if (reference[s.rank] < 0) {
      reference[s.rank] = static_cast<std::int32_t>(i);
      continue;
    }
    const FtSwitch& r = sw_[static_cast<std::size_t>(reference[s.rank])];
    const auto name = [&](const FtSwitch& x) { return t_->node(x.node).name; };
    if (r.up.size() != s.up.size())
      return "switches " + name(r) + " and " + name(s) + " of rank " + std::to_string(s.rank) + " have " +
             std::to_string(r.up.size()) + " and " + std::to_string(s.up.size()) + " up neighbours";
    if (s.rank != leaf_rank_ && r.down.size() != s.down.size())
      return "switches " + name(r) + " and " + name(s) + " of rank " + std::to_string(s.rank) + " have " +
             std::to_string(r.down.size()) + " and " + std::to_string(s.down.size()) + " down neighbours";
    if (!r.up.empty())
      for (std::uint32_t g : s.up)
        if (groups_[g].ports.size() != groups_[r.up[0]].ports.size())
          return "switch " + name(s) + " has " + std::to_string(groups_[g].ports.size()) +
                 " links to an up neighbour where " + name(r) + " has " + std::to_string(groups_[r.up[0]].ports.size());
    if (!r.down.empty() && s.rank != leaf_rank_ && !s.down.empty() &&
        groups_[s.down[0]].ports.size() != groups_[r.down[0]].ports.size())
      return "switch " + name(s) + " has " + std::to_string(groups_[s.down[0]].ports.size()) +
             " links to its first down neighbour where " + name(r) + " has " +
             std::to_string(groups_[r.down[0]].ports.size());
  }
  return {};
}

std::string FatTree::construct(const RoutingInput& input) {
  const topo::Topology& t = input.topology;
  t_ = &t;
  lids_ = &input.lids;
  // Switches and HCAs in OpenSM's GUID-table order. A switch without any link is not part of the fabric the SM
  // sees (a failed switch, models/sm/reroute.h): ranking leaves it out as OpenSM never discovers it.
  std::vector<NodeIndex> switches;
  for (NodeIndex n = 0; n < t.node_count(); ++n) {
    if (t.node(n).kind == NodeKind::switch_node)
      switches.push_back(n);
    else if (t.node(n).kind == NodeKind::hca)
      hcas_.push_back(n);
  }
  const auto guid_order = [&](NodeIndex a, NodeIndex b) {
    return opensm_guid_order(t.node(a).node_guid) < opensm_guid_order(t.node(b).node_guid);
  };
  std::sort(switches.begin(), switches.end(), guid_order);
  std::sort(hcas_.begin(), hcas_.end(), guid_order);
  sw_of_node_.assign(t.node_count(), -1);
  for (NodeIndex n : switches) {
    sw_of_node_[n] = static_cast<std::int32_t>(sw_.size());
    FtSwitch s;
    s.node = n;
    s.lid = input.lids.base_lid(n, 0);
    s.tuple.fill(unassigned);
    sw_.push_back(s);
  }
  if (sw_.size() < 2)
    return "fewer than 2 switches";

  // Rank: 0 at the switches with HCAs, breadth first; reversed; then again breadth first from the new rank 0.
  std::vector<std::uint32_t> queue;
  std::size_t cabled_hcas = 0;
  for (NodeIndex h : hcas_) {
    bool cabled = false;
    for (unsigned p = 1; p <= t.node(h).port_count; ++p) {
      const PortRef peer = t.peer(h, static_cast<PortNumber>(p));
      if (peer.node == topo::no_node)
        continue;
      cabled = true;
      if (t.node(peer.node).kind == NodeKind::hca)
        return "HCA " + t.node(h).name + " is cabled to HCA " + t.node(peer.node).name;
      FtSwitch& s = sw_[static_cast<std::size_t>(sw_of_node_[peer.node])];
      if (s.rank == unranked) {
        s.rank = 0;
        queue.push_back(static_cast<std::uint32_t>(sw_of_node_[peer.node]));
      }
    }
    cabled_hcas += cabled;
  }
  if (cabled_hcas < 2)
    return "fewer than 2 HCAs";
  std::uint32_t max_rank = 0;
  rank_breadth_first(queue, max_rank);
  queue.clear();
  for (std::uint32_t i = 0; i < sw_.size(); ++i) {
    FtSwitch& s = sw_[i];
    if (s.rank == unranked)
      continue;
    s.rank = max_rank - s.rank;
    if (s.rank == 0)
      queue.push_back(i);
    else
      s.rank = unranked;
  }
  if (!input.options.roots.empty()) {
    // Given roots replace the automatic ones (fabric_rank_from_roots).
    for (FtSwitch& s : sw_)
      s.rank = unranked;
    queue.clear();
    for (NodeIndex root : input.options.roots) {
      if (root < sw_of_node_.size() && sw_of_node_[root] >= 0) {
        sw_[static_cast<std::size_t>(sw_of_node_[root])].rank = 0;
        queue.push_back(static_cast<std::uint32_t>(sw_of_node_[root]));
      }
    }
    if (queue.empty())
      return "none of the given roots is a switch";
  }
  max_rank = 0;
  rank_breadth_first(queue, max_rank);
  std::size_t ranked = 0;
  for (const FtSwitch& s : sw_)
    ranked += s.rank != unranked;
  if (max_rank == 0 && ranked > 1)
    return "more than one root at maximum rank 0";

  // Port groups; HCA ports cabled to unranked (removed) switches are left out.
  hops_.assign((std::size_t{input.lids.max_lid()} + 1) * sw_.size(), no_path);
  for (std::uint32_t i = 0; i < sw_.size(); ++i) {
    FtSwitch& s = sw_[i];
    if (s.rank == unranked)
      continue;
    for (unsigned p = 1; p <= t.node(s.node).port_count; ++p) {
      const PortRef peer = t.peer(s.node, static_cast<PortNumber>(p));
      if (peer.node == topo::no_node || peer.node == s.node)
        continue;
      const auto port = static_cast<std::uint8_t>(p);
      const auto remote_port = static_cast<std::uint8_t>(peer.port);
      if (t.node(peer.node).kind == NodeKind::hca) {
        add_switch_port(s.down, -1, input.lids.base_lid(peer.node, peer.port), port, remote_port);
        continue;
      }
      if (t.node(peer.node).kind != NodeKind::switch_node)
        continue;
      const std::int32_t r = sw_of_node_[peer.node];
      const std::uint32_t rank = sw_[static_cast<std::size_t>(r)].rank;
      std::vector<std::uint32_t>& direction = s.rank > rank ? s.up : (s.rank == rank ? s.sibling : s.down);
      add_switch_port(direction, r, sw_[static_cast<std::size_t>(r)].lid, port, remote_port);
    }
  }

  // Leaf rank: the highest rank (OpenSM: that of the first HCA's switch when roots are given).
  leaf_rank_ = max_rank;
  std::vector<std::uint32_t> hca_switches; // per HCA port on a ranked switch, in HCA order
  for (NodeIndex h : hcas_) {
    for (unsigned p = 1; p <= t.node(h).port_count; ++p) {
      const PortRef peer = t.peer(h, static_cast<PortNumber>(p));
      if (peer.node == topo::no_node || t.node(peer.node).kind != NodeKind::switch_node)
        continue;
      const auto s = static_cast<std::uint32_t>(sw_of_node_[peer.node]);
      if (sw_[s].rank != unranked)
        hca_switches.push_back(s);
    }
  }
  if (hca_switches.empty())
    return "no HCA is cabled to a ranked switch";
  if (!input.options.roots.empty())
    leaf_rank_ = sw_[hca_switches.front()].rank;
  if (leaf_rank_ + 1 < 2 || leaf_rank_ + 1 > tuple_length)
    return "its rank is " + std::to_string(leaf_rank_ + 1) + " (OpenSM's ftree routes ranks 2 to 8)";
  for (std::uint32_t s : hca_switches) {
    if (sw_[s].leaf)
      continue;
    sw_[s].leaf = true;
    if (sw_[s].rank != leaf_rank_)
      return "switch " + t.node(sw_[s].node).name + " has HCAs at rank " + std::to_string(sw_[s].rank) +
             " while the leaf rank is " + std::to_string(leaf_rank_);
  }

  index_fabric();

  // The leaf array: every switch of the leaf rank in tuple order, from the first to the last with HCAs.
  std::vector<std::uint32_t> at_leaf_rank;
  for (std::uint32_t i = 0; i < sw_.size(); ++i)
    if (sw_[i].rank == leaf_rank_)
      at_leaf_rank.push_back(i);
  std::sort(at_leaf_rank.begin(), at_leaf_rank.end(),
            [&](std::uint32_t a, std::uint32_t b) { return sw_[a].tuple < sw_[b].tuple; });
  std::size_t first = at_leaf_rank.size(), last = 0;
  for (std::size_t i = 0; i < at_leaf_rank.size(); ++i) {
    if (sw_[at_leaf_rank[i]].leaf) {
      first = std::min(first, i);
      last = i;
    }
  }
  if (first >= last)
    return "fewer than 2 leaf switches";
  leaves_.assign(at_leaf_rank.begin() + static_cast<std::ptrdiff_t>(first),
                 at_leaf_rank.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  if (input.options.roots.empty())
    return validate();
  return {};
}

bool FatTree::route_upgoing_by_going_down(std::uint32_t s, std::int32_t previous, Lid lid, unsigned hops) {
  FtSwitch& sw = sw_[s];
  if (sw.down.empty())
    return false;
  if (sw.counter_up_changed) {
    bubble_sort(sw.down, [&](const Group& a, const Group& b) { return compare_load_up(a, b); });
    sw.counter_up_changed = false;
  }
  if (!sw.sibling.empty())
    bubble_sort(sw.sibling, [&](const Group& a, const Group& b) { return compare_load_up(a, b); });
  bool created = false;
  const std::size_t count = sw.down.size() + (lid != 0 ? sw.sibling.size() : 0);
  for (std::size_t k = 0; k < count; ++k) {
    const std::uint32_t gi = k < sw.down.size() ? sw.down[k] : sw.sibling[k - sw.down.size()];
    Group& g = groups_[gi];
    if (g.remote < 0) {
      created = true; // an HCA below: the route reaches a node
      continue;
    }
    if (previous >= 0 && g.remote_lid == sw_[static_cast<std::size_t>(previous)].lid)
      continue;
    GroupPort& port = least_loaded(g, true);
    const auto remote = static_cast<std::uint32_t>(g.remote);
    const std::uint8_t known = hop(remote, lid);
    if (known != no_path && hops + 1 >= known)
      continue; // already routed by a path no longer than this one
    set_route(remote, lid, port.remote_port, hops + 1);
    if (route_upgoing_by_going_down(remote, -1, lid, hops + 1)) {
      created = true;
      ++port.counter_up;
      ++g.counter_up;
      sw_[s].counter_up_changed = true;
    }
  }
  return created;
}

bool FatTree::route_downgoing_by_going_up(std::uint32_t s, std::int32_t previous, Lid lid, bool main_path,
                                          unsigned hops) {
  bool created = route_upgoing_by_going_down(s, previous, lid, hops);
  if (sw_[s].rank == 0 || sw_[s].up.empty())
    return created; // a root (OpenSM's reverse hops are off by default)
  bubble_sort(sw_[s].up, [&](const Group& a, const Group& b) { return compare_load_down(a, b); });
  const std::uint32_t min_group = sw_[s].up[0];
  GroupPort* min_port = &least_loaded(groups_[min_group], false);
  if (main_path) {
    Group& g = groups_[min_group];
    const auto remote = static_cast<std::uint32_t>(g.remote);
    ++g.counter_down;
    ++min_port->counter_down;
    if (g.counter_down == sw_[remote].min_counter_down + 1)
      recalculate_min_counter_down(remote);
    if (lft(remote, lid) == no_path || hops + 1 < hop(remote, lid))
      set_route(remote, lid, min_port->remote_port, hops + 1);
    created |= route_downgoing_by_going_up(remote, static_cast<std::int32_t>(s), lid, true, hops + 1);
  }
  // The other up groups (all of them off the main path) get the route where they have none, not counted.
  for (std::size_t i = main_path ? 1 : 0; i < sw_[s].up.size(); ++i) {
    Group& g = groups_[sw_[s].up[i]];
    const auto remote = static_cast<std::uint32_t>(g.remote);
    if (lft(remote, lid) != no_path && hops + 1 >= hop(remote, lid))
      continue;
    set_route(remote, lid, least_loaded(g, false).remote_port, hops + 1);
    created |= route_downgoing_by_going_up(remote, static_cast<std::int32_t>(s), lid, false, hops + 1);
  }
  if (!sw_[s].sibling.empty())
    bubble_sort(sw_[s].sibling, [&](const Group& a, const Group& b) { return compare_load_down(a, b); });
  for (std::size_t i = 0; i < sw_[s].sibling.size(); ++i) {
    Group& g = groups_[sw_[s].sibling[i]];
    const auto remote = static_cast<std::uint32_t>(g.remote);
    if (lft(remote, lid) != no_path && hops + 1 >= hop(remote, lid))
      continue;
    min_port = &least_loaded(g, false);
    set_route(remote, lid, min_port->remote_port, hops + 1);
    if (route_downgoing_by_going_up(remote, static_cast<std::int32_t>(s), lid, false, hops + 1)) {
      created = true;
      // As OpenSM: the first up group's counter and the sibling's port are the ones promoted.
      ++groups_[min_group].counter_down;
      ++min_port->counter_down;
    }
  }
  return created;
}

Routing FatTree::route(const RoutingInput& input) {
  const topo::Topology& t = input.topology;
  if (input.lids.lmc() > 0)
    throw SmError("ftree does not route with LMC > 0 (as OpenSM's ftree); use minhop or updn");
  const std::string refusal = construct(input);
  if (!refusal.empty()) {
    rank_check_for_message(input); // names a link or switch where it can
    throw SmError("ftree: not a fat tree: " + refusal);
  }

  Routing routing;
  routing_ = &routing;
  routing.lfts.assign(t.node_count(), {});
  for (NodeIndex n = 0; n < t.node_count(); ++n)
    if (t.node(n).kind == NodeKind::switch_node)
      routing.lfts[n].assign(std::size_t{input.lids.max_lid()} + 1, no_path);

  // HCAs per leaf, as many as the fullest leaf: the missing ones are routed as LID 0 to keep the counters even.
  std::size_t max_hcas_per_leaf = 0;
  for (std::uint32_t l : leaves_) {
    std::size_t n = 0;
    for (std::uint32_t g : sw_[l].down)
      n += groups_[g].remote < 0;
    max_hcas_per_leaf = std::max(max_hcas_per_leaf, n);
  }
  for (std::uint32_t l : leaves_) {
    std::size_t routed = 0;
    for (std::size_t j = 0; j < sw_[l].down.size(); ++j) { // live: OpenSM's walk may re-sort it
      const Group& g = groups_[sw_[l].down[j]];
      if (g.remote >= 0)
        continue;
      set_route(l, g.remote_lid, g.ports.front().port, 1);
      route_downgoing_by_going_up(l, -1, g.remote_lid, true, 1);
      ++routed;
    }
    for (; routed < max_hcas_per_leaf; ++routed) {
      hop(l, 0) = 1;
      route_downgoing_by_going_up(l, -1, 0, true, 1);
      for (std::uint32_t s = 0; s < sw_.size(); ++s) {
        hop(s, 0) = no_path;
        lft(s, 0) = no_path;
      }
    }
  }
  for (std::uint32_t s = 0; s < sw_.size(); ++s) {
    if (sw_[s].rank == unranked)
      continue;
    set_route(s, sw_[s].lid, 0, 0);
    route_downgoing_by_going_up(s, -1, sw_[s].lid, false, 0);
  }
  routing_ = nullptr;
  return routing;
}

/// The older, stricter ranking check, kept for its messages: it names the link or switch that breaks the ranks
/// (a ring's same-rank link, an aggregation switch without uplinks) where OpenSM's reasons are less direct. It only
/// runs on fabrics OpenSM's ftree refuses.
void FatTree::rank_check_for_message(const RoutingInput& input) const {
  const topo::Topology& t = input.topology;
  const SwitchIndex index(t);
  const detail::SwitchGraph g(t, index);
  std::vector<std::uint8_t> leaf(g.count, 0);
  for (NodeIndex n = 0; n < t.node_count(); ++n) {
    if (t.node(n).kind != NodeKind::hca)
      continue;
    for (unsigned p = 1; p <= t.node(n).port_count; ++p) {
      const PortRef peer = t.peer(n, static_cast<PortNumber>(p));
      if (peer.node != topo::no_node && t.node(peer.node).kind == NodeKind::switch_node)
        leaf[static_cast<std::size_t>(index.ordinal_of_node[peer.node])] = 1;
    }
  }
  std::vector<std::uint32_t> height(g.count, ~0u);
  std::vector<std::uint32_t> queue;
  for (std::uint32_t s = 0; s < g.count; ++s)
    if (leaf[s]) {
      height[s] = 0;
      queue.push_back(s);
    }
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const std::uint32_t s = queue[head];
    for (unsigned p = 1; p <= g.port_count[s]; ++p) {
      const std::int32_t n = g.at(s, p);
      if (n >= 0 && height[n] == ~0u) {
        height[n] = height[s] + 1;
        queue.push_back(static_cast<std::uint32_t>(n));
      }
    }
  }
  std::vector<std::uint8_t> present(g.count, 0);
  for (std::uint32_t s = 0; s < g.count; ++s)
    for (unsigned p = 1; p <= g.port_count[s] && !present[s]; ++p)
      present[s] = g.cabled[s * g.stride + p];
  std::uint32_t top = 0;
  for (std::uint32_t s = 0; s < g.count; ++s)
    if (present[s] && height[s] != ~0u)
      top = std::max(top, height[s]);
  std::vector<std::uint32_t> rank(g.count, 0);
  for (std::uint32_t s = 0; s < g.count; ++s)
    rank[s] = present[s] && height[s] != ~0u ? top - height[s] : 0;
  for (std::uint32_t s = 0; s < g.count; ++s) {
    if (!present[s] || height[s] == ~0u)
      continue;
    bool has_up = rank[s] == 0;
    for (unsigned p = 1; p <= g.port_count[s]; ++p) {
      const std::int32_t n = g.at(s, p);
      if (n < 0 || height[static_cast<std::size_t>(n)] == ~0u)
        continue;
      const std::uint32_t a = rank[s];
      const std::uint32_t b = rank[static_cast<std::size_t>(n)];
      if (a != b + 1 && b != a + 1)
        throw SmError("ftree: not a fat tree: the link " + t.node(index.switches[s]).name + "/" + std::to_string(p) +
                      " - " + t.node(index.switches[static_cast<std::size_t>(n)]).name + " joins switches " +
                      (a == b ? "of the same rank " + std::to_string(a)
                              : "of ranks " + std::to_string(a) + " and " + std::to_string(b)) +
                      " (ranks count down from the top, leaves at rank " + std::to_string(top) + ")");
      has_up = has_up || b + 1 == a;
    }
    if (!has_up)
      throw SmError("ftree: not a fat tree: switch " + t.node(index.switches[s]).name + " has no link upwards");
  }
}

} // namespace

extern const EngineInfo ftree_engine{"ftree",
                                     "fat-tree routing (OpenSM's ftree): refuses a fabric that is not a fat tree",
                                     false, [] { return std::unique_ptr<Engine>(std::make_unique<FatTree>()); }};

} // namespace ib::sm
