// Internal to the workloads: the factories of each family and the checks they share.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/host/workloads.h"
#include "sim/errors.h"
#include "sim/json_reader.h"
#include "sim/time.h"

namespace ib::host {

std::unique_ptr<Workload> make_perftest(sim::JsonObjectReader& reader, const std::string& file,
                                        const std::string& pointer, const std::string& type);
std::unique_ptr<Workload> make_pattern(sim::JsonObjectReader& reader, const std::string& file,
                                       const std::string& pointer, const std::string& type, std::uint64_t seed);

std::unique_ptr<Workload> make_collective(sim::JsonObjectReader& reader, const std::string& file,
                                          const std::string& pointer, const std::string& type);

/// InputError at `pointer` unless `cluster` has a host named `name`.
void check_host(Cluster& cluster, const std::string& name, const std::string& file, const std::string& pointer);

// Options several families share, read the same way everywhere.
/// "hosts": host names (at least 2), or empty when absent (every host); `pointer` gets where the list is ("" if
/// absent).
std::vector<std::string> read_hosts(sim::JsonObjectReader& reader, std::string& pointer);
/// "mtu_bytes": the path MTU, 256..4096 and a power of two (default 4096).
std::uint32_t read_mtu(sim::JsonObjectReader& reader);
/// "start_us": when the workload starts (default 0).
sim::Time read_start(sim::JsonObjectReader& reader);
/// At spawn: `hosts` filled with every host of `cluster` when empty, and each name checked; errors point at
/// `hosts_pointer`, or at `workload_pointer` when the list was defaulted.
void resolve_hosts(Cluster& cluster, std::vector<std::string>& hosts, const std::string& file,
                   const std::string& hosts_pointer, const std::string& workload_pointer);

} // namespace ib::host
