// perftest's tests as host programs: the latency tests (ib_write_lat, ib_send_lat: ping-pong, half the round trip;
// ib_read_lat, ib_atomic_lat: one operation at a time, the whole round trip) and the bandwidth tests (ib_write_bw,
// ib_read_bw, ib_send_bw: tx_depth operations outstanding per QP, post lists, a completion every cq_mod), with
// perftest's options and figures (t_min, t_typical = median, t_max, t_avg, 99 %, 99.9 %; BW peak and average in
// Gb/s, MsgRate in Mpps). The family's option table and bandwidth figures are shared with ib_atomic_bw
// (atomic_bw.cpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <unordered_map>

#include "models/host/workloads_impl.h"

namespace ib::host {
namespace {

// The family's types in the order of their descriptors and their options' per-type uses. atomic_bw is its own
// workload (atomic_bw.cpp); it sits here for its column.
enum class Test { write_lat, read_lat, send_lat, atomic_lat, write_bw, read_bw, send_bw, atomic_bw };

bool is_latency(Test t) {
  return t == Test::write_lat || t == Test::read_lat || t == Test::send_lat || t == Test::atomic_lat;
}

class Perftest : public Workload {
public:
  explicit Perftest(OptionReader& o) {
    sim::JsonObjectReader& r = o.json();
    const std::string& file = o.file();
    const std::string& pointer = o.pointer();
    file_ = file;
    pointer_ = pointer;
    type_ = o.type().name;
    test_ = static_cast<Test>(o.type().column); // the family's descriptors are in Test's order
    const std::string& type = type_;
    const bool lat = is_latency(test_);
    name_ = o.text("name");
    client_ = o.text("client");
    server_ = o.text("server");
    client_pointer_ = r.pointer_to("client");
    server_pointer_ = r.pointer_to("server");
    const bool all = o.flag("all_sizes");
    const auto size = o.integer_if_set("size_bytes");
    if (all && size)
      throw sim::InputError(file, r.pointer_to("size_bytes"), "size_bytes or all_sizes, not both", "both");
    std::uint64_t all_max = 0;
    if (test_ == Test::atomic_lat) {
      // perftest's ib_atomic_lat -a exits: "Message size cannot be changed for Atomic tests".
      if (all)
        throw sim::InputError(file, r.pointer_to("all_sizes"), "false: an atomic is 8 bytes, perftest -a refuses it",
                              "true");
      if (size && *size != 8)
        throw sim::InputError(file, r.pointer_to("size_bytes"), "8 (atomics are 8 bytes)", std::to_string(*size));
      sizes_ = {8};
    } else if (all) {
      all_max = o.integer("all_sizes_max_bytes"); // the sizes follow once the transport and MTU are known
    } else {
      sizes_ = {static_cast<std::uint32_t>(o.integer("size_bytes"))};
    }
    iterations_ = static_cast<std::uint32_t>(o.integer("iterations"));
    tx_depth_ = static_cast<std::uint32_t>(o.integer("tx_depth"));
    qps_ = static_cast<std::uint32_t>(o.integer("qps"));
    const bool inlinable =
        test_ == Test::write_lat || test_ == Test::send_lat || test_ == Test::write_bw || test_ == Test::send_bw;
    inline_pointer_ = r.pointer_to("inline_size_bytes");
    inline_explicit_ = r.has("inline_size_bytes");
    inline_size_ = static_cast<std::uint32_t>(o.integer("inline_size_bytes"));
    if (!inlinable && inline_size_ > 0)
      throw sim::InputError(file, r.pointer_to("inline_size_bytes"), "0: " + type + " has nothing to inline",
                            std::to_string(inline_size_));
    post_list_ = static_cast<std::uint32_t>(o.integer("post_list"));
    cq_mod_ = static_cast<std::uint32_t>(o.integer("cq_mod"));
    if (!lat) {
      cq_mod_ = std::min(cq_mod_, tx_depth_);
      if (post_list_ > tx_depth_)
        throw sim::InputError(file, r.pointer_to("post_list"), "at most tx_depth (" + std::to_string(tx_depth_) + ")",
                              std::to_string(post_list_));
    } else if (post_list_ != 1 || cq_mod_ != 1 || tx_depth_ != 1 || qps_ != 1) {
      throw sim::InputError(file, pointer, "post_list, cq_mod, tx_depth and qps of 1 for a latency test",
                            "a larger value");
    }
    mtu_ = read_mtu(o);
    recovery_ = read_rc_recovery(o);
    // perftest's -c: UD for the SEND tests, UC for the WRITE and SEND tests (IBA: UC has no READ or atomics).
    const std::string connection = o.choice("connection");
    connection_ = connection == "UD" ? verbs::QpType::ud : connection == "UC" ? verbs::QpType::uc : verbs::QpType::rc;
    const bool sends = test_ == Test::send_lat || test_ == Test::send_bw;
    const bool writes = test_ == Test::write_lat || test_ == Test::write_bw;
    if ((connection_ == verbs::QpType::ud && !sends) || (connection_ == verbs::QpType::uc && !sends && !writes))
      throw sim::InputError(file, r.pointer_to("connection"),
                            sends    ? "RC, UC or UD"
                            : writes ? "RC or UC (UD carries only SENDs)"
                                     : "RC",
                            "\"" + connection + "\"");
    if (all) {
      // perftest -a over UD stops at the MTU; only a maximum given explicitly can ask for more (refused below).
      const std::uint64_t max = connection_ == verbs::QpType::ud && !r.has("all_sizes_max_bytes")
                                    ? std::min<std::uint64_t>(all_max, mtu_)
                                    : all_max;
      for (std::uint64_t s = 2; s <= max; s *= 2)
        sizes_.push_back(static_cast<std::uint32_t>(s));
    }
    if (connection_ == verbs::QpType::ud && sizes_.back() > mtu_)
      throw sim::InputError(file, r.pointer_to(all ? "all_sizes_max_bytes" : "size_bytes"),
                            "at most the MTU (" + std::to_string(mtu_) + " B): a UD message is one packet",
                            std::to_string(all ? all_max : sizes_.back()));
    blueflame_ = o.flag("blueflame");
    srq_ = (test_ == Test::send_lat || test_ == Test::send_bw) && o.flag("srq");
    bidirectional_ = o.flag("bidirectional");
    if (bidirectional_ && lat)
      throw sim::InputError(file, r.pointer_to("bidirectional"), "false for a latency test", "true");
    atomic_ = o.choice("atomic");
    client_port_ = static_cast<std::uint8_t>(o.integer("client_ib_port"));
    server_port_ = static_cast<std::uint8_t>(o.integer("server_ib_port"));
    client_port_pointer_ = r.pointer_to("client_ib_port");
    server_port_pointer_ = r.pointer_to("server_ib_port");
    start_ = o.duration("start_us");
    after_ = o.text("after");
    r.finish();
    latency_.resize(sizes_.size());
    bandwidth_.resize(sizes_.size());
  }

  nlohmann::ordered_json config() const override {
    nlohmann::ordered_json c;
    c["type"] = type_;
    c["name"] = name_;
    c["client"] = client_;
    c["server"] = server_;
    c["sizes_bytes"] = sizes_;
    c["iterations"] = iterations_;
    c["tx_depth"] = tx_depth_;
    c["qps"] = qps_;
    c["inline_size_bytes"] = inline_size_;
    c["post_list"] = post_list_;
    c["cq_mod"] = cq_mod_;
    c["blueflame"] = blueflame_;
    c["client_ib_port"] = client_port_;
    c["server_ib_port"] = server_port_;
    if (test_ == Test::send_lat || test_ == Test::send_bw)
      c["srq"] = srq_;
    c["connection"] = connection_ == verbs::QpType::ud ? "UD" : connection_ == verbs::QpType::uc ? "UC" : "RC";
    c["mtu_bytes"] = mtu_;
    c["qp_timeout"] = recovery_.timeout;
    c["retry_count"] = recovery_.retry_count;
    c["bidirectional"] = bidirectional_;
    if (test_ == Test::atomic_lat)
      c["atomic"] = atomic_;
    c["start_us"] = start_.us();
    if (!after_.empty())
      c["after"] = after_;
    return c;
  }

  Footprint footprint(std::uint64_t) const override {
    // As run_side() makes them, on each of the two hosts: qps QPs, each with its send CQ, and one receive CQ.
    Footprint f;
    const std::uint64_t send = std::max(tx_depth_, 16u) + post_list_, recv = recv_queue_depth();
    const std::uint32_t max_size = *std::max_element(sizes_.begin(), sizes_.end());
    f.programs = 2;
    f.qps = 2ull * qps_;
    f.max_qps_per_host = qps_;
    f.send_slots = f.qps * send;
    f.recv_slots = f.qps * recv;
    f.cq_entries = f.qps * (send + 16 + recv) + 2 * 16; // a send CQ per QP, one receive CQ per side
    // A latency test keeps each iteration's time; a bandwidth test each completion's, on every side that sends.
    f.samples = is_latency(test_)
                    ? iterations_
                    : (bidirectional_ ? 2ull : 1ull) * (std::uint64_t{iterations_} * qps_ / cq_mod_ + qps_);
    f.buffer_bytes = 2 * (std::max<std::uint64_t>(max_size, 64) * 2 + 40);
    // WQEs of at most 64 bytes plus the inline data (mlx5's basic blocks), 16-byte RECV WQEs, 64-byte CQEs.
    f.queue_bytes = f.send_slots * (64 + (inline_size_ + 63) / 64 * 64) + f.recv_slots * 16 + f.cq_entries * 64;
    f.programs_pointer = pointer_;
    f.qps_pointer = pointer_ + "/qps";
    f.slots_pointer = pointer_ + "/tx_depth";
    f.samples_pointer = pointer_ + "/iterations";
    f.buffer_pointer = pointer_ + "/size_bytes";
    return f;
  }

  void spawn_programs(Cluster& cluster, Rendezvous& rendezvous) override {
    check_host(cluster, client_, file_, client_pointer_);
    check_host(cluster, server_, file_, server_pointer_);
    if (client_ == server_)
      throw sim::InputError(file_, server_pointer_, "a host other than the client", "\"" + server_ + "\"");
    check_port(cluster, client_, client_port_, file_, client_port_pointer_);
    check_port(cluster, server_, server_port_, file_, server_port_pointer_);
    const std::uint32_t device_max = std::min(cluster.host(client_).hca->params().max_inline_data_bytes,
                                              cluster.host(server_).hca->params().max_inline_data_bytes);
    if (inline_size_ > device_max) {
      if (inline_explicit_)
        throw sim::InputError(file_, inline_pointer_,
                              "at most the HCAs' max_inline_data_bytes (" + std::to_string(device_max) + ")",
                              std::to_string(inline_size_));
      inline_size_ = device_max; // perftest's default, as far as the device allows
    }
    rendezvous_ = &rendezvous;
    hand_shake_.clear();
    for (const std::string* host : {&client_, &server_})
      hand_shake_.emplace_back(*cluster.host(*host).runtime);
    // Like perftest, a side stops at its first failed completion ("Completion with error").
    for (const bool client : {true, false})
      spawn_program(cluster, client ? client_ : server_, name_ + (client ? "/client" : "/server"),
                    [this, client](Context& ctx) {
                      try {
                        run_side(ctx, client);
                      } catch (const ProgramFailed&) {
                        ++programs_failed_;
                      }
                    });
  }

  nlohmann::ordered_json results() const override {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < sizes_.size(); ++i) {
      if (!is_latency(test_)) {
        out.push_back(bandwidth_row(sizes_[i], reported(i)));
        continue;
      }
      const LatencyStats& s = latency_[i];
      nlohmann::ordered_json row;
      row["size_bytes"] = sizes_[i];
      row["iterations"] = s.samples;
      row["t_min_us"] = s.t_min_us;
      row["t_typical_us"] = s.t_typical_us;
      row["t_max_us"] = s.t_max_us;
      row["t_avg_us"] = s.t_avg_us;
      row["t_stdev_us"] = s.t_stdev_us;
      row["t_99_percent_us"] = s.t_p99_us;
      row["t_99_9_percent_us"] = s.t_p999_us;
      out.push_back(row);
    }
    return out;
  }

  std::vector<std::string> table() const override {
    std::vector<std::string> lines;
    std::ostringstream head;
    head << name_ << " (" << type_ << ", " << client_ << " -> " << server_ << ")";
    lines.push_back(head.str());
    char line[200];
    if (is_latency(test_)) {
      // perftest's own header, word for word, so that scripts that parse perftest parse this too.
      lines.push_back(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
                      "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ");
      for (std::size_t i = 0; i < sizes_.size(); ++i) {
        const LatencyStats& s = latency_[i];
        std::snprintf(line, sizeof line, " %-7u %-13llu %-14.2f %-12.2f %-18.2f %-14.2f %-15.2f %-22.2f %.2f",
                      sizes_[i], static_cast<unsigned long long>(s.samples), s.t_min_us, s.t_max_us, s.t_typical_us,
                      s.t_avg_us, s.t_stdev_us, s.t_p99_us, s.t_p999_us);
        lines.push_back(line);
      }
    } else {
      lines.push_back(bandwidth_header());
      for (std::size_t i = 0; i < sizes_.size(); ++i)
        lines.push_back(bandwidth_line(sizes_[i], reported(i)));
    }
    return lines;
  }

private:
  struct Qp {
    std::uint32_t qpn = 0;
    std::uint32_t send_cq = 0;
    verbs::AddressHandle ah;      ///< UD: where the peer's QP is
    std::uint32_t remote_qpn = 0; ///< UD
  };
  /// A side's receives, every QP's completing on one CQ as perftest's ctx->recv_cq: a server waits there for
  /// whichever QP a message comes to.
  struct Receives {
    std::uint32_t cq = 0;
    std::uint32_t srq = verbs::no_srq; ///< with srq: the side's shared receive queue; its receives count on QP 0
    verbs::RecvWr wr;                  ///< each receive: the run's largest message
    std::unordered_map<std::uint32_t, std::uint32_t> qp_of_qpn;
    std::vector<std::uint32_t> posted;         ///< per QP: posted and not completed, over all sizes
    std::vector<std::uint32_t> received;       ///< per QP: messages of the current size
    std::uint64_t received_total = 0;          ///< over all QPs: messages of the current size
    std::vector<std::uint64_t> dropped_before; ///< per QP: the HCA's dropped packets when the size began
  };
  static constexpr std::uint32_t ud_qkey = 0x11111111; // perftest's DEFAULT_QKEY
  /// perftest's UC_MAX_RX: the most receives a UC or UD bandwidth test posts ahead.
  static constexpr std::uint32_t uc_max_rx = 16000;
  /// How often a side waiting for UC or UD messages that may have been dropped looks at the HCA's drop count: a
  /// bound on how late it notices that the rest will not come (perftest's server gives up after 60 s without one).
  static constexpr sim::Time loss_recheck = sim::Time::from_us(1);

  /// A SEND to `qp`'s peer: for UD it carries the address handle, QPN and Q_Key.
  static void address(verbs::SendWr& wr, const Qp& qp) {
    wr.ah = qp.ah;
    wr.remote_qpn = qp.remote_qpn;
    wr.remote_qkey = ud_qkey;
  }
  /// A header-only SEND (size 0) carries its 4 bytes in the immediate field, as Kalia et al.'s do.
  static verbs::WrOpcode send_opcode(std::uint32_t size) {
    return size == 0 ? verbs::WrOpcode::send_with_imm : verbs::WrOpcode::send;
  }
  /// A RECV's buffer: a UD datagram lands after 40 bytes of GRH space.
  std::uint32_t recv_bytes(std::uint32_t size) const {
    return std::max<std::uint32_t>(size, 1) + (connection_ == verbs::QpType::ud ? 40 : 0);
  }
  /// perftest's rx_depth for ib_send_bw: receives posted per QP before each size, 512 (DEF_RX_SEND); over UC and UD,
  /// which drop a message that finds no receive, up to 16000 so that a server slower than its client loses none;
  /// never more than a size's messages.
  std::uint32_t rx_depth() const { return std::min(connection_ == verbs::QpType::rc ? 512u : uc_max_rx, iterations_); }
  /// With srq, the shared receive queue holds every QP's receives, up to the device's deepest queue.
  std::uint32_t srq_depth() const {
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(std::uint64_t{rx_depth()} * qps_, max_queue_depth_));
  }
  /// Receive queue entries per QP.
  std::uint32_t recv_queue_depth() const { return std::max({tx_depth_, 512u, rx_depth()}); }
  /// Whether messages of a bandwidth test can find no receive and be dropped: UC and UD with fewer receives
  /// posted ahead than messages, the server reposting as it goes.
  bool may_lose() const { return connection_ != verbs::QpType::rc && rx_depth() < iterations_; }

  /// Both sides: QPs created at time 0, connected at 1 ns, then each size in turn.
  void run_side(Context& ctx, bool client) {
    wait_to_start(ctx, start_);
    const std::string& me = client ? client_ : server_;
    const std::string& peer = client ? server_ : client_;
    const std::uint8_t port = client ? client_port_ : server_port_;
    const std::uint32_t max_size = *std::max_element(sizes_.begin(), sizes_.end());
    // Send data at the front, RECVs land behind it (with room for a UD datagram's GRH).
    const std::uint64_t buffer = ctx.memory().allocate(std::max<std::uint32_t>(max_size, 64) * 2ull + 40);
    std::vector<Qp> qps(qps_);
    verbs::QpCaps caps;
    caps.max_send_wr = std::max(tx_depth_, 16u) + post_list_;
    caps.max_recv_wr = recv_queue_depth();
    Receives rx;
    if (srq_) {
      max_queue_depth_ = ctx.hca().params().max_qp_wr;
      rx.srq = ctx.create_srq(srq_depth());
      caps.srq = rx.srq;
    }
    caps.max_inline_data = inline_size_;
    caps.blueflame = blueflame_;
    // Every QP completes on one send CQ, as perftest's ctx->send_cq: the loop takes whichever QP's completion comes
    // first. A side that both sends and receives waits for completions of either kind: its CQs share a completion
    // channel, as perftest -b polls its send and receive CQs in one loop.
    const bool duplex = test_ == Test::send_bw && bidirectional_;
    const std::uint32_t send_cq = ctx.create_cq(qps_ * (caps.max_send_wr + 16));
    rx.cq = duplex ? ctx.create_cq(qps_ * caps.max_recv_wr + 16, send_cq) : ctx.create_cq(qps_ * caps.max_recv_wr + 16);
    for (std::uint32_t q = 0; q < qps_; ++q) {
      qps[q].send_cq = send_cq;
      qps[q].qpn = ctx.create_qp(connection_, caps, qps[q].send_cq, rx.cq);
      rx.qp_of_qpn[qps[q].qpn] = q;
      rendezvous_->publish(me, peer, static_cast<int>(q), ctx.lid(port), qps[q].qpn);
    }
    // Every receive is as long as the run's largest message, in buffers sized for it as perftest's are: one left
    // over from a size (its UC or UD message dropped, or the ping-pong's spare) fits any later size.
    rx.wr = {0, buffer + max_size, recv_bytes(max_size)};
    rx.posted.assign(qps_, 0);
    rx.received.assign(qps_, 0);
    rx.dropped_before.assign(qps_, 0);
    ctx.program().sleep_until(ctx.now() + sim::Time::from_ns(1));
    for (std::uint32_t q = 0; q < qps_; ++q) {
      const auto [lid, qpn] = rendezvous_->take(peer, me, static_cast<int>(q));
      verbs::QpAttr attr;
      attr.port = port;
      attr.sl = ctx.path_sl(lid, port);
      attr.path_mtu = static_cast<verbs::Mtu>(mtu_);
      attr.timeout = recovery_.timeout;
      attr.retry_cnt = recovery_.retry_count;
      if (connection_ == verbs::QpType::ud) {
        // A datagram QP has no peer: each SEND names it by address handle, QPN and Q_Key, as perftest's do.
        attr.qkey = ud_qkey;
        qps[q].ah = {lid, attr.sl, port};
        qps[q].remote_qpn = qpn;
      } else {
        attr.dest_lid = lid;
        attr.dest_qpn = qpn;
      }
      ctx.connect_qp(qps[q].qpn, attr);
    }
    // Both sides know their peer's buffer as the same offset: perftest exchanges addresses the same way.
    peer_buffer_[client ? 0 : 1] = buffer;
    ctx.program().sleep_until(ctx.now() + sim::Time::from_ns(1));
    const std::uint64_t remote = peer_buffer_[client ? 1 : 0];
    for (std::size_t i = 0; i < sizes_.size(); ++i) {
      if (is_latency(test_))
        latency_round(ctx, client, qps[0], rx, buffer, remote, sizes_[i], i);
      else
        bandwidth_round(ctx, client, qps, rx, buffer, remote, sizes_[i], i);
    }
  }

  /// perftest's ctx_hand_shake before each size after the first, out of band (its TCP exchange is not simulated):
  /// each side waits here for the other, so that no message of a size comes before the peer has posted its
  /// receives for it or, in ib_write_lat, watches the byte it will spin on. The first size needs none: both sides
  /// leave the connection exchange at the same instant.
  void hand_shake(Context& ctx, bool client, std::size_t index) {
    if (index == 0)
      return;
    const std::size_t me = client ? 0 : 1, peer = 1 - me;
    if (++arrivals_[me] <= arrivals_[peer])
      hand_shake_[peer].notify();
    else
      ctx.program().wait(hand_shake_[me]);
  }

  /// Posts receives on QP `q` until `depth` are posted and not completed.
  void post_receives(Context& ctx, const Qp& qp, Receives& rx, std::uint32_t q, std::uint32_t depth) {
    for (; rx.posted[q] < depth; ++rx.posted[q]) {
      const verbs::PostResult r =
          rx.srq != verbs::no_srq ? ctx.post_srq_recv(rx.srq, rx.wr) : ctx.post_recv(qp.qpn, rx.wr);
      if (r.ok())
        continue;
      // A QP a fault sent to the error state refuses work; anything else is a bug.
      if (!ctx.faults() || r.error != verbs::PostError::invalid_state)
        throw sim::InvariantViolation("perftest-post", name_, "post_recv refused a receive",
                                      std::string(verbs::to_string(r.error)));
      record_failure(true, verbs::to_string(verbs::WcStatus::wr_flush_err), "perftest-completion");
      throw ProgramFailed{};
    }
  }

  /// Takes receive completions: counts each QP's messages of this size and, while more of them are to come than
  /// receives are posted, posts one back (perftest's run_iter_bw_server).
  void take_receives(Context& ctx, const std::vector<Qp>& qps, Receives& rx,
                     std::span<const verbs::WorkCompletion> wc) {
    for (const verbs::WorkCompletion& c : wc) {
      if (c.status != verbs::WcStatus::success) {
        record_failure(ctx.faults(), verbs::to_string(c.status), "perftest-completion");
        throw ProgramFailed{};
      }
      const std::uint32_t q = rx.qp_of_qpn.at(c.qp_num);
      ++rx.received_total;
      ++rx.received[q];
      if (rx.srq != verbs::no_srq) {
        // One queue for all: kept full while more messages are to come than receives are posted.
        if (--rx.posted[0] + rx.received_total < std::uint64_t{iterations_} * qps.size())
          post_receives(ctx, qps[0], rx, 0, rx.posted[0] + 1);
        continue;
      }
      --rx.posted[q];
      if (rx.received[q] + rx_depth() <= iterations_)
        post_receives(ctx, qps[q], rx, q, rx.posted[q] + 1);
    }
  }

  /// Messages of this size over all QPs that have come, or that the HCA dropped for want of a receive and so
  /// never will (a UC message's packets are all dropped once its first finds no receive).
  std::uint64_t accounted(Context& ctx, const std::vector<Qp>& qps, const Receives& rx, std::uint32_t size) const {
    std::uint64_t n = rx.received_total;
    if (!may_lose())
      return n;
    const std::uint64_t packets = (std::max<std::uint64_t>(size, 1) + mtu_ - 1) / mtu_; // UD: 1, size <= MTU
    for (std::size_t q = 0; q < qps.size(); ++q)
      n += (ctx.hca().qp_counters(qps[q].qpn).dropped - rx.dropped_before[q]) / packets;
    return n;
  }

  /// Waits for the rest of this size's messages, reposting receives as they come.
  void receive_rest(Context& ctx, const std::vector<Qp>& qps, Receives& rx, std::uint32_t size,
                    std::vector<verbs::WorkCompletion>& wc) {
    const std::uint64_t total = std::uint64_t{iterations_} * qps.size();
    while (accounted(ctx, qps, rx, size) < total) {
      const int n = ctx.wait_cq(rx.cq, wc, may_lose() ? ctx.now() + loss_recheck : sim::Time::max());
      take_receives(ctx, qps, rx, std::span(wc.data(), static_cast<std::size_t>(std::max(n, 0))));
    }
  }

  void latency_round(Context& ctx, bool client, const Qp& qp, Receives& rx, std::uint64_t buffer, std::uint64_t remote,
                     std::uint32_t size, std::size_t index) {
    std::vector<sim::Time> samples;
    samples.reserve(iterations_);
    std::vector<verbs::WorkCompletion> wc(4);
    verbs::SendWr wr;
    wr.local_address = buffer;
    wr.length_bytes = size;
    wr.remote_address = remote;
    wr.inline_data = size > 0 && size <= inline_size_; // a header-only SEND has no data segment at all
    switch (test_) {
    case Test::write_lat: {
      // Each side spins on the last byte of its buffer, which the peer's WRITE of iteration i changes.
      wr.opcode = verbs::WrOpcode::rdma_write;
      const std::size_t watch = ctx.watch_buffer(buffer + size - 1);
      hand_shake(ctx, client, index);
      for (std::uint32_t i = 0; i < iterations_; ++i) {
        const sim::Time start = ctx.now();
        if (!client)
          ctx.wait_for_writes(watch, i + 1);
        post(ctx, qp.qpn, wr);
        if (client)
          ctx.wait_for_writes(watch, i + 1);
        ctx.wait_cq(qp.send_cq, wc);
        if (client)
          samples.push_back(sim::Time::from_ps((ctx.now() - start).ps() / 2));
      }
      break;
    }
    case Test::send_lat: {
      wr.opcode = send_opcode(size);
      address(wr, qp);
      // Two receives, one posted back after each message: a ping-pong never has more than one in flight.
      post_receives(ctx, qp, rx, 0, 2);
      hand_shake(ctx, client, index);
      const auto receive = [&] {
        const int n = ctx.wait_cq(rx.cq, wc);
        for (int k = 0; k < n; ++k) {
          if (wc[static_cast<std::size_t>(k)].status != verbs::WcStatus::success) {
            record_failure(ctx.faults(), verbs::to_string(wc[static_cast<std::size_t>(k)].status),
                           "perftest-completion");
            throw ProgramFailed{};
          }
          --rx.posted[0];
        }
        post_receives(ctx, qp, rx, 0, 2);
      };
      for (std::uint32_t i = 0; i < iterations_; ++i) {
        const sim::Time start = ctx.now();
        if (!client)
          receive();
        post(ctx, qp.qpn, wr);
        if (client)
          receive();
        ctx.wait_cq(qp.send_cq, wc);
        if (client)
          samples.push_back(sim::Time::from_ps((ctx.now() - start).ps() / 2));
      }
      break;
    }
    case Test::read_lat:
    case Test::atomic_lat:
      hand_shake(ctx, client, index);
      if (!client)
        break; // the server's HCA answers on its own
      wr.opcode = test_ == Test::read_lat      ? verbs::WrOpcode::rdma_read
                  : atomic_ == "fetch_and_add" ? verbs::WrOpcode::atomic_fetch_and_add
                                               : verbs::WrOpcode::atomic_cmp_and_swp;
      wr.compare_add = 1;
      for (std::uint32_t i = 0; i < iterations_; ++i) {
        const sim::Time start = ctx.now();
        post(ctx, qp.qpn, wr);
        ctx.wait_cq(qp.send_cq, wc);
        samples.push_back(ctx.now() - start);
      }
      break;
    default:
      break;
    }
    if (client)
      latency_[index] = summarize(std::move(samples));
  }

  void bandwidth_round(Context& ctx, bool client, const std::vector<Qp>& qps, Receives& rx, std::uint64_t buffer,
                       std::uint64_t remote, std::uint32_t size, std::size_t index) {
    const bool sends = client || bidirectional_;
    const bool receives = test_ == Test::send_bw && (!client || bidirectional_);
    verbs::SendWr wr;
    wr.local_address = buffer;
    wr.length_bytes = size;
    wr.remote_address = remote;
    wr.inline_data = size > 0 && size <= inline_size_;
    wr.opcode = test_ == Test::write_bw  ? verbs::WrOpcode::rdma_write
                : test_ == Test::read_bw ? verbs::WrOpcode::rdma_read
                                         : send_opcode(size);
    // perftest posts rx_depth receives per QP, then synchronizes out of band: no SEND of this size meets an empty
    // receive queue. Both sides go on 1 ns after the later of them; for the first size both know when that is, as
    // they left the connection exchange together and posting costs post_recv_cpu_cost per receive.
    const sim::Time first_ready_at =
        ctx.now() +
        ctx.hca().host_params().post_recv_cpu_cost *
            static_cast<std::int64_t>(test_ == Test::send_bw ? rx_depth() * qps.size() : 0) +
        sim::Time::from_ns(1);
    rx.received_total = 0;
    if (receives)
      for (std::uint32_t q = 0; q < qps.size(); ++q) {
        rx.received[q] = 0;
        rx.dropped_before[q] = ctx.hca().qp_counters(qps[q].qpn).dropped;
        if (rx.srq == verbs::no_srq)
          post_receives(ctx, qps[q], rx, q, rx_depth());
      }
    if (receives && rx.srq != verbs::no_srq)
      post_receives(ctx, qps[0], rx, 0, srq_depth());
    hand_shake(ctx, client, index);
    ctx.program().sleep_until(index == 0 ? std::max(first_ready_at, ctx.now()) : ctx.now() + sim::Time::from_ns(1));
    std::vector<verbs::WorkCompletion> wc(64);
    if (!sends) {
      // A WRITE or READ target has nothing to do: its HCA answers alone. A SEND target keeps its receive queues
      // full until every message is in.
      if (receives)
        receive_rest(ctx, qps, rx, size, wc);
      return;
    }
    // perftest's loop: post while fewer than tx_depth are outstanding per QP; a completion every cq_mod WRs.
    std::vector<std::uint32_t> posted(qps.size(), 0), completed(qps.size(), 0);
    std::vector<sim::Time> completion_times;
    completion_times.reserve(iterations_ * qps.size() / cq_mod_ + qps.size());
    std::vector<verbs::SendWr> batch(post_list_, wr);
    const std::vector<std::uint32_t> all_cqs{rx.cq, qps[0].send_cq}; // on one completion channel when `receives`
    const sim::Time start = ctx.now();
    std::uint64_t done = 0;
    const std::uint64_t total = std::uint64_t{iterations_} * qps.size();
    while (done < total) {
      for (std::size_t q = 0; q < qps.size(); ++q) {
        while (posted[q] < iterations_ && posted[q] - completed[q] + post_list_ <= tx_depth_) {
          const std::uint32_t n = std::min(post_list_, iterations_ - posted[q]);
          for (std::uint32_t k = 0; k < n; ++k) {
            if (connection_ == verbs::QpType::ud)
              address(batch[k], qps[q]);
            const std::uint32_t id = posted[q] + k + 1;
            batch[k].signaled = id % cq_mod_ == 0 || id == iterations_;
            batch[k].wr_id = id;
          }
          post(ctx, qps[q].qpn, std::span<const verbs::SendWr>(batch.data(), n));
          posted[q] += n;
        }
      }
      // Replenish RECVs of a bidirectional send test without blocking on them.
      if (receives && ctx.hca().cq_ready(rx.cq) > 0) {
        const int n = ctx.poll_cq(rx.cq, wc);
        take_receives(ctx, qps, rx, std::span(wc.data(), static_cast<std::size_t>(std::max(n, 0))));
      }
      const auto take = [&](int n) {
        for (int k = 0; k < n; ++k) {
          const verbs::WorkCompletion& c = wc[static_cast<std::size_t>(k)];
          if (c.status != verbs::WcStatus::success) {
            record_failure(ctx.faults(), verbs::to_string(c.status), "perftest-completion");
            throw ProgramFailed{};
          }
          const std::uint32_t q = rx.qp_of_qpn.at(c.qp_num);
          const auto id = static_cast<std::uint32_t>(c.wr_id);
          done += id - completed[q];
          completed[q] = id;
          completion_times.push_back(ctx.now());
        }
      };
      // Take what the send CQ has; if it has nothing, block on it, or, if the peer's messages come in too, until
      // either CQ has a completion: blocked on sends alone, both sides could wait for each other's receives.
      const std::uint32_t send_cq = qps[0].send_cq;
      if (ctx.hca().cq_ready(send_cq) > 0)
        take(ctx.poll_cq(send_cq, wc));
      else if (done < total && receives)
        ctx.wait_any_cq(all_cqs);
      else if (done < total)
        take(ctx.wait_cq(send_cq, wc));
    }
    const sim::Time elapsed = ctx.now() - start;
    if (receives) // the rest of the peer's messages
      receive_rest(ctx, qps, rx, size, wc);
    bandwidth_[index][client ? 0 : 1] = bandwidth_figures(total, size, elapsed, completion_times, qps.size());
  }

  /// A size's figures as perftest prints them: the client's, or with -b the sum of what each side measured of its
  /// own sends (perftest adds the remote side's report to its own).
  BwFigures reported(std::size_t i) const {
    BwFigures f = bandwidth_[i][0];
    if (!bidirectional_)
      return f;
    const BwFigures& server = bandwidth_[i][1];
    f.average_gbps += server.average_gbps;
    f.peak_gbps += server.peak_gbps;
    f.msg_rate_mpps += server.msg_rate_mpps;
    f.messages += server.messages;
    f.bytes += server.bytes;
    f.seconds = std::max(f.seconds, server.seconds);
    return f;
  }

  void post(Context& ctx, std::uint32_t qpn, std::span<const verbs::SendWr> wrs) {
    const verbs::PostResult r = ctx.post_send(qpn, wrs);
    if (!r.ok()) {
      record_refused_post(ctx.faults(), r.error, "perftest-post", "perftest-completion");
      throw ProgramFailed{};
    }
  }
  void post(Context& ctx, std::uint32_t qpn, const verbs::SendWr& wr) { post(ctx, qpn, {&wr, 1}); }

  Test test_;
  std::string client_, server_, client_pointer_, server_pointer_;
  std::vector<std::uint32_t> sizes_;
  std::uint32_t iterations_ = 0, tx_depth_ = 0, qps_ = 0, inline_size_ = 0, post_list_ = 0, cq_mod_ = 0, mtu_ = 0;
  RcRecovery recovery_;
  bool inline_explicit_ = false;
  std::string inline_pointer_;
  bool blueflame_ = true;
  std::uint8_t client_port_ = 1, server_port_ = 1;
  std::string client_port_pointer_, server_port_pointer_;
  bool srq_ = false;
  std::uint32_t max_queue_depth_ = 32768; ///< the HCA's max_qp_wr, for the SRQ's depth
  verbs::QpType connection_ = verbs::QpType::rc;
  bool bidirectional_ = false;
  std::string atomic_;
  sim::Time start_;
  Rendezvous* rendezvous_ = nullptr;
  std::uint64_t peer_buffer_[2] = {0, 0};
  std::vector<sim::Signal> hand_shake_; ///< client's, server's: raised when the other side arrives
  std::uint32_t arrivals_[2] = {0, 0};  ///< hand shakes each side has reached
  std::vector<LatencyStats> latency_;
  std::vector<std::array<BwFigures, 2>> bandwidth_; ///< per size: the client's and the server's own sends
};

constexpr std::string_view connections[] = {"RC", "UC", "UD"};
constexpr std::string_view atomics[] = {"fetch_and_add", "cmp_and_swap"};

} // namespace

/// perftest's options, in the order Perftest (and AtomicBw) reads them. Uses come one for all tests or one per test
/// in Test's order: write_lat, read_lat, send_lat, atomic_lat, write_bw, read_bw, send_bw, atomic_bw.
const OptionTable& perftest_options() {
  // Latency and bandwidth tests differ in defaults as perftest's own do.
  const auto lat_bw = [](nlohmann::json lat, nlohmann::json bw) {
    const OptionUse l = with_default(std::move(lat)), b = with_default(std::move(bw));
    return uses(l, l, l, l, b, b, b, b);
  };
  // An option of every test but ib_atomic_bw, and one of ib_atomic_bw alone.
  const auto not_atomic_bw = [](const OptionUse& u) { return uses(u, u, u, u, u, u, u, not_taken()); };
  const auto atomic_bw_only = [](OptionUse u) {
    const OptionUse no = not_taken();
    return uses(no, no, no, no, no, no, no, std::move(u));
  };

  static const OptionTable table{{
      name_option(),
      {"client", OptionKind::host, "host", 0, 0, uses(required()),
       "the host that runs the client side (perftest's command with a server name)"},
      {"server", OptionKind::host, "host", 0, 0, uses(required()),
       "the host that runs the server side; not the client"},
      {"extra_clients", OptionKind::hosts, "host", 1, 4095, atomic_bw_only(no_default()),
       "more hosts that each run the client side against the same server and counters, with qps QPs each, figures "
       "summed (Kalia et al. ATC'16's many client machines; perftest has one client)"},
      {"all_sizes", OptionKind::flag, "bool", 0, 0, not_atomic_bw(with_default(false)),
       "perftest -a: every power of two from 2 bytes to all_sizes_max_bytes; not with size_bytes, nor for "
       "ib_atomic_lat (perftest refuses it)"},
      {"size_bytes", OptionKind::integer, "bytes", 0, 1 << 30,
       uses(with_default(2, 1), with_default(2, 1), with_default(2), with_default(8, 8), with_default(65536, 1),
            with_default(65536, 1), with_default(65536), with_default(8, 8)),
       "message size (perftest -s); not with all_sizes true; an atomic's is 8; a SEND test's may be 0, a header-only "
       "SEND (no scatter entry, 4 bytes of immediate data)"},
      {"all_sizes_max_bytes", OptionKind::integer, "bytes", 2, 1 << 23,
       uses(with_default(1 << 23), with_default(1 << 23), with_default(1 << 23), not_taken(), with_default(1 << 23),
            with_default(1 << 23), with_default(1 << 23), not_taken()),
       "largest size with all_sizes; only with all_sizes true; over UD at most mtu_bytes, which is its default there"},
      {"iterations", OptionKind::integer, "count", 1, 100'000'000, lat_bw(1000, 5000),
       "perftest -n: per size (and per QP of a bandwidth test)"},
      {"tx_depth", OptionKind::integer, "count", 1, 16384, lat_bw(1, 128),
       "perftest -t: work requests outstanding per QP; 1 for a latency test"},
      {"qps", OptionKind::integer, "count", 1, 4096, uses(with_default(1)),
       "perftest -q: QPs between the two hosts; 1 for a latency test"},
      {"inline_size_bytes", OptionKind::integer, "bytes", 0, 4096,
       uses(with_default(220), with_default(0), with_default(220), with_default(0), with_default(0), with_default(0),
            with_default(0), not_taken()),
       "perftest -I: messages up to this size are sent inline, at most the HCAs' max_inline_data_bytes (a default is "
       "capped to it); 0 for READ and atomic tests"},
      {"post_list", OptionKind::integer, "count", 1, 1024, uses(with_default(1)),
       "perftest -l: work requests per ibv_post_send, at most tx_depth; 1 for a latency test"},
      {"cq_mod", OptionKind::integer, "count", 1, 16384, lat_bw(1, 100),
       "perftest -Q: a signaled completion every cq_mod work requests, capped at tx_depth; 1 for a latency test"},
      mtu_option(),
      qp_timeout_option(),
      retry_count_option(),
      {"connection", OptionKind::choice, "text", 0, 0, uses(with_default("RC")),
       "transport (perftest -c): UD for the SEND tests (size at most mtu_bytes), UC for the WRITE and SEND tests, RC "
       "only for READ and atomic tests",
       connections},
      {"srq", OptionKind::flag, "bool", 0, 0,
       uses(not_taken(), not_taken(), with_default(false), not_taken(), not_taken(), not_taken(), with_default(false),
            not_taken()),
       "perftest --use_srq: each side's QPs take their receives from one shared receive queue; SEND tests only"},
      {"blueflame", OptionKind::flag, "bool", 0, 0, uses(with_default(true)),
       "the driver copies a lone WQE of up to the HCA's blueflame_buffer_bytes by write-combining MMIO instead of "
       "ringing the doorbell (false: MLX5_SHUT_UP_BF=1)"},
      {"bidirectional", OptionKind::flag, "bool", 0, 0, not_atomic_bw(with_default(false)),
       "perftest -b: both hosts send, figures summed over both directions; false for a latency test"},
      // Read for every test, as it always was: only the atomic tests use it.
      {"atomic", OptionKind::choice, "text", 0, 0, uses(with_default("fetch_and_add")),
       "perftest -A: the atomic verb of ib_atomic_lat and ib_atomic_bw (other tests ignore it)", atomics},
      {"counters", OptionKind::integer, "count", 1, 1 << 20, atomic_bw_only(with_default(1)),
       "distinct 8-byte counters at the server, each atomic on one drawn uniformly from the seed (Kalia et al. "
       "ATC'16's Z; perftest always targets one)"},
      {"counter_stride_bytes", OptionKind::integer, "bytes", 8, 1 << 20, atomic_bw_only(with_default(8)),
       "counter i sits at base + i x stride, base 4096-aligned; a multiple of 8. A multiple of 4096 puts every "
       "counter in the same lock bucket of an HCA that locks on the low 12 address bits"},
      {"client_ib_port", OptionKind::integer, "port", 1, 2, uses(with_default(1)),
       "perftest -i on the client: the HCA port its QPs use, a cabled one (a dual-port HCA may cable both)"},
      {"server_ib_port", OptionKind::integer, "port", 1, 2, uses(with_default(1)),
       "perftest -i on the server: the HCA port its QPs use, a cabled one"},
      start_option(),
      after_option(),
  }};
  return table;
}

namespace {

std::unique_ptr<Workload> make_perftest(OptionReader& options, std::uint64_t) {
  return std::make_unique<Perftest>(options);
}

// In Test's order: the column of each is its Test.
constexpr WorkloadType perftest_types[] = {
    {"ib_write_lat", "perftest ib_write_lat (latency test): RDMA WRITE ping-pong; t_* are half the round trip",
     &perftest_options, 0, &make_perftest},
    {"ib_read_lat", "perftest ib_read_lat (latency test): one RDMA READ at a time; t_* are the whole round trip",
     &perftest_options, 1, &make_perftest},
    {"ib_send_lat", "perftest ib_send_lat (latency test): SEND ping-pong; t_* are half the round trip",
     &perftest_options, 2, &make_perftest},
    {"ib_atomic_lat",
     "perftest ib_atomic_lat (latency test): one 8-byte atomic at a time; t_* are the whole round trip",
     &perftest_options, 3, &make_perftest},
    {"ib_write_bw", "perftest ib_write_bw (bandwidth test): RDMA WRITEs streamed from client to server",
     &perftest_options, 4, &make_perftest},
    {"ib_read_bw", "perftest ib_read_bw (bandwidth test): RDMA READs by the client from the server", &perftest_options,
     5, &make_perftest},
    {"ib_send_bw",
     "perftest ib_send_bw (bandwidth test): SENDs streamed from client to server (the server keeps its receive "
     "queue full)",
     &perftest_options, 6, &make_perftest},
    {"ib_atomic_bw",
     "perftest ib_atomic_bw (bandwidth test): 8-byte atomics by the client on counters at the server (counters: "
     "Kalia et al. ATC'16's contention experiment)",
     &perftest_options, 7, &make_atomic_bw},
};

} // namespace

std::span<const WorkloadType> perftest_workloads() {
  return perftest_types;
}

BwFigures bandwidth_figures(std::uint64_t messages, std::uint32_t size_bytes, sim::Time elapsed,
                            std::span<const sim::Time> completion_times, std::size_t streams) {
  BwFigures f;
  f.messages = messages;
  f.bytes = messages * size_bytes;
  f.seconds = elapsed.s();
  f.average_gbps = static_cast<double>(f.bytes) * 8 / elapsed.ps() * 1e3;
  f.msg_rate_mpps = static_cast<double>(messages) / elapsed.ps() * 1e6;
  // Peak: the best of the windows of an eighth of the completions (perftest takes the best cycle).
  const std::size_t window = std::max<std::size_t>({completion_times.size() / 8, streams, 1});
  f.peak_gbps = f.average_gbps;
  if (completion_times.size() > window) {
    const double bytes_per_completion = static_cast<double>(f.bytes) / static_cast<double>(completion_times.size());
    for (std::size_t i = window; i < completion_times.size(); ++i) {
      const std::int64_t ps = (completion_times[i] - completion_times[i - window]).ps();
      if (ps > 0)
        f.peak_gbps = std::max(f.peak_gbps, bytes_per_completion * static_cast<double>(window) * 8 / ps * 1e3);
    }
  }
  return f;
}

nlohmann::ordered_json bandwidth_row(std::uint32_t size_bytes, const BwFigures& figures) {
  nlohmann::ordered_json row;
  row["size_bytes"] = size_bytes;
  row["iterations"] = figures.messages;
  row["bw_peak_gbps"] = figures.peak_gbps;
  row["bw_average_gbps"] = figures.average_gbps;
  row["msg_rate_mpps"] = figures.msg_rate_mpps;
  return row;
}

std::string bandwidth_header() {
  return " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]";
}

std::string bandwidth_line(std::uint32_t size_bytes, const BwFigures& figures) {
  char line[200];
  std::snprintf(line, sizeof line, " %-10u %-14llu %-18.2f %-20.2f %.6f", size_bytes,
                static_cast<unsigned long long>(figures.messages), figures.peak_gbps, figures.average_gbps,
                figures.msg_rate_mpps);
  return line;
}

} // namespace ib::host
