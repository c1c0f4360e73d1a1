// Internal to models/topology: the line parser of ibnetdiscover output and ibsim net files (see
// ibnetdiscover_import.cpp for the formats). It turns the text into node blocks with their port lines, GUIDs and
// link types, and raises LineError for lines it cannot read; the links are matched up by the importer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/link/link_rate.h"
#include "models/topology/ibnetdiscover.h"

namespace ib::topo::ibnetdiscover_detail {

/// One "[port] ... \"remote\"[port] ..." line.
struct PortLine {
  unsigned line;
  unsigned port;
  std::string remote_id;
  unsigned remote_port;
  std::optional<std::uint64_t> guid; ///< the local port's GUID, "(...)" after a CA's "[p]"
  std::optional<link::Width> width;
  std::optional<link::Speed> speed;
};

/// One Switch or Ca/Hca block.
struct Block {
  unsigned line;
  NodeKind kind;
  unsigned ports;
  std::string id;
  std::string description;
  std::uint64_t guid;
  std::uint64_t system_image_guid;
  std::optional<std::uint16_t> device_id; ///< the devid= line before the block (NodeInfo.DeviceID), if any
  std::optional<std::uint64_t> port0_guid;
  std::vector<PortLine> port_lines;
  /// Set for nodes of a ports report (ibnetdiscover -p), which does not print port counts: `ports` is then the
  /// highest port seen and a switch has its profile's count.
  bool ports_from_profile = false;
  /// HCA port GUIDs seen elsewhere than on this node's own port lines (a ports report's remote ends).
  std::map<unsigned, std::uint64_t> port_guids;
};

/// ibsim's link defaults (sim.h DEFAULT_LINKWIDTH 4x, DEFAULT_LINKSPEED SDR, no extended speed) and the net
/// file's width=/speed=/extspeed= lines, as enable masks (IBA PortInfo encodings).
struct NetDefaults {
  unsigned width_mask = 2;
  unsigned speed_mask = 1;
  unsigned extspeed_mask = 0;

  link::Width width() const; ///< the widest enabled
  link::Speed speed() const; ///< the fastest enabled, extended speeds first
};

/// The blocks of a file, in file order, and its net-wide link defaults.
struct ParsedNet {
  std::vector<Block> blocks;
  NetDefaults net;
};

/// Parses `text`, labelled `file` in LineErrors: ibnetdiscover output (plain or -g), an ibsim net file, or an
/// ibnetdiscover ports report (-p), told apart by the first line that is not blank or a comment.
ParsedNet parse(std::string_view text, const std::string& file);

/// Calls `each(line_number, line)` for every line of `text` (numbered from 1), trailing blanks and '\r' removed.
template <typename Each>
void for_each_line(std::string_view text, Each each) {
  unsigned number = 0;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, end - start);
    const std::size_t last = line.find_last_not_of(" \t\r");
    line = last == std::string_view::npos ? std::string_view() : line.substr(0, last + 1);
    each(++number, line);
    start = end + 1;
  }
}

/// `s` as a JSON string literal, for messages.
std::string json_quoted(std::string_view s);

} // namespace ib::topo::ibnetdiscover_detail
