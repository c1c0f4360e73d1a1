// perftest's ib_atomic_bw: 8-byte RC atomics (fetch-and-add, or compare-and-swap with perftest's -A) streamed from
// the client to the server, tx_depth outstanding per QP, post lists, a completion every cq_mod, and perftest's
// figures (BW peak and average, MsgRate). Two extensions reproduce Kalia et al. ATC'16 section 5.4 (reference E14):
// `counters` spreads the atomics over Z counters at the server, each drawn uniformly from the seed (perftest always
// targets one address), `counter_stride_bytes` spaces them so that they can be made to share the HCA's lock buckets
// or not, and `extra_clients` adds client hosts on the same counters, with the figures summed over all of them.
#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "models/host/workloads_impl.h"
#include "sim/rng.h"

namespace ib::host {
namespace {

/// FNV-1a of a workload's name: its programs' random streams differ from another workload's under one seed.
std::uint64_t name_hash(std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : name)
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

class AtomicBw : public Workload {
public:
  AtomicBw(OptionReader& o, std::uint64_t seed) : seed_(seed) {
    sim::JsonObjectReader& r = o.json();
    file_ = o.file();
    pointer_ = o.pointer();
    type_ = o.type().name;
    name_ = o.text("name");
    clients_ = {o.text("client")};
    client_pointers_ = {r.pointer_to("client")};
    server_ = o.text("server");
    server_pointer_ = r.pointer_to("server");
    std::string extra_pointer;
    const std::vector<std::string> extra = o.hosts("extra_clients", extra_pointer);
    for (std::size_t i = 0; i < extra.size(); ++i) {
      const std::string at = sim::json_pointer_append(extra_pointer, i);
      if (extra[i] == clients_.front())
        throw sim::InputError(file_, at, "a host other than client", "\"" + extra[i] + "\"");
      clients_.push_back(extra[i]);
      client_pointers_.push_back(at);
    }
    const std::uint64_t size = o.integer("size_bytes");
    if (size != 8)
      throw sim::InputError(file_, r.pointer_to("size_bytes"), "8 (atomics are 8 bytes)", std::to_string(size));
    iterations_ = static_cast<std::uint32_t>(o.integer("iterations"));
    tx_depth_ = static_cast<std::uint32_t>(o.integer("tx_depth"));
    qps_ = static_cast<std::uint32_t>(o.integer("qps"));
    post_list_ = static_cast<std::uint32_t>(o.integer("post_list"));
    if (post_list_ > tx_depth_)
      throw sim::InputError(file_, r.pointer_to("post_list"), "at most tx_depth (" + std::to_string(tx_depth_) + ")",
                            std::to_string(post_list_));
    cq_mod_ = std::min(static_cast<std::uint32_t>(o.integer("cq_mod")), tx_depth_);
    mtu_ = read_mtu(o);
    recovery_ = read_rc_recovery(o);
    const std::string connection = o.choice("connection");
    if (connection != "RC") // IBA vol 1 table 36: UC and UD carry no atomics
      throw sim::InputError(file_, r.pointer_to("connection"), "RC (UC and UD carry no atomics)",
                            "\"" + connection + "\"");
    blueflame_ = o.flag("blueflame");
    atomic_ = o.choice("atomic");
    counters_ = static_cast<std::uint32_t>(o.integer("counters"));
    stride_bytes_ = static_cast<std::uint32_t>(o.integer("counter_stride_bytes"));
    if (stride_bytes_ % 8 != 0) // IBA vol 1 section 9.4.5: an atomic's address is 8-byte aligned
      throw sim::InputError(file_, r.pointer_to("counter_stride_bytes"),
                            "a multiple of 8 (an atomic's address is 8-byte aligned)", std::to_string(stride_bytes_));
    client_port_ = static_cast<std::uint8_t>(o.integer("client_ib_port"));
    server_port_ = static_cast<std::uint8_t>(o.integer("server_ib_port"));
    client_port_pointer_ = r.pointer_to("client_ib_port");
    server_port_pointer_ = r.pointer_to("server_ib_port");
    start_ = o.duration("start_us");
    after_ = o.text("after");
    r.finish();
  }

  nlohmann::ordered_json config() const override {
    nlohmann::ordered_json c;
    c["type"] = type_;
    c["name"] = name_;
    c["client"] = clients_.front();
    if (clients_.size() > 1)
      c["extra_clients"] = std::vector<std::string>(clients_.begin() + 1, clients_.end());
    c["server"] = server_;
    c["sizes_bytes"] = std::vector<std::uint32_t>{8};
    c["iterations"] = iterations_;
    c["tx_depth"] = tx_depth_;
    c["qps"] = qps_;
    c["post_list"] = post_list_;
    c["cq_mod"] = cq_mod_;
    c["mtu_bytes"] = mtu_;
    c["qp_timeout"] = recovery_.timeout;
    c["retry_count"] = recovery_.retry_count;
    c["connection"] = "RC";
    c["blueflame"] = blueflame_;
    c["client_ib_port"] = client_port_;
    c["server_ib_port"] = server_port_;
    c["atomic"] = atomic_;
    c["counters"] = counters_;
    c["counter_stride_bytes"] = stride_bytes_;
    c["start_us"] = start_.us();
    if (!after_.empty())
      c["after"] = after_;
    return c;
  }

  Footprint footprint(std::uint64_t) const override {
    // As the programs make them: qps QPs per client, each with its own CQ, and as many at the server on one CQ.
    Footprint f;
    const std::uint64_t clients = clients_.size(), client_qps = clients * qps_;
    f.programs = clients + 1;
    f.qps = 2 * client_qps;
    f.max_qps_per_host = client_qps;
    f.send_slots = client_qps * (send_depth() + 1);
    f.recv_slots = f.qps;
    f.cq_entries = client_qps * (send_depth() + 16) + server_cq_depth;
    f.samples = std::uint64_t{iterations_} * client_qps / cq_mod_ + client_qps;
    f.buffer_bytes = counter_region_bytes() + clients * result_buffer_bytes;
    // An atomic's WQE is one 64-byte basic block (control, remote address, atomic and data segments); 16-byte RECV
    // WQEs, 64-byte CQEs.
    f.queue_bytes = f.send_slots * 64 + f.recv_slots * 16 + f.cq_entries * 64;
    f.programs_pointer = pointer_;
    f.qps_pointer = pointer_ + "/qps";
    f.slots_pointer = pointer_ + "/tx_depth";
    f.samples_pointer = pointer_ + "/iterations";
    f.buffer_pointer = pointer_ + "/counters";
    return f;
  }

  void spawn_programs(Cluster& cluster, Rendezvous& rendezvous) override {
    check_host(cluster, server_, file_, server_pointer_);
    for (std::size_t c = 0; c < clients_.size(); ++c) {
      check_host(cluster, clients_[c], file_, client_pointers_[c]);
      if (clients_[c] == server_)
        throw sim::InputError(file_, c == 0 ? server_pointer_ : client_pointers_[c],
                              c == 0 ? "a host other than the client" : "a host other than the server",
                              "\"" + server_ + "\"");
    }
    check_port(cluster, server_, server_port_, file_, server_port_pointer_);
    for (const std::string& client : clients_)
      check_port(cluster, client, client_port_, file_, client_port_pointer_);
    rendezvous_ = &rendezvous;
    runs_.assign(clients_.size(), ClientRun{});
    spawn_program(cluster, server_, name_ + "/server", [this](Context& ctx) { run_server(ctx); });
    for (std::size_t c = 0; c < clients_.size(); ++c)
      spawn_program(cluster, clients_[c], name_ + "/client" + (c == 0 ? "" : std::to_string(c)),
                    [this, c](Context& ctx) {
                      try {
                        run_client(ctx, c);
                      } catch (const ProgramFailed&) {
                        ++programs_failed_;
                      }
                    });
  }

  nlohmann::ordered_json results() const override {
    return nlohmann::ordered_json::array({bandwidth_row(8, figures_)});
  }

  std::vector<std::string> table() const override {
    std::string head = name_ + " (" + type_ + ", " + clients_.front();
    if (clients_.size() > 1)
      head += " and " + std::to_string(clients_.size() - 1) + " more";
    head += " -> " + server_ + ", " + atomic_ + " on " + std::to_string(counters_) +
            (counters_ == 1 ? " counter)" : " counters " + std::to_string(stride_bytes_) + " B apart)");
    return {head, bandwidth_header(), bandwidth_line(8, figures_)};
  }

private:
  /// What one client measured.
  struct ClientRun {
    sim::Time start, end;
    std::vector<sim::Time> completion_times;
    bool done = false;
  };
  static constexpr std::uint32_t server_cq_depth = 16; // the server's QPs complete nothing
  static constexpr std::uint64_t result_buffer_bytes = 64;

  std::uint32_t send_depth() const { return std::max(tx_depth_, 16u) + post_list_; }
  std::uint64_t counter_region_bytes() const { return std::uint64_t{counters_ - 1} * stride_bytes_ + 8; }

  verbs::QpAttr attr(Context& ctx, std::uint8_t port, std::uint16_t lid, std::uint32_t qpn) const {
    verbs::QpAttr a;
    a.port = port;
    a.sl = ctx.path_sl(lid, port);
    a.path_mtu = static_cast<verbs::Mtu>(mtu_);
    a.timeout = recovery_.timeout;
    a.retry_cnt = recovery_.retry_count;
    a.dest_lid = lid;
    a.dest_qpn = qpn;
    return a;
  }

  /// The server: the counters (4096-aligned, so that a counter's low address bits are its offset's), qps QPs per
  /// client, connected at 1 ns. Its HCA answers the atomics alone.
  void run_server(Context& ctx) {
    wait_to_start(ctx, start_);
    const std::uint64_t base = ctx.memory().allocate(counter_region_bytes(), 4096);
    const std::uint32_t cq = ctx.create_cq(server_cq_depth);
    verbs::QpCaps caps;
    caps.max_send_wr = 1;
    caps.max_recv_wr = 1;
    std::vector<std::uint32_t> qpns;
    for (const std::string& client : clients_)
      for (std::uint32_t q = 0; q < qps_; ++q) {
        qpns.push_back(ctx.create_qp(verbs::QpType::rc, caps, cq, cq));
        rendezvous_->publish(server_, client, static_cast<int>(q), ctx.lid(server_port_), qpns.back());
      }
    ctx.program().sleep_until(ctx.now() + sim::Time::from_ns(1));
    for (std::size_t c = 0; c < clients_.size(); ++c)
      for (std::uint32_t q = 0; q < qps_; ++q) {
        const auto [lid, qpn] = rendezvous_->take(clients_[c], server_, static_cast<int>(q));
        ctx.connect_qp(qpns[c * qps_ + q], attr(ctx, server_port_, lid, qpn));
      }
    counter_base_ = base; // the clients learn it out of band, as perftest exchanges addresses
  }

  void run_client(Context& ctx, std::size_t client) {
    wait_to_start(ctx, start_);
    const std::string& me = clients_[client];
    const std::uint64_t buffer = ctx.memory().allocate(result_buffer_bytes);
    verbs::QpCaps caps;
    caps.max_send_wr = send_depth();
    caps.max_recv_wr = 1;
    caps.blueflame = blueflame_;
    // Every QP completes on one CQ, as perftest's ctx->send_cq.
    const std::uint32_t cq = ctx.create_cq(qps_ * (caps.max_send_wr + 16));
    std::vector<std::uint32_t> qpns(qps_);
    for (std::uint32_t q = 0; q < qps_; ++q) {
      qpns[q] = ctx.create_qp(verbs::QpType::rc, caps, cq, cq);
      rendezvous_->publish(me, server_, static_cast<int>(q), ctx.lid(client_port_), qpns[q]);
    }
    ctx.program().sleep_until(ctx.now() + sim::Time::from_ns(1));
    for (std::uint32_t q = 0; q < qps_; ++q) {
      const auto [lid, qpn] = rendezvous_->take(server_, me, static_cast<int>(q));
      ctx.connect_qp(qpns[q], attr(ctx, client_port_, lid, qpn));
    }
    ctx.program().sleep_until(ctx.now() + sim::Time::from_ns(1));
    stream(ctx, client, qpns, cq, buffer, counter_base_);
  }

  /// perftest's loop: post while fewer than tx_depth are outstanding per QP, a completion every cq_mod WRs; each
  /// atomic on a counter drawn from this client's stream.
  void stream(Context& ctx, std::size_t client, const std::vector<std::uint32_t>& qpns, std::uint32_t cq,
              std::uint64_t buffer, std::uint64_t base) {
    sim::Rng rng(seed_, name_hash(name_) + client);
    verbs::SendWr wr;
    wr.opcode =
        atomic_ == "fetch_and_add" ? verbs::WrOpcode::atomic_fetch_and_add : verbs::WrOpcode::atomic_cmp_and_swp;
    wr.local_address = buffer;
    wr.length_bytes = 8;
    wr.compare_add = atomic_ == "fetch_and_add" ? 1 : 0; // perftest adds 1; its CAS compares with 0, swaps in 1
    wr.swap = 1;
    std::vector<verbs::SendWr> batch(post_list_, wr);
    std::vector<std::uint32_t> posted(qps_, 0), completed(qps_, 0);
    std::vector<verbs::WorkCompletion> wc(64);
    ClientRun& run = runs_[client];
    run.completion_times.reserve(std::uint64_t{iterations_} * qps_ / cq_mod_ + qps_);
    run.start = ctx.now();
    std::uint64_t done = 0;
    const std::uint64_t total = std::uint64_t{iterations_} * qps_;
    std::unordered_map<std::uint32_t, std::uint32_t> index_of_qpn;
    for (std::uint32_t q = 0; q < qps_; ++q)
      index_of_qpn[qpns[q]] = q;
    const auto take = [&](int n) {
      for (int k = 0; k < n; ++k) {
        const verbs::WorkCompletion& c = wc[static_cast<std::size_t>(k)];
        if (c.status != verbs::WcStatus::success) {
          record_failure(ctx.faults(), verbs::to_string(c.status), "perftest-completion");
          throw ProgramFailed{};
        }
        const std::uint32_t q = index_of_qpn.at(c.qp_num);
        const auto id = static_cast<std::uint32_t>(c.wr_id);
        done += id - completed[q];
        completed[q] = id;
        run.completion_times.push_back(ctx.now());
      }
    };
    while (done < total) {
      for (std::uint32_t q = 0; q < qps_; ++q) {
        while (posted[q] < iterations_ && posted[q] - completed[q] + post_list_ <= tx_depth_) {
          const std::uint32_t n = std::min(post_list_, iterations_ - posted[q]);
          for (std::uint32_t k = 0; k < n; ++k) {
            const std::uint32_t id = posted[q] + k + 1;
            batch[k].remote_address = base + (counters_ == 1 ? 0 : rng.uniform_below(counters_) * stride_bytes_);
            batch[k].signaled = id % cq_mod_ == 0 || id == iterations_;
            batch[k].wr_id = id;
          }
          const verbs::PostResult r = ctx.post_send(qpns[q], std::span<const verbs::SendWr>(batch.data(), n));
          if (!r.ok()) {
            record_refused_post(ctx.faults(), r.error, "perftest-post", "perftest-completion");
            throw ProgramFailed{};
          }
          posted[q] += n;
        }
      }
      // Take what the CQ has; if it has nothing, block on it.
      if (ctx.hca().cq_ready(cq) > 0)
        take(ctx.poll_cq(cq, wc));
      else if (done < total)
        take(ctx.wait_cq(cq, wc));
    }
    run.end = ctx.now();
    run.done = true;
    if (std::all_of(runs_.begin(), runs_.end(), [](const ClientRun& r) { return r.done; }))
      summarize_clients();
  }

  /// The figures over every client: from the first start to the last end, the completions of all in time order.
  void summarize_clients() {
    sim::Time first = sim::Time::max(), last;
    std::vector<sim::Time> times;
    for (const ClientRun& r : runs_) {
      first = std::min(first, r.start);
      last = std::max(last, r.end);
      times.insert(times.end(), r.completion_times.begin(), r.completion_times.end());
    }
    std::sort(times.begin(), times.end());
    figures_ = bandwidth_figures(std::uint64_t{iterations_} * qps_ * clients_.size(), 8, last - first, times,
                                 std::size_t{qps_} * clients_.size());
  }

  std::uint64_t seed_;
  std::vector<std::string> clients_, client_pointers_;
  std::string server_, server_pointer_;
  std::uint32_t iterations_ = 0, tx_depth_ = 0, qps_ = 0, post_list_ = 0, cq_mod_ = 0, mtu_ = 0;
  RcRecovery recovery_;
  bool blueflame_ = true;
  std::uint8_t client_port_ = 1, server_port_ = 1; ///< every client uses client_port_
  std::string client_port_pointer_, server_port_pointer_;
  std::string atomic_;
  std::uint32_t counters_ = 1, stride_bytes_ = 8;
  sim::Time start_;
  Rendezvous* rendezvous_ = nullptr;
  std::uint64_t counter_base_ = 0;
  std::vector<ClientRun> runs_;
  BwFigures figures_;
};

} // namespace

std::unique_ptr<Workload> make_atomic_bw(OptionReader& options, std::uint64_t seed) {
  return std::make_unique<AtomicBw>(options, seed);
}

} // namespace ib::host
