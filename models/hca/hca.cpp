// Wiring and event dispatch: each event and each finished PCIe transaction goes to the stage it is for; what
// waited for a QP's context resumes.
#include "models/hca/hca.h"

#include <algorithm>
#include <stdexcept>

#include "models/hca/hca_state.h"
#include "sim/errors.h"

namespace ib::hca {

sim::Time rnr_timer_duration(std::uint8_t encoded) {
  // IBA vol 1 Table 45, in units of 0.01 ms.
  static constexpr std::array<std::int64_t, 32> hundredths_of_us = {
      65536, 1,   2,   3,   4,    6,    8,    12,   16,   24,   32,   48,    64,    96,    128,   192,
      256,   384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};
  return sim::Time::from_us(hundredths_of_us[encoded & 31] * 10);
}

std::uint32_t send_wqe_bytes(verbs::QpType type, const verbs::SendWr& wr, std::uint32_t basic_block_bytes) {
  constexpr std::uint32_t control = 16, remote_address = 16, atomic = 16, datagram = 48, data_pointer = 16;
  constexpr std::uint32_t inline_header = 4;
  std::uint32_t bytes = control;
  const bool rdma = wr.opcode == verbs::WrOpcode::rdma_write || wr.opcode == verbs::WrOpcode::rdma_write_with_imm ||
                    wr.opcode == verbs::WrOpcode::rdma_read;
  const bool is_atomic =
      wr.opcode == verbs::WrOpcode::atomic_cmp_and_swp || wr.opcode == verbs::WrOpcode::atomic_fetch_and_add;
  if (type == verbs::QpType::ud)
    bytes += datagram;
  if (rdma || is_atomic)
    bytes += remote_address;
  if (is_atomic)
    bytes += atomic;
  if (wr.inline_data)
    bytes += (inline_header + wr.length_bytes + 15) / 16 * 16;
  else if (wr.length_bytes > 0 || is_atomic)
    bytes += data_pointer;
  return (bytes + basic_block_bytes - 1) / basic_block_bytes * basic_block_bytes;
}

Hca::Hca(const Params& params, const pcie::BusConfig& bus, const pcie::HostParams& host, sim::Target self,
         std::uint32_t component_id, Wire& wire, pcie::HostMemory& memory)
    : params_(params), host_(host), self_(self), component_id_(component_id), wire_(wire), memory_(memory),
      bus_(std::make_unique<pcie::Bus>(bus, self, static_cast<std::uint8_t>(Kind::first_bus_kind), *this)),
      stages_(std::make_unique<Stages>(Core{params_, self_, wire_, memory_, *bus_, qps_, ops_, pcie_, cc_})) {}

Hca::~Hca() = default;

void Hca::set_congestion_control(const link::cc::CaSetting& setting) {
  cc_.setting = setting;
  cc_.component_id = component_id_;
  if (setting.enabled && setting.per_sl)
    for (std::uint8_t i = 0; i < params_.port_count; ++i)
      stages_->tx.port(i).sl_flows.resize(16);
}

link::Port& Hca::port(std::uint8_t number) {
  return stages_->tx.port(number - 1u).port;
}
void Hca::set_lid(std::uint8_t port_number, std::uint16_t lid) {
  stages_->tx.port(port_number - 1u).lid = lid;
}
std::uint16_t Hca::lid(std::uint8_t port_number) const {
  return stages_->tx.port(port_number - 1u).lid;
}

void Hca::set_sl_to_vl(std::uint8_t port_number, const std::array<std::uint8_t, 16>& table) {
  PortState& p = stages_->tx.port(port_number - 1u);
  p.sl_to_vl = table;
  p.sl_to_vl_set = true;
}

Qp& Hca::qp_by_qpn(std::uint32_t qpn) {
  Qp* qp = stages_->core.find_qp(qpn);
  if (qp == nullptr)
    throw std::invalid_argument("no QP " + std::to_string(qpn));
  return *qp;
}
const Qp& Hca::qp_by_qpn(std::uint32_t qpn) const {
  return const_cast<Hca*>(this)->qp_by_qpn(qpn);
}
std::uint64_t Hca::responder_bytes_placed() const {
  return stages_->responder.bytes_placed();
}
std::uint64_t Hca::requester_bytes_completed() const {
  return stages_->requester.bytes_completed();
}
std::uint32_t Hca::failed_qps() const {
  return stages_->requester.failed_qps();
}
void Hca::drop_next_received(std::uint32_t count) {
  stages_->responder.drop_next_received(count);
}
std::uint64_t Hca::packets_dropped_by_fault() const {
  return stages_->responder.packets_dropped_by_fault();
}
void Hca::mark_next_received_fecn(std::uint32_t count) {
  stages_->responder.mark_next_received_fecn(count);
}
void Hca::swap_next_received(std::uint32_t count) {
  stages_->responder.swap_next_received(count);
}

std::uint32_t Hca::qp_count() const {
  return released_totals_ ? released_qp_count_ : static_cast<std::uint32_t>(qps_.size());
}

void Hca::release_queue_pairs() {
  if (released_totals_)
    return;
  released_totals_ = totals();
  released_qp_count_ = static_cast<std::uint32_t>(qps_.size());
  qps_.clear(); // the Core's reference stays valid: the same container, emptied and its memory given back
  stages_->recv.release();
}
const QpTrafficCounters& Hca::qp_traffic_counters(std::uint32_t qpn) const {
  return qp_by_qpn(qpn).counters;
}

QpCounters Hca::qp_counters(std::uint32_t qpn) const {
  const Qp& qp = qp_by_qpn(qpn);
  QpCounters c;
  static_cast<QpTrafficCounters&>(c) = qp.counters;
  if (qp.rare_state)
    static_cast<QpEventCounters&>(c) = qp.rare_state->counters;
  return c;
}

std::vector<RcConnection> Hca::rc_connections() const {
  std::vector<RcConnection> out;
  for (const Qp& qp : qps_)
    if (qp.type == verbs::QpType::rc && qp.state != verbs::QpState::reset && qp.state != verbs::QpState::init)
      out.push_back({qp.qpn, qp.attr.dest_lid, qp.attr.dest_qpn});
  return out;
}

QpCounters Hca::totals() const {
  if (released_totals_)
    return *released_totals_;
  QpCounters t;
  for (const Qp& qp : qps_) {
    const QpTrafficCounters& c = qp.counters;
    t.messages_sent += c.messages_sent;
    t.bytes_sent += c.bytes_sent;
    t.packets_sent += c.packets_sent;
    t.messages_received += c.messages_received;
    t.bytes_received += c.bytes_received;
    t.packets_received += c.packets_received;
    t.rc_requests_posted += c.rc_requests_posted;
    t.rc_requests_completed += c.rc_requests_completed;
    t.rc_messages_accepted += c.rc_messages_accepted;
    if (!qp.rare_state)
      continue;
    const QpEventCounters& e = qp.rare_state->counters;
    t.retransmitted_packets += e.retransmitted_packets;
    t.timeouts += e.timeouts;
    t.sequence_naks_received += e.sequence_naks_received;
    t.rnr_naks_received += e.rnr_naks_received;
    t.rnr_naks_sent += e.rnr_naks_sent;
    t.sequence_naks_sent += e.sequence_naks_sent;
    t.duplicates_received += e.duplicates_received;
    t.dropped += e.dropped;
    t.peak_reads_outstanding = std::max(t.peak_reads_outstanding, e.peak_reads_outstanding);
    t.rc_requests_failed += e.rc_requests_failed;
    t.error_completions += e.error_completions;
    t.packets_out_of_order += e.packets_out_of_order;
    t.reorder_depth_max = std::max(t.reorder_depth_max, e.reorder_depth_max);
    t.fecn_received += e.fecn_received;
    t.becn_received += e.becn_received;
  }
  return t;
}

void Hca::trace_op(const sim::Simulator& sim, const DmaOp& op) {
  static constexpr std::string_view names[] = {"doorbell",
                                               "WQE read",
                                               "payload read",
                                               "RECV WQE read",
                                               "payload write",
                                               "READ response write",
                                               "atomic result write",
                                               "CQE write",
                                               "atomic read",
                                               "atomic write",
                                               "QP context read"};
  std::string_view name = names[static_cast<int>(op.purpose)];
  if (op.purpose == Purpose::doorbell && op.blueflame)
    name = "BlueFlame";
  // QP-bound work goes on the QP's track; CQE writes on the CQ's.
  const bool cqe = op.purpose == Purpose::cqe_write;
  // A receive WQE read belongs to its queue's QP (an SRQ's go on the track of the first QP it serves).
  std::uint32_t qp_index = op.qp;
  if (op.purpose == Purpose::recv_wqe_fetch) {
    qp_index = stages_->recv.trace_qp(op.qp);
  }
  const std::uint32_t qpn = cqe ? op.cqe.wc.qp_num : qp_index + 2;
  if (!tracer_->wants(component_id_, qpn, op.issued, sim.now()))
    return;
  const std::uint32_t track = pcie_track + (cqe ? 0 : qpn);
  tracer_->name_track(component_id_, track, cqe ? std::string("PCIe: CQEs") : "PCIe: QP " + std::to_string(qpn));
  tracer_->span(component_id_, track, "pcie", name, op.issued, sim.now(),
                "\"qpn\": " + std::to_string(qpn) + (op.bytes > 0 ? ", \"bytes\": " + std::to_string(op.bytes) : ""));
}

void Hca::trace_program(const sim::Simulator& sim, std::uint32_t qpn, std::string_view what, const std::string& args) {
  if (tracer_ == nullptr || !tracer_->wants(component_id_, qpn, sim.now(), sim.now()))
    return;
  const std::uint32_t track = program_track + qpn;
  tracer_->name_track(component_id_, track, "program: QP " + std::to_string(qpn));
  tracer_->instant(component_id_, track, "verbs", what, sim.now(), args);
}

void Hca::settle(sim::Simulator& sim, sim::Time until) {
  bus_->settle(sim, until);
}

void Hca::set_tracer(sim::Tracer* tracer) {
  tracer_ = tracer;
  cc_.tracer = tracer;
  cc_.component_id = component_id_;
  stages_->tx.set_tracer(tracer);
}

void Hca::on_event(sim::Simulator& sim, const sim::Event& event) {
  if (event.kind >= static_cast<std::uint8_t>(Kind::first_bus_kind)) {
    bus_->on_event(sim, event);
    return;
  }
  switch (static_cast<Kind>(event.kind)) {
  case Kind::packet_arrives: {
    const link::PacketHandle packet{event.handle};
    stages_->responder.on_packet_arrives(sim, stages_->tx.port(wire_.packets[packet].in_port - 1u), packet);
    return;
  }
  case Kind::flow_control_arrives: {
    PortState& p = stages_->tx.port(link::Port::port_of(event) - 1u);
    p.port.on_flow_control_arrives(sim);
    stages_->tx.try_transmit(sim, p);
    return;
  }
  case Kind::flow_control_refresh:
    stages_->tx.port(link::Port::port_of(event) - 1u).port.on_flow_control_refresh(sim);
    return;
  case Kind::tx_done:
    stages_->tx.on_tx_done(sim, stages_->tx.port(event.handle));
    return;
  case Kind::tx_wake:
    stages_->tx.on_wake(sim, event.handle, event.generation);
    return;
  case Kind::doorbell_ready:
    stages_->requester.on_doorbell(sim, DmaHandle{event.handle});
    return;
  case Kind::wqe_processed:
    stages_->requester.on_wqe_processed(sim, qps_[event.handle]);
    return;
  case Kind::rx_processed:
    stages_->responder.on_rx_processed(sim, link::PacketHandle{event.handle});
    return;
  case Kind::cqe_ready:
    stages_->completions.on_built(sim, DmaHandle{event.handle});
    return;
  case Kind::retry_timer:
    stages_->requester.on_retry_timer(sim, qps_[event.handle]);
    return;
  case Kind::rnr_timer:
    stages_->requester.on_rnr_timer(sim, qps_[event.handle]);
    return;
  case Kind::atomic_issue:
    stages_->atomics.issue(sim, DmaHandle{event.handle});
    return;
  case Kind::cc_wake:
    stages_->tx.on_cc_wake(sim, event.handle, event.generation);
    return;
  case Kind::cc_sl_wake:
    stages_->tx.on_cc_sl_wake(sim, event.handle, event.generation);
    return;
  case Kind::first_bus_kind:
    break;
  }
}

// ---- The bus's callbacks: route each finished transaction to its purpose.

void Hca::mmio_arrived(sim::Simulator& sim, std::uint32_t token) {
  if (tracer_ != nullptr)
    trace_op(sim, ops_[DmaHandle{token}]);
  sim.schedule_in(params_.doorbell_processing, self_, static_cast<std::uint8_t>(Kind::doorbell_ready), token);
}

// Each finished transaction goes back to the stage that issued it; the logic lives with the stage.
void Hca::dma_read_done(sim::Simulator& sim, std::uint32_t token) {
  const DmaHandle h{token};
  const DmaOp& op = ops_[h];
  if (tracer_ != nullptr)
    trace_op(sim, op);
  switch (op.purpose) {
  case Purpose::wqe_fetch:
    stages_->requester.on_wqe_fetch_done(sim, h); // requester
    return;
  case Purpose::payload_read:
    stages_->tx.on_payload_read_done(sim, h); // transmitter
    return;
  case Purpose::recv_wqe_fetch: {
    const std::uint32_t rq = op.qp; // receive queues
    ops_.release(h);
    stages_->recv.on_fetched(sim, rq, [&](std::uint32_t qp) {
      if (qps_[qp].resp.has_parked())
        stages_->responder.drain_parked(sim, qps_[qp]);
    });
    return;
  }
  case Purpose::qp_context: {
    Qp& qp = qps_[op.qp]; // QP contexts
    ops_.release(h);
    on_context_read(sim, qp);
    return;
  }
  case Purpose::atomic_read:
    stages_->atomics.on_read_done(sim, h); // responder's atomic unit
    return;
  default:
    throw sim::InvariantViolation("hca-dma", "hca", "a read completed for a transaction that is not a read", "");
  }
}

void Hca::dma_write_done(sim::Simulator& sim, std::uint32_t token) {
  const DmaHandle h{token};
  DmaOp& op = ops_[h];
  if (tracer_ != nullptr && op.purpose != Purpose::cqe_write)
    trace_op(sim, op);
  switch (op.purpose) {
  case Purpose::place_payload:
  case Purpose::place_response:
  case Purpose::place_atomic:
    // The data has left the HCA: its IB receive buffer is free again.
    stages_->responder.consume_packet(sim, op.packet);
    op.packet = link::PacketHandle{};
    return;
  case Purpose::atomic_write:
    stages_->responder.on_atomic_write_done(sim, h); // responder's atomic unit
    return;
  default:
    return; // CQE writes finish when visible
  }
}

void Hca::dma_write_visible(sim::Simulator& sim, std::uint32_t token) {
  const DmaHandle h{token};
  DmaOp& op = ops_[h];
  if (op.purpose != Purpose::cqe_write) {
    if (op.purpose == Purpose::place_payload)
      for (Watch& w : watches_)
        if (w.address >= op.address && w.address < op.address + op.bytes) {
          ++w.writes;
          w.signal->notify();
        }
    ops_.release(h); // payload placements and atomic writes: their packets went at dma_write_done
    return;
  }
  if (tracer_ != nullptr)
    trace_op(sim, op);
  stages_->completions.on_visible(h); // completion writer
}

// ---- What waited for a QP context.

void Hca::on_context_read(sim::Simulator& sim, Qp& qp) {
  stages_->contexts.on_read(qp.index);
  // What waited goes on in arrival order: the fetched WQEs, then the received packets.
  if (qp.wqes_waiting > 0) {
    const std::uint32_t count = qp.wqes_waiting;
    qp.wqes_waiting = 0;
    stages_->requester.process_wqes(sim, qp, count);
  }
  for (; !qp.rx_waiting.empty(); qp.rx_waiting.pop_front())
    stages_->responder.receive_packet(sim, qp, qp.rx_waiting.front());
  stages_->contexts.read_queued(sim);
}

std::string Hca::check_quiescent(bool peers_failed) const {
  for (const Qp& qp : qps_) {
    if (qp.state == verbs::QpState::reset)
      continue;
    if (qp.req.uncompleted != qp.sq.posted)
      return "QP " + std::to_string(qp.qpn) + ": " + std::to_string(qp.sq.posted - qp.req.uncompleted) +
             " send work requests never completed";
    if (qp.resp.has_parked())
      return "QP " + std::to_string(qp.qpn) + ": received packets still parked";
    if (!peers_failed && qp.holds_early())
      return "QP " + std::to_string(qp.qpn) + ": packets held out of order, the gap before them never closed";
    if (stages_->contexts.loading(qp.index) || !qp.rx_waiting.empty())
      return "QP " + std::to_string(qp.qpn) + ": still waiting for its context";
    if (qp.resp.has_claims())
      return "QP " + std::to_string(qp.qpn) + ": receive WQEs claimed by messages never placed";
    // Every message the responder accepted (and acknowledged) reached the program, unless the QP failed.
    if (qp.type == verbs::QpType::rc && qp.state != verbs::QpState::error &&
        qp.counters.rc_messages_accepted != qp.counters.messages_received)
      return "QP " + std::to_string(qp.qpn) + ": " + std::to_string(qp.counters.rc_messages_accepted) +
             " messages accepted but " + std::to_string(qp.counters.messages_received) + " delivered";
  }
  for (const PortState& p : stages_->tx.ports())
    if (!p.data.empty() || !p.control.empty())
      return "port " + std::to_string(p.index + 1) + ": packets still queued";
  if (!bus_->idle())
    return "PCIe bus still busy";
  return "";
}

} // namespace ib::hca
