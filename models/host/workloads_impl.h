// Internal to the workloads: each family's descriptors, the reader of options through their tables, the option
// rows several families share and the checks they share.
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/host/workloads.h"
#include "sim/errors.h"
#include "sim/json_reader.h"
#include "sim/time.h"

namespace ib::host {

/// How often a program that may be waiting for a message lost to a fault checks whether it still should: the
/// simulated program's own give-up logic (a real one would hang or time out), not a property of the hardware.
inline constexpr sim::Time failure_recheck = sim::Time::from_us(100);

/// Thrown inside a program that stops at a failed work request (recorded first); its spawn wrapper catches it.
struct ProgramFailed {};

// Each family's descriptors, defined in the file of its code; workload_registry() lists these three families.
std::span<const WorkloadType> perftest_workloads();
std::span<const WorkloadType> pattern_workloads();
std::span<const WorkloadType> collective_workloads();

// The perftest family beyond perftest.cpp: its option table, and ib_atomic_bw (atomic_bw.cpp), which reads it.
const OptionTable& perftest_options();
std::unique_ptr<Workload> make_atomic_bw(OptionReader& options, std::uint64_t seed);

/// perftest's figures of a bandwidth test at one size.
struct BwFigures {
  double peak_gbps = 0, average_gbps = 0, msg_rate_mpps = 0;
  std::uint64_t messages = 0, bytes = 0;
  double seconds = 0;
};
/// `messages` of `size_bytes` in `elapsed` with completions seen at `completion_times` (in time order): average and
/// message rate over the whole run, peak over the best window of an eighth of the completions, and of at least
/// `streams` completions: QPs that run in step signal together, and a window shorter than one round of them
/// would measure the picoseconds between simultaneous completions.
BwFigures bandwidth_figures(std::uint64_t messages, std::uint32_t size_bytes, sim::Time elapsed,
                            std::span<const sim::Time> completion_times, std::size_t streams = 1);
/// A bandwidth test's row of the JSON report, and its header and row of the table (perftest's columns).
nlohmann::ordered_json bandwidth_row(std::uint32_t size_bytes, const BwFigures& figures);
std::string bandwidth_header();
std::string bandwidth_line(std::uint32_t size_bytes, const BwFigures& figures);

/// Reads one workload's options through its type's table: the table gives each key's range and default, the
/// workload's code the order (errors name the keys in the order asked) and the rules between options. Reading a
/// key its type does not take is a bug (std::logic_error).
class OptionReader {
public:
  OptionReader(sim::JsonObjectReader& json, const std::string& file, const std::string& pointer,
               const WorkloadType& type)
      : json_(json), file_(file), pointer_(pointer), type_(type) {}

  /// The workload's JSON object, for pointers, nested objects and finish().
  sim::JsonObjectReader& json() { return json_; }
  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }
  const WorkloadType& type() const { return type_; }

  /// An integer option's value when present (range-checked), else nothing.
  std::optional<std::uint64_t> integer_if_set(std::string_view key);
  /// An integer option's value, or its default.
  std::uint64_t integer(std::string_view key);
  /// A number option's value, or its default; required options must be present.
  double number(std::string_view key);
  bool flag(std::string_view key);
  /// A text or host option's value, or its default.
  std::string text(std::string_view key);
  std::string choice(std::string_view key);
  sim::Time duration(std::string_view key);
  /// A host list option: its names, or empty when absent (every host); `pointer` gets where the list is ("" if
  /// absent).
  std::vector<std::string> hosts(std::string_view key, std::string& pointer);
  /// A size_distribution option's object when present.
  std::optional<sim::JsonObjectReader> object(std::string_view key);

private:
  /// The row of `key` and how this type takes it; a key the type does not take or of another kind is a bug.
  std::pair<const WorkloadOption*, OptionUse> row(std::string_view key, OptionKind kind) const;

  sim::JsonObjectReader& json_;
  const std::string& file_;
  const std::string& pointer_;
  const WorkloadType& type_;
};

// How a row's types take its option, written as calls so that a row is one line of its table.
/// Optional, `value` when absent; `min` tightens the option's range for the type.
inline OptionUse with_default(nlohmann::json value, double min = std::numeric_limits<double>::quiet_NaN()) {
  return {OptionUse::Kind::value, std::move(value), min};
}
/// Optional, nothing when absent.
inline OptionUse no_default() {
  return {OptionUse::Kind::none, nullptr};
}
/// Optional, the type's name when absent.
inline OptionUse named_by_type() {
  return {OptionUse::Kind::type_name, nullptr};
}
inline OptionUse required() {
  return {OptionUse::Kind::required, nullptr};
}
/// The type has no such option.
inline OptionUse not_taken() {
  return {OptionUse::Kind::absent, nullptr};
}
/// One use for every type of the family, or one per type in the family's order.
template <class... Use>
std::vector<OptionUse> uses(Use... each) {
  return {std::move(each)...};
}

// Option rows several families share, declared once.
/// "name": the workload's name in the report, by default its type's.
WorkloadOption name_option();
/// "mtu_bytes": the QPs' path MTU, 256..4096 (a power of two, checked by read_mtu), default 4096.
WorkloadOption mtu_option();
/// "start_us": when the workload starts, default 0.
WorkloadOption start_option();
/// "after": start once the named workload has ended (start_us then counts from its end).
WorkloadOption after_option();
/// "qp_timeout": the RC QPs' local ACK timeout, encoded as perftest's -u (4.096 us x 2^value; 0 = infinite),
/// default 14 (perftest's and rdma-core's); "retry_count": their retry_cnt, default 7 (perftest's).
WorkloadOption qp_timeout_option();
WorkloadOption retry_count_option();
/// The RC recovery settings a workload's QPs use.
struct RcRecovery {
  std::uint8_t timeout = 0;
  std::uint8_t retry_count = 0;
};
RcRecovery read_rc_recovery(OptionReader& options);

/// InputError at `pointer` unless `cluster` has a host named `name`.
void check_host(Cluster& cluster, const std::string& name, const std::string& file, const std::string& pointer);
/// InputError at `pointer` unless port `port` of `host`'s HCA exists and has a link (a LID).
void check_port(Cluster& cluster, const std::string& host, std::uint32_t port, const std::string& file,
                const std::string& pointer);

/// "mtu_bytes", checked to be a power of two.
std::uint32_t read_mtu(OptionReader& options);
/// At spawn: `hosts` filled with every host of `cluster` when empty, and each name checked; errors point at
/// `hosts_pointer`, or at `workload_pointer` when the list was defaulted.
void resolve_hosts(Cluster& cluster, std::vector<std::string>& hosts, const std::string& file,
                   const std::string& hosts_pointer, const std::string& workload_pointer);

} // namespace ib::host
