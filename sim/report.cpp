#include "sim/report.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <ostream>
#include <sstream>
#include <sys/resource.h>
#include <vector>

namespace sim {

namespace {

std::string scalar_text(const ReportJson& value) {
  if (value.is_string())
    return value.get<std::string>();
  return value.dump();
}

void flatten(const ReportJson& value, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out) {
  if (value.is_object()) {
    for (const auto& [key, child] : value.items())
      flatten(child, prefix.empty() ? key : prefix + "." + key, out);
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i)
      flatten(value[i], prefix + "." + std::to_string(i), out);
  } else {
    out.emplace_back(prefix, scalar_text(value));
  }
}

} // namespace

bool parse_report_format(std::string_view text, ReportFormat& format) {
  if (text == "table")
    format = ReportFormat::table;
  else if (text == "json")
    format = ReportFormat::json;
  else if (text == "csv")
    format = ReportFormat::csv;
  else if (text == "long-csv")
    format = ReportFormat::long_csv;
  else
    return false;
  return true;
}

std::string report_to_json(const ReportJson& report) {
  return report.dump(2) + "\n";
}

namespace {

/// nlohmann's serializer writes a report a token at a time; its own stream adapter makes each token an ostream
/// write (a sentry, a virtual call), which costs more than the formatting. This one gathers them in a buffer.
class BufferedStream final : public nlohmann::detail::output_adapter_protocol<char> {
public:
  explicit BufferedStream(std::ostream& out) : out_(out) {}
  ~BufferedStream() override { flush(); }
  void write_character(char c) override {
    if (used_ == buffer_.size())
      flush();
    buffer_[used_++] = c;
  }
  void write_characters(const char* s, std::size_t length) override {
    if (length > buffer_.size() - used_) {
      flush();
      if (length > buffer_.size()) {
        out_.write(s, static_cast<std::streamsize>(length));
        return;
      }
    }
    std::copy_n(s, length, buffer_.data() + used_);
    used_ += length;
  }
  void flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(used_));
    used_ = 0;
  }

private:
  std::ostream& out_;
  std::array<char, 1 << 16> buffer_;
  std::size_t used_ = 0;
};

} // namespace

void write_report_json(std::ostream& out, const ReportJson& report) {
  // dump(2)'s text, streamed: a report with a million flows is hundreds of MB, never held as one string.
  // Flushed when its last holder, this or the serializer, goes: at the end, or as an exception leaves.
  const auto stream = std::make_shared<BufferedStream>(out);
  nlohmann::detail::serializer<ReportJson> serializer(stream, ' ');
  serializer.dump(report, true, false, 2);
  stream->write_character('\n');
}

std::string report_to_table(const ReportJson& report) {
  std::ostringstream out;
  for (const auto& [key, value] : report.items())
    if (!value.is_object())
      out << key << ": " << scalar_text(value) << "\n";
  for (const auto& [section, value] : report.items()) {
    if (!value.is_object())
      continue;
    std::vector<std::pair<std::string, std::string>> rows;
    flatten(value, "", rows);
    std::size_t width = 0;
    for (const auto& row : rows)
      width = std::max(width, row.first.size());
    out << "\n" << section << "\n";
    for (const auto& [name, text] : rows)
      out << "  " << name << std::string(width - name.size() + 2, ' ') << text << "\n";
  }
  return out.str();
}

std::string digest_hex(std::string_view text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL; // FNV-1a 64 offset basis
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL; // FNV-1a 64 prime
  }
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(hash));
  return buffer;
}

std::uint64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024; // Linux reports KiB
}

} // namespace sim
