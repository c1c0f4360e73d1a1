// Timeline traces in Chrome's trace-event format (docs/user-guide.md; opens in Perfetto and chrome://tracing). Models
// hold a Tracer pointer that is null unless a trace was asked for, so the hot path pays one branch. Events are written
// as they happen (nothing is kept in memory); filters on QP numbers, hosts and a time window keep big runs small.
// Tracks: one process per component (a host's HCA, a switch), one thread per port or per QP. Perfetto drops slices
// that overlap on one thread without nesting (a QP's DMA reads in flight together), so such a slice goes to the
// track's next lane, a thread of its own named "<track> (2)", "(3)"...
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.h"

namespace sim {

struct TraceFilter {
  std::set<std::uint32_t> qpns;     ///< empty: every QP; else packets to, and HCA work of, these QPNs
  std::set<std::string> components; ///< empty: every component; else only these (hosts, switches) by name
  Time from = Time::zero();
  Time to = Time::max();
};

class Tracer {
public:
  /// Opens `path` for writing; InputError (exit 2) if it cannot.
  Tracer(const std::string& path, TraceFilter filter);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  /// Names component `id`'s track group once (call at wiring time, in component id order or any order).
  void name_component(std::uint32_t id, const std::string& name);
  /// Whether anything of component `id` about QP `qpn` (0: none in particular) between `start` and `end` is kept.
  bool wants(std::uint32_t id, std::uint32_t qpn, Time start, Time end) const;
  /// A complete event ("ph": "X") on component `id`'s thread `track`, with `args` a JSON object body (no braces,
  /// may be empty), e.g. "\"psn\": 12, \"bytes\": 4138".
  void span(std::uint32_t id, std::uint32_t track, std::string_view category, std::string_view name, Time start,
            Time end, const std::string& args = {});
  /// An instant event ("ph": "i").
  void instant(std::uint32_t id, std::uint32_t track, std::string_view category, std::string_view name, Time at,
               const std::string& args = {});
  /// A counter sample ("ph": "C"): component `id`'s counter track `name` takes the values in `args` from `at` on.
  void counter(std::uint32_t id, std::string_view name, Time at, const std::string& args);
  /// Names a thread of a component ("port 1", "QP 7").
  void name_track(std::uint32_t id, std::uint32_t track, const std::string& name);
  std::uint64_t events_written() const { return events_; }
  const TraceFilter& filter() const { return filter_; }
  /// Ends the document and closes the file; InputError if any of it could not be written. Without it, the
  /// destructor ends the document without reporting failures.
  void finish();

private:
  void begin_event();
  /// The thread id of the first lane of (`id`, `track`) where [start, end) overlaps no slice already there.
  std::uint64_t lane_for(std::uint32_t id, std::uint32_t track, Time start, Time end);
  /// The slices of one lane, start -> end; only the most recent ones are kept (slices arrive near "now").
  using Lane = std::map<std::int64_t, std::int64_t>;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Lane>> lanes_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> track_names_;
  std::string path_;
  std::ofstream out_;
  TraceFilter filter_;
  std::vector<std::string> names_;
  std::set<std::pair<std::uint32_t, std::uint32_t>> named_tracks_;
  std::uint64_t events_ = 0;
  bool first_ = true;
};

} // namespace sim
