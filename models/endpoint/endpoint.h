// The fabric-level host model (scenario "host_model": "fabric"): a host is an endpoint at its IB port that turns
// messages into packets at line rate and sinks what arrives, with fixed, profile-given NIC latencies in place of
// verbs, PCIe and the HCA's pipeline. RC connections keep what the fabric sees of them: packets of up to the path
// MTU, per-message ACKs, PSNs checked in order, completions in posting order. For routing, congestion and fault
// studies on fabrics too big for the full host model (docs/host-models.md says when each fits).
//
// A message posted at t puts its first packet on the wire no earlier than t + send_latency; its packets leave back
// to back as credits allow, connections taking turns packet by packet, ACKs first. The receiver acknowledges a
// message ack_latency after its last packet's last bit is in; the sender reports the completion to the connection's
// client completion_latency after the ACK's last bit is in. The latencies come from the HCA profile (the endpoint_*
// keys), calibrated against the full host model.
//
// Congestion control (IBA A10, set_congestion_control): a packet that arrives with FECN is acknowledged at once
// with BECN set; a BECN raises the CCTI of its connection (or of its SL, with per-SL control), and each data packet
// sent while the CCTI is above zero holds its connection (or SL) back for the table's injection delay after its
// last bit.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/link/congestion.h"
#include "models/link/link.h"
#include "sim/ring.h"
#include "sim/simulator.h"

namespace ib::endpoint {

struct Params {
  sim::Time send_latency;       ///< post to the first bit of the message's first packet on the wire
  sim::Time ack_latency;        ///< last bit of a message in to the first bit of its ACK out (responder)
  sim::Time completion_latency; ///< last bit of the ACK in to the completion seen by the program
  /// AckReq also on every this many packets of a message, as the HCA profile's requester sets it (0 = last only).
  std::uint32_t ack_request_interval_packets = 0;
};

/// How a message completed, as verbs' completion status says it.
enum class Status : std::uint8_t {
  success,
  retry_exceeded, ///< the transport retry counter ran out: the connection is in error
  flushed,        ///< posted on, or still waiting on, a connection in error
};

/// A message's completion, with what the poster would otherwise have to keep per message.
struct Completion {
  std::uint64_t wr_id;
  std::uint32_t size_bytes;
  Status status;
  sim::Time posted_at;
};

/// Whoever posts on a connection hears of its completions.
class Client {
public:
  virtual ~Client() = default;
  /// A message posted on a connection created for `tag` completed.
  virtual void on_completion(sim::Simulator& sim, std::uint32_t tag, const Completion& completion) = 0;
};

/// What a connection's messages are, on the wire.
enum class Verb : std::uint8_t { write, send };

/// Totals of one endpoint, for the report.
struct Counters {
  std::uint64_t messages_posted = 0;
  std::uint64_t messages_completed = 0;
  std::uint64_t messages_delivered = 0; ///< last packets accepted as a receiver
  std::uint64_t data_packets_sent = 0;
  std::uint64_t acks_sent = 0;
  std::uint64_t payload_bytes_sent = 0;
  std::uint64_t payload_bytes_received = 0;
  std::uint64_t retransmitted_packets = 0;  ///< data packets sent again after a timeout (go-back-N)
  std::uint64_t timeouts = 0;               ///< transport timer expiries
  std::uint64_t sequence_naks_received = 0; ///< NAKs (PSN sequence error) that made the sender go back
  std::uint64_t messages_failed = 0;        ///< completed in error (retry exceeded or flushed)
  std::uint32_t connections_failed = 0;     ///< connections in error
  std::uint64_t packets_out_of_order = 0;   ///< data packets that arrived before an earlier PSN of theirs (held)
  std::uint32_t reorder_depth_max = 0;      ///< most PSNs one connection held at once, waiting for a gap
};

class Endpoint {
public:
  enum class Kind : std::uint8_t {
    packet_arrives = static_cast<std::uint8_t>(link::PortEventKind::packet_arrives),
    flow_control_arrives = static_cast<std::uint8_t>(link::PortEventKind::flow_control_arrives),
    flow_control_refresh = static_cast<std::uint8_t>(link::PortEventKind::flow_control_refresh),
    tx_done = link::first_node_event_kind,
    message_ready,    ///< handle = connection: its head message's send latency is over
    ack_ready,        ///< handle = connection, generation = PSN acknowledged
    completion_ready, ///< handle = connection: its oldest acknowledged message completes
    retry_timer,      ///< handle = connection: its transport timer may have expired
    throttle_over,    ///< handle = connection: its injection delay is over (congestion control per QP)
    sl_throttle_over, ///< handle = SL: its injection delay is over (congestion control per SL)
  };

  /// An endpoint with `port_count` IB ports (traffic uses port 1), whose events go to `self`.
  Endpoint(sim::Target self, std::uint32_t component_id, link::PacketPool& pool, unsigned port_count,
           const Params& params);
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  // The fabric's face.
  link::Port& port(std::uint8_t number) { return ports_[number - 1u].port; }
  const link::Port& port(std::uint8_t number) const { return ports_[number - 1u].port; }
  unsigned port_count() const { return static_cast<unsigned>(ports_.size()); }
  void set_lid(std::uint8_t port_number, std::uint16_t lid) { ports_[port_number - 1u].lid = lid; }
  std::uint16_t lid() const { return ports_[0].lid; }
  void set_sl_to_vl(std::uint8_t port_number, const link::SlToVl& table) { ports_[port_number - 1u].sl_to_vl = table; }
  void set_tracer(sim::Tracer* tracer);
  void on_event(sim::Simulator& sim, const sim::Event& event);

  // The workload's face.
  /// A new RC connection whose completions go to `client` with `tag`; returns its number (the QPN peers address).
  std::uint32_t create_connection(Client& client, std::uint32_t tag);
  /// Room for `count` more connections, made without moving the ones made so far.
  void reserve_connections(std::size_t count) { connections_.reserve(connections_.size() + count); }
  /// Connects `qpn` to `remote_qpn` at `dlid`, on `sl`, in packets of at most `mtu_bytes` payload. With
  /// retransmission on, an unacknowledged packet is sent again (go-back-N) `timeout` after the last progress, at
  /// most `retry_count` times in a row, after which the connection fails (zero timeout: never).
  void connect(std::uint32_t qpn, std::uint16_t dlid, std::uint8_t sl, std::uint32_t remote_qpn,
               std::uint32_t mtu_bytes, Verb verb, sim::Time timeout = sim::Time::zero(), std::uint8_t retry_count = 7);
  /// Faults may lose packets: receivers drop what is out of order and acknowledge duplicates, senders time out and
  /// go back. Off, a lost or reordered packet is an invariant violation.
  void enable_retransmission() { reliable_ = true; }
  /// Adaptive routing may reorder a connection's packets (and ACKs): receivers hold what comes early and deliver
  /// in PSN order, acknowledging each ACK-requesting packet once everything before it is in (as ConnectX's
  /// out-of-order data placement; completions stay in posting order); senders take ACKs cumulatively. With
  /// retransmission too, a gap is no sign of loss: no sequence NAK, a lost packet is sent again after the sender's
  /// timeout, and what it resends that had already arrived is a duplicate, acknowledged up to what is in.
  void enable_out_of_order() { out_of_order_ = true; }
  /// The SM's CACongestionSetting and CongestionControlTable for this port. Call before traffic.
  void set_congestion_control(const link::cc::CaSetting& setting) { cc_ = setting; }
  /// Posts a message of `size_bytes` (at least 1) on `qpn`.
  void post(sim::Simulator& sim, std::uint32_t qpn, std::uint64_t wr_id, std::uint32_t size_bytes);

  const Counters& counters() const { return counters_; }
  const link::cc::CaCounters& congestion_counters() const { return cc_counters_; }
  std::size_t connection_count() const { return connections_.empty() ? released_connections_ : connections_.size(); }
  /// The run is over and its invariants checked: the connections' memory goes (their count stays), so that the
  /// report's flows reuse it. Nothing may post, connect or deliver afterwards.
  void release_connections() {
    released_connections_ = connections_.size();
    std::vector<Connection>().swap(connections_);
  }
  /// "" when every message posted has completed and nothing is waiting to be sent; else what is left.
  std::string check_quiescent() const;

private:
  struct Message {
    std::uint64_t wr_id;
    std::uint32_t size_bytes;
    std::uint32_t first_psn; ///< set when its first packet is sent
    std::uint32_t last_psn;  ///< set when its last packet is sent
    sim::Time ready_at;
    Status status;
    bool sent; ///< its first packet has been sent (at least once)
  };
  /// A connection's state that only a running transport timer, out-of-order delivery or congestion control use,
  /// made on first need: a connection without it takes 104 bytes instead of 152 (benchmark (g) holds 3.2 million).
  struct ConnectionRare {
    sim::Time deadline = sim::Time::max(); ///< when the transport timer expires; max: not running
    /// Out of order (enable_out_of_order): per PSN from expected_psn, what has arrived (reorder_* bits).
    sim::Ring<std::uint8_t> reorder;
    link::cc::Ccti ccti;    ///< congestion control per QP
    sim::Time next_send_at; ///< per QP: no data packet before this (the injection delay)
  };
  struct Connection {
    Client* client = nullptr;
    std::uint32_t tag = 0;
    std::uint32_t remote_qpn = 0;
    std::uint32_t mtu_bytes = 4096;
    std::uint16_t dlid = 0;
    std::uint8_t sl = 0;
    std::uint8_t vl = 0;
    Verb verb = Verb::write;
    bool queued = false;            ///< in its VL's ready ring
    bool first_packet = true;       ///< the next packet sent is its message's first
    std::uint32_t bytes_left = 0;   ///< of the message being sent (messages[sending])
    std::uint32_t packet_index = 0; ///< of the next packet in the message being sent
    std::uint32_t sending = 0;      ///< index in `messages` of the first message not yet fully sent
    std::uint32_t next_psn = 0;     ///< requester: next PSN to send
    std::uint32_t acked = 0;        ///< messages acknowledged, not yet completed (at the front of `messages`)
    std::uint32_t expected_psn = 0; ///< responder: next PSN accepted
    std::uint32_t highest_psn = 0;  ///< requester: PSNs sent so far (beyond next_psn after a go-back)
    sim::Time timeout;              ///< zero: no transport timer
    std::uint8_t retry_count = 7, retries_left = 7;
    bool timer_pending = false;           ///< a retry_timer event is in the calendar
    bool failed = false;                  ///< in error: every message completes flushed
    bool nak_sent = false;                ///< responder: a NAK for the gap at expected_psn is out
    bool throttle_pending = false;        ///< a throttle_over event is in the calendar (it queues the connection)
    std::unique_ptr<ConnectionRare> rare; ///< null: no transport timer, no hold, never throttled
    sim::Ring<Message> messages;          ///< posted, not completed, in order
    ConnectionRare& rare_state() {
      if (!rare)
        rare = std::make_unique<ConnectionRare>();
      return *rare;
    }
    /// PSNs held from expected_psn (out of order).
    std::uint32_t reorder_size() const { return rare ? rare->reorder.size() : 0; }
  };
  struct PortState {
    link::Port port;
    std::uint16_t lid = 0;
    link::SlToVl sl_to_vl = link::default_sl_to_vl(1);
    bool sl_to_vl_set = false;
  };
  struct Ack {
    std::uint32_t qpn; ///< the connection acknowledged (local)
    std::uint32_t psn; ///< with nak_flag: a NAK (PSN sequence error) asking for this PSN again
  };
  static constexpr std::uint32_t nak_flag = 1u << 31;
  static constexpr std::uint32_t becn_flag = 1u << 30; ///< the ACK carries BECN
  static constexpr std::uint8_t reorder_arrived = 1, reorder_ack_request = 2, reorder_last = 4;
  /// Congestion control per SL of the port (Port_Control bit 0).
  struct SlFlow {
    link::cc::Ccti ccti;
    sim::Time next_send_at;
    bool wake_pending = false; ///< a sl_throttle_over event is in the calendar
  };

  void try_send(sim::Simulator& sim);
  void send_data(sim::Simulator& sim, Connection& c, std::uint32_t qpn);
  void send_ack(sim::Simulator& sim, const Ack& ack);
  /// A packet from this endpoint's port 1 on connection `c`, to its peer.
  link::PacketHandle new_packet(sim::Simulator& sim, const Connection& c, link::Opcode opcode,
                                std::uint32_t payload_bytes, std::uint32_t wire_bytes, std::uint32_t psn,
                                bool ack_request);
  void make_ready(sim::Simulator& sim, Connection& c, std::uint32_t qpn);
  /// Congestion control: a BECN for connection `c` arrived.
  void on_becn(sim::Simulator& sim, Connection& c, std::uint32_t qpn);
  /// Congestion control: the injection delay after a data packet of `c` of `wire_bytes` that ends at `done_at`;
  /// sets when the connection (or its SL) may send again.
  sim::Time throttle(sim::Simulator& sim, Connection& c, std::uint32_t qpn, std::uint32_t wire_bytes,
                     sim::Time done_at);
  /// Traces the flow's CCTI as a counter when it changed since last traced (with a tracer only).
  void trace_ccti(const sim::Simulator& sim, const Connection& c, std::uint32_t qpn, link::cc::Ccti& ccti,
                  std::uint16_t index);
  /// Congestion control per SL: whether `c`'s SL is held back now (then an event wakes the endpoint when it ends).
  bool sl_throttled(sim::Simulator& sim, const Connection& c);
  void receive(sim::Simulator& sim, link::PacketHandle handle);
  void receive_ack(sim::Simulator& sim, Connection& c, std::uint32_t qpn, std::uint32_t psn, bool nak);
  void go_back(sim::Simulator& sim, Connection& c, std::uint32_t qpn);
  /// Out of order: data packet `p`, `d` PSNs beyond the next expected one (d >= 0, not yet arrived), is held, and
  /// what is then in order delivered.
  void hold(sim::Simulator& sim, Connection& c, std::uint32_t qpn, const link::Packet& p, std::uint32_t becn,
            std::int32_t d);
  /// Whether `c` has a packet to send now (a connection in error or fully sent has none).
  static bool has_packet(const Connection& c) {
    return !c.failed && (!c.first_packet || c.sending < c.messages.size());
  }
  /// Whether `c` has sent something not yet acknowledged.
  static bool unacknowledged(const Connection& c) {
    return !c.failed && c.acked < c.messages.size() && c.messages[c.acked].sent;
  }
  void arm_timer(sim::Simulator& sim, Connection& c, std::uint32_t qpn);
  void on_retry_timer(sim::Simulator& sim, Connection& c, std::uint32_t qpn);
  void fail(sim::Simulator& sim, Connection& c, std::uint32_t qpn);
  std::uint8_t vl_of(std::uint8_t sl) const;
  Connection& connection(std::uint32_t qpn) { return connections_[qpn - first_qpn]; }
  /// A packet has started on the wire and leaves at `done_at`.
  void start_tx(sim::Simulator& sim, sim::Time done_at);
  /// Whether its tx_done would already have been dispatched, by now and the calendar's order.
  bool tx_over(const sim::Simulator& sim) const {
    return sim.now() > tx_done_at_ || (sim.now() == tx_done_at_ && sim.dispatching_seq() > tx_seq_);
  }
  void schedule_tx_done(sim::Simulator& sim);
  bool anything_to_send() const;
  /// A flow-control packet waits for the port to be free: the tx_done that frees it must come.
  void keep_tx_done_for_flow_control(sim::Simulator& sim);

  static constexpr std::uint32_t first_qpn = 2; ///< as HCAs number QPs: 0 and 1 are the special QPs

  link::PacketPool& pool_;
  Params params_;
  sim::Target self_;
  std::uint32_t component_id_;
  // The packet on the wire ends at tx_done_at_. Its tx_done event, with the calendar place tx_seq_ reserved when it
  // started, is scheduled only once something waits to be sent or a flow-control packet waits for the port: an
  // event that would have found nothing to do is never dispatched, and those that are keep their order exactly.
  bool sending_ = false;
  bool tx_scheduled_ = false;
  /// Bit v: ready_[v] or acks_[v] holds something. The rings take 12 cache lines, which a look at every VL on every
  /// send touched (a fifth of the fabric-level run's cache misses); the mask names the few that matter.
  std::uint16_t waiting_vls_ = 0;
  sim::Time tx_done_at_;
  std::uint64_t tx_seq_ = 0;
  bool reliable_ = false;
  bool out_of_order_ = false;
  std::uint32_t requeue_ = 0; ///< the connection whose packet is leaving, to queue again when it has left (0: none)
  std::vector<PortState> ports_;
  std::vector<Connection> connections_;
  std::size_t released_connections_ = 0; ///< connections_.size() before release_connections()
  void queue_ready(std::uint8_t vl, std::uint32_t qpn) {
    ready_[vl].push_back(qpn);
    waiting_vls_ |= static_cast<std::uint16_t>(1u << vl);
  }
  void queue_ack(std::uint8_t vl, const Ack& ack) {
    acks_[vl].push_back(ack);
    waiting_vls_ |= static_cast<std::uint16_t>(1u << vl);
  }
  /// After taking from VL `vl`'s rings.
  void note_taken(unsigned vl) {
    if (ready_[vl].empty() && acks_[vl].empty())
      waiting_vls_ &= static_cast<std::uint16_t>(~(1u << vl));
  }
  Counters counters_;
  link::cc::CaSetting cc_;
  std::array<SlFlow, 16> sl_flows_{};
  link::cc::CaCounters cc_counters_;
  sim::Tracer* tracer_ = nullptr;
  // Last: 12 lines of which a send touches one or two (waiting_vls_).
  std::array<sim::Ring<std::uint32_t>, link::vl_slots> ready_; ///< by VL: connections with a packet to send now
  std::array<sim::Ring<Ack>, link::vl_slots> acks_;            ///< by VL: ACKs to send, before any data
};

} // namespace ib::endpoint
