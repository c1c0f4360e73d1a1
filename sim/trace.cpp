#include "sim/trace.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "sim/errors.h"

namespace sim {
namespace {

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

/// Microseconds with picosecond precision, as the format's "ts" and "dur" expect.
std::string micros(Time t) {
  char text[40];
  std::snprintf(text, sizeof text, "%lld.%06lld", static_cast<long long>(t.ps() / 1'000'000),
                static_cast<long long>(t.ps() % 1'000'000));
  return text;
}

} // namespace

Tracer::Tracer(const std::string& path, TraceFilter filter) : path_(path), out_(path), filter_(std::move(filter)) {
  if (!out_)
    throw InputError(path, "", "a trace file that can be written (--trace)", std::strerror(errno));
  out_ << "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
}

Tracer::~Tracer() {
  // A run that failed still leaves a complete document: its timeline up to the failure helps find the cause.
  if (out_.is_open())
    out_ << "\n]}\n";
}

void Tracer::finish() {
  out_ << "\n]}\n";
  out_.close(); // the last buffer is written here: a full disk shows now
  if (!out_)
    throw InputError(path_, "", "a trace file that can be written (--trace)",
                     errno != 0 ? std::strerror(errno) : "the write failed");
}

void Tracer::begin_event() {
  if (!first_)
    out_ << ",\n";
  first_ = false;
  ++events_;
}

void Tracer::name_component(std::uint32_t id, const std::string& name) {
  if (id >= names_.size())
    names_.resize(id + 1);
  names_[id] = name;
  if (!filter_.components.empty() && filter_.components.count(name) == 0)
    return;
  begin_event();
  out_ << "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << id << ", \"args\": {\"name\": " << quoted(name)
       << "}}";
}

bool Tracer::wants(std::uint32_t id, std::uint32_t qpn, Time start, Time end) const {
  if (end < filter_.from || start > filter_.to)
    return false;
  if (!filter_.qpns.empty() && filter_.qpns.count(qpn) == 0)
    return false;
  if (!filter_.components.empty() && (id >= names_.size() || filter_.components.count(names_[id]) == 0))
    return false;
  return true;
}

void Tracer::name_track(std::uint32_t id, std::uint32_t track, const std::string& name) {
  if (!named_tracks_.insert({id, track}).second)
    return;
  track_names_[{id, track}] = name;
  begin_event();
  out_ << "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " << id << ", \"tid\": " << track
       << ", \"args\": {\"name\": " << quoted(name) << "}}";
}

std::uint64_t Tracer::lane_for(std::uint32_t id, std::uint32_t track, Time start, Time end) {
  // Enough to cover every slice that can still overlap a new one: they start around the same instant.
  constexpr std::size_t kept_per_lane = 256;
  std::vector<Lane>& lanes = lanes_[{id, track}];
  const std::int64_t s = start.ps();
  const std::int64_t e = std::max(end.ps(), s + 1); // an empty slice still takes its instant
  std::size_t k = 0;
  for (; k < lanes.size(); ++k) {
    const Lane& lane = lanes[k];
    auto next = lane.lower_bound(s);
    if (next != lane.end() && next->first < e)
      continue;
    if (next != lane.begin() && std::prev(next)->second > s)
      continue;
    break;
  }
  if (k == lanes.size()) {
    lanes.emplace_back();
    if (k > 0) {
      const auto named = track_names_.find({id, track});
      begin_event();
      out_ << "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " << id
           << ", \"tid\": " << (std::uint64_t{track} | (std::uint64_t{k} << 32)) << ", \"args\": {\"name\": "
           << quoted((named != track_names_.end() ? named->second : std::to_string(track)) + " (" +
                     std::to_string(k + 1) + ")")
           << "}}";
    }
  }
  Lane& lane = lanes[k];
  lane.emplace(s, e);
  if (lane.size() > kept_per_lane)
    lane.erase(lane.begin());
  // Lane 0 is the track itself; lane k a thread id above every 32-bit track number.
  return std::uint64_t{track} | (std::uint64_t{k} << 32);
}

void Tracer::span(std::uint32_t id, std::uint32_t track, std::string_view category, std::string_view name, Time start,
                  Time end, const std::string& args) {
  const std::uint64_t tid = lane_for(id, track, start, end);
  begin_event();
  out_ << "{\"ph\": \"X\", \"cat\": " << quoted(category) << ", \"name\": " << quoted(name) << ", \"pid\": " << id
       << ", \"tid\": " << tid << ", \"ts\": " << micros(start) << ", \"dur\": " << micros(end - start)
       << ", \"args\": {" << args << "}}";
}

void Tracer::instant(std::uint32_t id, std::uint32_t track, std::string_view category, std::string_view name, Time at,
                     const std::string& args) {
  begin_event();
  out_ << "{\"ph\": \"i\", \"s\": \"t\", \"cat\": " << quoted(category) << ", \"name\": " << quoted(name)
       << ", \"pid\": " << id << ", \"tid\": " << track << ", \"ts\": " << micros(at) << ", \"args\": {" << args
       << "}}";
}

void Tracer::counter(std::uint32_t id, std::string_view name, Time at, const std::string& args) {
  begin_event();
  out_ << "{\"ph\": \"C\", \"name\": " << quoted(name) << ", \"pid\": " << id << ", \"ts\": " << micros(at)
       << ", \"args\": {" << args << "}}";
}

} // namespace sim
