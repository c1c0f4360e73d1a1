// Internal to the workloads: the factories of each family and the checks they share.
#pragma once

#include <memory>
#include <string>

#include "models/host/workloads.h"
#include "sim/errors.h"

namespace ib::host {

std::unique_ptr<Workload> make_perftest(sim::JsonObjectReader& reader, const std::string& file,
                                        const std::string& pointer, const std::string& type);
std::unique_ptr<Workload> make_pattern(sim::JsonObjectReader& reader, const std::string& file,
                                       const std::string& pointer, const std::string& type, std::uint64_t seed);

std::unique_ptr<Workload> make_collective(sim::JsonObjectReader& reader, const std::string& file,
                                          const std::string& pointer, const std::string& type);

/// InputError at `pointer` unless `cluster` has a host named `name`.
void check_host(Cluster& cluster, const std::string& name, const std::string& file, const std::string& pointer);

} // namespace ib::host
