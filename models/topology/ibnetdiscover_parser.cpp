// The line parser of ibnetdiscover output and ibsim net files (formats: ibnetdiscover_import.cpp).
#include "models/topology/ibnetdiscover_parser.h"

#include <algorithm>
#include <charconv>

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
    std::size_t start = 0;
    while (start <= text_.size()) {
      std::size_t end = text_.find('\n', start);
      if (end == std::string_view::npos) {
        end = text_.size();
      }
      ++line_;
      std::string_view line = text_.substr(start, end - start);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
        line.remove_suffix(1);
      }
      parse_line(line);
      if (end == text_.size()) {
        break;
      }
      start = end + 1;
    }
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
    } else if (line.starts_with("vendid") || line.starts_with("devid")) {
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
    Block block{line_,        kind, static_cast<unsigned>(*ports), std::string(*id), description(c.rest()), 0, 0,
                std::nullopt, {}};
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
    system_image_guid_.reset();
    switch_port_guid_.reset();
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
  std::optional<std::uint64_t> switch_port_guid_;
  NetDefaults net_;
};

} // namespace

ParsedNet parse(std::string_view text, const std::string& file) {
  return Parser(text, file).parse();
}

} // namespace ibnetdiscover_detail

} // namespace ib::topo
