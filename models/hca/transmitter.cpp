#include "models/hca/transmitter.h"

#include <algorithm>

#include "models/hca/hca.h"
#include "models/hca/hca_state.h"
#include "models/hca/requester.h"
#include "models/hca/responder.h"

namespace ib::hca {

Transmitter::Transmitter(Core& core, Requester& requester, Responder& responder)
    : core_(core), requester_(requester), responder_(responder) {
  ports_.resize(core.params.port_count);
  for (std::uint8_t i = 0; i < core.params.port_count; ++i)
    ports_[i].index = i;
}

void Transmitter::set_tracer(sim::Tracer* tracer) {
  for (PortState& p : ports_)
    p.port.set_tracer(tracer);
}

void Transmitter::activate(sim::Simulator& sim, Qp& qp) {
  if (qp.req.active)
    return;
  PortState& port = ports_[qp.attr.port - 1u];
  qp.req.active = true;
  port.active.push_back(qp.index);
  pump(sim, port);
}

void Transmitter::on_wake(sim::Simulator& sim, std::uint32_t index, std::uint32_t generation) {
  PortState& port = ports_[index];
  if (generation == port.wake_generation)
    port.wake_at = sim::Time::max();
  pump(sim, port);
}

void Transmitter::wake(sim::Simulator& sim, PortState& port, sim::Time at) {
  if (at >= port.wake_at)
    return;
  port.wake_at = at;
  sim.schedule(at, core_.self, static_cast<std::uint8_t>(Hca::Kind::tx_wake), port.index, ++port.wake_generation);
}

void Transmitter::pump(sim::Simulator& sim, PortState& port) {
  // The builder takes QPs round robin, one packet per turn, while the port's payload buffer has room and a few
  // packets per send engine are waiting; each packet's headers are built on its QP's send engine
  // (SendEngines::build_headers), so that packets from different engines are built in parallel. Packets whose payload
  // is still being read are bounded by the payload buffer alone: the builder goes on while their DMA reads are out,
  // or a small READ response would hold a send engine's share for a whole host round trip.
  const std::uint32_t max_waiting = 4 * core_.params.send_engines;
  while (!port.active.empty() && port.data.size() - port.awaiting_payload < max_waiting) {
    const std::uint32_t index = port.active.front();
    Qp& qp = core_.qps[index];
    const bool response = responder_.can_build(qp);
    if (!response && !requester_.can_build(qp)) {
      port.active.pop_front();
      qp.req.active = false;
      continue;
    }
    // Room for a full packet's payload; the QP keeps its turn until a packet leaves and frees some.
    if (port.payload_buffered > 0 && port.payload_buffered + qp.mtu > core_.params.tx_payload_buffer_bytes)
      break;
    if (!response && core_.cc.setting.enabled && !cc_admit(sim, port, qp)) [[unlikely]] {
      port.active.pop_front(); // held by congestion control: back at its flow's wake
      qp.req.active = false;
      continue;
    }
    port.active.pop_front();
    if (response)
      responder_.build_packet(sim, port, qp);
    else
      requester_.build_packet(sim, port, qp);
    if (responder_.can_build(qp) || requester_.can_build(qp))
      port.active.push_back(index);
    else
      qp.req.active = false;
  }
  try_transmit(sim, port);
}

link::PacketHandle Transmitter::new_packet(const Qp& qp, std::uint16_t dlid, std::uint8_t sl, link::Opcode opcode,
                                           std::uint32_t payload, std::uint32_t psn, std::uint32_t dest_qpn) {
  const link::PacketHandle h = core_.wire.packets.acquire();
  link::Packet& p = core_.wire.packets[h];
  const auto transport = qp.type == verbs::QpType::rc   ? link::Transport::rc
                         : qp.type == verbs::QpType::uc ? link::Transport::uc
                                                        : link::Transport::ud;
  p.transport = transport;
  p.opcode = opcode;
  p.payload_bytes = payload;
  p.wire_bytes = link::wire_bytes(transport, opcode, payload, false);
  p.slid = ports_[0].lid;
  p.dlid = dlid;
  p.sl = sl;
  p.dest_qpn = dest_qpn;
  p.psn = psn & psn_mask;
  p.transport_headers = core_.wire.headers.acquire().value;
  return h;
}

void Transmitter::queue(sim::Simulator& sim, PortState& port, TxHandle tx, std::uint64_t payload_address) {
  const TxEntry& entry = entries_[tx];
  port.data.push_back(tx);
  port.payload_buffered += entry.payload_bytes;
  if (entry.payload_in)
    return;
  ++port.awaiting_payload;
  const DmaHandle op = core_.new_op(sim, Purpose::payload_read, entry.qp_index);
  DmaOp& read = core_.ops[op];
  read.tx = tx;
  read.port = port.index;
  read.address = payload_address;
  read.bytes = entry.payload_bytes;
  ++core_.pcie.payload_reads;
  core_.pcie.payload_read_bytes += entry.payload_bytes;
  core_.bus.dma_read(sim, payload_address, entry.payload_bytes, op.value);
}

void Transmitter::on_payload_read_done(sim::Simulator& sim, DmaHandle h) {
  // The packet's data is in: it may leave.
  const DmaOp& op = core_.ops[h];
  TxEntry& entry = entries_[op.tx];
  if (core_.memory.keeps_contents()) {
    TransportHeaders& hd = core_.headers_of(entry.packet);
    hd.payload.resize(op.bytes);
    core_.memory.read(op.address, hd.payload);
  }
  entry.payload_in = true;
  PortState& port = ports_[op.port];
  --port.awaiting_payload;
  core_.ops.release(h);
  try_transmit(sim, port);
}

void Transmitter::send_control(sim::Simulator& sim, const Qp& qp, link::PacketHandle packet) {
  PortState& port = ports_[qp.attr.port - 1u];
  core_.wire.packets[packet].slid = port.lid;
  port.control.push_back(packet);
  try_transmit(sim, port);
}

void Transmitter::try_transmit(sim::Simulator& sim, PortState& port) {
  const sim::Time now = sim.now();
  if (port.transmitting)
    return;
  if (port.port.down()) {
    discard_queued(sim, port);
    return;
  }
  if (!port.port.may_start(now))
    return;
  const auto vl_of = [&](const link::Packet& p) {
    return port.sl_to_vl_set ? port.sl_to_vl[p.sl & 15] : link::default_vl(p.sl, port.port.data_vls());
  };
  link::PacketPool& packets = core_.wire.packets;
  if (!port.control.empty()) {
    const link::PacketHandle h = port.control.front();
    link::Packet& p = packets[h];
    const std::uint8_t vl = vl_of(p);
    if (!port.port.has_credits(now, vl, p.wire_bytes)) {
      port.port.note_blocked(sim);
      return;
    }
    port.control.pop_front();
    p.injected_at = now;
    const sim::Time done = port.port.send(sim, packets, h, vl, now);
    port.transmitting = true;
    port.sending = TxHandle{};
    sim.schedule(done, core_.self, static_cast<std::uint8_t>(Hca::Kind::tx_done), port.index);
    return;
  }
  while (!port.data.empty()) {
    const TxHandle th = port.data.front();
    TxEntry& entry = entries_[th];
    if (!entry.payload_in)
      return; // its DMA read wakes us
    if (entry.generation != core_.qps[entry.qp_index].req.tx_generation) {
      drop_front(sim, port); // built before a rewind: go-back-N rebuilds it
      // The builder may have stopped for want of the room this frees, and nothing sent means no tx_done to restart
      // it: a wake does.
      wake(sim, port, now);
      continue;
    }
    if (entry.ready_at > now) {
      wake(sim, port, entry.ready_at);
      return;
    }
    link::Packet& p = packets[entry.packet];
    const std::uint8_t vl = vl_of(p);
    if (!port.port.has_credits(now, vl, p.wire_bytes)) {
      port.port.note_blocked(sim);
      return;
    }
    port.data.pop_front();
    p.injected_at = now;
    p.slid = port.lid;
    Qp& qp = core_.qps[entry.qp_index];
    ++qp.counters.packets_sent;
    const sim::Time done = port.port.send(sim, packets, entry.packet, vl, now);
    port.transmitting = true;
    port.sending = th;
    if (entry.is_request) {
      requester_.on_request_sent(sim, qp, entry);
      if (core_.cc.setting.enabled) [[unlikely]]
        cc_left_queue(sim, port, entry, true, done);
    }
    sim.schedule(done, core_.self, static_cast<std::uint8_t>(Hca::Kind::tx_done), port.index);
    return;
  }
  port.port.flush_flow_control(sim);
}

void Transmitter::discard_queued(sim::Simulator& sim, PortState& port) {
  // A port whose link is down sends nothing: its queued packets are dropped (PortXmitDiscards) as they become
  // ready, as if lost on the wire. RC requests still count as sent, so their QP's retry timer runs and recovers
  // them, or fails the QP, once it expires; UC and UD requests complete as when their last packet leaves.
  while (!port.control.empty()) {
    core_.free_packet(port.control.front());
    port.control.pop_front();
    port.port.count_loss(link::Loss::xmit_discard);
  }
  while (!port.data.empty()) {
    const TxEntry& entry = entries_[port.data.front()];
    if (!entry.payload_in)
      return; // its DMA read brings us back
    Qp& qp = core_.qps[entry.qp_index];
    if (entry.generation == qp.req.tx_generation) {
      port.port.count_loss(link::Loss::xmit_discard);
      if (entry.is_request) {
        requester_.on_request_sent(sim, qp, entry);
        if (entry.last_of_message)
          requester_.on_request_left(sim, qp, entry);
      }
    }
    drop_front(sim, port);
  }
}

void Transmitter::drop_front(sim::Simulator& sim, PortState& port) {
  const TxHandle th = port.data.front();
  const TxEntry& entry = entries_[th];
  port.data.pop_front();
  port.payload_buffered -= entry.payload_bytes;
  if (entry.is_request && core_.cc.setting.enabled) [[unlikely]]
    cc_left_queue(sim, port, entry, false, sim.now());
  core_.free_packet(entry.packet);
  entries_.release(th);
}

void Transmitter::on_tx_done(sim::Simulator& sim, PortState& port) {
  port.transmitting = false;
  if (port.sending.valid()) {
    const TxEntry& entry = entries_[port.sending];
    port.payload_buffered -= entry.payload_bytes;
    if (entry.is_request && entry.last_of_message)
      requester_.on_request_left(sim, core_.qps[entry.qp_index], entry);
    entries_.release(port.sending);
    port.sending = TxHandle{};
  }
  pump(sim, port);
  if (!port.transmitting)
    port.port.flush_flow_control(sim);
}

// ---- Congestion control (IBA A10): the injection delay of throttled flows, applied where packets are built.

CcFlow& Transmitter::cc_flow(Qp& qp, std::uint8_t sl) {
  if (core_.cc.setting.per_sl)
    return ports_[qp.attr.port - 1u].sl_flows[sl & 15u].flow;
  if (!qp.req.cc) // most QPs of most runs never need one
    qp.req.cc = std::make_unique<CcFlow>();
  return *qp.req.cc;
}

bool Transmitter::cc_admit(sim::Simulator& sim, PortState& port, Qp& qp) {
  const link::cc::CaSetting& cc = core_.cc.setting;
  const std::uint8_t sl = requester_.next_sl(qp);
  if (!cc.applies_to(sl))
    return true;
  CcFlow& flow = cc_flow(qp, sl);
  const sim::Time now = sim.now();
  const std::uint16_t index = flow.ccti.at(now, cc);
  if (core_.cc.tracer != nullptr) [[unlikely]]
    trace_ccti(sim, qp, sl, flow, index);
  const bool throttled = index > 0 && index < cc.table.size() && cc.table[index].multiplier > 0;
  if (flow.next_build_at <= now && !(throttled && flow.unsent > 0)) {
    ++flow.unsent;
    return true;
  }
  if (!qp.req.cc_held) {
    qp.req.cc_held = true;
    if (cc.per_sl)
      port.sl_flows[sl & 15u].held.push_back(qp.index);
  }
  // Held by the delay: its wake is due then. Held behind an unsent packet: that packet's departure wakes it.
  if (flow.next_build_at > now)
    schedule_cc_wake(sim, port, qp.index, sl, flow, flow.next_build_at);
  return false;
}

void Transmitter::cc_left_queue(sim::Simulator& sim, PortState& port, const TxEntry& entry, bool sent, sim::Time done) {
  const link::cc::CaSetting& cc = core_.cc.setting;
  const link::Packet& p = core_.wire.packets[entry.packet];
  if (!cc.applies_to(p.sl))
    return;
  Qp& qp = core_.qps[entry.qp_index];
  CcFlow& flow = cc_flow(qp, p.sl);
  --flow.unsent;
  const sim::Time now = sim.now();
  if (sent) {
    // The delay follows the packet's serialization at the port's rate, as the endpoint's (T_packet, A10.4.3.9).
    const std::uint16_t index = flow.ccti.at(now, cc);
    if (core_.cc.tracer != nullptr) [[unlikely]]
      trace_ccti(sim, qp, p.sl, flow, index);
    if (index > 0 && index < cc.table.size()) {
      const sim::Time delay =
          link::cc::injection_delay(cc.table[index], sim::transfer_time(p.wire_bytes, port.port.link().data_rate));
      if (delay > sim::Time::zero()) {
        ++core_.cc.counters.throttled_packets;
        core_.cc.counters.throttled_time += delay;
        flow.next_build_at = done + delay;
      }
    }
  }
  const bool waiting = cc.per_sl ? !port.sl_flows[p.sl & 15u].held.empty() : qp.req.cc_held;
  if (waiting && flow.unsent == 0)
    schedule_cc_wake(sim, port, qp.index, p.sl, flow, std::max(now, flow.next_build_at));
}

void Transmitter::trace_ccti(const sim::Simulator& sim, const Qp& qp, std::uint8_t sl, CcFlow& flow,
                             std::uint16_t index) {
  const CongestionState& cc = core_.cc;
  if (!flow.ccti.changed_since_traced(index) ||
      !cc.tracer->wants(cc.component_id, cc.setting.per_sl ? 0 : qp.qpn, sim.now(), sim.now()))
    return;
  const std::string name = cc.setting.per_sl
                               ? "CCTI port " + std::to_string(qp.attr.port) + " SL " + std::to_string(sl & 15u)
                               : "CCTI QP " + std::to_string(qp.qpn);
  cc.tracer->counter(cc.component_id, name, sim.now(), "\"ccti\": " + std::to_string(index));
}

void Transmitter::schedule_cc_wake(sim::Simulator& sim, PortState& port, std::uint32_t qp_index, std::uint8_t sl,
                                   CcFlow& flow, sim::Time at) {
  if (at == flow.wake_at)
    return;
  flow.wake_at = at;
  if (core_.cc.setting.per_sl)
    sim.schedule(at, core_.self, static_cast<std::uint8_t>(Hca::Kind::cc_sl_wake), port.index * 16u + (sl & 15u),
                 ++flow.wake_generation);
  else
    sim.schedule(at, core_.self, static_cast<std::uint8_t>(Hca::Kind::cc_wake), qp_index, ++flow.wake_generation);
}

void Transmitter::on_cc_wake(sim::Simulator& sim, std::uint32_t qp_index, std::uint32_t generation) {
  Qp& qp = core_.qps[qp_index];
  if (generation != qp.req.cc->wake_generation) { // a later hold replaced it (the wake came through cc_flow)
    sim.mark_stale();
    return;
  }
  qp.req.cc->wake_at = sim::Time::max();
  qp.req.cc_held = false;
  activate(sim, qp);
}

void Transmitter::on_cc_sl_wake(sim::Simulator& sim, std::uint32_t handle, std::uint32_t generation) {
  SlFlow& sl = ports_[handle / 16u].sl_flows[handle % 16u];
  if (generation != sl.flow.wake_generation) {
    sim.mark_stale();
    return;
  }
  sl.flow.wake_at = sim::Time::max();
  // The QPs it held, in the order they were held; those the builder holds again go behind them.
  for (std::uint32_t n = sl.held.size(); n > 0; --n) {
    Qp& qp = core_.qps[sl.held.front()];
    sl.held.pop_front();
    qp.req.cc_held = false;
    activate(sim, qp);
  }
}

} // namespace ib::hca
