#include "models/host/workloads.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/host/workloads_impl.h"
#include "sim/params.h"

namespace ib::host {

void Workload::record_refused_post(bool faults, verbs::PostError error, const char* post_invariant,
                                   const char* completion_invariant) {
  if (!faults || error != verbs::PostError::invalid_state)
    throw sim::InvariantViolation(post_invariant, name_, "post_send refused a work request",
                                  std::string(verbs::to_string(error)));
  record_failure(true, verbs::to_string(verbs::WcStatus::wr_flush_err), completion_invariant);
}

void Workload::record_failure(bool faults, std::string_view status, const char* invariant) {
  if (!faults)
    throw sim::InvariantViolation(invariant, name_, "a work request failed", std::string(status));
  ++failed_[std::string(status)];
}

void Workload::spawn(Cluster& cluster, Rendezvous& rendezvous) {
  // A scenario is spawned to validate it and again to run it: each time starts afresh.
  programs_running_ = 0;
  ended_at_ = sim::Time::max();
  start_gates_.clear();
  spawn_programs(cluster, rendezvous);
}

void Workload::start_after(Workload& predecessor) {
  predecessor_ = &predecessor;
  predecessor.successors_.push_back(this);
}

void Workload::spawn_program(Cluster& cluster, std::string_view host, std::string name,
                             std::function<void(Context&)> body) {
  ++programs_running_;
  cluster.spawn(host, std::move(name), [this, body = std::move(body)](Context& ctx) {
    body(ctx);
    if (--programs_running_ > 0)
      return;
    ended_at_ = ctx.now();
    for (Workload* next : successors_)
      for (sim::Signal& gate : next->start_gates_)
        gate.notify();
  });
}

void Workload::native_ended(Cluster& cluster, sim::Simulator& sim) {
  cluster.note_program_ended(sim.now());
  if (--programs_running_ > 0)
    return;
  ended_at_ = sim.now();
  for (Workload* next : successors_) {
    for (sim::Signal& gate : next->start_gates_)
      gate.notify();
    next->predecessor_ended(sim, ended_at_);
  }
}

sim::Time Workload::wait_to_start(Context& ctx, sim::Time start) {
  sim::Time begin = start;
  if (predecessor_ != nullptr) {
    if (predecessor_->ended_at_ == sim::Time::max()) {
      sim::Signal& gate = start_gates_.emplace_back(ctx.runtime());
      ctx.program().wait(gate);
    }
    begin = predecessor_->ended_at_ + start;
  }
  if (begin > ctx.now())
    ctx.program().sleep_until(begin);
  return begin;
}

LatencyStats summarize(std::vector<sim::Time> samples) {
  LatencyStats s;
  s.samples = samples.size();
  if (samples.empty())
    return s;
  std::sort(samples.begin(), samples.end());
  // perftest's figures: t_typical is the median; the percentiles are the samples at that rank.
  const auto at = [&](double q) {
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(samples.size()))) - 1;
    return samples[std::min(rank, samples.size() - 1)].us();
  };
  s.t_min_us = samples.front().us();
  s.t_max_us = samples.back().us();
  s.t_typical_us = samples[samples.size() / 2].us();
  double sum = 0;
  for (const sim::Time t : samples)
    sum += t.us();
  s.t_avg_us = sum / static_cast<double>(samples.size());
  double squares = 0;
  for (const sim::Time t : samples)
    squares += (t.us() - s.t_avg_us) * (t.us() - s.t_avg_us);
  s.t_stdev_us = std::sqrt(squares / static_cast<double>(samples.size()));
  s.t_p99_us = at(0.99);
  s.t_p999_us = at(0.999);
  return s;
}

void Rendezvous::publish(HostId host, HostId peer, int tag, std::uint16_t lid, std::uint32_t qpn) {
  if (2 * (used_ + 1) > slots_.size())
    grow();
  // One probe: it ends at the entry's slot (a second publish replaces it) or at the first free one.
  std::size_t i = home(host, peer, tag);
  for (; slots_[i].used; i = (i + 1) & (slots_.size() - 1))
    if (slots_[i].host == host && slots_[i].peer == peer && slots_[i].tag == tag)
      break;
  if (!slots_[i].used)
    ++used_;
  slots_[i] = Slot{host, peer, tag, qpn, lid, true};
}

std::size_t Rendezvous::find(HostId host, HostId peer, int tag) const {
  if (slots_.empty())
    return 0;
  for (std::size_t i = home(host, peer, tag);; i = (i + 1) & (slots_.size() - 1)) {
    const Slot& s = slots_[i];
    if (!s.used)
      return slots_.size();
    if (s.host == host && s.peer == peer && s.tag == tag)
      return i;
  }
}

void Rendezvous::grow() {
  std::vector<Slot> old(std::max<std::size_t>(64, 2 * slots_.size()));
  old.swap(slots_);
  for (const Slot& s : old) {
    if (!s.used)
      continue;
    std::size_t i = home(s.host, s.peer, s.tag);
    while (slots_[i].used)
      i = (i + 1) & (slots_.size() - 1);
    slots_[i] = s;
  }
}

std::pair<std::uint16_t, std::uint32_t> Rendezvous::take(HostId peer, HostId host, int tag) {
  std::size_t i = find(peer, host, tag);
  if (i == slots_.size())
    throw std::logic_error(names_.at(peer) + " made no QP for " + names_.at(host) + " (or it was taken already)");
  const std::pair<std::uint16_t, std::uint32_t> qp{slots_[i].lid, slots_[i].qpn};
  // Backward-shift deletion: entries after the hole that may sit at or before it move up, so that no probe
  // sequence is broken and no tombstones pile up over a million takes.
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t j = (i + 1) & mask; slots_[j].used; j = (j + 1) & mask) {
    const std::size_t h = home(slots_[j].host, slots_[j].peer, slots_[j].tag);
    // slots_[j] may fill the hole at i unless its home lies cyclically in (i, j].
    if (((j - h) & mask) >= ((j - i) & mask)) {
      slots_[i] = slots_[j];
      i = j;
    }
  }
  slots_[i].used = false;
  if (--used_ == 0) // its memory too: a million QPs' worth
    std::vector<Slot>().swap(slots_);
  return qp;
}

std::pair<std::uint16_t, std::uint32_t> Rendezvous::take(const std::string& peer, const std::string& host, int tag) {
  const auto peer_id = ids_.find(peer), host_id = ids_.find(host);
  if (peer_id == ids_.end() || host_id == ids_.end())
    throw std::logic_error(peer + " made no QP for " + host + " (or it was taken already)");
  return take(peer_id->second, host_id->second, tag);
}

namespace {

/// The JSON reader's enum readers, which also take choices known only at run time.
std::optional<std::string> read_enum(sim::JsonObjectReader& json, std::string_view key,
                                     std::span<const std::string_view> choices, bool required) {
  if (required)
    return json.required_enum(key, choices);
  return json.optional_enum(key, choices);
}

std::string show_default(const WorkloadOption& option, const OptionUse& use, const WorkloadType& type) {
  switch (use.kind) {
  case OptionUse::Kind::value:
    if (option.kind == OptionKind::duration)
      return sim::format_duration(sim::param_detail::duration_bound(use.value.get<double>(), option.key), option.key);
    return use.value.is_string() ? use.value.get<std::string>() : use.value.dump();
  case OptionUse::Kind::type_name:
    return std::string(type.name);
  case OptionUse::Kind::required:
    return "required";
  default:
    return "-";
  }
}

std::string show_range(const WorkloadOption& option, const OptionUse& use) {
  using namespace sim::param_detail;
  const double min = std::isnan(use.min) ? option.min : use.min;
  switch (option.kind) {
  case OptionKind::integer: {
    const auto [lo, hi] = integer_bounds<std::uint64_t>(min, option.max);
    return bounds_text<std::uint64_t>(lo, hi, 0, std::numeric_limits<std::uint64_t>::max(),
                                      show_integer<std::uint64_t>);
  }
  case OptionKind::number:
    return bounds_text<double>(min, option.max, std::numeric_limits<double>::lowest(),
                               std::numeric_limits<double>::max(), show_number);
  case OptionKind::duration:
    return "[" + sim::format_duration(duration_bound(min, option.key), option.key) + ", " +
           sim::format_duration(duration_bound(option.max, option.key), option.key) + "]";
  case OptionKind::flag:
    return "true or false";
  case OptionKind::choice: {
    std::string text;
    for (std::size_t i = 0; i < option.choices.size(); ++i)
      text += (i == 0 ? "" : i + 1 == option.choices.size() ? " or " : ", ") + std::string(option.choices[i]);
    return text;
  }
  case OptionKind::hosts:
    return show_integer<std::uint64_t>(static_cast<std::uint64_t>(min)) + " to " +
           show_integer<std::uint64_t>(static_cast<std::uint64_t>(option.max)) + " hosts";
  case OptionKind::host:
    return "a host of the topology";
  case OptionKind::size_distribution:
    return "values_bytes and weights";
  default:
    return "non-empty";
  }
}

/// Rows of cells as aligned columns, each line indented by two spaces.
std::string columns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c + 1 < row.size(); ++c)
      widths[c] = std::max(widths[c], row[c].size());
  std::string text;
  for (const auto& row : rows) {
    text += "  ";
    for (std::size_t c = 0; c + 1 < row.size(); ++c)
      text += row[c] + std::string(widths[c] - row[c].size() + 2, ' ');
    text += row.back() + "\n";
  }
  return text;
}

} // namespace

OptionUse option_use(const WorkloadOption& option, const WorkloadType& type) {
  if (option.uses.size() == 1)
    return option.uses.front();
  if (type.column >= option.uses.size())
    throw std::logic_error("workload option " + std::string(option.key) + " has no use for " + std::string(type.name));
  return option.uses[type.column];
}

std::span<const WorkloadType> workload_registry() {
  // The one list of families; each family's array lists its types beside their code. No self-registration:
  // these are static libraries, whose linker drops objects nothing refers to.
  static const std::vector<WorkloadType> all = [] {
    std::vector<WorkloadType> types;
    for (const auto family : {perftest_workloads(), pattern_workloads(), collective_workloads()})
      types.insert(types.end(), family.begin(), family.end());
    return types;
  }();
  return all;
}

const WorkloadType* find_workload_type(std::string_view name) {
  for (const WorkloadType& type : workload_registry())
    if (type.name == name)
      return &type;
  return nullptr;
}

std::vector<std::string> workload_types() {
  std::vector<std::string> names;
  for (const WorkloadType& type : workload_registry())
    names.emplace_back(type.name);
  return names;
}

std::string endpoint_workload_types() {
  std::string names;
  for (const WorkloadType& type : pattern_workloads())
    names += (names.empty() ? "" : ", ") + std::string(type.name);
  return names;
}

std::string describe_workload_types() {
  std::vector<std::vector<std::string>> rows;
  for (const WorkloadType& type : workload_registry())
    rows.push_back({std::string(type.name), std::string(type.description)});
  return "workload types (ibnetsim params workload TYPE lists a type's options):\n" + columns(rows);
}

std::string describe_workload_options(const WorkloadType& type) {
  std::vector<std::vector<std::string>> rows = {{"key", "unit", "default", "range", "meaning"}};
  for (const WorkloadOption& option : type.options().options) {
    const OptionUse use = option_use(option, type);
    if (use.kind != OptionUse::Kind::absent)
      rows.push_back({std::string(option.key), std::string(option.unit), show_default(option, use, type),
                      show_range(option, use), std::string(option.meaning)});
  }
  return "options of workload " + std::string(type.name) + ": " + std::string(type.description) + "\n" + columns(rows);
}

std::unique_ptr<Workload> read_workload(sim::JsonObjectReader& reader, const std::string& file,
                                        const std::string& pointer, std::uint64_t seed) {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (const WorkloadType& type : workload_registry())
      v.push_back(type.name);
    return v;
  }();
  const WorkloadType& type = *find_workload_type(*read_enum(reader, "type", names, true));
  OptionReader options(reader, file, pointer, type);
  return type.make(options, seed);
}

std::pair<const WorkloadOption*, OptionUse> OptionReader::row(std::string_view key, OptionKind kind) const {
  for (const WorkloadOption& option : type_.options().options) {
    if (option.key != key)
      continue;
    const OptionUse use = option_use(option, type_);
    // A host is text to read; its kind tells listings and checks what the text names.
    const bool text = kind == OptionKind::text && option.kind == OptionKind::host;
    if ((option.kind != kind && !text) || use.kind == OptionUse::Kind::absent)
      break;
    return {&option, use};
  }
  throw std::logic_error(std::string(type_.name) + " reads option " + std::string(key) + ", not in its table as such");
}

std::optional<std::uint64_t> OptionReader::integer_if_set(std::string_view key) {
  const auto [option, use] = row(key, OptionKind::integer);
  const auto [lo, hi] =
      sim::param_detail::integer_bounds<std::uint64_t>(std::isnan(use.min) ? option->min : use.min, option->max);
  if (use.kind == OptionUse::Kind::required)
    return json_.required_uint(key, lo, hi);
  return json_.optional_uint(key, lo, hi);
}

std::uint64_t OptionReader::integer(std::string_view key) {
  if (const auto v = integer_if_set(key))
    return *v;
  return row(key, OptionKind::integer).second.value.get<std::uint64_t>();
}

double OptionReader::number(std::string_view key) {
  const auto [option, use] = row(key, OptionKind::number);
  if (use.kind == OptionUse::Kind::required)
    return json_.required_double(key, option->min, option->max);
  return json_.optional_double(key, option->min, option->max).value_or(use.value.get<double>());
}

bool OptionReader::flag(std::string_view key) {
  const auto [option, use] = row(key, OptionKind::flag);
  return json_.optional_bool(key).value_or(use.value.get<bool>());
}

std::string OptionReader::text(std::string_view key) {
  const auto [option, use] = row(key, OptionKind::text);
  if (use.kind == OptionUse::Kind::required)
    return json_.required_string(key);
  const std::optional<std::string> v = json_.optional_string(key);
  if (v)
    return *v;
  if (use.kind == OptionUse::Kind::none)
    return "";
  return use.kind == OptionUse::Kind::type_name ? std::string(type_.name) : use.value.get<std::string>();
}

std::string OptionReader::choice(std::string_view key) {
  const auto [option, use] = row(key, OptionKind::choice);
  const std::optional<std::string> v = read_enum(json_, key, option->choices, use.kind == OptionUse::Kind::required);
  return v ? *v : use.value.get<std::string>();
}

sim::Time OptionReader::duration(std::string_view key) {
  const auto [option, use] = row(key, OptionKind::duration);
  const sim::Time lo = sim::param_detail::duration_bound(option->min, key);
  const sim::Time hi = sim::param_detail::duration_bound(option->max, key);
  return json_.optional_duration(key, lo, hi).value_or(sim::param_detail::duration_bound(use.value.get<double>(), key));
}

std::vector<std::string> OptionReader::hosts(std::string_view key, std::string& pointer) {
  const auto [option, use] = row(key, OptionKind::hosts);
  std::vector<std::string> hosts;
  pointer.clear();
  if (const nlohmann::json* list =
          json_.optional_array(key, static_cast<std::size_t>(option->min), static_cast<std::size_t>(option->max))) {
    pointer = json_.pointer_to(key);
    for (std::size_t i = 0; i < list->size(); ++i) {
      if (!(*list)[i].is_string())
        throw sim::InputError(json_.file(), sim::json_pointer_append(pointer, i), "a host name",
                              sim::describe_json_value((*list)[i]));
      const std::string& name = (*list)[i].get_ref<const std::string&>();
      // A host listed twice would run two programs that share its QPs' rendezvous: the run then fails inside the
      // model (an unroutable packet, a retry counter exceeded), so it is bad input here.
      const auto earlier = std::find(hosts.begin(), hosts.end(), name);
      if (earlier != hosts.end())
        throw sim::InputError(json_.file(), sim::json_pointer_append(pointer, i),
                              "a host not listed before (it is already at " +
                                  sim::json_pointer_append(pointer, static_cast<std::size_t>(earlier - hosts.begin())) +
                                  ")",
                              sim::describe_json_value((*list)[i]));
      hosts.push_back(name);
    }
  }
  return hosts;
}

std::optional<sim::JsonObjectReader> OptionReader::object(std::string_view key) {
  row(key, OptionKind::size_distribution);
  return json_.optional_object(key);
}

WorkloadOption name_option() {
  return WorkloadOption{"name",
                        OptionKind::text,
                        "text",
                        0,
                        0,
                        uses(named_by_type()),
                        "the workload's name in the report; unique in the scenario"};
}

WorkloadOption mtu_option() {
  return WorkloadOption{"mtu_bytes",
                        OptionKind::integer,
                        "bytes",
                        256,
                        4096,
                        uses(with_default(4096)),
                        "the QPs' path MTU (perftest -m): 256, 512, 1024, 2048 or 4096"};
}

WorkloadOption after_option() {
  return WorkloadOption{"after",
                        OptionKind::text,
                        "text",
                        0,
                        0,
                        uses(no_default()),
                        "the name of another workload: start when its last program has ended, start_us after it"};
}

WorkloadOption start_option() {
  return WorkloadOption{"start_us",
                        OptionKind::duration,
                        "us",
                        0,
                        86'400'000'000.0,
                        uses(with_default(0)),
                        "simulated time at which the workload starts, whole picoseconds"};
}

void check_host(Cluster& cluster, const std::string& name, const std::string& file, const std::string& pointer) {
  try {
    cluster.host(name);
  } catch (const std::invalid_argument&) {
    throw sim::InputError(file, pointer, "the name of a host (an HCA node) of the topology", "\"" + name + "\"");
  }
}

void check_port(Cluster& cluster, const std::string& host, std::uint32_t port, const std::string& file,
                const std::string& pointer) {
  const hca::Hca& hca = *cluster.host(host).hca;
  if (port > hca.params().port_count || hca.lid(static_cast<std::uint8_t>(port)) == 0)
    throw sim::InputError(file, pointer,
                          "a cabled port of " + host + " (its HCA has " + std::to_string(hca.params().port_count) +
                              " port" + (hca.params().port_count > 1 ? "s" : "") + ")",
                          std::to_string(port) + (port > hca.params().port_count ? "" : ", which has no link"));
}

WorkloadOption qp_timeout_option() {
  return WorkloadOption{"qp_timeout",
                        OptionKind::integer,
                        "code",
                        0,
                        31,
                        uses(with_default(14)),
                        "RC local ACK timeout, 4.096 us x 2^value (perftest -u; 0 = infinite): how long a QP waits "
                        "for an ACK before it retransmits"};
}

WorkloadOption retry_count_option() {
  return WorkloadOption{"retry_count",
                        OptionKind::integer,
                        "count",
                        0,
                        7,
                        uses(with_default(7)),
                        "RC retry_cnt: retransmissions after timeouts or NAKs before a work request fails with "
                        "\"transport retry counter exceeded\""};
}

RcRecovery read_rc_recovery(OptionReader& options) {
  RcRecovery r;
  r.timeout = static_cast<std::uint8_t>(options.integer("qp_timeout"));
  r.retry_count = static_cast<std::uint8_t>(options.integer("retry_count"));
  return r;
}

std::uint32_t read_mtu(OptionReader& options) {
  const auto mtu = static_cast<std::uint32_t>(options.integer("mtu_bytes"));
  if ((mtu & (mtu - 1)) != 0)
    throw sim::InputError(options.file(), options.json().pointer_to("mtu_bytes"), "256, 512, 1024, 2048 or 4096",
                          std::to_string(mtu));
  return mtu;
}

void resolve_hosts(Cluster& cluster, std::vector<std::string>& hosts, const std::string& file,
                   const std::string& hosts_pointer, const std::string& workload_pointer) {
  if (hosts.empty())
    for (std::size_t i = 0; i < cluster.host_count(); ++i)
      hosts.push_back(cluster.host(i).name);
  for (std::size_t i = 0; i < hosts.size(); ++i)
    check_host(cluster, hosts[i], file,
               sim::json_pointer_append(hosts_pointer.empty() ? workload_pointer : hosts_pointer, i));
}

} // namespace ib::host
