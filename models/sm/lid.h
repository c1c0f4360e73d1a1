// LID assignment (IBA vol 1 §7.11.1, §14.2.5.6): every HCA port gets an aligned block of 2^LMC LIDs starting at
// its base LID, every switch one LID for its management port 0 (base switch port 0 is not LMC-capable). Two
// orders: the topology's node order, or OpenSM's on a fresh subnet (the SM's own port first, then all ports in
// OpenSM's port-GUID table order, each taking the first free block at or after the last one handed out: osm_lid_mgr.c
// lid_mgr_find_free_lid_range, which skips rather than reuses the LIDs lost to alignment).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/topology/topology.h"

namespace ib::sm {

using Lid = std::uint16_t;
inline constexpr Lid no_lid = 0;
/// Highest unicast LID (IBA vol 1 §4.1.3: 0xC000 and up are multicast).
inline constexpr Lid max_unicast_lid = 0xBFFF;

enum class LidOrder : std::uint8_t { topology, opensm };

/// The order OpenSM's GUID tables (cl_qmap keyed by the GUID in network byte order) iterate in: by the GUID's
/// bytes reversed, as a little-endian host compares them. Port, switch and LID order follow it.
constexpr std::uint64_t opensm_guid_order(std::uint64_t guid) {
  return __builtin_bswap64(guid);
}

struct LidOptions {
  unsigned lmc = 0; ///< 0..7: each HCA port gets 2^lmc LIDs
  LidOrder order = LidOrder::topology;
  /// OpenSM's guid2lid file (read_guid2lid): when set, every LID comes from it and `order` is not used.
  std::string guid2lid_file;
  /// The port the SM runs on: a cabled HCA port, or a switch's port 0 (a managed switch runs its SM behind its
  /// management port). OpenSM gives it the first LIDs. node == no_node: default_sm_port.
  topo::PortRef sm_port;
};

class LidMap {
public:
  /// Base LID of an HCA port, or of a switch (any port number: a switch has one LID, on port 0).
  Lid base_lid(topo::NodeIndex node, topo::PortNumber port) const;
  /// LIDs of (node, port): 2^lmc for an HCA port, 1 for a switch.
  unsigned lid_count(topo::NodeIndex node) const;
  /// The port that owns `lid` (a switch's port 0 for its LID); node == no_node when no one does.
  topo::PortRef owner(Lid lid) const;
  Lid max_lid() const { return static_cast<Lid>(owners_.size() - 1); }
  unsigned lmc() const { return lmc_; }

private:
  friend LidMap assign_lids(const topo::Topology&, const LidOptions&);
  unsigned lmc_ = 0;
  std::vector<std::uint32_t> first_port_; ///< per node: index of its port 0 in base_
  std::vector<Lid> base_;                 ///< per (node, port); switches use port 0 only
  std::vector<topo::PortRef> owners_;     ///< per LID 0..max_lid
  std::vector<std::uint8_t> is_switch_;
};

/// Assigns LIDs; throws SmError when the fabric needs more than max_unicast_lid LIDs or lmc > 7, or the SM port is
/// neither a cabled HCA port nor a switch's port 0 (sm_port_problem). With a guid2lid_file, the LIDs are the file's
/// and each line must name a LID-bearing port of the topology (a switch's GUID, a cabled HCA port's GUID) with
/// as many LIDs as it takes at this LMC, aligned, without overlapping another line; every such port needs a line
/// (SmError naming the file and line otherwise).
LidMap assign_lids(const topo::Topology& topology, const LidOptions& options);

/// One line of OpenSM's guid2lid file (osm_db_pack.c): "<port GUID> <first LID> <last LID>", numbers as strtoull
/// base 0 reads them (OpenSM writes "0x%016" PRIx64 " 0x%04x 0x%04x").
struct Guid2LidLine {
  std::uint64_t guid = 0;
  unsigned first = 0;
  unsigned last = 0;
  unsigned line = 0; ///< 1-based line number in the file
};

/// Reads a guid2lid file; blank lines and '#' comments are skipped. A malformed line, a LID range that is empty,
/// starts at 0 or goes past max_unicast_lid: SmError "<file_label>:<line>: ...".
std::vector<Guid2LidLine> read_guid2lid(std::istream& in, const std::string& file_label);

/// "" when the SM can run on `port` (a cabled HCA port or a switch's port 0), else why not.
std::string sm_port_problem(const topo::Topology& topology, topo::PortRef port);

/// "NODE/PORT" (a switch's "NODE" alone means its port 0) to a port of `topology`, checked by sm_port_problem;
/// throws SmError saying what is wrong.
topo::PortRef parse_sm_port(const topo::Topology& topology, const std::string& text);

/// The port OpenSM would run on by default here: the first cabled HCA port in port-GUID order.
topo::PortRef default_sm_port(const topo::Topology& topology);

} // namespace ib::sm
