// Built-in workloads (docs/scenario-reference.md): each is a set of host programs (SimGrid actors using host::Context)
// and the figures they report. perftest's tests with perftest's options and figures, and traffic patterns over many
// hosts. QPs are created at time 0 and connected at 1 ns, as an out-of-band exchange (rdma_cm, MPI) would leave them.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/host/cluster.h"
#include "sim/json_reader.h"
#include "sim/time.h"

namespace ib::host {

/// perftest's latency figures, in microseconds.
struct LatencyStats {
  std::uint64_t samples = 0;
  double t_min_us = 0, t_typical_us = 0, t_max_us = 0, t_avg_us = 0, t_p99_us = 0, t_p999_us = 0;
  double t_stdev_us = 0; ///< population standard deviation, as perftest's t_stdev
};
LatencyStats summarize(std::vector<sim::Time> samples);

/// Where the QP a program made for a peer is; programs publish theirs at time 0 and take their peers' at 1 ns.
/// Hosts are interned: an all-to-all of a thousand hosts publishes a million QPs, each taken once. A workload with
/// many hosts interns their names once (id()) and publishes and takes by id; the table is open-addressed, one flat
/// array, since a node per entry cost a fifth of such a run's start-up (allocations and cache misses).
class Rendezvous {
public:
  using HostId = std::uint32_t;
  /// The id of `host`, the same for every call with that name.
  HostId id(const std::string& host) {
    const auto [it, added] = ids_.try_emplace(host, static_cast<HostId>(names_.size()));
    if (added)
      names_.push_back(host);
    return it->second;
  }
  void publish(HostId host, HostId peer, int tag, std::uint16_t lid, std::uint32_t qpn);
  void publish(const std::string& host, const std::string& peer, int tag, std::uint16_t lid, std::uint32_t qpn) {
    publish(id(host), id(peer), tag, lid, qpn);
  }
  /// The QP `peer` made for `host` under `tag`, removed from the table (each is taken once).
  std::pair<std::uint16_t, std::uint32_t> take(HostId peer, HostId host, int tag);
  std::pair<std::uint16_t, std::uint32_t> take(const std::string& peer, const std::string& host, int tag);

private:
  struct Slot {
    HostId host = 0, peer = 0;
    int tag = 0;
    std::uint32_t qpn = 0;
    std::uint16_t lid = 0;
    bool used = false;
  };
  std::size_t home(HostId host, HostId peer, int tag) const {
    const std::uint64_t h =
        ((std::uint64_t{host} << 32 | peer) ^ static_cast<std::uint32_t>(tag) * 0xff51afd7ed558ccdull) *
        0x9e3779b97f4a7c15ull;
    return static_cast<std::size_t>(h >> 32) & (slots_.size() - 1);
  }
  /// Index of (host, peer, tag)'s slot, or slots_.size() when it is not in the table.
  std::size_t find(HostId host, HostId peer, int tag) const;
  void grow();
  std::unordered_map<std::string, HostId> ids_;
  std::vector<std::string> names_; ///< by id
  std::vector<Slot> slots_;        ///< a power of two, at most half used; linear probing
  std::size_t used_ = 0;
};

/// What a workload will create and hold, counted from its options before anything is built, for the memory budget
/// (models/scenario/budget.h). Each count comes with the JSON pointer of the option that sets it, so that a budget
/// exceeded can name what to change.
struct Footprint {
  std::uint64_t programs = 0;         ///< host programs
  std::uint64_t qps = 0;              ///< QPs over all hosts
  std::uint64_t max_qps_per_host = 0; ///< the most QPs one host creates (QP numbers run from 2 on each HCA)
  std::uint64_t send_slots = 0;       ///< send queue entries over all QPs
  /// Of those, the ones the HCA model holds state for (it keeps only as many per QP as the QP ever has posted and
  /// not completed at once, rounded up to a power of two); 0: all of them.
  std::uint64_t send_slots_held = 0;
  std::uint64_t recv_slots = 0;       ///< receive queue entries over all QPs
  std::uint64_t cq_entries = 0;       ///< completion queue entries over all CQs
  std::uint64_t messages = 0;         ///< messages planned ahead, each with its post time and latency kept
  std::uint64_t samples = 0;          ///< times kept for the figures (perftest's latencies and completions)
  std::uint64_t flows = 0;            ///< per (sender, receiver) records of a pattern's flows
  std::uint64_t peer_map_entries = 0; ///< entries of the per-host maps over every host (QP by peer, and such)
  std::uint64_t buffer_bytes = 0;     ///< host memory of data buffers (held as bytes with verify_contents)
  std::uint64_t queue_bytes = 0;      ///< host memory of WQE rings and CQs (held as bytes with verify_contents)
  std::string programs_pointer, qps_pointer, slots_pointer, messages_pointer, samples_pointer, flows_pointer,
      buffer_pointer;
};

/// A workload of a scenario: reads its options, spawns its programs, reports what they measured.
class Workload {
public:
  virtual ~Workload() = default;
  const std::string& name() const { return name_; }
  const std::string& type() const { return type_; }
  /// Spawns the programs on `cluster`; names of hosts are checked here (InputError at `pointer`).
  void spawn(Cluster& cluster, Rendezvous& rendezvous);
  /// "after": the workload this one starts after ("" for none); its start_us then counts from that one's end.
  const std::string& after() const { return after_; }
  /// The JSON pointer of this workload's "after", for errors.
  std::string after_pointer() const { return pointer_ + "/after"; }
  /// Makes this workload start once `predecessor`'s last program has ended (the scenario resolves "after").
  void start_after(Workload& predecessor);
  /// The workload this one starts after, or nullptr.
  const Workload* predecessor() const { return predecessor_; }
  /// Figures for the JSON report (after the run).
  virtual nlohmann::ordered_json results() const = 0;
  /// Lines for the human table.
  virtual std::vector<std::string> table() const = 0;
  /// The options in effect, defaults included, for the configuration digest.
  virtual nlohmann::ordered_json config() const = 0;
  /// Work requests that completed in error, by status (verbs' text); empty without faults.
  const std::map<std::string, std::uint64_t>& failed_work_requests() const { return failed_; }
  /// Programs (or event-driven hosts) started and not ended.
  std::uint32_t programs_running() const { return programs_running_; }
  /// Programs that stopped at a failed work request (as perftest and MPI stop), before their work was done.
  std::uint32_t programs_failed() const { return programs_failed_; }
  /// What running it will create, with `topology_hosts` hosts for a host list left to its default (every host).
  virtual Footprint footprint(std::uint64_t topology_hosts) const = 0;
  /// Whether it runs on fabric-level hosts (HostModel::fabric): the traffic patterns do; what needs verbs does not.
  virtual bool runs_on_endpoints() const { return false; }

protected:
  /// The programs of the workload, spawned on `cluster` (through spawn_program).
  virtual void spawn_programs(Cluster& cluster, Rendezvous& rendezvous) = 0;
  /// Spawns one of the workload's programs on `host`: counted, so that the workloads that start after this one
  /// learn when its last program has ended.
  void spawn_program(Cluster& cluster, std::string_view host, std::string name, std::function<void(Context&)> body);
  /// Blocks the calling program until the workload starts, and returns that instant: `start` (its start_us) after
  /// time zero, or, with "after", that long after the last program of the workload it follows has ended.
  sim::Time wait_to_start(Context& ctx, sim::Time start);
  // Event-driven workloads (HostModel::fabric, no programs) count their hosts' state machines as programs.
  /// `count` state machines started.
  void native_started(std::uint32_t count) { programs_running_ += count; }
  /// One of them ended at sim.now(); the last one starts the workloads that follow this one.
  void native_ended(Cluster& cluster, sim::Simulator& sim);
  /// The workload this one follows has ended at `at` (event-driven workloads start then; programs use their gate).
  virtual void predecessor_ended(sim::Simulator& sim, sim::Time at) {
    (void)sim;
    (void)at;
  }
  /// A work request completed (or was refused) with `status`: with faults injected (`faults`) it is counted
  /// and the caller goes on; without, nothing explains it and it is an invariant violation (exit 3).
  void record_failure(bool faults, std::string_view status, const char* invariant);
  /// post_send refused with `error`. A QP a fault sent to the error state refuses work: with faults that is a
  /// flushed work request (recorded; the caller goes on as after a failed completion). Anything else is the
  /// `post_invariant` violation.
  void record_refused_post(bool faults, verbs::PostError error, const char* post_invariant,
                           const char* completion_invariant);
  std::string name_, type_, file_, pointer_;
  std::string after_; ///< "" or the name of the workload this one follows
  std::map<std::string, std::uint64_t> failed_;
  std::uint32_t programs_failed_ = 0;

private:
  Workload* predecessor_ = nullptr;
  std::vector<Workload*> successors_;
  std::uint32_t programs_running_ = 0;
  sim::Time ended_at_ = sim::Time::max(); ///< when the last program ended; max while one runs
  std::deque<sim::Signal> start_gates_;   ///< one per program of this workload waiting for its predecessor
};

/// What an option's value is; decides how it is read and listed.
enum class OptionKind : std::uint8_t {
  integer,          ///< an unsigned integer in [min, max]
  number,           ///< any JSON number in [min, max]
  flag,             ///< true or false
  text,             ///< a non-empty string
  choice,           ///< one of `choices`
  duration,         ///< in the unit of the key's suffix, [min, max] in that unit
  host,             ///< a host's name (checked against the topology at spawn)
  hosts,            ///< an array of [min, max] host names
  size_distribution ///< an object of sizes and weights, read by the workload's own code
};

/// How one workload type takes an option.
struct OptionUse {
  enum class Kind : std::uint8_t {
    value,     ///< optional, `value` when absent
    none,      ///< optional, nothing when absent (the meaning says what that does)
    type_name, ///< optional, the type's name when absent
    required,
    absent ///< the type has no such option (an unknown key)
  };
  Kind kind = Kind::value;
  nlohmann::json value = nullptr; // the default of Kind::value
  /// A lower bound tighter than the option's for this type (an atomic's size_bytes), or NaN.
  double min = std::numeric_limits<double>::quiet_NaN();
};

/// One row of a family's option table: everything about an option but its per-type default.
struct WorkloadOption {
  /// JSON key carrying its unit: "size_bytes", "start_us".
  std::string_view key;
  OptionKind kind;
  /// Printable unit: "bytes", "count", "us", "fraction", "bool", "text", "host".
  std::string_view unit;
  /// Inclusive range of an integer, number, duration (in the key's unit) or host list (its length).
  double min = 0, max = 0;
  /// Either one use for every type of the family or one per type, in the order of the family's descriptors.
  std::vector<OptionUse> uses;
  /// One line saying what the option is.
  std::string_view meaning;
  /// The values of a choice.
  std::span<const std::string_view> choices = {};
};

/// The options of one family of workloads, in the order their workloads read them.
struct OptionTable {
  std::vector<WorkloadOption> options;
};

class OptionReader;

/// A registered workload type: one per type, defined beside its code (perftest.cpp, patterns.cpp,
/// collectives.cpp) in its family's array of descriptors; workload_registry() joins the families.
struct WorkloadType {
  std::string_view name;
  /// One line for `ibnetsim params workload`.
  std::string_view description;
  /// The family's option table (a function: the table is built on first use, after static initialisation).
  const OptionTable& (*options)();
  /// This type's index in its family, which picks its entry of an option's per-type uses.
  std::size_t column;
  /// Reads the workload's options (through `options`) and makes it; InputError on bad options.
  std::unique_ptr<Workload> (*make)(OptionReader& options, std::uint64_t seed);
};

/// How `type` takes `option` (its own entry of the option's uses, or the family's only one).
OptionUse option_use(const WorkloadOption& option, const WorkloadType& type);

/// Every registered workload type, in the order listings and the scenario schema's enum give them.
std::span<const WorkloadType> workload_registry();
/// The registered type named `name`, or nullptr.
const WorkloadType* find_workload_type(std::string_view name);
/// The workload types a scenario can name.
std::vector<std::string> workload_types();
/// The types that run on fabric-level hosts (Workload::runs_on_endpoints), comma-separated, for errors.
std::string endpoint_workload_types();
/// `ibnetsim params workload`: each type with its description.
std::string describe_workload_types();
/// `ibnetsim params workload TYPE`: each option `type` takes, with unit, default, range and meaning.
std::string describe_workload_options(const WorkloadType& type);
/// Reads one entry of a scenario's "workloads" (InputError on unknown keys, wrong types, impossible values).
std::unique_ptr<Workload> read_workload(sim::JsonObjectReader& reader, const std::string& file,
                                        const std::string& pointer, std::uint64_t seed);

} // namespace ib::host
