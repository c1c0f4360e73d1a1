#include "models/endpoint/endpoint.h"

#include <algorithm>

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

} // namespace

Endpoint::Endpoint(sim::Target self, std::uint32_t component_id, link::PacketPool& pool, unsigned port_count,
                   const Params& params)
    : pool_(pool), params_(params), self_(self), component_id_(component_id), ports_(port_count) {}

void Endpoint::set_tracer(sim::Tracer* tracer) {
  for (PortState& p : ports_)
    p.port.set_tracer(tracer);
}

std::uint8_t Endpoint::vl_of(std::uint8_t sl) const {
  const PortState& p = ports_[0];
  return p.sl_to_vl_set ? p.sl_to_vl[sl & 15u] : link::default_vl(sl, p.port.data_vls());
}

std::uint32_t Endpoint::create_connection(Client& client, std::uint32_t tag) {
  Connection& c = connections_.emplace_back();
  c.client = &client;
  c.tag = tag;
  return static_cast<std::uint32_t>(connections_.size() - 1) + first_qpn;
}

void Endpoint::connect(std::uint32_t qpn, std::uint16_t dlid, std::uint8_t sl, std::uint32_t remote_qpn,
                       std::uint32_t mtu_bytes, Verb verb) {
  Connection& c = connection(qpn);
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
  c.messages.push_back({wr_id, size_bytes, 0, ready_at});
  ++counters_.messages_posted;
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

void Endpoint::make_ready(sim::Simulator&, Connection& c, std::uint32_t qpn) {
  if (c.queued)
    return;
  c.queued = true;
  ready_[c.vl].push_back(qpn);
}

void Endpoint::on_event(sim::Simulator& sim, const sim::Event& event) {
  switch (static_cast<Kind>(event.kind)) {
  case Kind::packet_arrives:
    receive(sim, link::PacketHandle{event.handle});
    return;
  case Kind::flow_control_arrives:
    ports_[link::Port::port_of(event) - 1u].port.on_flow_control_arrives(sim);
    try_send(sim);
    return;
  case Kind::flow_control_refresh:
    ports_[link::Port::port_of(event) - 1u].port.on_flow_control_refresh(sim);
    return;
  case Kind::tx_done:
    sending_ = false;
    if (requeue_ != 0) { // behind the connections that became ready while its packet was leaving
      ready_[connection(requeue_).vl].push_back(requeue_);
      requeue_ = 0;
    }
    try_send(sim);
    if (!sending_)
      ports_[0].port.flush_flow_control(sim);
    return;
  case Kind::message_ready:
    make_ready(sim, connection(event.handle), event.handle);
    try_send(sim);
    return;
  case Kind::ack_ready:
    acks_[connection(event.handle).vl].push_back({event.handle, event.generation});
    try_send(sim);
    return;
  case Kind::completion_ready: {
    Connection& c = connection(event.handle);
    const std::uint64_t wr_id = c.messages.front().wr_id;
    c.messages.pop_front();
    --c.acked;
    --c.sending;
    ++counters_.messages_completed;
    c.client->on_completion(sim, c.tag, wr_id); // may post on this connection
    return;
  }
  }
}

void Endpoint::try_send(sim::Simulator& sim) {
  if (sending_)
    return;
  link::Port& port = ports_[0].port;
  const sim::Time now = sim.now();
  if (!port.connected() || !port.may_start(now))
    return;
  // A VL is ready when its next ACK, or failing that its next connection's next packet, fits its credits; VL
  // arbitration picks among the ready ones, and on the VL picked ACKs go before data.
  std::uint16_t ready = 0;
  bool waiting = false;
  for (unsigned vl = 0; vl < link::vl_slots; ++vl) {
    const bool has_ack = !acks_[vl].empty(), has_data = !ready_[vl].empty();
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
    send_ack(sim, ack);
    return;
  }
  const std::uint32_t qpn = ready_[vl].front();
  ready_[vl].pop_front();
  send_data(sim, connection(qpn), qpn);
}

void Endpoint::send_data(sim::Simulator& sim, Connection& c, std::uint32_t qpn) {
  Message& m = c.messages[c.sending];
  const bool first = c.first_packet;
  if (first) {
    c.bytes_left = m.size_bytes;
    c.packet_index = 0;
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
  ++c.next_psn;
  c.bytes_left -= payload;
  c.first_packet = last;
  ++counters_.data_packets_sent;
  counters_.payload_bytes_sent += payload;
  if (last) {
    m.last_psn = pool_[handle].psn;
    ++c.sending;
  }
  sending_ = true;
  const sim::Time done_at = ports_[0].port.send(sim, pool_, handle, c.vl, sim::Time::zero());
  sim.schedule(done_at, self_, static_cast<std::uint8_t>(Kind::tx_done));
  // Round robin: the connection goes to the back of its VL's ring, once this packet has left, while it has a
  // packet to send now.
  if (!last || (c.sending < c.messages.size() && c.messages[c.sending].ready_at <= sim.now())) {
    requeue_ = qpn;
    return;
  }
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
  const link::PacketHandle handle = new_packet(sim, c, link::Opcode::acknowledge, 0, ack_wire_bytes, ack.psn, false);
  ++counters_.acks_sent;
  sending_ = true;
  const sim::Time done_at = ports_[0].port.send(sim, pool_, handle, c.vl, sim::Time::zero());
  sim.schedule(done_at, self_, static_cast<std::uint8_t>(Kind::tx_done));
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
  if (p.opcode == link::Opcode::acknowledge) {
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
    const bool last = p.opcode == link::Opcode::rdma_write_only || p.opcode == link::Opcode::rdma_write_last ||
                      p.opcode == link::Opcode::send_only || p.opcode == link::Opcode::send_last;
    counters_.messages_delivered += last ? 1 : 0;
    if (p.ack_request)
      sim.schedule(sim.now() + params_.ack_latency, self_, static_cast<std::uint8_t>(Kind::ack_ready), qpn, p.psn);
  }
  const std::uint8_t vl = p.vl;
  const std::uint32_t wire = p.wire_bytes;
  pool_.release(handle);
  port.release(sim, vl, wire);
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
  for (const auto& ring : acks_)
    if (!ring.empty())
      problems += std::to_string(ring.size()) + " ACKs not sent\n";
  return problems;
}

} // namespace ib::endpoint
