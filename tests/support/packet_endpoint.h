// A minimal packet source and sink with one IB port, standing in for an HCA until the HCA model exists (issue 5
// allows it in tests/). Sources are flows: packets of one size to one DLID (or a uniformly random one of a list),
// on one SL/VL, back to back or at a fixed gap. The sink consumes a packet when its last bit is in, frees its
// buffer, checks in-order delivery per (SLID, SL) and keeps per-source statistics.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "models/link/link.h"
#include "sim/errors.h"
#include "sim/rng.h"

namespace ib::testing {

struct Flow {
  std::vector<std::uint16_t> dlids; ///< one DLID, or several drawn uniformly per packet
  /// If non-zero (and `dlids` empty): DLIDs drawn uniformly from [uniform_dlid_first, uniform_dlid_last] minus the
  /// endpoint's own LID, with no table to look up.
  std::uint16_t uniform_dlid_first = 0;
  std::uint16_t uniform_dlid_last = 0;
  std::uint8_t sl = 0;
  std::uint8_t vl = 0; ///< VL on the source's own link (the endpoint's SL2VL is the identity)
  std::uint32_t payload_bytes = 4096;
  link::Opcode opcode = link::Opcode::rdma_write_only;
  std::uint64_t packets = std::numeric_limits<std::uint64_t>::max();
  sim::Time start_at;
  sim::Time gap; ///< least time between the starts of two packets; zero = back to back
};

/// `packets` RDMA WRITE ONLY packets of `payload` bytes to `dlid`, back to back, on SL = VL = `sl`.
inline Flow write_flow(std::uint16_t dlid, std::uint64_t packets, std::uint32_t payload = 4096, std::uint8_t sl = 0) {
  Flow f;
  f.dlids = {dlid};
  f.payload_bytes = payload;
  f.packets = packets;
  f.vl = sl;
  f.sl = sl;
  return f;
}

/// What a sink saw from one source (SLID, SL).
struct SourceStats {
  std::uint64_t packets = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t wire_bytes = 0;
  sim::Time first_last_bit_at = sim::Time::max();
  sim::Time last_last_bit_at;
  sim::Time latency_sum; ///< injection to last bit in
  sim::Time latency_min = sim::Time::max();
  sim::Time latency_max;
};

/// Per (LID, SL) records: SL 0 (the common case) in a flat array by LID, other SLs chained per LID.
template <class T>
class LidSlTable {
public:
  T& at(std::uint16_t lid, std::uint8_t sl) {
    if (sl == 0) {
      if (lid >= sl0_.size()) {
        sl0_.resize(lid + 1u);
      }
      return sl0_[lid];
    }
    for (Entry& e : others_) {
      if (e.lid == lid && e.sl == sl) {
        return e.value;
      }
    }
    others_.push_back({T{}, lid, sl});
    return others_.back().value;
  }
  const T* find(std::uint16_t lid, std::uint8_t sl) const {
    if (sl == 0) {
      return lid < sl0_.size() ? &sl0_[lid] : nullptr;
    }
    for (const Entry& e : others_) {
      if (e.lid == lid && e.sl == sl) {
        return &e.value;
      }
    }
    return nullptr;
  }

private:
  struct Entry {
    T value;
    std::uint16_t lid;
    std::uint8_t sl;
  };
  std::vector<T> sl0_;
  std::vector<Entry> others_;
};

class PacketEndpoint {
public:
  enum class Kind : std::uint8_t {
    packet_arrives = static_cast<std::uint8_t>(link::PortEventKind::packet_arrives),
    flow_control_arrives = static_cast<std::uint8_t>(link::PortEventKind::flow_control_arrives),
    flow_control_refresh = static_cast<std::uint8_t>(link::PortEventKind::flow_control_refresh),
    tx_done = link::first_node_event_kind,
    flow_wakes,
  };

  PacketEndpoint(sim::Target self, std::uint32_t component_id, std::uint16_t lid, link::PacketPool& pool,
                 const link::PortConfig& config, sim::Rng rng)
      : pool_(pool), rng_(rng), self_(self), component_id_(component_id), lid_(lid) {
    link::PortConfig sink_config = config;
    sink_config.arrival_after_tail = true;
    sink_config.arrival_delay = sim::Time::zero();
    port_.bind(self, component_id, 1, sink_config);
  }

  link::Port& port() { return port_; }
  const link::Port& port() const { return port_; }
  std::uint16_t lid() const { return lid_; }

  /// Whether the sink keeps per-source statistics (in-order delivery is checked either way).
  void keep_source_stats(bool keep) { keep_source_stats_ = keep; }
  /// Whether the sink checks in-order delivery per (SLID, SL). It keeps a record per source that sends to it, so
  /// over a whole fabric the records grow as hosts squared (1 MiB for 512 hosts under uniform traffic), touched at
  /// random; a benchmark of the fabric may leave them out. Delivery to the right LID is checked either way.
  void check_order(bool check) { check_order_ = check; }
  void add_flow(const Flow& flow) { flows_.push_back({flow, flow.start_at, 0, wire_bytes(flow)}); }
  /// Schedules the flows' first packets.
  void start(sim::Simulator& sim) {
    for (const FlowState& f : flows_) {
      wake_at(sim, f.next_at);
    }
  }

  /// Starts loading what on_event(`event`) will touch first.
  void prefetch(const sim::Event& event) const {
    if (event.kind == static_cast<std::uint8_t>(Kind::packet_arrives)) {
      __builtin_prefetch(&pool_[link::PacketHandle{event.handle}]);
    } else {
      __builtin_prefetch(this);
      __builtin_prefetch(&packets_sent_);
    }
  }
  /// Then what depends on the packet: its VL's credits and its source's sequence number; or, for the events
  /// that may send, the flows and the port's send state.
  void prefetch_near(const sim::Event& event) const {
    if (event.kind == static_cast<std::uint8_t>(Kind::packet_arrives)) {
      const link::Packet& packet = pool_[link::PacketHandle{event.handle}];
      port_.prefetch_receive(packet.vl);
      __builtin_prefetch(&packets_received_);
      const std::uint32_t* last_seq = check_order_ ? last_seq_.find(packet.slid, packet.sl) : nullptr;
      if (last_seq != nullptr)
        __builtin_prefetch(last_seq);
    } else if (event.kind != static_cast<std::uint8_t>(Kind::flow_control_refresh)) {
      __builtin_prefetch(flows_.data());
      port_.prefetch_send();
    }
  }

  void on_event(sim::Simulator& sim, const sim::Event& event) {
    switch (static_cast<Kind>(event.kind)) {
    case Kind::packet_arrives: {
      // The port is configured to report arrivals at the last bit: the sink consumes the packet at once.
      const link::PacketHandle handle{event.handle};
      if (!port_.on_packet_arrives(sim, pool_[handle])) {
        pool_.release(handle);
        return;
      }
      consume(sim, handle);
      return;
    }
    case Kind::flow_control_arrives:
      port_.on_flow_control_arrives(sim);
      try_send(sim);
      return;
    case Kind::flow_control_refresh:
      port_.on_flow_control_refresh(sim);
      return;
    case Kind::tx_done:
      sending_ = false;
      try_send(sim);
      if (!sending_) {
        port_.flush_flow_control(sim);
      }
      return;
    case Kind::flow_wakes:
      if (event.generation == wake_generation_) {
        wake_pending_at_ = sim::Time::max();
      }
      try_send(sim);
      return;
    }
  }

  /// What arrived from (SLID, SL), or nullptr if nothing did.
  const SourceStats* stats_from(std::uint16_t slid, std::uint8_t sl) const {
    const SourceStats* found = stats_.find(slid, sl);
    return found != nullptr && found->packets > 0 ? found : nullptr;
  }
  std::uint64_t packets_sent() const { return packets_sent_; }
  std::uint64_t packets_received() const { return packets_received_; }
  std::uint64_t payload_bytes_received() const { return payload_bytes_received_; }
  /// Whether every flow has sent all its packets.
  bool sources_done() const {
    for (const FlowState& f : flows_) {
      if (f.sent < f.flow.packets) {
        return false;
      }
    }
    return true;
  }

private:
  struct FlowState {
    Flow flow;
    sim::Time next_at;
    std::uint64_t sent;
    std::uint32_t wire_bytes; ///< of each of its packets
  };

  void wake_at(sim::Simulator& sim, sim::Time at) {
    if (at < sim.now()) {
      at = sim.now();
    }
    if (at >= wake_pending_at_) {
      return;
    }
    wake_pending_at_ = at;
    sim.schedule(at, self_, static_cast<std::uint8_t>(Kind::flow_wakes), 0, ++wake_generation_);
  }

  void try_send(sim::Simulator& sim) {
    const sim::Time now = sim.now();
    if (sending_ || !port_.may_start(now)) {
      return;
    }
    // Ready VLs: some flow due now whose next packet fits the credits. Round robin among a VL's flows: one pass
    // from the flow after the last one served, remembering each VL's first candidate.
    std::uint16_t ready = 0;
    std::uint16_t waiting = 0;
    sim::Time next_due = sim::Time::max();
    std::array<std::uint32_t, link::vl_slots> candidate{};
    const std::size_t n = flows_.size();
    for (std::size_t k = 1; k <= n; ++k) {
      const std::size_t i = last_flow_ + k < n ? last_flow_ + k : last_flow_ + k - n;
      const FlowState& f = flows_[i];
      if (f.sent >= f.flow.packets) {
        continue;
      }
      if (f.next_at > now) {
        next_due = std::min(next_due, f.next_at);
        continue;
      }
      const auto bit = static_cast<std::uint16_t>(1u << f.flow.vl);
      waiting |= bit;
      if ((ready & bit) == 0 && port_.has_credits(now, f.flow.vl, f.wire_bytes)) {
        ready |= bit;
        candidate[f.flow.vl] = static_cast<std::uint32_t>(i);
      }
    }
    if (next_due != sim::Time::max()) {
      wake_at(sim, next_due);
    }
    const int vl = ready != 0 ? port_.arbiter().pick(ready) : -1;
    if (vl < 0) {
      if (waiting != 0) {
        port_.note_blocked(sim);
      }
      return;
    }
    last_flow_ = candidate[static_cast<std::size_t>(vl)];
    send_one(sim, flows_[last_flow_]);
  }

  std::uint16_t pick_dlid(const Flow& flow) {
    if (flow.dlids.empty()) {
      const std::uint32_t others = flow.uniform_dlid_last - flow.uniform_dlid_first; // the range minus our LID
      auto dlid = static_cast<std::uint16_t>(flow.uniform_dlid_first + rng_.uniform_below(others));
      return dlid >= lid_ ? static_cast<std::uint16_t>(dlid + 1) : dlid;
    }
    return flow.dlids.size() == 1 ? flow.dlids[0] : flow.dlids[rng_.uniform_below(flow.dlids.size())];
  }

  static std::uint32_t wire_bytes(const Flow& flow) {
    return link::wire_bytes(link::Transport::rc, flow.opcode, flow.payload_bytes, false);
  }

  void send_one(sim::Simulator& sim, FlowState& f) {
    const link::PacketHandle handle = pool_.acquire();
    link::Packet& packet = pool_[handle];
    packet.injected_at = sim.now();
    packet.slid = lid_;
    packet.dlid = pick_dlid(f.flow);
    packet.sl = f.flow.sl;
    packet.opcode = f.flow.opcode;
    packet.payload_bytes = f.flow.payload_bytes;
    packet.wire_bytes = f.wire_bytes;
    packet.flow_seq = ++next_seq_; // from 1: a sink's "last seen" starts at 0
    ++f.sent;
    ++packets_sent_;
    f.next_at = sim.now() + f.flow.gap;
    sending_ = true;
    const sim::Time done_at = port_.send(sim, pool_, handle, f.flow.vl, sim::Time::zero());
    sim.schedule(done_at, self_, static_cast<std::uint8_t>(Kind::tx_done));
  }

  void consume(sim::Simulator& sim, link::PacketHandle handle) {
    const link::Packet& packet = pool_[handle];
    if (packet.dlid != lid_) {
      throw sim::InvariantViolation(
          "misdelivered-packet", sim.component_name(component_id_),
          "packet for DLID " + std::to_string(packet.dlid) + " arrived at LID " + std::to_string(lid_), "");
    }
    // Each source numbers all its packets in one sequence, so those from one source must arrive in increasing
    // order (modulo 2^32; a source never has 2^31 packets between two to the same sink). Lost packets show as
    // packets left in the pool when the fabric drains.
    if (check_order_) {
      std::uint32_t& last_seq = last_seq_.at(packet.slid, packet.sl);
      if (static_cast<std::int32_t>(packet.flow_seq - last_seq) <= 0) {
        throw sim::InvariantViolation("in-order-delivery", sim.component_name(component_id_),
                                      "from SLID " + std::to_string(packet.slid) + " SL " + std::to_string(packet.sl) +
                                          ": packet " + std::to_string(packet.flow_seq) + " after packet " +
                                          std::to_string(last_seq),
                                      "");
      }
      last_seq = packet.flow_seq;
    }
    if (keep_source_stats_) {
      SourceStats& s = stats_.at(packet.slid, packet.sl);
      const sim::Time latency = sim.now() - packet.injected_at;
      ++s.packets;
      s.payload_bytes += packet.payload_bytes;
      s.wire_bytes += packet.wire_bytes;
      s.first_last_bit_at = std::min(s.first_last_bit_at, sim.now());
      s.last_last_bit_at = sim.now();
      s.latency_sum += latency;
      s.latency_min = std::min(s.latency_min, latency);
      s.latency_max = std::max(s.latency_max, latency);
    }
    ++packets_received_;
    payload_bytes_received_ += packet.payload_bytes;
    const std::uint8_t vl = packet.vl;
    const std::uint32_t wire = packet.wire_bytes;
    pool_.release(handle);
    port_.release(sim, vl, wire);
  }

  // What each packet touches first, in two lines: the source's state and the counters both ends keep. The port
  // (aligned to its own lines) and the records per source follow.
  link::PacketPool& pool_;
  sim::Rng rng_;
  std::vector<FlowState> flows_;
  std::uint64_t packets_sent_ = 0;
  std::uint64_t packets_received_ = 0;
  std::uint64_t payload_bytes_received_ = 0;
  sim::Time wake_pending_at_ = sim::Time::max();
  sim::Target self_;
  std::uint32_t last_flow_ = 0;
  // One sequence over all of a source's packets: no per-destination table to miss in cache under uniform traffic.
  std::uint32_t next_seq_ = 0; ///< the last sequence number sent, over all flows
  std::uint32_t wake_generation_ = 0;
  std::uint32_t component_id_;
  std::uint16_t lid_;
  bool sending_ = false;
  bool keep_source_stats_ = true;
  bool check_order_ = true;
  LidSlTable<std::uint32_t> last_seq_; ///< per (SLID, SL): the last sequence number seen
  LidSlTable<SourceStats> stats_;
  link::Port port_;
};

} // namespace ib::testing
