// Traffic patterns over many hosts, each host a program with one RC QP per peer it talks to:
//   all_to_all      every host sends to every other, shift-ordered (in phase k host i sends to host i + k);
//   permutation     every host sends to one partner, a random derangement drawn from the seed;
//   incast          senders all send to one receiver;
//   hot_spot        every host sends, a fraction of its messages to one hot host and the rest uniformly;
//   uniform_random  every host sends to uniformly random others at an offered load (Poisson arrivals).
// A host keeps at most `tx_depth` messages outstanding, posted in its plan's order. Message sizes are fixed or
// drawn from a discrete distribution. Reported: per-flow throughput, aggregate throughput and message rate, the
// per-host injection rate, the fairness of the flows, and message latency (post to completion).
#include <algorithm>
#include <bit>
#include <cassert>
#include <numeric>
#include <sstream>
#include <utility>

#include "models/host/workloads_impl.h"
#include "sim/rng.h"

namespace ib::host {
namespace {

struct Message {
  std::uint32_t peer; ///< index into the workload's hosts
  std::uint32_t size;
  sim::Time not_before;
};

struct FlowStats {
  std::uint64_t messages = 0, bytes = 0;
  sim::Time first_post = sim::Time::max(), last_completion;
};

/// The link of `host`'s first port, whatever model stands behind it.
const link::LinkConfig& host_link(Cluster& cluster, const std::string& host) {
  HostNode& h = cluster.host(host);
  return h.hca ? h.hca->port(1).link() : h.endpoint->port(1).link();
}

class Pattern : public Workload, private endpoint::Client, private Timed {
public:
  Pattern(OptionReader& o, std::uint64_t seed) : seed_(seed) {
    sim::JsonObjectReader& r = o.json();
    const std::string& file = o.file();
    file_ = file;
    pointer_ = o.pointer();
    type_ = o.type().name;
    const std::string& type = type_;
    name_ = o.text("name");
    hosts_ = o.hosts("hosts", hosts_pointer_);
    verb_ = o.choice("verb");
    const auto size = o.integer_if_set("size_bytes");
    if (auto dist = o.object("size_distribution")) {
      if (size)
        throw sim::InputError(file, r.pointer_to("size_distribution"), "size_bytes or size_distribution, not both",
                              "both");
      const nlohmann::json& values = dist->required_array("values_bytes", 1, 1024);
      const nlohmann::json& weights = dist->required_array("weights", 1, 1024);
      if (values.size() != weights.size())
        throw sim::InputError(file, dist->pointer_to("weights"),
                              "as many weights as values (" + std::to_string(values.size()) + ")",
                              "array of " + std::to_string(weights.size()));
      for (std::size_t i = 0; i < values.size(); ++i) {
        if (!values[i].is_number_unsigned() || values[i].get<std::uint64_t>() == 0 ||
            values[i].get<std::uint64_t>() > (1u << 30))
          throw sim::InputError(file, sim::json_pointer_append(dist->pointer_to("values_bytes"), i),
                                "a size in bytes, 1..2^30", sim::describe_json_value(values[i]));
        if (!weights[i].is_number() || weights[i].get<double>() <= 0)
          throw sim::InputError(file, sim::json_pointer_append(dist->pointer_to("weights"), i), "a positive weight",
                                sim::describe_json_value(weights[i]));
        sizes_.push_back(values[i].get<std::uint32_t>());
        weights_.push_back(weights[i].get<double>());
      }
      dist->finish();
    } else {
      sizes_ = {static_cast<std::uint32_t>(o.integer("size_bytes"))};
      weights_ = {1};
    }
    messages_ = static_cast<std::uint32_t>(o.integer("messages"));
    tx_depth_ = static_cast<std::uint32_t>(o.integer("tx_depth"));
    srq_ = o.flag("srq");
    if (srq_ && verb_ != "send")
      throw sim::InputError(file, r.pointer_to("srq"), "false: only SENDs take receive WQEs (verb \"send\")", "true");
    mtu_ = read_mtu(o);
    recovery_ = read_rc_recovery(o);
    start_ = o.duration("start_us");
    after_ = o.text("after");
    timeline_bin_ = o.duration("timeline_us");
    if (timeline_bin_ != sim::Time::zero() && timeline_bin_ < sim::Time::from_us(1))
      throw sim::InputError(file, r.pointer_to("timeline_us"), "0 (no timeline) or at least 1 us",
                            sim::param_detail::format_number(timeline_bin_.us()));
    if (type == "incast") {
      receiver_ = o.text("receiver");
      receiver_pointer_ = r.pointer_to("receiver");
    }
    if (type == "hot_spot") {
      receiver_ = o.text("hot_host");
      receiver_pointer_ = r.pointer_to("hot_host");
      hot_fraction_ = o.number("hot_fraction");
    }
    if (type == "uniform_random")
      offered_load_ = o.number("offered_load");
    r.finish();
  }

  nlohmann::ordered_json config() const override {
    nlohmann::ordered_json c;
    c["type"] = type_;
    c["name"] = name_;
    c["hosts"] = hosts_;
    c["verb"] = verb_;
    c["sizes_bytes"] = sizes_;
    c["size_weights"] = weights_;
    c["messages"] = messages_;
    c["tx_depth"] = tx_depth_;
    c["srq"] = srq_;
    c["mtu_bytes"] = mtu_;
    c["qp_timeout"] = recovery_.timeout;
    c["retry_count"] = recovery_.retry_count;
    c["start_us"] = start_.us();
    if (!after_.empty())
      c["after"] = after_;
    if (!receiver_.empty())
      c[type_ == "incast" ? "receiver" : "hot_host"] = receiver_;
    if (type_ == "hot_spot")
      c["hot_fraction"] = hot_fraction_;
    if (type_ == "uniform_random")
      c["offered_load"] = offered_load_;
    if (timeline_bin_ != sim::Time::zero()) // absent when off, so that older reports keep their digests
      c["timeline_us"] = timeline_bin_.us();
    return c;
  }

  Footprint footprint(std::uint64_t topology_hosts) const override {
    // As plan() and run_host() make them: n hosts (the receiver or hot host added when not listed), each a program
    // with one QP per peer it talks to, one CQ, a plan of its messages and an n-wide row of flows.
    std::uint64_t n = hosts_.empty() ? topology_hosts : hosts_.size();
    if (!receiver_.empty() && std::find(hosts_.begin(), hosts_.end(), receiver_) == hosts_.end())
      ++n;
    const std::uint64_t peers = n > 0 ? n - 1 : 0, m = messages_;
    Footprint f;
    f.programs = n;
    if (type_ == "all_to_all") {
      f.messages = n * peers * m;
      f.qps = n * peers;
      f.max_qps_per_host = peers;
    } else if (type_ == "permutation") {
      f.messages = n * m;
      f.qps = 2 * n; // its partner, and the host whose partner it is
      f.max_qps_per_host = std::min<std::uint64_t>(2, peers);
    } else if (type_ == "incast") {
      f.messages = peers * m;
      f.qps = 2 * peers;
      f.max_qps_per_host = peers;
    } else { // random peers: about as many as a host sends and receives, and at most every other host
      f.messages = n * m;
      const std::uint64_t per_host = std::min(peers, 2 * m);
      f.qps = type_ == "hot_spot" ? (n - 1) * per_host + peers : n * per_host;
      f.max_qps_per_host = peers;
    }
    const bool sends = verb_ == "send";
    f.send_slots = f.qps * tx_depth_;
    // A QP of these patterns carries m messages to one peer: never more than that in flight.
    const bool m_per_qp = type_ == "all_to_all" || type_ == "permutation" || type_ == "incast";
    f.send_slots_held = f.qps * std::bit_ceil(m_per_qp ? std::min<std::uint64_t>(tx_depth_, m) : tx_depth_);
    // A SEND's receiver posts a RECV per message it will get (at most 32768 per QP); a WRITE's QPs take one.
    f.recv_slots = sends ? std::min(f.messages, f.qps * 32768) : f.qps;
    f.cq_entries = n * (tx_depth_ + 16) + (sends ? f.messages : 0);
    f.flows = std::min(n * n, f.messages); // a record per (sender, receiver) its plan has
    f.peer_map_entries = 2 * n * n;        // each host's QP by peer and messages from each peer
    f.buffer_bytes = n * 2ull * *std::max_element(sizes_.begin(), sizes_.end());
    f.queue_bytes = f.send_slots * 64 + f.recv_slots * 16 + f.cq_entries * 64;
    const std::string& hosts = hosts_pointer_.empty() ? pointer_ : hosts_pointer_;
    f.programs_pointer = f.flows_pointer = hosts;
    f.qps_pointer =
        type_ == "all_to_all" || type_ == "incast" || type_ == "permutation" ? hosts : pointer_ + "/messages";
    f.slots_pointer = pointer_ + "/tx_depth";
    f.messages_pointer = pointer_ + "/messages";
    f.buffer_pointer = pointer_ + (sizes_.size() > 1 ? "/size_distribution" : "/size_bytes");
    return f;
  }

  bool runs_on_endpoints() const override { return true; }

  void spawn_programs(Cluster& cluster, Rendezvous& rendezvous) override {
    resolve_hosts(cluster, hosts_, file_, hosts_pointer_, pointer_);
    if (!receiver_.empty()) {
      check_host(cluster, receiver_, file_, receiver_pointer_);
      receiver_index_ = static_cast<std::uint32_t>(std::find(hosts_.begin(), hosts_.end(), receiver_) - hosts_.begin());
      if (receiver_index_ == hosts_.size())
        hosts_.push_back(receiver_);
    }
    rendezvous_ = &rendezvous;
    host_ids_.clear();
    for (const std::string& h : hosts_) // interned once: a host publishes and takes a QP per peer
      host_ids_.push_back(rendezvous.id(h));
    line_rate_gbps_ = host_link(cluster, hosts_[0]).data_rate.bps() / 1e9;
    plan(cluster);
    // A record per flow the plans have, not per pair of hosts: 8,192 hosts would need 2 GiB for the pairs.
    flows_.assign(hosts_.size(), {});
    for (std::size_t i = 0; i < hosts_.size(); ++i) {
      std::vector<std::uint32_t> peers;
      for (const Message& m : plans_[i])
        peers.push_back(m.peer);
      std::sort(peers.begin(), peers.end());
      peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
      for (const std::uint32_t d : peers)
        flows_[i].push_back({d, FlowStats{}});
    }
    failed_to_.assign(hosts_.size(), 0);
    peer_buffer_.assign(hosts_.size(), 0);
    if (cluster.host_model() == HostModel::fabric) {
      start_endpoints(cluster);
      return;
    }
    for (std::uint32_t i = 0; i < hosts_.size(); ++i)
      spawn_program(cluster, hosts_[i], name_ + "/" + hosts_[i], [this, i](Context& ctx) { run_host(ctx, i); });
  }

  nlohmann::ordered_json results() const override {
    nlohmann::ordered_json out;
    out["messages"] = total_messages_;
    out["messages_failed"] = messages_failed_;
    // The longest any message waited for its outcome, delivered or failed: with faults, how long the worst-hit
    // message's sender was left waiting (a failed message is not in message_latency).
    out["worst_outcome_us"] = worst_outcome_.us();
    out["bytes"] = total_bytes_;
    out["elapsed_us"] = elapsed().us();
    out["aggregate_gbps"] = aggregate_gbps();
    out["per_host_injection_gbps"] = aggregate_gbps() / static_cast<double>(std::max<std::size_t>(senders(), 1));
    out["per_host_injection_fraction_of_line_rate"] =
        aggregate_gbps() / static_cast<double>(std::max<std::size_t>(senders(), 1)) / line_rate_gbps_;
    out["msg_rate_mpps"] = static_cast<double>(total_messages_) / std::max<std::int64_t>(elapsed().ps(), 1) * 1e6;
    const LatencyStats lat = latency();
    out["message_latency"] = {{"t_min_us", lat.t_min_us},          {"t_typical_us", lat.t_typical_us},
                              {"t_max_us", lat.t_max_us},          {"t_avg_us", lat.t_avg_us},
                              {"t_stdev_us", lat.t_stdev_us},      {"t_99_percent_us", lat.t_p99_us},
                              {"t_99_9_percent_us", lat.t_p999_us}};
    double min_gbps = 0, max_gbps = 0;
    flow_range(min_gbps, max_gbps);
    out["flow_gbps_min"] = min_gbps;
    out["flow_gbps_max"] = max_gbps;
    // A million flows make a DOM of hundreds of MB (a JSON object per row): built in place, moved, never copied.
    nlohmann::ordered_json& flows = out["flows"] = nlohmann::ordered_json::array();
    std::size_t rows = 0;
    for (const auto& per_source : flows_)
      for (const auto& [d, f] : per_source)
        rows += f.messages != 0 ? 1 : 0;
    flows.get_ref<nlohmann::ordered_json::array_t&>().reserve(rows);
    for (std::size_t s = 0; s < hosts_.size(); ++s)
      for (const auto& [d, f] : flows_[s]) {
        if (f.messages == 0)
          continue;
        nlohmann::ordered_json row = nlohmann::ordered_json::object();
        row.get_ref<nlohmann::ordered_json::object_t&>().reserve(5);
        row["source"] = hosts_[s];
        row["destination"] = hosts_[d];
        row["messages"] = f.messages;
        row["bytes"] = f.bytes;
        row["gbps"] = flow_gbps(f);
        flows.push_back(std::move(row));
      }
    if (timeline_bin_ != sim::Time::zero()) {
      // Throughput over time: the bytes of the messages that completed in each bin, from time zero, so that the
      // timelines of workloads running together line up.
      nlohmann::ordered_json gbps = nlohmann::ordered_json::array();
      for (const std::uint64_t bytes : timeline_bytes_)
        gbps.push_back(static_cast<double>(bytes) * 8 / static_cast<double>(timeline_bin_.ps()) * 1e3);
      out["timeline"] = {{"bin_us", timeline_bin_.us()}, {"gbps", gbps}};
    }
    return out;
  }

  std::vector<std::string> table() const override {
    std::vector<std::string> lines;
    std::ostringstream head;
    head << name_ << " (" << type_ << ", " << verb_ << ", " << hosts_.size() << " hosts)";
    lines.push_back(head.str());
    char line[240];
    double min_gbps = 0, max_gbps = 0;
    flow_range(min_gbps, max_gbps);
    std::snprintf(line, sizeof line,
                  " messages %llu, %.3f MB in %.2f us: aggregate %.2f Gb/s, per host %.2f Gb/s (%.1f %% of line rate), "
                  "%.3f Mpps",
                  static_cast<unsigned long long>(total_messages_), static_cast<double>(total_bytes_) / 1e6,
                  elapsed().us(), aggregate_gbps(),
                  aggregate_gbps() / static_cast<double>(std::max<std::size_t>(senders(), 1)),
                  100 * aggregate_gbps() / static_cast<double>(std::max<std::size_t>(senders(), 1)) / line_rate_gbps_,
                  static_cast<double>(total_messages_) / std::max<std::int64_t>(elapsed().ps(), 1) * 1e6);
    lines.push_back(line);
    if (messages_failed_ > 0) {
      std::snprintf(line, sizeof line,
                    " messages failed %llu (not in the figures here); the longest wait for an outcome %.2f us",
                    static_cast<unsigned long long>(messages_failed_), worst_outcome_.us());
      lines.push_back(line);
    }
    std::snprintf(line, sizeof line,
                  " flows %.2f..%.2f Gb/s; message latency typical %.2f us, avg %.2f us, 99%% %.2f us, max %.2f us",
                  min_gbps, max_gbps, latency().t_typical_us, latency().t_avg_us, latency().t_p99_us,
                  latency().t_max_us);
    lines.push_back(line);
    return lines;
  }

private:
  /// A message of `bytes` completed at `at`: counted in its timeline bin (timeline_us).
  void note_timeline(sim::Time at, std::uint32_t bytes) {
    if (timeline_bin_ == sim::Time::zero())
      return;
    const auto bin = static_cast<std::size_t>(at.ps() / timeline_bin_.ps());
    if (bin >= timeline_bytes_.size())
      timeline_bytes_.resize(bin + 1, 0);
    timeline_bytes_[bin] += bytes;
  }
  /// Message latency: summarized when the last host ended, or, for a run cut short, of the messages completed.
  LatencyStats latency() const { return hosts_finished_ == hosts_.size() ? message_latency_ : summarize(latencies_); }
  std::size_t senders() const {
    std::size_t n = 0;
    for (const auto& p : plans_)
      n += p.empty() ? 0 : 1;
    return n;
  }
  /// From the first post to the last completion; zero when nothing completed (a run cut short).
  sim::Time elapsed() const { return total_messages_ == 0 ? sim::Time::zero() : last_ - first_; }
  double aggregate_gbps() const {
    return static_cast<double>(total_bytes_) * 8 / std::max<std::int64_t>(elapsed().ps(), 1) * 1e3;
  }
  static double flow_gbps(const FlowStats& f) {
    if (f.messages == 0)
      return 0;
    return static_cast<double>(f.bytes) * 8 / std::max<std::int64_t>((f.last_completion - f.first_post).ps(), 1) * 1e3;
  }
  void flow_range(double& min_gbps, double& max_gbps) const {
    bool any = false;
    for (const auto& row : flows_)
      for (const auto& [d, f] : row) {
        if (f.messages == 0)
          continue;
        const double g = flow_gbps(f);
        min_gbps = any ? std::min(min_gbps, g) : g;
        max_gbps = any ? std::max(max_gbps, g) : g;
        any = true;
      }
  }

  std::uint32_t draw_size(sim::Rng& rng) const {
    if (sizes_.size() == 1)
      return sizes_[0];
    const double total = std::accumulate(weights_.begin(), weights_.end(), 0.0);
    double x = rng.uniform01() * total;
    for (std::size_t i = 0; i < sizes_.size(); ++i) {
      if (x < weights_[i])
        return sizes_[i];
      x -= weights_[i];
    }
    return sizes_.back();
  }

  /// Every host's messages, in the order it posts them.
  void plan(Cluster& cluster) {
    const auto n = static_cast<std::uint32_t>(hosts_.size());
    plans_.assign(n, {});
    sim::Rng rng(seed_, 0x7061'7474'6572'6e00ull ^ std::hash<std::string>{}(name_));
    if (type_ == "all_to_all") {
      for (std::uint32_t k = 1; k < n; ++k)
        for (std::uint32_t i = 0; i < n; ++i)
          for (std::uint32_t m = 0; m < messages_; ++m)
            plans_[i].push_back({(i + k) % n, draw_size(rng), sim::Time::zero()});
    } else if (type_ == "permutation") {
      // A random derangement: shuffle until no host sends to itself (Fisher-Yates with the seeded stream).
      std::vector<std::uint32_t> partner(n);
      do {
        std::iota(partner.begin(), partner.end(), 0u);
        for (std::uint32_t i = n - 1; i > 0; --i)
          std::swap(partner[i], partner[rng.uniform_below(i + 1)]);
      } while (std::any_of(partner.begin(), partner.end(), [&, i = 0u](std::uint32_t p) mutable { return p == i++; }));
      for (std::uint32_t i = 0; i < n; ++i)
        for (std::uint32_t m = 0; m < messages_; ++m)
          plans_[i].push_back({partner[i], draw_size(rng), sim::Time::zero()});
    } else if (type_ == "incast") {
      for (std::uint32_t i = 0; i < n; ++i)
        if (i != receiver_index_)
          for (std::uint32_t m = 0; m < messages_; ++m)
            plans_[i].push_back({receiver_index_, draw_size(rng), sim::Time::zero()});
    } else if (type_ == "hot_spot" || type_ == "uniform_random") {
      const double rate_bytes_per_ps = host_link(cluster, hosts_[0]).data_rate.bps() / 8 / 1e12;
      for (std::uint32_t i = 0; i < n; ++i) {
        sim::Time t = sim::Time::zero();
        for (std::uint32_t m = 0; m < messages_; ++m) {
          std::uint32_t peer;
          if (type_ == "hot_spot" && i != receiver_index_ && rng.uniform01() < hot_fraction_) {
            peer = receiver_index_;
          } else {
            peer = static_cast<std::uint32_t>(rng.uniform_below(n - 1));
            peer += peer >= i ? 1 : 0;
          }
          const std::uint32_t size = draw_size(rng);
          if (type_ == "uniform_random") {
            const double mean_gap_ps = static_cast<double>(size) / (offered_load_ * rate_bytes_per_ps);
            t += sim::Time::from_ps(static_cast<std::int64_t>(-std::log(1 - rng.uniform01()) * mean_gap_ps));
          }
          plans_[i].push_back({peer, size, t});
        }
      }
    }
  }

  /// The messages host `me` will receive, as (sender, count) by sender. Made for every host in one pass over the
  /// plans the first time a host asks, rather than by each host over every plan (hosts x messages: 10^9 steps for a
  /// 1,024-host all-to-all).
  const std::vector<std::pair<std::uint32_t, std::uint32_t>>& incoming_from(std::uint32_t me) {
    if (incoming_.empty()) {
      incoming_.resize(hosts_.size());
      for (std::uint32_t s = 0; s < plans_.size(); ++s)
        for (const Message& m : plans_[s]) {
          auto& in = incoming_[m.peer]; // senders come in order, so a sender's messages are counted together
          if (!in.empty() && in.back().first == s)
            ++in.back().second;
          else
            in.emplace_back(s, 1);
        }
    }
    return incoming_[me];
  }

  void run_host(Context& ctx, std::uint32_t me) {
    const auto n = static_cast<std::uint32_t>(hosts_.size());
    // One QP per peer this host sends to or receives from.
    std::vector<std::uint32_t> incoming(n, 0);
    for (const auto& [sender, count] : incoming_from(me))
      incoming[sender] = count;
    std::vector<bool> talks(n, false);
    for (const Message& m : plans_[me])
      talks[m.peer] = true;
    for (std::uint32_t s = 0; s < n; ++s)
      talks[s] = talks[s] || incoming[s] > 0;
    // One CQ for every QP of the host: room for every send outstanding and every message it may receive.
    const std::uint64_t receives = verb_ == "send" ? std::accumulate(incoming.begin(), incoming.end(), 0ull) : 0;
    const std::uint32_t cq =
        ctx.create_cq(static_cast<std::uint32_t>(std::min<std::uint64_t>(tx_depth_ + receives + 16, 1u << 22)));
    std::vector<std::uint32_t> qp_of(n, 0);
    std::uint32_t max_size = *std::max_element(sizes_.begin(), sizes_.end());
    const std::uint64_t buffer = ctx.memory().allocate(std::uint64_t{max_size} * 2);
    peer_buffer_[me] = buffer + max_size; // what others write to; the first half is what this host sends from
    // With srq, one shared receive queue serves every QP of the host: kept full, reposted as RECVs complete.
    const std::uint64_t to_receive = std::accumulate(incoming.begin(), incoming.end(), std::uint64_t{0});
    const std::uint32_t srq_depth = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(to_receive, 1, 32768));
    const std::uint32_t srq = srq_ ? ctx.create_srq(srq_depth) : verbs::no_srq;
    const verbs::RecvWr recv{0, buffer + max_size, max_size};
    std::uint64_t recvs_posted = 0;
    for (std::uint32_t p = 0; p < n; ++p) {
      if (!talks[p])
        continue;
      verbs::QpCaps caps;
      caps.max_send_wr = tx_depth_;
      caps.max_recv_wr = verb_ == "send" ? std::clamp<std::uint32_t>(incoming[p], 1, 32768) : 1;
      caps.srq = srq;
      qp_of[p] = ctx.create_qp(verbs::QpType::rc, caps, cq, cq);
      rendezvous_->publish(host_ids_[me], host_ids_[p], 0, ctx.lid(), qp_of[p]);
    }
    ctx.program().sleep_until(ctx.now() + sim::Time::from_ns(1));
    for (std::uint32_t p = 0; p < n; ++p) {
      if (!talks[p])
        continue;
      const auto [lid, qpn] = rendezvous_->take(host_ids_[p], host_ids_[me], 0);
      verbs::QpAttr attr;
      attr.dest_lid = lid;
      attr.dest_qpn = qpn;
      attr.sl = ctx.path_sl(lid);
      attr.path_mtu = static_cast<verbs::Mtu>(mtu_);
      attr.timeout = recovery_.timeout;
      attr.retry_cnt = recovery_.retry_count;
      ctx.connect_qp(qp_of[p], attr);
      if (verb_ == "send" && !srq_)
        for (std::uint32_t k = 0; k < std::min<std::uint32_t>(incoming[p], 32768); ++k)
          ctx.post_recv(qp_of[p], recv);
    }
    for (; srq_ && recvs_posted < srq_depth; ++recvs_posted)
      ctx.post_srq_recv(srq, recv);
    // Every host has posted its RECVs before anyone sends (an out-of-band barrier).
    const sim::Time go = std::max(wait_to_start(ctx, start_), sim::Time::from_us(1)) + sim::Time::from_ns(2);
    if (ctx.now() < go)
      ctx.program().sleep_until(go);
    const std::vector<Message>& plan = plans_[me];
    std::vector<sim::Time> posted_at(plan.size());
    std::vector<verbs::WorkCompletion> wc(64);
    std::size_t next = 0, done = 0;
    std::uint32_t outstanding = 0;
    std::uint64_t received = 0;
    // With faults a message may fail at its sender and never come: a receiver stops waiting for it once the
    // sender has counted it failed (failed_to_), and re-checks that count while it waits.
    const auto awaiting = [&] { return verb_ == "send" && received + failed_to_[me] < to_receive; };
    while (done < plan.size() || awaiting()) {
      while (next < plan.size() && outstanding < tx_depth_ && go + plan[next].not_before <= ctx.now()) {
        const Message& m = plan[next];
        verbs::SendWr wr;
        wr.wr_id = next;
        wr.opcode = verb_ == "write" ? verbs::WrOpcode::rdma_write : verbs::WrOpcode::send;
        wr.local_address = buffer;
        wr.length_bytes = m.size;
        wr.remote_address = peer_buffer_.at(m.peer);
        const verbs::PostResult r = ctx.post_send(qp_of[m.peer], wr);
        if (!r.ok()) {
          record_refused_post(ctx.faults(), r.error, "pattern-post", "pattern-completion"); // the message fails
          ++failed_to_[m.peer];
          ++messages_failed_;
          ++next;
          ++done;
          continue;
        }
        posted_at[next] = ctx.now();
        FlowStats& f = flow(me, m.peer);
        f.first_post = std::min(f.first_post, ctx.now());
        first_ = std::min(first_, ctx.now());
        ++outstanding;
        ++next;
      }
      if (done == plan.size() && !awaiting())
        break;
      sim::Time deadline = sim::Time::max();
      if (next < plan.size() && outstanding < tx_depth_)
        deadline = go + plan[next].not_before;
      if (ctx.faults() && done == plan.size())
        deadline = std::min(deadline, ctx.now() + failure_recheck);
      const int got = ctx.wait_cq(cq, wc, deadline);
      for (int k = 0; k < got; ++k) {
        const verbs::WorkCompletion& c = wc[static_cast<std::size_t>(k)];
        if (c.status != verbs::WcStatus::success) {
          record_failure(ctx.faults(), verbs::to_string(c.status), "pattern-completion");
          if (c.opcode == verbs::WcOpcode::recv)
            continue; // a flushed RECV: its message is counted where it failed, at the sender
          ++failed_to_[plan[c.wr_id].peer];
          ++messages_failed_;
          worst_outcome_ = std::max(worst_outcome_, ctx.now() - posted_at[c.wr_id]);
          --outstanding;
          ++done;
          continue;
        }
        if (c.opcode == verbs::WcOpcode::recv) {
          ++received;
          if (srq_ && recvs_posted < to_receive) {
            ctx.post_srq_recv(srq, recv);
            ++recvs_posted;
          }
          continue;
        }
        const Message& m = plan[c.wr_id];
        FlowStats& f = flow(me, m.peer);
        ++f.messages;
        f.bytes += m.size;
        f.last_completion = ctx.now();
        last_ = std::max(last_, ctx.now());
        ++total_messages_;
        total_bytes_ += m.size;
        note_timeline(ctx.now(), m.size);
        latencies_.push_back(ctx.now() - posted_at[c.wr_id]);
        worst_outcome_ = std::max(worst_outcome_, latencies_.back());
        --outstanding;
        ++done;
      }
    }
    if (++hosts_finished_ == hosts_.size())
      message_latency_ = summarize(std::move(latencies_));
  }

  // HostModel::fabric: each host a state machine over its endpoint, posting as run_host() does: in plan order,
  // at most tx_depth outstanding, none before its time.
  struct NativeHost {
    endpoint::Endpoint* endpoint = nullptr;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> qp_by_peer; ///< (peer, local QPN), by peer
    std::size_t next = 0, done = 0;
    std::uint32_t outstanding = 0;
    sim::Time timer_at = sim::Time::max(); ///< the earliest timer pending
    bool ended = false;
  };

  std::uint32_t qp_to(const NativeHost& h, std::uint32_t peer) const {
    const auto it = std::lower_bound(h.qp_by_peer.begin(), h.qp_by_peer.end(), std::make_pair(peer, 0u));
    return it->second;
  }

  void start_endpoints(Cluster& cluster) {
    const auto n = static_cast<std::uint32_t>(hosts_.size());
    cluster_ = &cluster;
    timer_ = cluster.add_timed(*this);
    native_.assign(n, NativeHost{});
    // One connection per pair of hosts that talk, in either direction, as run_host() makes QPs.
    std::vector<std::vector<std::uint32_t>> peers(n);
    for (std::uint32_t s = 0; s < n; ++s)
      for (const Message& m : plans_[s]) {
        peers[s].push_back(m.peer);
        peers[m.peer].push_back(s);
      }
    for (std::uint32_t i = 0; i < n; ++i) {
      NativeHost& h = native_[i];
      h.endpoint = cluster.host(hosts_[i]).endpoint.get();
      std::sort(peers[i].begin(), peers[i].end());
      peers[i].erase(std::unique(peers[i].begin(), peers[i].end()), peers[i].end());
      h.endpoint->reserve_connections(peers[i].size()); // not a doubling's slack over millions of connections
      h.qp_by_peer.reserve(peers[i].size());
      for (const std::uint32_t p : peers[i])
        h.qp_by_peer.emplace_back(p, h.endpoint->create_connection(*this, i));
    }
    const endpoint::Verb verb = verb_ == "write" ? endpoint::Verb::write : endpoint::Verb::send;
    const sim::Time timeout = recovery_.timeout == 0 ? sim::Time::zero()
                                                     : sim::Time::from_ps(4'096'000) *
                                                           (std::int64_t{1} << std::min<int>(recovery_.timeout, 31));
    // Host i's QP to p connects to p's QP to i. Taking the hosts in order, the hosts that reach p come in p's own
    // (sorted) peer order, since p talks to i exactly when i talks to p: p's QP to i is the next of p's list, where a
    // search of it would cost a cache miss per step on millions of connections.
    std::vector<std::uint32_t> next_of_peer(n, 0);
    std::vector<std::uint16_t> lid(n);
    for (std::uint32_t i = 0; i < n; ++i)
      lid[i] = native_[i].endpoint->lid();
    for (std::uint32_t i = 0; i < n; ++i) {
      NativeHost& h = native_[i];
      const HostNode& node = cluster.host(hosts_[i]);
      for (const auto& [p, qpn] : h.qp_by_peer) {
        const NativeHost& peer = native_[p];
        const auto& [peer_of_peer, remote_qpn] = peer.qp_by_peer[next_of_peer[p]++];
        assert(peer_of_peer == i && "peer lists are symmetric and sorted");
        (void)peer_of_peer;
        h.endpoint->connect(qpn, lid[p], cluster.path_sl(node, lid[p]), remote_qpn, mtu_, verb, timeout,
                            recovery_.retry_count);
      }
    }
    native_started(n);
    if (predecessor() == nullptr)
      begin_native(cluster.simulator(), start_);
  }

  void predecessor_ended(sim::Simulator& sim, sim::Time at) override {
    if (cluster_ != nullptr)
      begin_native(sim, at + start_);
  }

  /// Every host starts at `begin`, or 1 us at the earliest (when the programs of the full host model have made
  /// and connected their QPs), plus the 2 ns of their barrier.
  void begin_native(sim::Simulator& sim, sim::Time begin) {
    go_ = std::max(begin, sim::Time::from_us(1)) + sim::Time::from_ns(2);
    for (std::uint32_t i = 0; i < native_.size(); ++i) {
      native_[i].timer_at = go_;
      sim.schedule(go_, timer_, 0, i);
    }
  }

  void on_timer(sim::Simulator& sim, std::uint32_t i) override {
    NativeHost& h = native_[i];
    if (sim.now() >= h.timer_at)
      h.timer_at = sim::Time::max();
    pump(sim, i);
  }

  void pump(sim::Simulator& sim, std::uint32_t me) {
    NativeHost& h = native_[me];
    const std::vector<Message>& plan = plans_[me];
    const sim::Time now = sim.now();
    while (h.next < plan.size() && h.outstanding < tx_depth_ && go_ + plan[h.next].not_before <= now) {
      const Message& m = plan[h.next];
      // The work request names the message's flow, so that its completion needs nothing else (the endpoint gives
      // back its size and when it was posted): no per-message state here, and no look-up of the plan.
      const std::uint32_t flow = flow_index(me, m.peer);
      h.endpoint->post(sim, qp_to(h, m.peer), std::uint64_t{flow} << 32 | h.next, m.size);
      FlowStats& f = flows_[me][flow].stats;
      f.first_post = std::min(f.first_post, now);
      first_ = std::min(first_, now);
      ++h.outstanding;
      ++h.next;
    }
    if (h.done == plan.size()) {
      if (!h.ended) {
        h.ended = true;
        if (++hosts_finished_ == hosts_.size())
          message_latency_ = summarize(std::move(latencies_));
        native_ended(*cluster_, sim);
      }
      return;
    }
    if (h.next < plan.size() && h.outstanding < tx_depth_) {
      const sim::Time due = go_ + plan[h.next].not_before;
      if (due < h.timer_at) {
        h.timer_at = due;
        sim.schedule(due, timer_, 0, me);
      }
    }
  }

  void on_completion(sim::Simulator& sim, std::uint32_t me, const endpoint::Completion& c) override {
    NativeHost& h = native_[me];
    Flow& entry = flows_[me][c.wr_id >> 32];
    const sim::Time now = sim.now();
    if (c.status != endpoint::Status::success) { // only with faults: the message fails, the host goes on
      record_failure(true,
                     c.status == endpoint::Status::retry_exceeded ? "transport retry counter exceeded"
                                                                  : "work request flushed error",
                     "pattern-completion");
      ++failed_to_[entry.destination];
      ++messages_failed_;
      worst_outcome_ = std::max(worst_outcome_, now - c.posted_at);
      --h.outstanding;
      ++h.done;
      pump(sim, me);
      return;
    }
    FlowStats& f = entry.stats;
    ++f.messages;
    f.bytes += c.size_bytes;
    f.last_completion = now;
    last_ = std::max(last_, now);
    ++total_messages_;
    total_bytes_ += c.size_bytes;
    note_timeline(now, c.size_bytes);
    latencies_.push_back(now - c.posted_at);
    worst_outcome_ = std::max(worst_outcome_, latencies_.back());
    --h.outstanding;
    ++h.done;
    pump(sim, me);
  }

  std::uint64_t seed_;
  std::vector<std::string> hosts_;
  std::string hosts_pointer_;
  std::string verb_;
  bool srq_ = false;
  std::vector<std::uint32_t> sizes_;
  std::vector<double> weights_;
  std::uint32_t messages_ = 0, tx_depth_ = 0, mtu_ = 0;
  RcRecovery recovery_;
  sim::Time start_;
  std::string receiver_, receiver_pointer_;
  std::uint32_t receiver_index_ = 0xffffffffu;
  double hot_fraction_ = 0, offered_load_ = 0, line_rate_gbps_ = 1;
  Rendezvous* rendezvous_ = nullptr;
  std::vector<Rendezvous::HostId> host_ids_; ///< hosts_, interned by the rendezvous
  std::vector<std::vector<Message>> plans_;
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> incoming_; ///< incoming_from()
  std::vector<std::uint64_t> peer_buffer_; ///< each host's target buffer, exchanged out of band with the QPs
  struct Flow {
    std::uint32_t destination;
    FlowStats stats;
  };
  /// By source: the flows its plan has, by destination.
  std::vector<std::vector<Flow>> flows_;
  FlowStats& flow(std::uint32_t source, std::uint32_t destination) {
    return flows_[source][flow_index(source, destination)].stats;
  }
  std::uint32_t flow_index(std::uint32_t source, std::uint32_t destination) const {
    const std::vector<Flow>& row = flows_[source];
    return static_cast<std::uint32_t>(
        std::lower_bound(row.begin(), row.end(), destination,
                         [](const Flow& f, std::uint32_t d) { return f.destination < d; }) -
        row.begin());
  }
  std::vector<std::uint64_t> failed_to_; ///< per destination host: messages that failed at their sender
  std::uint64_t messages_failed_ = 0;
  sim::Time worst_outcome_;
  sim::Time first_ = sim::Time::max(), last_;
  std::uint64_t total_messages_ = 0, total_bytes_ = 0;
  std::vector<sim::Time> latencies_;
  LatencyStats message_latency_;
  sim::Time timeline_bin_;                    ///< zero: no timeline
  std::vector<std::uint64_t> timeline_bytes_; ///< per bin from time zero: bytes of the messages completed in it
  std::size_t hosts_finished_ = 0;
  Cluster* cluster_ = nullptr; ///< HostModel::fabric: the cluster whose endpoints run the hosts
  sim::Target timer_;
  sim::Time go_;
  std::vector<NativeHost> native_;
};

constexpr std::string_view verbs_choices[] = {"write", "send"};

/// The patterns' options, in the order Pattern reads them. Uses come one for all patterns or one per pattern in
/// the order of pattern_types: all_to_all, permutation, incast, hot_spot, uniform_random.
const OptionTable& pattern_options() {
  static const OptionTable table{{
      name_option(),
      {"hosts", OptionKind::hosts, "hosts", 2, 1'000'000, uses(no_default()),
       "the hosts taking part, in order; default every host of the topology in node order (incast's receiver and "
       "hot_spot's hot_host are added when not in it)"},
      {"verb", OptionKind::choice, "text", 0, 0, uses(with_default("write")),
       "RDMA WRITE or SEND (receivers pre-post their RECVs)", verbs_choices},
      {"srq", OptionKind::flag, "bool", 0, 0, uses(with_default(false)),
       "each host's QPs take their RECVs from one shared receive queue, kept full; only with verb \"send\""},
      {"size_bytes", OptionKind::integer, "bytes", 1, 1 << 30, uses(with_default(65536)),
       "every message's size; not with size_distribution"},
      {"size_distribution", OptionKind::size_distribution, "bytes", 0, 0, uses(no_default()),
       "message sizes drawn from a discrete distribution: values_bytes and as many weights; not with size_bytes"},
      {"messages", OptionKind::integer, "count", 1, 100'000'000,
       uses(with_default(1), with_default(100), with_default(100), with_default(100), with_default(100)),
       "messages per sending host (all_to_all: to each peer)"},
      {"tx_depth", OptionKind::integer, "count", 1, 4096, uses(with_default(4)),
       "messages a host keeps outstanding, posted in its plan's order"},
      mtu_option(),
      qp_timeout_option(),
      retry_count_option(),
      start_option(),
      after_option(),
      {"timeline_us", OptionKind::duration, "us", 0, 1e9, uses(with_default(0)),
       "throughput over time: the report's timeline has the Gb/s of the messages completed in each bin of this "
       "width, from time zero (0: none; at least 1 us)"},
      {"receiver", OptionKind::host, "host", 0, 0, uses(not_taken(), not_taken(), required(), not_taken(), not_taken()),
       "the host every other host sends to"},
      {"hot_host", OptionKind::host, "host", 0, 0, uses(not_taken(), not_taken(), not_taken(), required(), not_taken()),
       "the hot host"},
      {"hot_fraction", OptionKind::number, "fraction", 0, 1,
       uses(not_taken(), not_taken(), not_taken(), required(), not_taken()),
       "share of each other host's messages sent to hot_host"},
      {"offered_load", OptionKind::number, "fraction", 1e-6, 1,
       uses(not_taken(), not_taken(), not_taken(), not_taken(), required()),
       "each host's offered load as a fraction of its line rate (Poisson arrivals)"},
  }};
  return table;
}

std::unique_ptr<Workload> make_pattern(OptionReader& options, std::uint64_t seed) {
  return std::make_unique<Pattern>(options, seed);
}

constexpr WorkloadType pattern_types[] = {
    {"all_to_all",
     "traffic pattern: every host sends to every other, shift-ordered (in phase k host i sends to host i + k)",
     &pattern_options, 0, &make_pattern},
    {"permutation", "traffic pattern: every host sends to one partner, a random derangement drawn from the seed",
     &pattern_options, 1, &make_pattern},
    {"incast", "traffic pattern: every host but the receiver sends to the receiver", &pattern_options, 2,
     &make_pattern},
    {"hot_spot", "traffic pattern: every host sends, hot_fraction of its messages to hot_host and the rest uniformly",
     &pattern_options, 3, &make_pattern},
    {"uniform_random",
     "traffic pattern: every host sends to uniformly random others at offered_load of its line rate (Poisson)",
     &pattern_options, 4, &make_pattern},
};

} // namespace

std::span<const WorkloadType> pattern_workloads() {
  return pattern_types;
}

} // namespace ib::host
