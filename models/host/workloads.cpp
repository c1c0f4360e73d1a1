#include "models/host/workloads.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/host/workloads_impl.h"

namespace ib::host {

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
  s.t_p99_us = at(0.99);
  s.t_p999_us = at(0.999);
  return s;
}

std::pair<std::uint16_t, std::uint32_t> Rendezvous::lookup(const std::string& peer, const std::string& host,
                                                           int tag) const {
  const auto it = table_.find({peer, host, tag});
  if (it == table_.end())
    throw std::logic_error(peer + " made no QP for " + host);
  return it->second;
}

std::vector<std::string> workload_types() {
  return {"ib_write_lat",   "ib_read_lat",
          "ib_send_lat",    "ib_atomic_lat",
          "ib_write_bw",    "ib_read_bw",
          "ib_send_bw",     "all_to_all",
          "permutation",    "incast",
          "hot_spot",       "uniform_random",
          "ring_allreduce", "recursive_doubling_allreduce"};
}

std::unique_ptr<Workload> read_workload(sim::JsonObjectReader& reader, const std::string& file,
                                        const std::string& pointer, std::uint64_t seed) {
  const std::string type =
      reader.required_enum("type", {"ib_write_lat", "ib_read_lat", "ib_send_lat", "ib_atomic_lat", "ib_write_bw",
                                    "ib_read_bw", "ib_send_bw", "all_to_all", "permutation", "incast", "hot_spot",
                                    "uniform_random", "ring_allreduce", "recursive_doubling_allreduce"});
  if (type.rfind("ib_", 0) == 0)
    return make_perftest(reader, file, pointer, type);
  if (type.find("allreduce") != std::string::npos)
    return make_collective(reader, file, pointer, type);
  return make_pattern(reader, file, pointer, type, seed);
}

void check_host(Cluster& cluster, const std::string& name, const std::string& file, const std::string& pointer) {
  try {
    cluster.host(name);
  } catch (const std::invalid_argument&) {
    throw sim::InputError(file, pointer, "the name of a host (an HCA node) of the topology", "\"" + name + "\"");
  }
}

std::vector<std::string> read_hosts(sim::JsonObjectReader& reader, std::string& pointer) {
  std::vector<std::string> hosts;
  pointer.clear();
  if (const nlohmann::json* list = reader.optional_array("hosts", 2, 1'000'000)) {
    pointer = reader.pointer_to("hosts");
    for (std::size_t i = 0; i < list->size(); ++i) {
      if (!(*list)[i].is_string())
        throw sim::InputError(reader.file(), sim::json_pointer_append(pointer, i), "a host name",
                              sim::describe_json_value((*list)[i]));
      hosts.push_back((*list)[i].get<std::string>());
    }
  }
  return hosts;
}

std::uint32_t read_mtu(sim::JsonObjectReader& reader) {
  const auto mtu = static_cast<std::uint32_t>(reader.optional_uint("mtu_bytes", 256, 4096).value_or(4096));
  if ((mtu & (mtu - 1)) != 0)
    throw sim::InputError(reader.file(), reader.pointer_to("mtu_bytes"), "256, 512, 1024, 2048 or 4096",
                          std::to_string(mtu));
  return mtu;
}

sim::Time read_start(sim::JsonObjectReader& reader) {
  return reader.optional_duration("start_us", sim::Time::zero(), sim::Time::from_ms(86'400'000))
      .value_or(sim::Time::zero());
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
