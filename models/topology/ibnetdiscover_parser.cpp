// The line parser of ibnetdiscover output and ibsim net files (formats: ibnetdiscover_import.cpp).
#include "models/topology/ibnetdiscover_parser.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

namespace ib::topo {

LineError::LineError(std::string file, unsigned line, std::string expected, std::string got)
    : sim::InputError(file, "", expected, got), line_(line),
      message_(file + ":" + std::to_string(line) + ": expected " + expected + ", got " + got) {}

namespace ibnetdiscover_detail {

std::string json_quoted(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

link::Width NetDefaults::width() const {
  if (width_mask & 8) {
    return link::Width::x12;
  }
  if (width_mask & 4) {
    return link::Width::x8;
  }
  if (width_mask & 2) {
    return link::Width::x4;
  }
  return width_mask & 16 ? link::Width::x2 : link::Width::x1;
}

link::Speed NetDefaults::speed() const {
  if (extspeed_mask != 0) {
    return extspeed_mask & 8   ? link::Speed::ndr
           : extspeed_mask & 4 ? link::Speed::hdr
           : extspeed_mask & 2 ? link::Speed::edr
                               : link::Speed::fdr;
  }
  return speed_mask & 4 ? link::Speed::qdr : speed_mask & 2 ? link::Speed::ddr : link::Speed::sdr;
}

namespace {

/// A position in one line.
struct Cursor {
  std::string_view text;
  std::size_t at = 0;

  bool done() const { return at >= text.size(); }
  char peek() const { return done() ? '\0' : text[at]; }
  void skip_space() {
    while (!done() && (text[at] == ' ' || text[at] == '\t')) {
      ++at;
    }
  }
  bool take(char c) {
    if (peek() != c) {
      return false;
    }
    ++at;
    return true;
  }
  bool take(std::string_view s) {
    if (text.substr(at, s.size()) != s) {
      return false;
    }
    at += s.size();
    return true;
  }
  std::optional<std::uint64_t> number(int base) {
    std::uint64_t value = 0;
    const char* begin = text.data() + at;
    const auto [end, error] = std::from_chars(begin, text.data() + text.size(), value, base);
    if (error != std::errc() || end == begin) {
      return std::nullopt;
    }
    at += static_cast<std::size_t>(end - begin);
    return value;
  }
  /// "0x..." or decimal, as strtoull(s, NULL, 0) reads GUID lines.
  std::optional<std::uint64_t> c_number() {
    if (take("0x") || take("0X")) {
      return number(16);
    }
    return number(10);
  }
  std::optional<std::string_view> quoted_text() {
    if (!take('"')) {
      return std::nullopt;
    }
    const std::size_t close = text.find('"', at);
    if (close == std::string_view::npos) {
      return std::nullopt;
    }
    const std::string_view inside = text.substr(at, close - at);
    at = close + 1;
    return inside;
  }
  std::string_view rest() const { return done() ? std::string_view() : text.substr(at); }
};

class Parser {
public:
  Parser(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  ParsedNet parse() {
    for_each_line(text_, [this](unsigned number, std::string_view line) {
      line_ = number;
      parse_line(line);
    });
    return ParsedNet{std::move(blocks_), net_};
  }

private:
  [[noreturn]] void fail(std::string expected, std::string got) const {
    throw LineError(file_, line_, std::move(expected), std::move(got));
  }

  void parse_line(std::string_view line) {
    if (line.empty()) {
      in_block_ = false;
      return;
    }
    if (line[0] == '#') {
      return;
    }
    if (line[0] == '[') {
      if (!in_block_) {
        fail("a port line inside a Switch or Ca block", json_quoted(line));
      }
      blocks_.back().port_lines.push_back(port_line(line, blocks_.back()));
      return;
    }
    in_block_ = false;
    if (starts_word(line, "Switch")) {
      node_line(line, NodeKind::switch_node, 6);
    } else if (starts_word(line, "Ca")) {
      node_line(line, NodeKind::hca, 2);
    } else if (starts_word(line, "Hca")) {
      node_line(line, NodeKind::hca, 3);
    } else if (starts_word(line, "Rt") || starts_word(line, "Router")) {
      fail("a Switch or Ca node (routers are not modelled)", json_quoted(line));
    } else if (line.starts_with("switchguid")) {
      guid_base(line, NodeKind::switch_node);
    } else if (line.starts_with("caguid") || line.starts_with("hcaguids")) {
      guid_base(line, NodeKind::hca);
    } else if (line.starts_with("rtguid")) {
      (void)assignment(line); // routers are refused at their Rt line
    } else if (line.starts_with("sysimgguid")) {
      system_image_guid_ = assignment(line);
    } else if (line.starts_with("devid")) {
      const std::uint64_t id = assignment(line);
      if (id > 0xffff)
        fail("a 16-bit device ID (NodeInfo.DeviceID)", json_quoted(line));
      device_id_ = static_cast<std::uint16_t>(id);
    } else if (line.starts_with("vendid")) {
      (void)assignment(line);
    } else if (line.starts_with("width")) {
      net_.width_mask = static_cast<unsigned>(assignment(line));
    } else if (line.starts_with("extspeed")) {
      net_.extspeed_mask = static_cast<unsigned>(assignment(line));
    } else if (line.starts_with("speed")) {
      net_.speed_mask = static_cast<unsigned>(assignment(line));
    } else if (line.starts_with("Chassis") || line.starts_with("Non-Chassis") || line.starts_with("Hostname:")) {
      return; // ibnetdiscover -g grouping headers
    } else {
      fail("a Switch, Ca or port line, a comment, or a vendid=, devid=, sysimgguid=, switchguid= or caguid= line",
           json_quoted(line));
    }
  }

  static bool starts_word(std::string_view line, std::string_view word) {
    return line.starts_with(word) && line.size() > word.size() &&
           (line[word.size()] == ' ' || line[word.size()] == '\t');
  }

  /// The number after '=' in "key=0x..." (a "(...)" port GUID may follow switchguid=).
  std::uint64_t assignment(std::string_view line) {
    Cursor c{line, line.find('=')};
    if (c.at == std::string_view::npos || !c.take('=')) {
      fail("key=value", json_quoted(line));
    }
    c.skip_space();
    const auto value = c.c_number();
    if (!value) {
      fail("a number after '='", json_quoted(line));
    }
    if (c.take('(')) {
      const auto port_guid = c.number(16);
      if (!port_guid || !c.take(')')) {
        fail("a port GUID in parentheses, as in switchguid=0x2c90200487730(2c90200487730)", json_quoted(line));
      }
      switch_port_guid_ = port_guid;
    }
    return *value;
  }

  void guid_base(std::string_view line, NodeKind kind) {
    // ibsim: "key=N" sets the next node's GUID; "key+N" offsets from the last one set.
    const std::size_t plus = line.find('+');
    if (plus != std::string_view::npos && line.find('=') == std::string_view::npos) {
      Cursor c{line, plus + 1};
      const auto offset = c.c_number();
      if (!offset) {
        fail("a number after '+'", json_quoted(line));
      }
      next_guid(kind) = base_guid(kind) + *offset;
      return;
    }
    base_guid(kind) = assignment(line);
    next_guid(kind) = base_guid(kind);
  }

  std::uint64_t& next_guid(NodeKind kind) { return next_guid_[kind == NodeKind::hca ? 0 : 1]; }
  std::uint64_t& base_guid(NodeKind kind) { return base_guid_[kind == NodeKind::hca ? 0 : 1]; }

  void node_line(std::string_view line, NodeKind kind, std::size_t keyword) {
    Cursor c{line, keyword};
    c.skip_space();
    const auto ports = c.number(10);
    if (!ports || *ports < 1 || *ports > max_port_count) {
      fail("a port count in [1, " + std::to_string(max_port_count) + "] after the node type", json_quoted(line));
    }
    c.skip_space();
    const auto id = c.quoted_text();
    if (!id || id->empty()) {
      fail("a quoted node id after the port count, as in Switch 36 \"S-0002c90200487730\"", json_quoted(line));
    }
    Block block{line_,
                kind,
                static_cast<unsigned>(*ports),
                std::string(*id),
                description(c.rest()),
                0,
                0,
                std::nullopt,
                std::nullopt,
                {},
                false,
                {}};
    block.guid = next_guid(kind);
    if (block.guid == 0) {
      fail("a node GUID (from a switchguid= or caguid= line) other than 0", "GUID 0");
    }
    // ibsim reserves one GUID per switch and one per HCA plus one per port (port p = node GUID + p).
    next_guid(kind) += kind == NodeKind::switch_node ? 1 : *ports + 1;
    block.system_image_guid = system_image_guid_.value_or(block.guid);
    if (kind == NodeKind::switch_node) {
      block.port0_guid = switch_port_guid_;
    }
    block.device_id = device_id_;
    system_image_guid_.reset();
    switch_port_guid_.reset();
    device_id_.reset();
    blocks_.push_back(std::move(block));
    in_block_ = true;
  }

  /// The description after '#': the quoted text (up to its last quote), or ibsim's unquoted form.
  static std::string description(std::string_view rest) {
    const std::size_t hash = rest.find('#');
    if (hash == std::string_view::npos) {
      return "";
    }
    std::string_view text = rest.substr(hash + 1);
    text.remove_prefix(std::min(text.find_first_not_of(" \t"), text.size()));
    if (!text.empty() && text[0] == '"') {
      const std::size_t close = text.rfind('"');
      return close == 0 ? std::string(text.substr(1)) : std::string(text.substr(1, close - 1));
    }
    for (const std::string_view stop : {" enhanced port ", " base port ", " lid ", " lmc "}) {
      text = text.substr(0, text.find(stop));
    }
    return std::string(text);
  }

  PortLine port_line(std::string_view line, const Block& block) {
    Cursor c{line, 0};
    PortLine p{line_, 0, "", 1, std::nullopt, std::nullopt, std::nullopt};
    c.take('[');
    const auto port = c.number(10);
    if (!port || !c.take(']')) {
      fail("a port line \"[PORT] ...\"", json_quoted(line));
    }
    if (*port < 1 || *port > block.ports) {
      fail("a port of " + json_quoted(block.id) + " in [1, " + std::to_string(block.ports) + "]",
           "port " + std::to_string(*port));
    }
    p.port = static_cast<unsigned>(*port);
    skip_ext(c);
    if (c.take('(')) {
      p.guid = c.number(16);
      if (!p.guid || !c.take(')')) {
        fail("a port GUID in parentheses after the port number", json_quoted(line));
      }
    }
    c.skip_space();
    const auto remote = c.quoted_text();
    if (!remote || remote->empty()) {
      fail("a quoted remote node id after the port, as in [1] \"S-0002c90200487730\"[3]", json_quoted(line));
    }
    p.remote_id = std::string(*remote);
    if (c.take('[')) {
      const auto remote_port = c.number(10);
      if (!remote_port || !c.take(']') || *remote_port < 1 || *remote_port > max_port_count) {
        fail("a remote port number in [1, " + std::to_string(max_port_count) + "] in brackets", json_quoted(line));
      }
      p.remote_port = static_cast<unsigned>(*remote_port);
    }
    link_type(c.rest(), p);
    return p;
  }

  static void skip_ext(Cursor& c) {
    if (c.take("[ext ")) {
      c.number(10);
      c.take(']');
    }
  }

  /// The "4xEDR" after '#' (after the remote description, which is quoted): width and speed.
  void link_type(std::string_view rest, PortLine& p) const {
    const std::size_t hash = rest.find('#');
    if (hash == std::string_view::npos) {
      return;
    }
    std::string_view text = rest.substr(hash + 1);
    const std::size_t last_quote = text.rfind('"');
    if (last_quote != std::string_view::npos) {
      text = text.substr(last_quote + 1);
    }
    std::size_t at = 0;
    while (at < text.size()) {
      const std::size_t start = text.find_first_not_of(" \t", at);
      if (start == std::string_view::npos) {
        break;
      }
      const std::size_t end = std::min(text.find_first_of(" \t", start), text.size());
      const std::string_view token = text.substr(start, end - start);
      at = end;
      // "4xEDR": a width, then something that is not a number (so "0x1f" is not taken for one).
      const std::size_t x = token.find('x');
      if (x == std::string_view::npos || x + 1 >= token.size() || !link::parse_width(token.substr(0, x + 1)) ||
          (token[x + 1] >= '0' && token[x + 1] <= '9')) {
        continue;
      }
      p.width = link::parse_width(token.substr(0, x + 1));
      p.speed = link::parse_speed(token.substr(x + 1));
      if (!p.speed) {
        fail("a link width and speed such as 4xEDR (widths 1x, 2x, 4x, 8x, 12x; speeds SDR to NDR)",
             json_quoted(token));
      }
      return;
    }
  }

  std::string_view text_;
  const std::string& file_;
  unsigned line_ = 0;
  bool in_block_ = false;
  std::vector<Block> blocks_;
  // ibsim's first GUIDs (sim_net.c absguids): HCAs from 0x100000, switches from 0x200000.
  std::uint64_t base_guid_[2] = {0x100000, 0x200000};
  std::uint64_t next_guid_[2] = {0x100000, 0x200000};
  std::optional<std::uint64_t> system_image_guid_;
  std::optional<std::uint16_t> device_id_;
  std::optional<std::uint64_t> switch_port_guid_;
  NetDefaults net_;
};

// ---- ports report (ibnetdiscover -p) -----------------------------------------------------------------------
// One line per port that has a link, each link so twice, one from each end:
//   CA   134  1 0x7cfe9003003b4bde 4x EDR - SW  1719 10 0x7cfe9003009ce5b0 ( 'o0001 HCA-1' - 'ib-i1l1s01' )
// node type, LID, port, port GUID, width, speed, then the remote end likewise and both node descriptions. Port
// counts and CA node GUIDs are not printed. A switch's ports all show its one port GUID, which is its node GUID;
// a CA is the ports with one description whose GUID minus port number agree (mlx4: port p = node GUID + p; mlx5:
// one port per CA), and takes its lowest port's GUID as its node GUID.

/// One end as a ports report line gives it.
struct ReportEnd {
  NodeKind kind;
  unsigned port;
  std::uint64_t guid;
  std::string description;
};

struct ReportLine {
  unsigned line;
  ReportEnd local;
  std::optional<ReportEnd> remote;
  link::Width width;
  link::Speed speed;
};

/// True when `line` opens a ports report line: "CA", "SW" or "RT", blanks, a LID.
bool is_report_line(std::string_view line) {
  if (!(line.starts_with("CA") || line.starts_with("SW") || line.starts_with("RT"))) {
    return false;
  }
  const std::size_t digit = line.find_first_not_of(" \t", 2);
  return digit > 2 && digit != std::string_view::npos && line[digit] >= '0' && line[digit] <= '9';
}

class ReportParser {
public:
  ReportParser(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  ParsedNet parse() {
    std::vector<ReportLine> lines;
    for_each_line(text_, [&](unsigned number, std::string_view line) {
      line_ = number;
      if (!line.empty() && line[0] != '#')
        lines.push_back(report_line(line));
    });
    return nodes(lines);
  }

private:
  [[noreturn]] void fail(std::string expected, std::string got) const {
    throw LineError(file_, line_, std::move(expected), std::move(got));
  }

  /// "CA   134  1 0x7cfe9003003b4bde": a node type, a LID, a port and a port GUID.
  ReportEnd end(Cursor& c, std::string_view line) const {
    ReportEnd e{NodeKind::hca, 0, 0, ""};
    if (c.take("SW")) {
      e.kind = NodeKind::switch_node;
    } else if (c.take("RT")) {
      fail("a CA or SW port (routers are not modelled)", json_quoted(line));
    } else if (!c.take("CA")) {
      fail("a port of a CA or SW node", json_quoted(line));
    }
    c.skip_space();
    const auto lid = c.number(10);
    c.skip_space();
    const auto port = c.number(10);
    c.skip_space();
    const auto guid = c.take("0x") ? c.number(16) : std::nullopt;
    if (!lid || !port || !guid || *port < 1 || *port > max_port_count || *guid == 0) {
      fail("a ports report line: type, LID, port in [1, " + std::to_string(max_port_count) +
               "] and port GUID, as in CA 134 1 0x7cfe9003003b4bde 4x EDR - SW 1719 10 0x7cfe9003009ce5b0 ( 'a' - "
               "'b' )",
           json_quoted(line));
    }
    e.port = static_cast<unsigned>(*port);
    e.guid = *guid;
    return e;
  }

  std::string_view token(Cursor& c) const {
    c.skip_space();
    const std::size_t from = c.at;
    while (!c.done() && c.peek() != ' ' && c.peek() != '\t') {
      ++c.at;
    }
    return c.text.substr(from, c.at - from);
  }

  ReportLine report_line(std::string_view line) {
    if (!is_report_line(line)) {
      fail("a ports report line (ibnetdiscover -p): CA or SW, LID, port, GUID, width, speed, the remote port and "
           "the descriptions",
           json_quoted(line));
    }
    Cursor c{line, 0};
    ReportLine r{line_, end(c, line), std::nullopt, link::Width::x4, link::Speed::sdr};
    const std::string_view width = token(c);
    const std::string_view speed = token(c);
    const auto w = link::parse_width(width);
    const auto s = link::parse_speed(speed);
    if (!w || !s) {
      fail("a link width and speed such as 4x EDR (widths 1x, 2x, 4x, 8x, 12x; speeds SDR to NDR)",
           json_quoted(std::string(width) + " " + std::string(speed)));
    }
    r.width = *w;
    r.speed = *s;
    c.skip_space();
    if (c.take('-')) {
      c.skip_space();
      r.remote = end(c, line);
    }
    // "( 'local description' - 'remote description' )": from the first "'" to the last; descriptions may hold
    // anything but the separator "' - '", which is taken at its first appearance.
    c.skip_space();
    const std::string_view rest = c.rest();
    const std::size_t open = rest.find('\'');
    const std::size_t close = rest.rfind('\'');
    if (!rest.starts_with("(") || !rest.ends_with(")") || open == std::string_view::npos || close <= open) {
      fail("the node descriptions in parentheses, as in ( 'o0001 HCA-1' - 'ib-i1l1s01' )", json_quoted(line));
    }
    const std::string_view inside = rest.substr(open + 1, close - open - 1);
    const std::size_t separator = inside.find("' - '");
    if (r.remote && separator == std::string_view::npos) {
      fail("both node descriptions, as in ( 'o0001 HCA-1' - 'ib-i1l1s01' )", json_quoted(line));
    }
    r.local.description = std::string(r.remote ? inside.substr(0, separator) : inside);
    if (r.remote) {
      r.remote->description = std::string(inside.substr(separator + 5));
    }
    return r;
  }

  /// The node of an end: a switch by its GUID, a CA by its description and GUID minus port number.
  using Key = std::tuple<NodeKind, std::string, std::uint64_t>;
  static Key key_of(const ReportEnd& e) {
    if (e.kind == NodeKind::switch_node) {
      return {e.kind, "", e.guid};
    }
    return {e.kind, e.description, e.guid - e.port};
  }

  ParsedNet nodes(const std::vector<ReportLine>& lines) const {
    std::map<Key, std::size_t> index;
    std::vector<Block> blocks;
    std::vector<unsigned> lowest_port;
    const auto node_of = [&](const ReportEnd& e, unsigned line) {
      const auto [it, added] = index.emplace(key_of(e), blocks.size());
      if (added) {
        blocks.push_back(
            Block{line, e.kind, 0, "", e.description, e.guid, 0, std::nullopt, std::nullopt, {}, true, {}});
        lowest_port.push_back(e.port);
      }
      Block& b = blocks[it->second];
      b.ports = std::max(b.ports, e.port);
      if (e.kind == NodeKind::hca) {
        b.port_guids[e.port] = e.guid;
        if (e.port < lowest_port[it->second]) {
          lowest_port[it->second] = e.port;
          b.guid = e.guid;
        }
      }
      return it->second;
    };
    for (const ReportLine& r : lines) {
      node_of(r.local, r.line);
      if (r.remote) {
        node_of(*r.remote, r.line);
      }
    }
    for (Block& b : blocks) {
      b.system_image_guid = b.guid;
      char id[24];
      std::snprintf(id, sizeof id, "%c-%016llx", b.kind == NodeKind::switch_node ? 'S' : 'H',
                    static_cast<unsigned long long>(b.guid));
      b.id = id;
      // A CA's port count is what the report shows; a switch's is its profile's, which the importer checks.
      b.ports_from_profile = b.kind == NodeKind::switch_node;
    }
    for (const ReportLine& r : lines) {
      if (!r.remote) {
        continue; // a port without a link
      }
      Block& local = blocks[index.at(key_of(r.local))];
      const Block& remote = blocks[index.at(key_of(*r.remote))];
      local.port_lines.push_back(PortLine{r.line, r.local.port, remote.id, r.remote->port,
                                          r.local.kind == NodeKind::hca ? std::optional(r.local.guid) : std::nullopt,
                                          r.width, r.speed});
    }
    return ParsedNet{std::move(blocks), NetDefaults{}};
  }

  std::string_view text_;
  const std::string& file_;
  unsigned line_ = 0;
};

} // namespace

ParsedNet parse(std::string_view text, const std::string& file) {
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') {
      continue;
    }
    if (is_report_line(line)) {
      return ReportParser(text, file).parse();
    }
    break;
  }
  return Parser(text, file).parse();
}

} // namespace ibnetdiscover_detail

} // namespace ib::topo
