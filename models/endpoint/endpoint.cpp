#include "models/endpoint/endpoint.h"

#include <algorithm>
#include <bit>

#include "sim/errors.h"

namespace ib::endpoint {
namespace {

constexpr std::uint32_t psn_mask = 0xffffff; // BTH.PSN is 24 bits

link::Opcode opcode_of(Verb verb, bool first, bool last) {
  if (verb == Verb::write)
    return first ? (last ? link::Opcode::rdma_write_only : link::Opcode::rdma_write_first)
                 : (last ? link::Opcode::rdma_write_last : link::Opcode::rdma_write_middle);
  return first ? (last ? link::Opcode::send_only : link::Opcode::send_first)
               : (last ? link::Opcode::send_last : link::Opcode::send_middle);
}

const std::uint32_t ack_wire_bytes = link::wire_bytes(link::Transport::rc, link::Opcode::acknowledge, 0, false);

/// a - b on the 24-bit PSN circle, in (-2^23, 2^23].
std::int32_t psn_diff(std::uint32_t a, std::uint32_t b) {
  const std::uint32_t d = (a - b) & psn_mask;
  return d > (psn_mask >> 1) ? static_cast<std::int32_t>(d) - static_cast<std::int32_t>(psn_mask + 1)
                             : static_cast<std::int32_t>(d);
}

bool last_of_message(link::Opcode opcode) {
  return opcode == link::Opcode::rdma_write_only || opcode == link::Opcode::rdma_write_last ||
         opcode == link::Opcode::send_only || opcode == link::Opcode::send_last;
}

} // namespace

Endpoint::Endpoint(sim::Target self, std::uint32_t component_id, link::PacketPool& pool, unsigned port_count,
                   const Params& params)
    : pool_(pool), params_(params), self_(self), component_id_(component_id), ports_(port_count) {}

void Endpoint::set_tracer(sim::Tracer* tracer) {
  tracer_ = tracer;
  for (PortState& p : ports_)
    p.port.set_tracer(tracer);
}

std::uint8_t Endpoint::vl_of(std::uint8_t sl) const {
  const PortState& p = ports_[0];
  return p.sl_to_vl_set ? p.sl_to_vl[sl & 15u] : link::default_vl(sl, p.port.data_vls());
}

std::uint32_t Endpoint::create_connection(Client& client, std::uint32_t tag) {
  static_assert(sizeof(Connection) <= 104, "a connection's rare parts belong in ConnectionRare (benchmark (g))");
  Connection& c = connections_.emplace_back();
  c.client = &client;
  c.tag = tag;
  return static_cast<std::uint32_t>(connections_.size() - 1) + first_qpn;
}

void Endpoint::connect(std::uint32_t qpn, std::uint16_t dlid, std::uint8_t sl, std::uint32_t remote_qpn,
                       std::uint32_t mtu_bytes, Verb verb, sim::Time timeout, std::uint8_t retry_count) {
  Connection& c = connection(qpn);
  c.timeout = timeout;
  c.retry_count = c.retries_left = retry_count;
  c.dlid = dlid;
  c.sl = sl;
  c.vl = vl_of(sl);
  c.remote_qpn = remote_qpn;
  c.mtu_bytes = mtu_bytes;
  c.verb = verb;
}

void Endpoint::post(sim::Simulator& sim, std::uint32_t qpn, std::uint64_t wr_id, std::uint32_t size_bytes) {
  Connection& c = connection(qpn);
  const sim::Time ready_at = sim.now() + params_.send_latency;
  ++counters_.messages_posted;
  if (c.failed) { // a connection in error flushes what is posted on it
    c.messages.push_back({wr_id, size_bytes, 0, 0, ready_at, Status::flushed, false});
    ++c.sending;
    ++c.acked;
    ++counters_.messages_failed;
    sim.schedule(sim.now() + params_.completion_latency, self_, static_cast<std::uint8_t>(Kind::completion_ready), qpn);
    return;
  }
  c.messages.push_back({wr_id, size_bytes, 0, 0, ready_at, Status::success, false});
  // Only the first message not yet sending waits on an event; the ones behind it follow when it is sent.
  if (c.queued || c.sending + 1 != c.messages.size())
    return;
  if (ready_at <= sim.now()) {
    make_ready(sim, c, qpn);
    try_send(sim);
  } else {
    sim.schedule(ready_at, self_, static_cast<std::uint8_t>(Kind::message_ready), qpn);
  }
}

void Endpoint::make_ready(sim::Simulator& sim, Connection& c, std::uint32_t qpn) {
  if (c.queued)
    return;
  c.queued = true;
  if (c.rare && c.rare->next_send_at > sim.now()) [[unlikely]] { // held back by congestion control: queued then
    if (!c.throttle_pending) {
      c.throttle_pending = true;
      sim.schedule(c.rare->next_send_at, self_, static_cast<std::uint8_t>(Kind::throttle_over), qpn);
    }
    return;
  }
  queue_ready(c.vl, qpn);
}

void Endpoint::on_becn(sim::Simulator& sim, Connection& c, std::uint32_t qpn) {
  if (!cc_.applies_to(c.sl))
    return;
  ++cc_counters_.becn_received;
  link::cc::Ccti& ccti = cc_.per_sl ? sl_flows_[c.sl & 15u].ccti : c.rare_state().ccti;
  const std::uint16_t index = ccti.on_becn(sim.now(), cc_);
  if (tracer_ != nullptr)
    trace_ccti(sim, c, qpn, ccti, index);
  cc_counters_.max_ccti = std::max(cc_counters_.max_ccti, index);
  if (index == cc_.trigger_threshold)
    ++cc_counters_.trigger_events;
  if (tracer_ != nullptr && tracer_->wants(component_id_, qpn, sim.now(), sim.now()))
    tracer_->instant(component_id_, 0, "congestion", "BECN", sim.now(),
                     "\"qpn\": " + std::to_string(qpn) + ", \"sl\": " + std::to_string(c.sl) +
                         ", \"ccti\": " + std::to_string(index));
}

void Endpoint::trace_ccti(const sim::Simulator& sim, const Connection& c, std::uint32_t qpn, link::cc::Ccti& ccti,
                          std::uint16_t index) {
  if (!ccti.changed_since_traced(index) || !tracer_->wants(component_id_, cc_.per_sl ? 0 : qpn, sim.now(), sim.now()))
    return;
  const std::string name = cc_.per_sl ? "CCTI SL " + std::to_string(c.sl & 15u) : "CCTI QP " + std::to_string(qpn);
  tracer_->counter(component_id_, name, sim.now(), "\"ccti\": " + std::to_string(index));
}

sim::Time Endpoint::throttle(sim::Simulator& sim, Connection& c, std::uint32_t qpn, std::uint32_t wire_bytes,
                             sim::Time done_at) {
  link::cc::Ccti& ccti = cc_.per_sl ? sl_flows_[c.sl & 15u].ccti : c.rare_state().ccti;
  const std::uint16_t index = ccti.at(sim.now(), cc_);
  if (tracer_ != nullptr) [[unlikely]]
    trace_ccti(sim, c, qpn, ccti, index);
  if (index == 0 || index >= cc_.table.size())
    return sim::Time::zero();
  const sim::Time delay =
      link::cc::injection_delay(cc_.table[index], sim::transfer_time(wire_bytes, ports_[0].port.link().data_rate));
  if (delay == sim::Time::zero())
    return delay;
  ++cc_counters_.throttled_packets;
  cc_counters_.throttled_time += delay;
  (cc_.per_sl ? sl_flows_[c.sl & 15u].next_send_at : c.rare_state().next_send_at) = done_at + delay;
  return delay;
}

bool Endpoint::sl_throttled(sim::Simulator& sim, const Connection& c) {
  SlFlow& flow = sl_flows_[c.sl & 15u];
  if (flow.next_send_at <= sim.now())
    return false;
  if (!flow.wake_pending) {
    flow.wake_pending = true;
    sim.schedule(flow.next_send_at, self_, static_cast<std::uint8_t>(Kind::sl_throttle_over), c.sl & 15u);
  }
  return true;
}

void Endpoint::on_event(sim::Simulator& sim, const sim::Event& event) {
  switch (static_cast<Kind>(event.kind)) {
  case Kind::packet_arrives:
    receive(sim, link::PacketHandle{event.handle});
    keep_tx_done_for_flow_control(sim);
    return;
  case Kind::flow_control_arrives:
    ports_[link::Port::port_of(event) - 1u].port.on_flow_control_arrives(sim);
    try_send(sim);
    return;
  case Kind::flow_control_refresh:
    ports_[link::Port::port_of(event) - 1u].port.on_flow_control_refresh(sim);
    keep_tx_done_for_flow_control(sim);
    return;
  case Kind::tx_done:
    sending_ = false;
    tx_scheduled_ = false;
    if (requeue_ != 0) { // behind the connections that became ready while its packet was leaving
      Connection& c = connection(requeue_);
      if (has_packet(c))
        queue_ready(c.vl, requeue_);
      else
        c.queued = false;
      requeue_ = 0;
    }
    try_send(sim);
    if (!sending_)
      ports_[0].port.flush_flow_control(sim);
    return;
  case Kind::message_ready:
    if (has_packet(connection(event.handle)))
      make_ready(sim, connection(event.handle), event.handle);
    try_send(sim);
    return;
  case Kind::retry_timer:
    on_retry_timer(sim, connection(event.handle), event.handle);
    return;
  case Kind::throttle_over: {
    Connection& c = connection(event.handle);
    c.throttle_pending = false;
    if (c.queued && has_packet(c))
      queue_ready(c.vl, event.handle);
    else
      c.queued = false;
    try_send(sim);
    return;
  }
  case Kind::sl_throttle_over:
    sl_flows_[event.handle & 15u].wake_pending = false;
    try_send(sim);
    return;
  case Kind::ack_ready:
    queue_ack(connection(event.handle).vl, {event.handle, event.generation});
    try_send(sim);
    return;
  case Kind::completion_ready: {
    Connection& c = connection(event.handle);
    const Message m = c.messages.front();
    c.messages.pop_front();
    --c.acked;
    --c.sending;
    counters_.messages_completed += m.status == Status::success ? 1 : 0;
    // May post on this connection. A message was posted its send latency before it was ready.
    c.client->on_completion(sim, c.tag, Completion{m.wr_id, m.size_bytes, m.status, m.ready_at - params_.send_latency});
    return;
  }
  }
}

void Endpoint::start_tx(sim::Simulator& sim, sim::Time done_at) {
  sending_ = true;
  tx_done_at_ = done_at;
  tx_seq_ = sim.reserve_seq();
  tx_scheduled_ = false;
  if (requeue_ != 0 || anything_to_send())
    schedule_tx_done(sim);
}

void Endpoint::schedule_tx_done(sim::Simulator& sim) {
  tx_scheduled_ = true;
  sim.schedule_reserved(tx_done_at_, tx_seq_, self_, static_cast<std::uint8_t>(Kind::tx_done));
}

bool Endpoint::anything_to_send() const {
  return waiting_vls_ != 0;
}

void Endpoint::keep_tx_done_for_flow_control(sim::Simulator& sim) {
  if (sending_ && !tx_scheduled_ && ports_[0].port.flow_control_waiting() && !tx_over(sim))
    schedule_tx_done(sim);
}

void Endpoint::try_send(sim::Simulator& sim) {
  if (sending_) {
    if (tx_scheduled_)
      return;
    if (!tx_over(sim)) {
      if (anything_to_send())
        schedule_tx_done(sim);
      return;
    }
    sending_ = false; // left with nothing waiting until now: its tx_done would have done nothing
  }
  link::Port& port = ports_[0].port;
  const sim::Time now = sim.now();
  if (!port.connected() || !port.may_start(now))
    return;
  // A VL is ready when its next ACK, or failing that its next connection's next packet, fits its credits; VL
  // arbitration picks among the ready ones, and on the VL picked ACKs go before data.
  std::uint16_t ready = 0;
  bool waiting = false;
  for (std::uint16_t vls = waiting_vls_; vls != 0; vls &= static_cast<std::uint16_t>(vls - 1)) {
    const auto vl = static_cast<unsigned>(std::countr_zero(vls));
    while (!ready_[vl].empty() && !has_packet(connection(ready_[vl].front()))) { // failed since it was queued
      connection(ready_[vl].front()).queued = false;
      ready_[vl].pop_front();
      note_taken(vl);
    }
    bool has_data = !ready_[vl].empty();
    const bool has_ack = !acks_[vl].empty();
    if (has_data && !has_ack && cc_.per_sl && cc_.enabled && sl_throttled(sim, connection(ready_[vl].front())))
        [[unlikely]]
      has_data = false; // its SL is held back by congestion control
    if (!has_ack && !has_data)
      continue;
    waiting = true;
    std::uint32_t wire = ack_wire_bytes;
    if (!has_ack) {
      const Connection& c = connection(ready_[vl].front());
      const std::uint32_t left = c.first_packet ? c.messages[c.sending].size_bytes : c.bytes_left;
      const std::uint32_t payload = std::min(left, c.mtu_bytes);
      wire =
          link::wire_bytes(link::Transport::rc, opcode_of(c.verb, c.first_packet, left <= c.mtu_bytes), payload, false);
    }
    if (port.has_credits(now, static_cast<std::uint8_t>(vl), wire))
      ready |= static_cast<std::uint16_t>(1u << vl);
  }
  if (ready == 0) {
    if (waiting)
      port.note_blocked(sim);
    return;
  }
  const int picked = port.arbiter().pick(ready);
  if (picked < 0)
    return;
  const auto vl = static_cast<std::size_t>(picked);
  if (!acks_[vl].empty()) {
    const Ack ack = acks_[vl].front();
    acks_[vl].pop_front();
    note_taken(vl);
    send_ack(sim, ack);
    return;
  }
  const std::uint32_t qpn = ready_[vl].front();
  ready_[vl].pop_front();
  note_taken(vl);
  send_data(sim, connection(qpn), qpn);
}

void Endpoint::send_data(sim::Simulator& sim, Connection& c, std::uint32_t qpn) {
  Message& m = c.messages[c.sending];
  const bool first = c.first_packet;
  if (first) {
    c.bytes_left = m.size_bytes;
    c.packet_index = 0;
    m.first_psn = c.next_psn & psn_mask;
    m.sent = true;
  }
  const bool last = c.bytes_left <= c.mtu_bytes;
  const std::uint32_t payload = std::min(c.bytes_left, c.mtu_bytes);
  const link::Opcode opcode = opcode_of(c.verb, first, last);
  ++c.packet_index;
  const std::uint32_t interval = params_.ack_request_interval_packets;
  const bool ack_request = last || (interval != 0 && c.packet_index % interval == 0);
  const link::PacketHandle handle =
      new_packet(sim, c, opcode, payload, link::wire_bytes(link::Transport::rc, opcode, payload, false),
                 c.next_psn & psn_mask, ack_request);
  if (psn_diff(c.next_psn & psn_mask, c.highest_psn & psn_mask) < 0)
    ++counters_.retransmitted_packets;
  else
    c.highest_psn = c.next_psn + 1;
  ++c.next_psn;
  if (!c.rare || c.rare->deadline == sim::Time::max())
    arm_timer(sim, c, qpn);
  c.bytes_left -= payload;
  c.first_packet = last;
  ++counters_.data_packets_sent;
  counters_.payload_bytes_sent += payload;
  if (last) {
    m.last_psn = pool_[handle].psn;
    ++c.sending;
  }
  const std::uint32_t wire_bytes = pool_[handle].wire_bytes;
  const sim::Time done_at = ports_[0].port.send(sim, pool_, handle, c.vl, sim::Time::zero());
  const bool held_back =
      cc_.applies_to(c.sl) && throttle(sim, c, qpn, wire_bytes, done_at) != sim::Time::zero() && !cc_.per_sl;
  // Round robin: the connection goes to the back of its VL's ring, once this packet has left, while it has a
  // packet to send now.
  const bool more_now = !last || (c.sending < c.messages.size() && c.messages[c.sending].ready_at <= sim.now());
  if (more_now && !held_back)
    requeue_ = qpn;
  start_tx(sim, done_at);
  if (more_now && held_back) [[unlikely]] { // congestion control per QP: queued again once its delay is over
    c.throttle_pending = true;
    sim.schedule(c.rare->next_send_at, self_, static_cast<std::uint8_t>(Kind::throttle_over), qpn);
    return;
  }
  if (more_now)
    return;
  c.queued = false;
  if (c.sending < c.messages.size())
    sim.schedule(c.messages[c.sending].ready_at, self_, static_cast<std::uint8_t>(Kind::message_ready), qpn);
}

link::PacketHandle Endpoint::new_packet(sim::Simulator& sim, const Connection& c, link::Opcode opcode,
                                        std::uint32_t payload_bytes, std::uint32_t wire_bytes, std::uint32_t psn,
                                        bool ack_request) {
  const link::PacketHandle handle = pool_.acquire();
  link::Packet& p = pool_[handle];
  p.injected_at = sim.now();
  p.slid = ports_[0].lid;
  p.dlid = c.dlid;
  p.sl = c.sl;
  p.transport = link::Transport::rc;
  p.opcode = opcode;
  p.payload_bytes = payload_bytes;
  p.wire_bytes = wire_bytes;
  p.dest_qpn = c.remote_qpn;
  p.psn = psn;
  p.ack_request = ack_request;
  p.transport_headers = 0xffffffffu;
  return handle;
}

void Endpoint::send_ack(sim::Simulator& sim, const Ack& ack) {
  const Connection& c = connection(ack.qpn);
  // A NAK is an ACK packet whose AETH says so; the endpoint carries no AETH and marks it with AckReq, which an ACK
  // never has and which nothing in the fabric reads.
  const bool nak = (ack.psn & nak_flag) != 0;
  const link::PacketHandle handle =
      new_packet(sim, c, link::Opcode::acknowledge, 0, ack_wire_bytes, ack.psn & psn_mask, nak);
  if ((ack.psn & becn_flag) != 0) [[unlikely]] {
    pool_[handle].becn = true;
    ++cc_counters_.becn_sent;
  }
  ++counters_.acks_sent;
  start_tx(sim, ports_[0].port.send(sim, pool_, handle, c.vl, sim::Time::zero()));
}

void Endpoint::receive(sim::Simulator& sim, link::PacketHandle handle) {
  const link::Packet& p = pool_[handle];
  link::Port& port = ports_[p.in_port - 1u].port;
  if (!port.on_packet_arrives(sim, p)) {
    pool_.release(handle);
    return;
  }
  const auto violation = [&](const char* id, const std::string& detail) {
    return sim::InvariantViolation(id, sim.component_name(component_id_), detail,
                                   "packet from LID " + std::to_string(p.slid) + " to QP " +
                                       std::to_string(p.dest_qpn) + ", PSN " + std::to_string(p.psn));
  };
  if (p.dest_qpn < first_qpn || p.dest_qpn - first_qpn >= connections_.size())
    throw violation("endpoint-unknown-qp", "a packet for a connection this endpoint does not have");
  const std::uint32_t qpn = p.dest_qpn;
  Connection& c = connection(qpn);
  if (p.opcode == link::Opcode::acknowledge && p.becn) [[unlikely]]
    on_becn(sim, c, qpn);
  // FECN on a data packet: its ACK, at once whether or not it asked for one, carries BECN back (A10; RC).
  const std::uint32_t becn = p.fecn && cc_.enabled && p.opcode != link::Opcode::acknowledge ? becn_flag : 0;
  if (becn != 0) [[unlikely]]
    ++cc_counters_.fecn_received;
  if (reliable_) {
    const std::int32_t d = psn_diff(p.psn, c.expected_psn & psn_mask);
    if (p.opcode == link::Opcode::acknowledge) {
      receive_ack(sim, c, qpn, p.psn, p.ack_request);
    } else if (out_of_order_) {
      // Adaptive routing reorders: a gap is no loss, so no NAK (the sender's timeout resends a lost packet).
      const bool duplicate = d < 0 || (static_cast<std::uint32_t>(d) < c.reorder_size() &&
                                       (c.rare->reorder[static_cast<std::uint32_t>(d)] & reorder_arrived) != 0);
      if (!duplicate)
        hold(sim, c, qpn, p, becn, d);
      else if (p.ack_request) // acknowledged again, up to what is in
        sim.schedule(sim.now() + params_.ack_latency, self_, static_cast<std::uint8_t>(Kind::ack_ready), qpn,
                     (c.expected_psn - 1) & psn_mask);
    } else if (d == 0) {
      ++c.expected_psn;
      c.nak_sent = false;
      counters_.payload_bytes_received += p.payload_bytes;
      counters_.messages_delivered += last_of_message(p.opcode) ? 1 : 0;
      if (p.ack_request || becn != 0)
        sim.schedule(sim.now() + params_.ack_latency, self_, static_cast<std::uint8_t>(Kind::ack_ready), qpn,
                     p.psn | becn);
    } else if (d < 0 && p.ack_request) {
      // A duplicate (its ACK was lost, or the sender went back): acknowledged again, up to what is in.
      sim.schedule(sim.now() + params_.ack_latency, self_, static_cast<std::uint8_t>(Kind::ack_ready), qpn,
                   (c.expected_psn - 1) & psn_mask);
    } else if (d > 0 && !c.nak_sent) {
      // Beyond a gap: dropped, and one NAK asks the sender to go back to the first PSN missing (go-back-N).
      c.nak_sent = true;
      sim.schedule(sim.now() + params_.ack_latency, self_, static_cast<std::uint8_t>(Kind::ack_ready), qpn,
                   (c.expected_psn & psn_mask) | nak_flag);
    }
  } else if (p.opcode == link::Opcode::acknowledge && out_of_order_) {
    // Adaptive routing may reorder ACKs too: each acknowledges every message up to its PSN, a late one nothing.
    while (c.acked < c.sending && psn_diff(c.messages[c.acked].last_psn, p.psn) <= 0) {
      ++c.acked;
      sim.schedule(sim.now() + params_.completion_latency, self_, static_cast<std::uint8_t>(Kind::completion_ready),
                   qpn);
    }
  } else if (out_of_order_) {
    const std::int32_t d = psn_diff(p.psn, c.expected_psn & psn_mask);
    if (d < 0 || (static_cast<std::uint32_t>(d) < c.reorder_size() &&
                  (c.rare->reorder[static_cast<std::uint32_t>(d)] & reorder_arrived) != 0))
      throw violation("endpoint-psn-order", "PSN " + std::to_string(p.psn) + " arrived twice");
    hold(sim, c, qpn, p, becn, d);
  } else if (p.opcode == link::Opcode::acknowledge) {
    // ACKs come in order: one for each message's last packet, acknowledging the oldest message sent and not yet
    // acknowledged, and others inside long messages (ack_request_interval_packets), which only show progress.
    if (c.acked < c.sending && c.messages[c.acked].last_psn == p.psn) {
      ++c.acked;
      sim.schedule(sim.now() + params_.completion_latency, self_, static_cast<std::uint8_t>(Kind::completion_ready),
                   qpn);
    } else if (c.acked >= c.messages.size()) {
      throw violation("endpoint-ack-order", "an ACK while no message awaits one");
    }
  } else {
    // Static routes keep a connection's packets in order; without faults nothing is lost, so anything but the
    // next PSN means a packet was duplicated, lost or overtaken.
    if (p.psn != (c.expected_psn & psn_mask))
      throw violation("endpoint-psn-order",
                      "expected PSN " + std::to_string(c.expected_psn & psn_mask) + ": a packet was lost or reordered");
    ++c.expected_psn;
    counters_.payload_bytes_received += p.payload_bytes;
    counters_.messages_delivered += last_of_message(p.opcode) ? 1 : 0;
    if (p.ack_request || becn != 0)
      sim.schedule(sim.now() + params_.ack_latency, self_, static_cast<std::uint8_t>(Kind::ack_ready), qpn,
                   p.psn | becn);
  }
  const std::uint8_t vl = p.vl;
  const std::uint32_t wire = p.wire_bytes;
  pool_.release(handle);
  port.release(sim, vl, wire);
}

void Endpoint::hold(sim::Simulator& sim, Connection& c, std::uint32_t qpn, const link::Packet& p, std::uint32_t becn,
                    std::int32_t d) {
  // Held until every packet before it is in, then delivered in PSN order; each ACK request answered then, so that
  // an ACK never covers a packet still missing. BECN goes back at once, acknowledging only what is in order.
  sim::Ring<std::uint8_t>& reorder = c.rare_state().reorder;
  while (reorder.size() <= static_cast<std::uint32_t>(d))
    reorder.push_back(0);
  if (d > 0) {
    ++counters_.packets_out_of_order;
    counters_.reorder_depth_max = std::max(counters_.reorder_depth_max, reorder.size());
  }
  reorder[static_cast<std::uint32_t>(d)] = static_cast<std::uint8_t>(
      reorder_arrived | (p.ack_request ? reorder_ack_request : 0) | (last_of_message(p.opcode) ? reorder_last : 0));
  counters_.payload_bytes_received += p.payload_bytes;
  if (becn != 0 && d > 0)
    sim.schedule(sim.now() + params_.ack_latency, self_, static_cast<std::uint8_t>(Kind::ack_ready), qpn,
                 ((c.expected_psn - 1) & psn_mask) | becn);
  while (!reorder.empty() && (reorder.front() & reorder_arrived) != 0) {
    const std::uint8_t flags = reorder.front();
    reorder.pop_front();
    const std::uint32_t psn = c.expected_psn & psn_mask;
    ++c.expected_psn;
    counters_.messages_delivered += (flags & reorder_last) != 0 ? 1 : 0;
    const std::uint32_t with_becn = psn == p.psn ? becn : 0;
    if ((flags & reorder_ack_request) != 0 || with_becn != 0)
      sim.schedule(sim.now() + params_.ack_latency, self_, static_cast<std::uint8_t>(Kind::ack_ready), qpn,
                   psn | with_becn);
  }
}

void Endpoint::receive_ack(sim::Simulator& sim, Connection& c, std::uint32_t qpn, std::uint32_t psn, bool nak) {
  // ACKs are cumulative: every message whose last packet is at or before `psn` is acknowledged; a NAK acknowledges
  // what is before its PSN.
  const std::uint32_t through = nak ? (psn - 1) & psn_mask : psn;
  bool progress = false;
  while (c.acked < c.sending && psn_diff(c.messages[c.acked].last_psn, through) <= 0) {
    ++c.acked;
    progress = true;
    sim.schedule(sim.now() + params_.completion_latency, self_, static_cast<std::uint8_t>(Kind::completion_ready), qpn);
  }
  // An ACK inside the oldest unacknowledged message shows progress too.
  if (!progress && c.acked < c.messages.size() && c.acked <= c.sending && !c.failed &&
      psn_diff(psn, c.messages[c.acked].first_psn) >= 0 && psn_diff(psn, c.next_psn & psn_mask) < 0)
    progress = true;
  if (nak && unacknowledged(c)) {
    ++counters_.sequence_naks_received;
    c.retries_left = c.retry_count;
    go_back(sim, c, qpn);
    return;
  }
  if (!progress)
    return;
  c.retries_left = c.retry_count;
  if (c.rare)
    c.rare->deadline = sim::Time::max();
  if (unacknowledged(c))
    arm_timer(sim, c, qpn);
}

void Endpoint::arm_timer(sim::Simulator& sim, Connection& c, std::uint32_t qpn) {
  if (!reliable_ || c.timeout == sim::Time::zero())
    return;
  sim::Time& deadline = c.rare_state().deadline;
  deadline = sim.now() + c.timeout;
  if (!c.timer_pending) {
    c.timer_pending = true;
    sim.schedule(deadline, self_, static_cast<std::uint8_t>(Kind::retry_timer), qpn);
  }
}

void Endpoint::on_retry_timer(sim::Simulator& sim, Connection& c, std::uint32_t qpn) {
  c.timer_pending = false;
  // A timer runs only on a connection with a timeout, whose deadline arm_timer() made.
  sim::Time& deadline = c.rare->deadline;
  if (deadline == sim::Time::max() || c.failed) { // stopped by the last ACK: not activity
    sim.mark_stale();
    return;
  }
  if (sim.now() < deadline) { // pushed back by progress since it was scheduled
    sim.mark_stale();
    c.timer_pending = true;
    sim.schedule(deadline, self_, static_cast<std::uint8_t>(Kind::retry_timer), qpn);
    return;
  }
  deadline = sim::Time::max();
  if (!unacknowledged(c))
    return;
  ++counters_.timeouts;
  if (c.retries_left == 0) {
    fail(sim, c, qpn);
    return;
  }
  --c.retries_left;
  go_back(sim, c, qpn);
}

void Endpoint::go_back(sim::Simulator& sim, Connection& c, std::uint32_t qpn) {
  // To the oldest unacknowledged message, everything from there sent again; the timer runs from here, so that a
  // resend that cannot leave (its link is down) still times out.
  c.sending = c.acked;
  c.first_packet = true;
  c.next_psn = c.messages[c.acked].first_psn;
  arm_timer(sim, c, qpn);
  if (!c.queued)
    make_ready(sim, c, qpn);
  try_send(sim);
}

void Endpoint::fail(sim::Simulator& sim, Connection& c, std::uint32_t qpn) {
  // The message that ran out of retries completes with the error, the ones behind it flushed (as verbs does).
  c.failed = true;
  ++counters_.connections_failed;
  for (std::uint32_t i = c.acked; i < c.messages.size(); ++i) {
    c.messages[i].status = i == c.acked ? Status::retry_exceeded : Status::flushed;
    ++counters_.messages_failed;
    sim.schedule(sim.now() + params_.completion_latency, self_, static_cast<std::uint8_t>(Kind::completion_ready), qpn);
  }
  c.acked = c.sending = c.messages.size();
  c.first_packet = true;
}

std::string Endpoint::check_quiescent() const {
  std::string problems;
  for (std::size_t i = 0; i < connections_.size(); ++i) {
    const Connection& c = connections_[i];
    if (!c.messages.empty())
      problems += "QP " + std::to_string(i + first_qpn) + ": " + std::to_string(c.messages.size()) +
                  " messages posted and not completed (" + std::to_string(c.sending) + " sent, " +
                  std::to_string(c.acked) + " acknowledged)\n";
  }
  // With faults a sender may give up on a lost packet (retry exceeded) that the receiver still holds PSNs behind.
  for (std::size_t i = 0; i < connections_.size() && !reliable_; ++i)
    if (connections_[i].reorder_size() != 0)
      problems += "QP " + std::to_string(i + first_qpn) + ": " + std::to_string(connections_[i].reorder_size()) +
                  " PSNs held out of order, a packet before them never came\n";
  for (const auto& ring : acks_)
    if (!ring.empty())
      problems += std::to_string(ring.size()) + " ACKs not sent\n";
  return problems;
}

} // namespace ib::endpoint
