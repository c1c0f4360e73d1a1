// LFTs in OpenSM's text formats, so that routes can be compared with, and replayed from, the real OpenSM:
// opensm-lfts.dump (osm_dump.c dump_ucast_lfts, what `opensm -D`-style dumps and the file engine read) and
// dump_lfts.sh / ibroute output (infiniband-diags). Both are read back by read_lft_dump().
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "models/sm/routing.h"

namespace ib::sm {

/// opensm-lfts.dump: per switch in OpenSM's switch-GUID order, "Unicast lids [0-MAX] of switch Lid L guid 0x...
/// ('name'):", one "0xLLLL PPP # <type> portguid 0x...: 'desc'" line per routed LID, then "MAX lids dumped".
void write_opensm_lfts(std::ostream& out, const topo::Topology& topology, const LidMap& lids, const Routing& routing);

/// dump_lfts.sh (ibroute per switch): "Unicast lids [0x0-0xMAX] of switch Lid L guid 0x... (name):", a header,
/// "0xLLLL PPP : (<type> portguid 0x...: 'desc')" lines, then "N valid lids dumped".
void write_dump_lfts(std::ostream& out, const topo::Topology& topology, const LidMap& lids, const Routing& routing);

/// One switch's table as read from a dump.
struct DumpedLft {
  std::uint64_t switch_guid = 0;
  struct Entry {
    Lid lid;
    std::uint8_t port;
    std::uint64_t port_guid; ///< 0 when the line names none
  };
  std::vector<Entry> entries;
};

/// Reads either format (OpenSM's osm_ucast_file.c rules: "Unicast lids ... guid 0x<hex>" starts a switch, lines
/// "0x<lid> <port>" follow, '#' lines are comments). Malformed lines: SmError naming `file_label` and the line.
std::vector<DumpedLft> read_lft_dump(std::istream& in, const std::string& file_label);

} // namespace ib::sm
