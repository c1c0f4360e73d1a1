#include "sim/json_reader.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <utility>

#include "sim/errors.h"

namespace sim {

using nlohmann::json;

namespace {

/// Longest value dump shown in an error message, in bytes.
constexpr std::size_t max_dump_bytes = 60;
/// Deepest nesting of objects and arrays accepted. Real inputs nest under ten levels; far deeper documents are
/// hostile or broken, and code walking them recursively (nlohmann's copies, a reader's descent) would overflow the
/// stack.
constexpr std::size_t max_json_depth = 256;
/// Largest JSON file read, in bytes: a topology of tens of thousands of nodes is tens of megabytes; anything beyond
/// this is not an input (a device such as /dev/zero, a wrong file) and would otherwise be read without bound.
constexpr std::size_t max_json_file_bytes = std::size_t{256} << 20;

/// Longest parse-error reason shown, in bytes.
constexpr std::size_t max_reason_bytes = 160;

[[noreturn]] void fail(const std::string& file, std::string pointer, std::string expected, std::string got) {
  throw InputError(file, std::move(pointer), std::move(expected), std::move(got));
}

/// Cuts `text` to at most `limit` bytes plus "...", never inside a UTF-8 sequence.
std::string truncated(std::string text, std::size_t limit) {
  if (text.size() <= limit) {
    return text;
  }
  std::size_t cut = limit - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  text.resize(cut);
  return text + "...";
}

/// `s` as a JSON string literal; invalid UTF-8 (possible in command-line text) is replaced, never thrown on.
std::string json_quoted(std::string_view s) {
  return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

/// The shortest text that reads back as `d`.
std::string format_double(double d) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, result.ptr);
}

/// "<noun> in [min, max]", or a one-sided bound when the other side is the type's limit.
template <class T>
std::string range_text(std::string_view noun, T min, T max, T lowest, T highest, std::string (*show)(T)) {
  const bool has_min = min > lowest;
  const bool has_max = max < highest;
  std::string text(noun);
  if (has_min && has_max) {
    return text + " in [" + show(min) + ", " + show(max) + "]";
  }
  if (has_min) {
    return text + " >= " + show(min);
  }
  if (has_max) {
    return text + " <= " + show(max);
  }
  return text;
}

std::string show_uint(std::uint64_t v) {
  return std::to_string(v);
}
std::string show_int(std::int64_t v) {
  return std::to_string(v);
}

std::string uint_expectation(std::uint64_t min, std::uint64_t max) {
  // The lower bound is always shown, 0 included: it tells the reader negative numbers are out.
  if (max == std::numeric_limits<std::uint64_t>::max()) {
    return "an integer >= " + show_uint(min);
  }
  return "an integer in [" + show_uint(min) + ", " + show_uint(max) + "]";
}

std::string int_expectation(std::int64_t min, std::int64_t max) {
  return range_text<std::int64_t>("an integer", min, max, std::numeric_limits<std::int64_t>::min(),
                                  std::numeric_limits<std::int64_t>::max(), show_int);
}

std::string double_expectation(double min, double max) {
  return range_text<double>("a number", min, max, std::numeric_limits<double>::lowest(),
                            std::numeric_limits<double>::max(), format_double);
}

std::string enum_expectation(std::span<const std::string_view> choices) {
  std::string text = "one of ";
  for (auto it = choices.begin(); it != choices.end(); ++it) {
    text += (it == choices.begin() ? "" : ", ") + json_quoted(*it);
  }
  return text;
}

std::string elements(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " element" : " elements");
}

std::string array_expectation(std::size_t min, std::size_t max) {
  if (min == max) {
    return "an array of exactly " + elements(min);
  }
  if (max == std::numeric_limits<std::size_t>::max()) {
    return min == 0 ? "an array" : "an array of at least " + elements(min);
  }
  return "an array of " + std::to_string(min) + " to " + elements(max);
}

/// Unit suffixes of duration keys and their length in picoseconds (SI prefixes).
struct DurationSuffix {
  std::string_view suffix;
  std::int64_t unit_ps;
};
constexpr DurationSuffix duration_suffixes[] = {
    {"_ps", 1}, {"_ns", 1'000}, {"_us", 1'000'000}, {"_ms", 1'000'000'000}, {"_s", 1'000'000'000'000}};

const DurationSuffix* find_duration_suffix(std::string_view key) {
  for (const DurationSuffix& s : duration_suffixes) {
    if (key.size() > s.suffix.size() && key.ends_with(s.suffix)) {
      return &s;
    }
  }
  return nullptr;
}

std::string duration_expectation(std::string_view key, Time min, Time max) {
  const DurationSuffix* s = find_duration_suffix(key);
  assert(s != nullptr && "a duration key must end in _ps, _ns, _us, _ms or _s");
  const auto lowest = std::numeric_limits<std::int64_t>::min();
  const auto highest = std::numeric_limits<std::int64_t>::max();
  std::string text = "a duration";
  if (min.ps() > lowest && max.ps() < highest) {
    text += " in [" + format_duration(min, key) + ", " + format_duration(max, key) + "]";
  } else if (min.ps() > lowest) {
    text += " >= " + format_duration(min, key);
  } else if (max.ps() < highest) {
    text += " <= " + format_duration(max, key);
  }
  return text + " " + (s == nullptr ? std::string("ps") : std::string(s->suffix.substr(1)));
}

enum class PsStatus { whole, fractional, overflow };
struct PsValue {
  PsStatus status;
  std::int64_t ps;
};

/// The decimal `digits` × 10^`exponent`, negated when `negative`, as int64 picoseconds.
PsValue decimal_to_ps(bool negative, std::string digits, int exponent) {
  // Trailing zeros only scale: move them into the exponent so a fraction shows as a negative exponent.
  while (!digits.empty() && digits.back() == '0') {
    digits.pop_back();
    ++exponent;
  }
  // Anything left holds a non-zero digit, so this stops before the end.
  digits.erase(0, digits.find_first_not_of('0'));
  if (digits.empty()) {
    return {PsStatus::whole, 0};
  }
  if (exponent < 0) {
    return {PsStatus::fractional, 0};
  }
  // int64 holds at most 19 decimal digits.
  if (digits.size() + static_cast<std::size_t>(exponent) > 19) {
    return {PsStatus::overflow, 0};
  }
  unsigned __int128 magnitude = 0;
  for (char c : digits) {
    magnitude = magnitude * 10 + static_cast<unsigned>(c - '0');
  }
  for (int i = 0; i < exponent; ++i) {
    magnitude *= 10;
  }
  const unsigned __int128 limit =
      static_cast<unsigned __int128>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1 : 0);
  if (magnitude > limit) {
    return {PsStatus::overflow, 0};
  }
  const __int128 value = negative ? -static_cast<__int128>(magnitude) : static_cast<__int128>(magnitude);
  return {PsStatus::whole, static_cast<std::int64_t>(value)};
}

/// A JSON number in units of 10^`unit_digits` ps, converted exactly. A float is taken as the decimal it was
/// written as: its shortest round-trip text, which is what the user typed for up to 15 significant digits.
PsValue json_to_ps(const json& v, std::int64_t unit_ps, int unit_digits) {
  if (v.is_number_unsigned()) {
    const std::uint64_t u = v.get<std::uint64_t>();
    std::int64_t ps = 0;
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
        __builtin_mul_overflow(static_cast<std::int64_t>(u), unit_ps, &ps)) {
      return {PsStatus::overflow, 0};
    }
    return {PsStatus::whole, ps};
  }
  if (v.is_number_integer()) {
    std::int64_t ps = 0;
    if (__builtin_mul_overflow(v.get<std::int64_t>(), unit_ps, &ps)) {
      return {PsStatus::overflow, 0};
    }
    return {PsStatus::whole, ps};
  }
  const std::string text = format_double(v.get<double>());
  std::size_t i = 0;
  const bool negative = text[i] == '-';
  i += negative ? 1 : 0;
  std::string digits;
  int exponent = unit_digits;
  bool after_point = false;
  for (; i < text.size() && text[i] != 'e'; ++i) {
    if (text[i] == '.') {
      after_point = true;
      continue;
    }
    digits += text[i];
    exponent -= after_point ? 1 : 0;
  }
  if (i < text.size()) {
    std::size_t start = i + 1;
    start += text[start] == '+' ? 1 : 0;
    int written_exponent = 0;
    std::from_chars(text.data() + start, text.data() + text.size(), written_exponent);
    exponent += written_exponent;
  }
  return decimal_to_ps(negative, std::move(digits), exponent);
}

/// Number of decimal digits in a power of ten.
int power_of_ten_digits(std::int64_t p) {
  int digits = 0;
  for (; p > 1; p /= 10) {
    ++digits;
  }
  return digits;
}

/// The text after the "[json.exception...] parse error at line L, column C: " prefix, without the "last read"
/// excerpt (we print our own position), cut short.
std::string parse_error_reason(const std::string& what) {
  const std::size_t colon = what.find(": ");
  std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
  const std::size_t last_read = reason.find("; last read: ");
  if (last_read != std::string::npos) {
    const std::size_t expected = reason.rfind("; expected ");
    const std::string tail = expected != std::string::npos && expected > last_read ? reason.substr(expected) : "";
    reason = reason.substr(0, last_read) + tail;
  }
  return truncated(std::move(reason), max_reason_bytes);
}

/// "line L, column C" of the byte at 1-based offset `byte` (one past the end for an early end of input).
std::string position_text(std::string_view text, std::size_t byte) {
  const std::size_t index = std::min(byte == 0 ? 0 : byte - 1, text.size());
  const std::string_view before = text.substr(0, index);
  const std::size_t line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t line_start = before.rfind('\n') == std::string_view::npos ? 0 : before.rfind('\n') + 1;
  return "line " + std::to_string(line) + ", column " + std::to_string(index - line_start + 1);
}

/// Rejects a key seen twice in one object while nlohmann builds the tree (it would keep the last silently).
/// Tracks the path to the value being parsed so the error carries its pointer.
class DuplicateKeyCheck {
public:
  explicit DuplicateKeyCheck(const std::string& file) : file_(file) {}

  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
    case json::parse_event_t::object_start:
      enter_value();
      check_depth();
      frames_.push_back(Frame{false, 0, {}, {}});
      break;
    case json::parse_event_t::array_start:
      enter_value();
      check_depth();
      frames_.push_back(Frame{true, 0, {}, {}});
      break;
    case json::parse_event_t::key: {
      Frame& top = frames_.back();
      top.token = parsed.get<std::string>();
      if (!top.keys.insert(top.token).second) {
        fail(file_, current_pointer(), "unique keys in each object", "duplicate key " + json_quoted(top.token));
      }
      break;
    }
    case json::parse_event_t::value:
      enter_value();
      break;
    case json::parse_event_t::object_end:
    case json::parse_event_t::array_end:
      frames_.pop_back();
      break;
    }
    return true;
  }

private:
  struct Frame {
    bool is_array;
    std::size_t next_index;
    std::string token; // the key, or the index, of the value being parsed
    std::set<std::string> keys;
  };

  void enter_value() {
    if (!frames_.empty() && frames_.back().is_array) {
      frames_.back().token = std::to_string(frames_.back().next_index++);
    }
  }

  void check_depth() const {
    if (frames_.size() >= max_json_depth)
      fail(file_, current_pointer(), "objects and arrays nested at most " + std::to_string(max_json_depth) + " deep",
           "deeper nesting");
  }

  std::string current_pointer() const {
    std::string pointer;
    for (const Frame& f : frames_) {
      pointer = f.is_array ? pointer + "/" + f.token : json_pointer_append(pointer, f.token);
    }
    return pointer;
  }

  const std::string& file_;
  std::vector<Frame> frames_;
};

/// Parses strictly: duplicate keys raise InputError; malformed text raises nlohmann's exception.
json parse_strict(const std::string& file, std::string_view text) {
  DuplicateKeyCheck check(file);
  return json::parse(text.begin(), text.end(), std::ref(check), true, false);
}

/// RFC 6901 array index: "0" or digits without a leading zero; nullopt otherwise or on overflow.
std::optional<std::size_t> parse_index(std::string_view token) {
  if (token.empty() || (token.size() > 1 && token[0] == '0')) {
    return std::nullopt;
  }
  std::size_t index = 0;
  const auto result = std::from_chars(token.data(), token.data() + token.size(), index);
  if (result.ec != std::errc() || result.ptr != token.data() + token.size()) {
    return std::nullopt;
  }
  return index;
}

/// The reference tokens of `pointer` (which starts with '/'), unescaped; nullopt on a stray '~'.
std::optional<std::vector<std::string>> split_pointer(std::string_view pointer) {
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < pointer.size(); ++i) {
    if (pointer[i] == '/') {
      tokens.emplace_back();
    } else if (pointer[i] != '~') {
      tokens.back() += pointer[i];
    } else if (i + 1 < pointer.size() && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
      tokens.back() += pointer[++i] == '0' ? '~' : '/';
    } else {
      return std::nullopt;
    }
  }
  return tokens;
}

std::string place(const std::string& pointer) {
  return pointer.empty() ? "the document root" : pointer;
}

} // namespace

JsonDocument load_json_file(const std::string& path) {
  return parse_json_text(path, read_json_file_text(path));
}

std::string read_json_file_text(const std::string& path) {
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) {
    const int error = errno;
    fail(path, "", "a readable file", std::strerror(error));
  }
  std::string text;
  char buf[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, file.get())) > 0) {
    if (text.size() + n > max_json_file_bytes)
      fail(path, "", "a JSON file of at most " + std::to_string(max_json_file_bytes >> 20) + " MiB", "a larger input");
    text.append(buf, n);
  }
  if (std::ferror(file.get())) {
    const int error = errno;
    fail(path, "", "a readable file", std::strerror(error));
  }
  return text;
}

JsonDocument parse_json_text(std::string file_label, std::string_view text) {
  try {
    json root = parse_strict(file_label, text);
    return JsonDocument{std::move(file_label), std::move(root), ""};
  } catch (const json::parse_error& e) {
    fail(file_label, "", "valid JSON",
         "parse error at " + position_text(text, e.byte) + ": " + parse_error_reason(e.what()));
  } catch (const json::exception& e) {
    // Number overflow (1e400) carries no position.
    const std::string what = e.what();
    const std::size_t bracket = what.find("] ");
    fail(file_label, "", "valid JSON", bracket == std::string::npos ? what : what.substr(bracket + 2));
  }
}

std::string json_pointer_append(std::string_view pointer, std::string_view key) {
  std::string result(pointer);
  result += '/';
  for (char c : key) {
    result += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  }
  return result;
}

std::string json_pointer_append(std::string_view pointer, std::size_t index) {
  return std::string(pointer) + "/" + std::to_string(index);
}

std::string describe_json_value(const json& v) {
  switch (v.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return v.get<bool>() ? "boolean true" : "boolean false";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
  case json::value_t::number_float:
    return "number " + v.dump();
  case json::value_t::string:
    return "string " + truncated(v.dump(-1, ' ', false, json::error_handler_t::replace), max_dump_bytes);
  case json::value_t::object:
    return "object";
  case json::value_t::array:
    return "array of " + std::to_string(v.size());
  case json::value_t::binary:
    return "binary data";
  case json::value_t::discarded:
    return "nothing";
  }
  return "nothing";
}

std::int64_t duration_unit_ps(std::string_view key) {
  const DurationSuffix* s = find_duration_suffix(key);
  return s == nullptr ? 0 : s->unit_ps;
}

std::string format_duration(Time t, std::string_view key) {
  assert(duration_unit_ps(key) > 0 && "a duration key must end in _ps, _ns, _us, _ms or _s");
  // Without NDEBUG the assert stops a suffix-less key; with it, picoseconds keep the arithmetic defined.
  const std::int64_t unit_ps = std::max<std::int64_t>(duration_unit_ps(key), 1);
  // Work on the magnitude as unsigned so the most negative Time has one too.
  const bool negative = t.ps() < 0;
  const std::uint64_t magnitude =
      negative ? 0 - static_cast<std::uint64_t>(t.ps()) : static_cast<std::uint64_t>(t.ps());
  const auto unit = static_cast<std::uint64_t>(unit_ps);
  // Built by appending: GCC 12 warns falsely (-Wrestrict, bug 105329) on "literal" + std::string here.
  std::string text = negative ? "-" : "";
  text += std::to_string(magnitude / unit);
  if (magnitude % unit != 0) {
    std::string fraction = std::to_string(magnitude % unit);
    fraction.insert(0, static_cast<std::size_t>(power_of_ten_digits(unit_ps)) - fraction.size(), '0');
    fraction.erase(fraction.find_last_not_of('0') + 1);
    text += '.';
    text += fraction;
  }
  return text;
}

JsonObjectReader::JsonObjectReader(std::string file, const json& value, std::string pointer)
    : file_(std::move(file)), value_(&value), pointer_(std::move(pointer)) {
  if (!value.is_object()) {
    fail(file_, pointer_, "an object", describe_json_value(value));
  }
}

bool JsonObjectReader::has(std::string_view key) const {
  return value_->find(key) != value_->end();
}

std::string JsonObjectReader::pointer_to(std::string_view key) const {
  return json_pointer_append(pointer_, key);
}

const json* JsonObjectReader::lookup(std::string_view key) {
  if (std::find(asked_.begin(), asked_.end(), key) == asked_.end()) {
    asked_.emplace_back(key);
  }
  const auto it = value_->find(key);
  return it == value_->end() ? nullptr : &*it;
}

const json& JsonObjectReader::lookup_required(std::string_view key, const std::string& expected) {
  const json* v = lookup(key);
  if (v == nullptr) {
    fail(file_, pointer_to(key), expected + " (required key " + json_quoted(key) + ")", "nothing");
  }
  return *v;
}

std::uint64_t JsonObjectReader::required_uint(std::string_view key, std::uint64_t min, std::uint64_t max) {
  lookup_required(key, uint_expectation(min, max));
  return *optional_uint(key, min, max);
}

std::optional<std::uint64_t> JsonObjectReader::optional_uint(std::string_view key, std::uint64_t min,
                                                             std::uint64_t max) {
  assert(min <= max);
  const json* v = lookup(key);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (v->is_number_unsigned() || (v->is_number_integer() && v->get<std::int64_t>() >= 0)) {
    const std::uint64_t u = v->get<std::uint64_t>();
    if (u >= min && u <= max) {
      return u;
    }
  }
  fail(file_, pointer_to(key), uint_expectation(min, max), describe_json_value(*v));
}

std::int64_t JsonObjectReader::required_int(std::string_view key, std::int64_t min, std::int64_t max) {
  lookup_required(key, int_expectation(min, max));
  return *optional_int(key, min, max);
}

std::optional<std::int64_t> JsonObjectReader::optional_int(std::string_view key, std::int64_t min, std::int64_t max) {
  assert(min <= max);
  const json* v = lookup(key);
  if (v == nullptr) {
    return std::nullopt;
  }
  const bool fits = v->is_number_integer() &&
                    (!v->is_number_unsigned() ||
                     v->get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
  if (fits) {
    const std::int64_t i = v->get<std::int64_t>();
    if (i >= min && i <= max) {
      return i;
    }
  }
  fail(file_, pointer_to(key), int_expectation(min, max), describe_json_value(*v));
}

double JsonObjectReader::required_double(std::string_view key, double min, double max) {
  lookup_required(key, double_expectation(min, max));
  return *optional_double(key, min, max);
}

std::optional<double> JsonObjectReader::optional_double(std::string_view key, double min, double max) {
  assert(min <= max);
  const json* v = lookup(key);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (v->is_number()) {
    const double d = v->get<double>();
    if (std::isfinite(d) && d >= min && d <= max) {
      return d;
    }
  }
  fail(file_, pointer_to(key), double_expectation(min, max), describe_json_value(*v));
}

bool JsonObjectReader::required_bool(std::string_view key) {
  lookup_required(key, "a boolean");
  return *optional_bool(key);
}

std::optional<bool> JsonObjectReader::optional_bool(std::string_view key) {
  const json* v = lookup(key);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->is_boolean()) {
    fail(file_, pointer_to(key), "a boolean", describe_json_value(*v));
  }
  return v->get<bool>();
}

std::string JsonObjectReader::required_string(std::string_view key) {
  lookup_required(key, "a non-empty string");
  return *optional_string(key);
}

std::optional<std::string> JsonObjectReader::optional_string(std::string_view key) {
  const json* v = lookup(key);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->is_string() || v->get_ref<const std::string&>().empty()) {
    fail(file_, pointer_to(key), "a non-empty string", describe_json_value(*v));
  }
  return v->get<std::string>();
}

std::string JsonObjectReader::required_enum(std::string_view key, std::initializer_list<std::string_view> choices) {
  return required_enum(key, std::span<const std::string_view>(choices.begin(), choices.size()));
}

std::string JsonObjectReader::required_enum(std::string_view key, std::span<const std::string_view> choices) {
  lookup_required(key, enum_expectation(choices));
  return *optional_enum(key, choices);
}

std::optional<std::string> JsonObjectReader::optional_enum(std::string_view key,
                                                           std::initializer_list<std::string_view> choices) {
  return optional_enum(key, std::span<const std::string_view>(choices.begin(), choices.size()));
}

std::optional<std::string> JsonObjectReader::optional_enum(std::string_view key,
                                                           std::span<const std::string_view> choices) {
  const json* v = lookup(key);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (v->is_string() && std::find(choices.begin(), choices.end(), v->get_ref<const std::string&>()) != choices.end()) {
    return v->get<std::string>();
  }
  fail(file_, pointer_to(key), enum_expectation(choices), describe_json_value(*v));
}

Time JsonObjectReader::required_duration(std::string_view key, Time min, Time max) {
  lookup_required(key, duration_expectation(key, min, max));
  return *optional_duration(key, min, max);
}

std::optional<Time> JsonObjectReader::optional_duration(std::string_view key, Time min, Time max) {
  assert(min <= max);
  const std::string expected = duration_expectation(key, min, max);
  const json* v = lookup(key);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (v->is_number()) {
    const std::int64_t unit_ps = std::max<std::int64_t>(duration_unit_ps(key), 1);
    const PsValue value = json_to_ps(*v, unit_ps, power_of_ten_digits(unit_ps));
    if (value.status == PsStatus::fractional) {
      fail(file_, pointer_to(key), "a duration in whole picoseconds", describe_json_value(*v));
    }
    const Time t = Time::from_ps(value.ps);
    if (value.status == PsStatus::whole && t >= min && t <= max) {
      return t;
    }
  }
  fail(file_, pointer_to(key), expected, describe_json_value(*v));
}

JsonObjectReader JsonObjectReader::required_object(std::string_view key) {
  return JsonObjectReader(file_, lookup_required(key, "an object"), pointer_to(key));
}

std::optional<JsonObjectReader> JsonObjectReader::optional_object(std::string_view key) {
  const json* v = lookup(key);
  if (v == nullptr) {
    return std::nullopt;
  }
  return JsonObjectReader(file_, *v, pointer_to(key));
}

const json& JsonObjectReader::required_array(std::string_view key, std::size_t min_size, std::size_t max_size) {
  lookup_required(key, array_expectation(min_size, max_size));
  return *optional_array(key, min_size, max_size);
}

const json* JsonObjectReader::optional_array(std::string_view key, std::size_t min_size, std::size_t max_size) {
  assert(min_size <= max_size);
  const json* v = lookup(key);
  if (v == nullptr) {
    return nullptr;
  }
  if (!v->is_array() || v->size() < min_size || v->size() > max_size) {
    fail(file_, pointer_to(key), array_expectation(min_size, max_size), describe_json_value(*v));
  }
  return v;
}

void JsonObjectReader::skip(std::string_view key) {
  lookup(key);
}

void JsonObjectReader::finish() const {
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    if (std::find(asked_.begin(), asked_.end(), it.key()) != asked_.end()) {
      continue;
    }
    std::string expected = asked_.empty() ? "no keys in this object" : "one of the keys ";
    for (std::size_t i = 0; i < asked_.size(); ++i) {
      expected += (i == 0 ? "" : ", ") + asked_[i];
    }
    fail(file_, pointer_to(it.key()), std::move(expected), "unknown key " + json_quoted(it.key()));
  }
}

void apply_override(json& root, std::string_view assignment, const std::string& source_label) {
  const std::size_t equals = assignment.find('=');
  const std::string pointer(assignment.substr(0, equals));
  if (equals == std::string_view::npos || pointer.empty() || pointer[0] != '/') {
    fail(source_label, pointer, "\"/json/pointer=value\"", json_quoted(assignment));
  }
  const std::optional<std::vector<std::string>> tokens = split_pointer(pointer);
  if (!tokens) {
    fail(source_label, pointer, "a JSON pointer with '~' written only as ~0 or ~1", json_quoted(pointer));
  }
  const std::string parent_pointer = pointer.substr(0, pointer.rfind('/'));
  const std::string parent_expected = "an existing object or array at " + place(parent_pointer);

  // A value that is not valid JSON is a plain string; one with a duplicate key is an error, as in files. Parsed
  // before walking the pointer, which may create objects, so that a failed override leaves the document as it was.
  json value;
  const std::string_view value_text = assignment.substr(equals + 1);
  try {
    value = parse_strict(source_label, value_text);
  } catch (const json::exception&) {
    value = std::string(value_text);
  } catch (const InputError& e) {
    fail(source_label, pointer + e.json_pointer(), e.expected(), e.got());
  }

  json* parent = &root;
  std::string reached; // the pointer of *parent, re-escaped
  for (std::size_t i = 0; i + 1 < tokens->size(); ++i) {
    const std::string& token = (*tokens)[i];
    const std::string next = json_pointer_append(reached, token);
    if (parent->is_object()) {
      // A missing member becomes an object ("/profiles/cx4/x" on a scenario without "profiles"); a misspelt key
      // still fails, as an unknown key, when the document is read.
      parent = &(*parent)[token];
      if (parent->is_null()) {
        *parent = json::object();
      }
    } else if (parent->is_array()) {
      const std::optional<std::size_t> index = parse_index(token);
      if (!index || *index >= parent->size()) {
        fail(source_label, pointer, parent_expected, "nothing at " + next);
      }
      parent = &(*parent)[*index];
    } else {
      fail(source_label, pointer, parent_expected, describe_json_value(*parent) + " at " + place(reached));
    }
    reached = next;
  }

  const std::string& key = tokens->back();
  if (parent->is_object()) {
    (*parent)[key] = std::move(value);
  } else if (parent->is_array()) {
    const std::optional<std::size_t> index = parse_index(key);
    if (!index || *index >= parent->size()) {
      fail(source_label, pointer,
           parent->empty() ? "an index into the array at " + place(parent_pointer) + ", which is empty"
                           : "an index in [0, " + std::to_string(parent->size() - 1) + "] into the array at " +
                                 place(parent_pointer),
           json_quoted(key));
    }
    (*parent)[*index] = std::move(value);
  } else {
    fail(source_label, pointer, parent_expected, describe_json_value(*parent));
  }
}

} // namespace sim
