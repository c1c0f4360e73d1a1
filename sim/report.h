// Run reports (docs/user-guide.md): one ordered JSON document per run, printed as a human table, as JSON, or as CSV
// (the runner names the CSV's metrics: models/scenario/metrics.h).
// Key order is insertion order, so the same run gives byte-identical output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace sim {

using ReportJson = nlohmann::ordered_json;

/// An empty JSON object with room for `keys` keys. An ordered object is a vector of (const key, value) pairs, which
/// are not nothrow-movable, so each time it grows it copies every value whole: an object that will hold a large value
/// (the workloads' flows) before its last key is made with room for all of them.
inline ReportJson report_object(std::size_t keys) {
  ReportJson object = ReportJson::object();
  object.get_ref<ReportJson::object_t&>().reserve(keys);
  return object;
}

enum class ReportFormat { table, json, csv, long_csv };

/// Parses "table", "json", "csv" or "long-csv"; anything else returns false.
bool parse_report_format(std::string_view text, ReportFormat& format);

/// The document as JSON, indented, with a final newline.
std::string report_to_json(const ReportJson& report);
/// The same text, streamed: no copy of a report that a million flows make hundreds of MB long.
void write_report_json(std::ostream& out, const ReportJson& report);
/// Each top-level object as a titled block of aligned "key  value" lines; top-level scalars head the table.
std::string report_to_table(const ReportJson& report);
/// FNV-1a 64 of `text`, as 16 hex digits: the configuration digest.
std::string digest_hex(std::string_view text);

/// Peak resident set size of this process, in bytes.
std::uint64_t peak_rss_bytes();

} // namespace sim
