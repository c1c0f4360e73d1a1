// Built-in workloads (docs/scenario-reference.md): each is a set of host programs (SimGrid actors using host::Context)
// and the figures they report. perftest's tests with perftest's options and figures, and traffic patterns over many
// hosts. QPs are created at time 0 and connected at 1 ns, as an out-of-band exchange (rdma_cm, MPI) would leave them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
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
};
LatencyStats summarize(std::vector<sim::Time> samples);

/// Where the QP a program made for a peer is; programs publish theirs at time 0 and read their peers' at 1 ns.
class Rendezvous {
public:
  void publish(const std::string& host, const std::string& peer, int tag, std::uint16_t lid, std::uint32_t qpn) {
    table_[{host, peer, tag}] = {lid, qpn};
  }
  /// The QP `peer` made for `host` under `tag`.
  std::pair<std::uint16_t, std::uint32_t> lookup(const std::string& peer, const std::string& host, int tag) const;

private:
  std::map<std::tuple<std::string, std::string, int>, std::pair<std::uint16_t, std::uint32_t>> table_;
};

/// A workload of a scenario: reads its options, spawns its programs, reports what they measured.
class Workload {
public:
  virtual ~Workload() = default;
  const std::string& name() const { return name_; }
  const std::string& type() const { return type_; }
  /// Spawns the programs on `cluster`; names of hosts are checked here (InputError at `pointer`).
  virtual void spawn(Cluster& cluster, Rendezvous& rendezvous) = 0;
  /// Figures for the JSON report (after the run).
  virtual nlohmann::ordered_json results() const = 0;
  /// Lines for the human table.
  virtual std::vector<std::string> table() const = 0;
  /// The options in effect, defaults included, for the configuration digest.
  virtual nlohmann::ordered_json config() const = 0;

protected:
  std::string name_, type_, file_, pointer_;
};

/// The workload types a scenario can name.
std::vector<std::string> workload_types();
/// Reads one entry of a scenario's "workloads" (InputError on unknown keys, wrong types, impossible values).
std::unique_ptr<Workload> read_workload(sim::JsonObjectReader& reader, const std::string& file,
                                        const std::string& pointer, std::uint64_t seed);

} // namespace ib::host
