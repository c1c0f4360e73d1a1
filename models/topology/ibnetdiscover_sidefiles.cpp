// The files that go with an ibnetdiscover import: infiniband-diags' node name map (GUID "name" lines, as its
// --node-name-map option reads) and a cables table (CSV), for what ibnetdiscover cannot see: cable lengths and
// types. Both are read strictly; each error is a LineError at the offending line.
#include <charconv>
#include <cmath>

#include "models/topology/ibnetdiscover.h"
#include "models/topology/ibnetdiscover_parser.h"

namespace ib::topo {

namespace {

using ibnetdiscover_detail::json_quoted;

std::string_view trimmed(std::string_view s) {
  const std::size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) {
    return {};
  }
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

/// Calls `each(line_number, line)` for every line, '\r' and surrounding blanks removed.
template <typename Each>
void for_each_trimmed_line(std::string_view text, Each each) {
  ibnetdiscover_detail::for_each_line(text,
                                      [&](unsigned number, std::string_view line) { each(number, trimmed(line)); });
}

/// A GUID as the diagnostics write it: "0x" and hex digits, or decimal; not 0.
std::optional<std::uint64_t> guid_of(std::string_view text) {
  int base = 10;
  if (text.starts_with("0x") || text.starts_with("0X")) {
    text.remove_prefix(2);
    base = 16;
  }
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value == 0) {
    return std::nullopt;
  }
  return value;
}

} // namespace

NodeNameMap parse_node_name_map(std::string_view text, const std::string& file) {
  NodeNameMap map{file, {}};
  for_each_trimmed_line(text, [&](unsigned line, std::string_view s) {
    if (s.empty() || s[0] == '#') {
      return;
    }
    const std::size_t blank = s.find_first_of(" \t");
    const auto guid = guid_of(s.substr(0, blank));
    if (!guid || blank == std::string_view::npos) {
      throw LineError(file, line, "a node GUID and its name, as in 0x0008f10400411a08 \"SW1 (Rack 3)\"",
                      json_quoted(s));
    }
    std::string_view rest = trimmed(s.substr(blank));
    std::string_view name;
    if (!rest.empty() && rest[0] == '"') {
      const std::size_t close = rest.find('"', 1);
      const std::string_view after = close == std::string_view::npos ? "" : trimmed(rest.substr(close + 1));
      if (close == std::string_view::npos || !(after.empty() || after[0] == '#')) {
        throw LineError(file, line, "a name in double quotes, then nothing but a # comment", json_quoted(s));
      }
      name = rest.substr(1, close - 1);
    } else {
      // Unquoted names run to a '#' comment, as infiniband-diags' own reader stops there.
      name = trimmed(rest.substr(0, rest.find('#')));
    }
    if (name.empty()) {
      throw LineError(file, line, "a non-empty name after the GUID", json_quoted(s));
    }
    const auto [it, added] = map.names.emplace(*guid, NodeNameMap::Entry{std::string(name), line});
    if (!added) {
      throw LineError(file, line, "each GUID once",
                      format_guid(*guid) + " again (line " + std::to_string(it->second.line) + ")");
    }
  });
  return map;
}

CableTable parse_cable_table(std::string_view text, const std::string& file) {
  static constexpr std::string_view columns[] = {"node_guid", "port", "length_m", "cable"};
  static constexpr std::string_view header_text = "a header line node_guid,port,length_m,cable";
  CableTable table{file, {}};
  std::vector<int> column_of; // for each column of the file, its index in `columns`
  for_each_trimmed_line(text, [&](unsigned line, std::string_view s) {
    if (s.empty() || s[0] == '#') {
      return;
    }
    std::vector<std::string_view> cells;
    for (std::size_t start = 0;;) {
      const std::size_t comma = s.find(',', start);
      cells.push_back(trimmed(s.substr(start, comma - start)));
      if (comma == std::string_view::npos) {
        break;
      }
      start = comma + 1;
    }
    if (column_of.empty()) {
      // The header names the columns, in any order, each once.
      int seen[4] = {0, 0, 0, 0};
      for (const std::string_view cell : cells) {
        int index = -1;
        for (int c = 0; c < 4; ++c) {
          index = cell == columns[c] ? c : index;
        }
        if (index < 0 || seen[index]++ > 0) {
          throw LineError(file, line, std::string(header_text) + " (each column once, any order)", json_quoted(s));
        }
        column_of.push_back(index);
      }
      if (cells.size() != 4) {
        throw LineError(file, line, std::string(header_text), json_quoted(s));
      }
      return;
    }
    if (cells.size() != 4) {
      throw LineError(file, line, "4 comma-separated cells (node_guid,port,length_m,cable)",
                      std::to_string(cells.size()) + " in " + json_quoted(s));
    }
    CableTable::Row row{line, 0, 0, std::nullopt, std::nullopt};
    for (std::size_t i = 0; i < 4; ++i) {
      const std::string_view cell = cells[i];
      switch (column_of[i]) {
      case 0: {
        const auto guid = guid_of(cell);
        if (!guid) {
          throw LineError(file, line, "node_guid: a node GUID such as 0x98039b0300a1b2c0", json_quoted(cell));
        }
        row.node_guid = *guid;
        break;
      }
      case 1: {
        unsigned port = 0;
        const auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), port);
        if (error != std::errc() || end != cell.data() + cell.size() || port < 1 || port > max_port_count) {
          throw LineError(file, line, "port: a port number in [1, " + std::to_string(max_port_count) + "]",
                          json_quoted(cell));
        }
        row.port = port;
        break;
      }
      case 2: {
        if (cell.empty()) {
          break; // --length-m's
        }
        double length = 0;
        const auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), length);
        if (error != std::errc() || end != cell.data() + cell.size() || !(length > 0 && length <= 1e6)) {
          throw LineError(file, line, "length_m: a length in metres, > 0 and <= 1000000, or nothing",
                          json_quoted(cell));
        }
        row.length_m = length;
        break;
      }
      default:
        if (!cell.empty()) {
          row.cable = std::string(cell); // a profile name, checked against the catalog on import
        }
      }
    }
    table.rows.push_back(std::move(row));
  });
  if (column_of.empty()) {
    throw LineError(file, 1, std::string(header_text), "no header");
  }
  return table;
}

} // namespace ib::topo
