// Allreduce over `hosts` (default: every host), repeated `iterations` times, as host programs:
//   ring_allreduce                a reduce-scatter and an allgather around the ring, 2(N-1) steps of V/N bytes;
//   recursive_doubling_allreduce  log2(N) steps exchanging all V bytes with the host 2^k away (N a power of two).
// Every step is an RDMA WRITE with immediate into the peer's buffer, so the peer learns of it from a completion,
// and a host starts step s+1 once its step-s data has arrived (and, reducing, after `reduce_ns_per_byte` of CPU
// per byte received). Reported: time per allreduce (min, typical, max, average), algorithm bandwidth V / t, and bus
// bandwidth, the bytes each host sends per second of it (algorithm bandwidth × 2(N-1)/N for the ring, NCCL's
// convention; × log2(N) for recursive doubling).
#include <algorithm>
#include <bit>
#include <cmath>
#include <sstream>

#include "models/host/workloads_impl.h"

namespace ib::host {
namespace {

class Allreduce : public Workload {
public:
  explicit Allreduce(OptionReader& o) {
    file_ = o.file();
    pointer_ = o.pointer();
    type_ = o.type().name;
    ring_ = o.type().column == 0; // collective_types lists the ring first
    name_ = o.text("name");
    hosts_ = o.hosts("hosts", hosts_pointer_);
    size_ = static_cast<std::uint32_t>(o.integer("size_bytes"));
    iterations_ = static_cast<std::uint32_t>(o.integer("iterations"));
    reduce_ns_per_byte_ = o.number("reduce_ns_per_byte");
    mtu_ = read_mtu(o);
    recovery_ = read_rc_recovery(o);
    start_ = o.duration("start_us");
    after_ = o.text("after");
    o.json().finish();
  }

  nlohmann::ordered_json config() const override {
    nlohmann::ordered_json c;
    c["type"] = type_;
    c["name"] = name_;
    c["hosts"] = hosts_;
    c["size_bytes"] = size_;
    c["iterations"] = iterations_;
    c["reduce_ns_per_byte"] = reduce_ns_per_byte_;
    c["mtu_bytes"] = mtu_;
    c["qp_timeout"] = recovery_.timeout;
    c["retry_count"] = recovery_.retry_count;
    c["start_us"] = start_.us();
    if (!after_.empty())
      c["after"] = after_;
    return c;
  }

  Footprint footprint(std::uint64_t topology_hosts) const override {
    // As run_host() makes them: n programs, each with a QP per peer (the ring's two neighbours, or one per step of
    // recursive doubling), one CQ and an n-wide map of QPs; a buffer of twice the vector.
    const std::uint64_t n = hosts_.empty() ? topology_hosts : hosts_.size();
    const std::uint64_t steps = ring_ ? 2 * (n > 0 ? n - 1 : 0) : static_cast<std::uint64_t>(std::bit_width(n) - 1);
    const std::uint64_t peers = ring_ ? std::min<std::uint64_t>(2, n > 0 ? n - 1 : 0) : steps;
    Footprint f;
    f.programs = n;
    f.qps = n * peers;
    f.max_qps_per_host = peers;
    f.send_slots = f.qps * 8;
    f.recv_slots = f.qps * std::clamp<std::uint64_t>(steps * iterations_, 1, 32768);
    f.cq_entries = n * (4 * steps + 256);
    f.samples = 3ull * iterations_;
    f.peer_map_entries = n * n; // each host's QP by peer
    f.buffer_bytes = n * 2ull * size_;
    f.queue_bytes = f.send_slots * 64 + f.recv_slots * 16 + f.cq_entries * 64;
    const std::string& hosts = hosts_pointer_.empty() ? pointer_ : hosts_pointer_;
    f.programs_pointer = f.qps_pointer = f.flows_pointer = hosts;
    f.slots_pointer = pointer_ + "/iterations";
    f.samples_pointer = pointer_ + "/iterations";
    f.buffer_pointer = pointer_ + "/size_bytes";
    return f;
  }

  void spawn_programs(Cluster& cluster, Rendezvous& rendezvous) override {
    resolve_hosts(cluster, hosts_, file_, hosts_pointer_, pointer_);
    const auto n = static_cast<std::uint32_t>(hosts_.size());
    if (!ring_ && !std::has_single_bit(n))
      throw sim::InputError(file_, hosts_pointer_.empty() ? pointer_ : hosts_pointer_,
                            "a power-of-two number of hosts for recursive doubling", std::to_string(n) + " hosts");
    if (ring_ && size_ < n)
      throw sim::InputError(file_, pointer_ + "/size_bytes", "at least one byte per host (" + std::to_string(n) + ")",
                            std::to_string(size_));
    rendezvous_ = &rendezvous;
    host_ids_.clear();
    for (const std::string& h : hosts_) // interned once: a host publishes and takes a QP per peer
      host_ids_.push_back(rendezvous.id(h));
    buffers_.assign(n, 0);
    first_start_.assign(iterations_, sim::Time::max());
    last_end_.assign(iterations_, sim::Time::zero());
    for (std::uint32_t i = 0; i < n; ++i)
      spawn_program(cluster, hosts_[i], name_ + "/" + hosts_[i], [this, i](Context& ctx) {
        try {
          run_host(ctx, i); // like an MPI rank, a host stops at its first failed work request
        } catch (const ProgramFailed&) {
          ++programs_failed_;
        }
      });
  }

  nlohmann::ordered_json results() const override {
    nlohmann::ordered_json out;
    const LatencyStats s = times_;
    out["hosts"] = hosts_.size();
    out["size_bytes"] = size_;
    out["iterations"] = s.samples;
    out["time_min_us"] = s.t_min_us;
    out["time_typical_us"] = s.t_typical_us;
    out["time_max_us"] = s.t_max_us;
    out["time_avg_us"] = s.t_avg_us;
    out["algorithm_bandwidth_gbps"] = algorithm_gbps();
    out["bus_bandwidth_gbps"] = bus_gbps();
    return out;
  }

  std::vector<std::string> table() const override {
    std::vector<std::string> lines;
    std::ostringstream head;
    head << name_ << " (" << type_ << ", " << hosts_.size() << " hosts, " << size_ << " bytes)";
    lines.push_back(head.str());
    char line[200];
    std::snprintf(line, sizeof line,
                  " %llu iterations: time min %.2f us, typical %.2f us, max %.2f us; algorithm bandwidth %.2f Gb/s, "
                  "bus bandwidth %.2f Gb/s",
                  static_cast<unsigned long long>(times_.samples), times_.t_min_us, times_.t_typical_us,
                  times_.t_max_us, algorithm_gbps(), bus_gbps());
    lines.push_back(line);
    return lines;
  }

private:
  double algorithm_gbps() const {
    return times_.t_typical_us > 0 ? static_cast<double>(size_) * 8 / (times_.t_typical_us * 1e3) : 0;
  }
  /// Bytes each host sends per allreduce, per second of it.
  double bus_gbps() const {
    const double n = static_cast<double>(hosts_.size());
    const double factor = ring_ ? 2 * (n - 1) / n : std::log2(n);
    return algorithm_gbps() * factor;
  }

  /// The peer host `me` sends to at step `s`, and the bytes and buffer offset of that step.
  struct Step {
    std::uint32_t to, from;
    std::uint64_t offset;
    std::uint32_t bytes;
  };
  Step step(std::uint32_t me, std::uint32_t s) const {
    const auto n = static_cast<std::uint32_t>(hosts_.size());
    if (!ring_) {
      const std::uint32_t partner = me ^ (1u << s);
      return {partner, partner, 0, size_};
    }
    // Chunk c of the vector is [c * V / n, (c + 1) * V / n); at step s host i sends chunk (i - s) mod n (the
    // reduce-scatter's chunk in the first n - 1 steps, the allgather's in the next n - 1).
    const std::uint32_t chunk = (me + n - (s % (n - 1)) % n) % n;
    const std::uint64_t begin = std::uint64_t{chunk} * size_ / n;
    const std::uint64_t end = std::uint64_t{chunk + 1} * size_ / n;
    return {(me + 1) % n, (me + n - 1) % n, begin, static_cast<std::uint32_t>(end - begin)};
  }

  void run_host(Context& ctx, std::uint32_t me) {
    const auto n = static_cast<std::uint32_t>(hosts_.size());
    const std::uint32_t steps = ring_ ? 2 * (n - 1) : static_cast<std::uint32_t>(std::countr_zero(n));
    std::vector<std::uint32_t> peers;
    for (std::uint32_t s = 0; s < steps; ++s)
      for (const std::uint32_t p : {step(me, s).to, step(me, s).from})
        if (std::find(peers.begin(), peers.end(), p) == peers.end())
          peers.push_back(p);
    const std::uint32_t receives = steps * iterations_;
    // Each step adds a send and a receive completion; a host runs at most an iteration ahead of its peers.
    const std::uint32_t cq = ctx.create_cq(4 * steps + 256);
    std::vector<std::uint32_t> qp_of(n, 0);
    for (const std::uint32_t p : peers) {
      verbs::QpCaps caps;
      caps.max_send_wr = 8;
      caps.max_recv_wr = std::clamp<std::uint32_t>(receives, 1, 32768);
      qp_of[p] = ctx.create_qp(verbs::QpType::rc, caps, cq, cq);
      rendezvous_->publish(host_ids_[me], host_ids_[p], 0, ctx.lid(), qp_of[p]);
    }
    const std::uint64_t buffer = ctx.memory().allocate(std::uint64_t{size_} * 2);
    buffers_[me] = buffer + size_; // peers write here; this host sends from the first half
    ctx.program().sleep_until(ctx.now() + sim::Time::from_ns(1));
    for (const std::uint32_t p : peers) {
      const auto [lid, qpn] = rendezvous_->take(host_ids_[p], host_ids_[me], 0);
      verbs::QpAttr attr;
      attr.dest_lid = lid;
      attr.dest_qpn = qpn;
      attr.sl = ctx.path_sl(lid);
      attr.path_mtu = static_cast<verbs::Mtu>(mtu_);
      attr.timeout = recovery_.timeout;
      attr.retry_cnt = recovery_.retry_count;
      ctx.connect_qp(qp_of[p], attr);
      // A RECV per step that this peer writes to us: WRITE with immediate consumes one.
      std::uint32_t from_p = 0;
      for (std::uint32_t s = 0; s < steps; ++s)
        from_p += step(me, s).from == p ? 1 : 0;
      for (std::uint32_t k = 0; k < std::min<std::uint32_t>(from_p * iterations_, 32768); ++k)
        ctx.post_recv(qp_of[p], verbs::RecvWr{0, buffer, 0});
    }
    const sim::Time go = std::max(wait_to_start(ctx, start_), sim::Time::from_us(1)) + sim::Time::from_ns(2);
    if (ctx.now() < go)
      ctx.program().sleep_until(go);
    std::vector<verbs::WorkCompletion> wc(64);
    std::uint32_t arrived = 0; // step data received over all iterations (in order: each peer writes in step order)
    for (std::uint32_t it = 0; it < iterations_; ++it) {
      const sim::Time started = ctx.now();
      for (std::uint32_t s = 0; s < steps; ++s) {
        const Step st = step(me, s);
        verbs::SendWr wr;
        wr.opcode = verbs::WrOpcode::rdma_write_with_imm;
        wr.local_address = buffer + st.offset;
        wr.length_bytes = st.bytes;
        wr.remote_address = buffers_[st.to] + st.offset;
        wr.immediate = s;
        const verbs::PostResult r = ctx.post_send(qp_of[st.to], wr);
        if (!r.ok()) {
          record_refused_post(ctx.faults(), r.error, "allreduce-post", "allreduce-completion");
          throw ProgramFailed{};
        }
        // Wait for this step's data from the peer, then reduce it into the vector.
        const std::uint32_t needed = it * steps + s + 1;
        while (arrived < needed) {
          const int got = ctx.wait_cq(cq, wc);
          for (int k = 0; k < got; ++k) {
            const verbs::WorkCompletion& c = wc[static_cast<std::size_t>(k)];
            if (c.status != verbs::WcStatus::success) {
              record_failure(ctx.faults(), verbs::to_string(c.status), "allreduce-completion");
              throw ProgramFailed{};
            }
            if (c.opcode == verbs::WcOpcode::recv_rdma_with_imm)
              ++arrived;
          }
        }
        const bool reducing = !ring_ || s + 1 < n;
        if (reducing && reduce_ns_per_byte_ > 0)
          ctx.program().compute(
              sim::Time::from_ps(static_cast<std::int64_t>(reduce_ns_per_byte_ * 1e3 * step(me, s).bytes)));
      }
      // An allreduce lasts from its first host's start to its last host's end.
      first_start_[it] = std::min(first_start_[it], started);
      last_end_[it] = std::max(last_end_[it], ctx.now());
    }
    if (++finished_ == hosts_.size()) {
      std::vector<sim::Time> samples;
      for (std::uint32_t it = 0; it < iterations_; ++it)
        samples.push_back(last_end_[it] - first_start_[it]);
      times_ = summarize(std::move(samples));
    }
  }

  bool ring_ = true;
  std::vector<std::string> hosts_;
  std::string hosts_pointer_;
  std::uint32_t size_ = 0, iterations_ = 0, mtu_ = 0;
  RcRecovery recovery_;
  double reduce_ns_per_byte_ = 0;
  sim::Time start_;
  Rendezvous* rendezvous_ = nullptr;
  std::vector<Rendezvous::HostId> host_ids_; ///< hosts_, interned by the rendezvous
  std::vector<std::uint64_t> buffers_;
  std::vector<sim::Time> first_start_, last_end_; ///< per iteration, over all hosts
  LatencyStats times_;
  std::size_t finished_ = 0;
};

/// The allreduces' options, in the order Allreduce reads them; both take each the same way.
const OptionTable& collective_options() {
  static const OptionTable table{{
      name_option(),
      {"hosts", OptionKind::hosts, "hosts", 2, 1'000'000, uses(no_default()),
       "the hosts taking part, in ring order; default every host of the topology in node order (recursive "
       "doubling: a power of two of them)"},
      {"size_bytes", OptionKind::integer, "bytes", 1, 1 << 30, uses(with_default(1 << 20)),
       "the vector reduced; the ring's has at least one byte per host"},
      {"iterations", OptionKind::integer, "count", 1, 1'000'000, uses(with_default(10)),
       "allreduces run one after another"},
      {"reduce_ns_per_byte", OptionKind::number, "ns/byte", 0, 1000, uses(with_default(0)),
       "CPU time to reduce each received byte into the vector"},
      mtu_option(),
      qp_timeout_option(),
      retry_count_option(),
      start_option(),
      after_option(),
  }};
  return table;
}

std::unique_ptr<Workload> make_collective(OptionReader& options, std::uint64_t) {
  return std::make_unique<Allreduce>(options);
}

constexpr WorkloadType collective_types[] = {
    {"ring_allreduce",
     "ring allreduce: a reduce-scatter then an allgather around the ring, 2(N-1) steps of size/N bytes, each an "
     "RDMA WRITE with immediate",
     &collective_options, 0, &make_collective},
    {"recursive_doubling_allreduce",
     "recursive-doubling allreduce: log2(N) steps, each exchanging the whole vector with the host 2^k away",
     &collective_options, 1, &make_collective},
};

} // namespace

std::span<const WorkloadType> collective_workloads() {
  return collective_types;
}

} // namespace ib::host
