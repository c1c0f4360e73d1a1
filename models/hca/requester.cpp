// The requester: doorbells and BlueFlame, WQE fetch and processing on the QP's send engine, request packets at
// the path MTU, and, for RC, acknowledgements, READ and atomic responses, go-back-N on sequence NAKs and
// timeouts, RNR waits, and completions in WQE order; a QP's move to the error state.
#include "models/hca/requester.h"

#include <algorithm>

#include "models/hca/hca.h"
#include "models/hca/hca_state.h"
#include "models/hca/responder.h"
#include "models/hca/transmitter.h"
#include "sim/errors.h"

namespace ib::hca {
namespace {

using verbs::WrOpcode;

bool is_read_like(WrOpcode op) {
  return op == WrOpcode::rdma_read || op == WrOpcode::atomic_cmp_and_swp || op == WrOpcode::atomic_fetch_and_add;
}
bool is_atomic(WrOpcode op) {
  return op == WrOpcode::atomic_cmp_and_swp || op == WrOpcode::atomic_fetch_and_add;
}
bool with_immediate(WrOpcode op) {
  return op == WrOpcode::send_with_imm || op == WrOpcode::rdma_write_with_imm;
}
bool is_write(WrOpcode op) {
  return op == WrOpcode::rdma_write || op == WrOpcode::rdma_write_with_imm;
}

std::uint32_t packets_of(std::uint32_t length, std::uint32_t mtu) {
  return length == 0 ? 1 : (length + mtu - 1) / mtu;
}

/// The opcode of packet `i` of `n` of a SEND or WRITE message.
link::Opcode request_opcode(WrOpcode op, std::uint32_t i, std::uint32_t n) {
  const bool imm = with_immediate(op);
  if (is_write(op)) {
    if (n == 1)
      return imm ? link::Opcode::rdma_write_only_with_immediate : link::Opcode::rdma_write_only;
    if (i == 0)
      return link::Opcode::rdma_write_first;
    if (i + 1 < n)
      return link::Opcode::rdma_write_middle;
    return imm ? link::Opcode::rdma_write_last_with_immediate : link::Opcode::rdma_write_last;
  }
  if (n == 1)
    return imm ? link::Opcode::send_only_with_immediate : link::Opcode::send_only;
  if (i == 0)
    return link::Opcode::send_first;
  if (i + 1 < n)
    return link::Opcode::send_middle;
  return imm ? link::Opcode::send_last_with_immediate : link::Opcode::send_last;
}

verbs::WcOpcode completion_opcode(WrOpcode op) {
  switch (op) {
  case WrOpcode::send:
  case WrOpcode::send_with_imm:
    return verbs::WcOpcode::send;
  case WrOpcode::rdma_write:
  case WrOpcode::rdma_write_with_imm:
    return verbs::WcOpcode::rdma_write;
  case WrOpcode::rdma_read:
    return verbs::WcOpcode::rdma_read;
  case WrOpcode::atomic_cmp_and_swp:
    return verbs::WcOpcode::comp_swap;
  case WrOpcode::atomic_fetch_and_add:
    return verbs::WcOpcode::fetch_add;
  }
  return verbs::WcOpcode::send;
}

} // namespace

// ---- The send queue's intake.

void Requester::on_doorbell(sim::Simulator& sim, DmaHandle h) {
  DmaOp& op = core_.ops[h];
  Qp& qp = core_.qps[op.qp];
  const std::uint32_t producer = op.count;
  const bool blueflame = op.blueflame;
  core_.ops.release(h);
  if (qp.state == verbs::QpState::error)
    return;
  if (static_cast<std::int32_t>(producer - qp.sq.doorbell_producer) > 0)
    qp.sq.doorbell_producer = producer;
  if (blueflame && qp.sq.fetched + 1 == producer && !qp.sq.fetching) {
    // The WQE came with the doorbell: nothing to fetch.
    qp.sq.slots[qp.sq.fetched].wqe.blueflame = true;
    on_wqes_fetched(sim, qp, 1);
    return;
  }
  fetch_wqes(sim, qp);
}

void Requester::on_wqe_fetch_done(sim::Simulator& sim, DmaHandle h) {
  Qp& qp = core_.qps[core_.ops[h].qp];
  const std::uint32_t count = core_.ops[h].count;
  core_.ops.release(h);
  on_wqes_fetched(sim, qp, count);
}

void Requester::fetch_wqes(sim::Simulator& sim, Qp& qp) {
  if (qp.sq.fetching || qp.sq.fetched == qp.sq.doorbell_producer)
    return;
  // One DMA read for the new WQEs that lie contiguously in the ring.
  const SendSlot& first = qp.sq.slots[qp.sq.fetched];
  std::uint32_t count = 0;
  std::uint32_t bytes = 0;
  while (qp.sq.fetched + count != qp.sq.doorbell_producer) {
    const SendSlot& s = qp.sq.slots[(qp.sq.fetched + count)];
    if (s.address != first.address + bytes)
      break;
    bytes += s.wqe_bytes;
    ++count;
  }
  qp.sq.fetching = true;
  const DmaHandle h = core_.new_op(sim, Purpose::wqe_fetch, qp.index);
  core_.ops[h].count = count;
  core_.ops[h].bytes = bytes;
  ++core_.pcie.wqe_fetches;
  core_.pcie.wqe_fetch_bytes += bytes;
  core_.bus.dma_read(sim, first.address, bytes, h.value);
}

void Requester::on_wqes_fetched(sim::Simulator& sim, Qp& qp, std::uint32_t count) {
  qp.sq.fetching = false;
  for (std::uint32_t k = 0; k < count; ++k) {
    WqeState& w = qp.sq.slots[qp.sq.fetched + k].wqe;
    const bool blueflame = w.blueflame;
    w = WqeState{};
    w.blueflame = blueflame;
  }
  qp.sq.fetched += count;
  if (qp.state == verbs::QpState::error)
    return;
  if (contexts_.ready(sim, qp.index))
    process_wqes(sim, qp, count);
  else
    qp.wqes_waiting += count;
  fetch_wqes(sim, qp);
}

void Requester::process_wqes(sim::Simulator& sim, Qp& qp, std::uint32_t count) {
  qp.req.processing += count;
  process_next_wqe(sim, qp);
}

void Requester::process_next_wqe(sim::Simulator& sim, Qp& qp) {
  // The send engines parse a QP's WQEs one after another, one at a time: reserving them all at once would put the
  // headers of the first WQE's packets behind the parsing of the last.
  if (qp.req.on_engine || qp.req.processed == qp.req.processing)
    return;
  qp.req.on_engine = true;
  const sim::Time t = send_engines_.process_wqe(sim.now(), qp.req.tx_busy);
  sim.schedule(t, core_.self, static_cast<std::uint8_t>(Hca::Kind::wqe_processed), qp.index);
}

void Requester::on_wqe_processed(sim::Simulator& sim, Qp& qp) {
  qp.req.on_engine = false;
  if (qp.state == verbs::QpState::error || qp.req.processed == qp.req.processing)
    return;
  SendSlot& slot = qp.sq.slots[qp.req.processed];
  WqeState& w = slot.wqe;
  const WrOpcode op = slot.wr.opcode;
  if (op == WrOpcode::rdma_read) {
    w.packets = 1;
    w.psn_count = packets_of(slot.wr.length_bytes, qp.mtu);
  } else if (is_atomic(op)) {
    w.packets = w.psn_count = 1;
  } else {
    w.packets = w.psn_count = packets_of(slot.wr.length_bytes, qp.mtu);
  }
  ++qp.req.processed;
  tx_.activate(sim, qp); // its first packet's headers go on the engine before the next WQE
  process_next_wqe(sim, qp);
}

// ---- Request packets, acknowledgements, retries, completions.

std::uint8_t Requester::next_sl(const Qp& qp) const {
  return qp.type == verbs::QpType::ud ? qp.sq.slots[qp.req.cursor_wqe].wr.ah.sl : qp.attr.sl;
}

bool Requester::can_build(const Qp& qp) const {
  if (qp.state != verbs::QpState::rts || qp.req.rnr_waiting || qp.req.cursor_wqe == qp.req.processed)
    return false;
  const WrOpcode op = qp.sq.slots[qp.req.cursor_wqe].wr.opcode;
  return !is_read_like(op) || qp.req.reads_outstanding < qp.attr.max_rd_atomic;
}

void Requester::build_packet(sim::Simulator& sim, PortState& port, Qp& qp) {
  const std::uint32_t index = qp.req.cursor_wqe;
  SendSlot& slot = qp.sq.slots[index];
  const verbs::SendWr& wr = slot.wr;
  WqeState& w = slot.wqe;
  const std::uint32_t i = qp.req.cursor_packet;
  if (i == 0)
    w.first_psn = qp.req.next_psn;
  const std::uint32_t psn = qp.req.next_psn;
  const bool retransmission = qp.type == verbs::QpType::rc && psn_diff(psn, qp.req.highest_sent_psn) <= 0 &&
                              psn_diff(psn, qp.req.acked_psn) > 0;

  link::Opcode opcode;
  std::uint32_t payload = 0;
  if (wr.opcode == WrOpcode::rdma_read) {
    opcode = link::Opcode::rdma_read_request;
  } else if (is_atomic(wr.opcode)) {
    opcode = wr.opcode == WrOpcode::atomic_cmp_and_swp ? link::Opcode::compare_swap : link::Opcode::fetch_add;
  } else {
    opcode = request_opcode(wr.opcode, i, w.packets);
    payload = std::min(qp.mtu, wr.length_bytes - i * qp.mtu);
  }
  const bool ud = qp.type == verbs::QpType::ud;
  const link::PacketHandle packet = tx_.new_packet(qp, ud ? wr.ah.dlid : qp.attr.dest_lid, ud ? wr.ah.sl : qp.attr.sl,
                                                   opcode, payload, psn, ud ? wr.remote_qpn : qp.attr.dest_qpn);
  link::Packet& p = core_.wire.packets[packet];
  TransportHeaders& h = core_.headers_of(packet);
  const bool last = i + 1 == w.packets;
  if ((is_write(wr.opcode) && i == 0) || wr.opcode == WrOpcode::rdma_read || is_atomic(wr.opcode)) {
    h.remote_address = wr.remote_address;
    h.dma_length = wr.length_bytes;
  }
  h.immediate = wr.immediate;
  h.compare_add = wr.compare_add;
  h.swap = wr.swap;
  h.src_qpn = qp.qpn;
  h.qkey = wr.remote_qkey;
  const std::uint32_t interval = core_.params.ack_request_interval_packets;
  p.ack_request = qp.type == verbs::QpType::rc && (last || (interval > 0 && (i + 1) % interval == 0));

  const TxHandle th = tx_.new_entry();
  TxEntry& entry = tx_.entry(th);
  entry.packet = packet;
  entry.qp_index = qp.index;
  entry.generation = qp.req.tx_generation;
  entry.wqe_index = index;
  entry.payload_bytes = payload;
  entry.ready_at = send_engines_.build_headers(sim.now(), qp.index, qp.req.tx_busy);
  entry.is_request = true;
  entry.last_of_message = last;
  entry.payload_in = payload == 0 || wr.inline_data;
  if (payload > 0 && wr.inline_data && core_.memory.keeps_contents()) {
    const std::vector<std::uint8_t>& bytes = qp.rare_state->inline_payloads[index];
    h.payload.assign(bytes.begin() + i * qp.mtu, bytes.begin() + i * qp.mtu + payload);
  }
  tx_.queue(sim, port, th, wr.local_address + std::uint64_t{i} * qp.mtu);

  if (retransmission)
    ++qp.rare().counters.retransmitted_packets;
  if (i == 0) {
    ++qp.counters.messages_sent;
    qp.counters.bytes_sent += wr.length_bytes;
  }
  if (is_read_like(wr.opcode)) {
    ++qp.req.reads_outstanding;
    std::uint32_t& peak = qp.rare().counters.peak_reads_outstanding;
    peak = std::max(peak, qp.req.reads_outstanding);
    w.counted_read = true;
    w.responses_in = 0;
  }
  qp.req.next_psn = psn_add(qp.req.next_psn, is_read_like(wr.opcode) ? w.psn_count : 1);
  if (++qp.req.cursor_packet == w.packets) {
    qp.req.cursor_packet = 0;
    ++qp.req.cursor_wqe;
  }
}

void Requester::on_request_sent(sim::Simulator& sim, Qp& qp, const TxEntry& entry) {
  if (qp.type != verbs::QpType::rc)
    return;
  // From the packet alone: a retransmission that waited in the port queue while the first copy's ACK came back
  // leaves after its WQE has completed, and the WQE's slot may hold a newer one by then (sim::SequenceRing).
  const link::Packet& p = core_.wire.packets[entry.packet];
  const std::uint32_t last_psn =
      p.opcode == link::Opcode::rdma_read_request
          ? psn_add(p.psn, packets_of(core_.headers_of(entry.packet).dma_length, qp.mtu) - 1) // its responses' PSNs
          : p.psn;
  if (psn_diff(last_psn, qp.req.highest_sent_psn) > 0)
    qp.req.highest_sent_psn = last_psn;
  if (qp.req.retry_deadline == sim::Time::max())
    arm_retry_timer(sim, qp);
}

void Requester::on_request_left(sim::Simulator& sim, Qp& qp, const TxEntry& entry) {
  // UC and UD requests complete when their last packet has left.
  if (qp.type == verbs::QpType::rc || entry.generation != qp.req.tx_generation)
    return;
  qp.sq.slots[entry.wqe_index].wqe.done = true;
  complete_requests(sim, qp);
}

void Requester::arm_retry_timer(sim::Simulator& sim, Qp& qp) {
  if (qp.attr.timeout == 0) // infinite
    return;
  qp.req.retry_deadline =
      sim.now() + sim::Time::from_ps(4'096'000) * (std::int64_t{1} << std::min<int>(qp.attr.timeout, 31));
  if (!qp.req.retry_timer_pending) {
    qp.req.retry_timer_pending = true;
    sim.schedule(qp.req.retry_deadline, core_.self, static_cast<std::uint8_t>(Hca::Kind::retry_timer), qp.index);
  }
}

void Requester::on_retry_timer(sim::Simulator& sim, Qp& qp) {
  qp.req.retry_timer_pending = false;
  // An entry the last ACK left in the calendar, or one that progress pushed back, is not activity (drained_at).
  if (qp.state != verbs::QpState::rts || qp.req.retry_deadline == sim::Time::max()) {
    sim.mark_stale();
    return;
  }
  if (sim.now() < qp.req.retry_deadline) { // pushed back by progress since it was scheduled
    sim.mark_stale();
    qp.req.retry_timer_pending = true;
    sim.schedule(qp.req.retry_deadline, core_.self, static_cast<std::uint8_t>(Hca::Kind::retry_timer), qp.index);
    return;
  }
  qp.req.retry_deadline = sim::Time::max();
  if (psn_diff(qp.req.highest_sent_psn, qp.req.acked_psn) <= 0 || qp.req.rnr_waiting)
    return;
  ++qp.rare().counters.timeouts;
  if (qp.req.retries_left == 0) {
    fail_qp(sim, qp, verbs::WcStatus::retry_exc_err);
    return;
  }
  --qp.req.retries_left;
  rewind(sim, qp, psn_add(qp.req.acked_psn, 1));
}

void Requester::on_rnr_timer(sim::Simulator& sim, Qp& qp) {
  if (!qp.req.rnr_waiting || qp.state != verbs::QpState::rts) {
    sim.mark_stale();
    return;
  }
  qp.req.rnr_waiting = false;
  rewind(sim, qp, qp.req.rnr_resume_psn);
}

void Requester::rewind(sim::Simulator& sim, Qp& qp, std::uint32_t psn) {
  // Find the WQE the PSN belongs to among those built; every WQE from there on is built again.
  std::uint32_t index = qp.req.uncompleted;
  for (; index != qp.req.cursor_wqe + (qp.req.cursor_packet > 0 ? 1u : 0u); ++index) {
    const WqeState& w = qp.sq.slots[index].wqe;
    if (psn_diff(psn, w.first_psn) >= 0 && psn_diff(psn, psn_add(w.first_psn, w.psn_count)) < 0)
      break;
  }
  if (index == qp.req.cursor_wqe + (qp.req.cursor_packet > 0 ? 1u : 0u)) {
    // Nothing built at that PSN: only the timer state changes.
    arm_retry_timer(sim, qp);
    return;
  }
  for (std::uint32_t k = index; k != qp.req.cursor_wqe + (qp.req.cursor_packet > 0 ? 1u : 0u); ++k) {
    WqeState& w = qp.sq.slots[k].wqe;
    if (w.counted_read) {
      w.counted_read = false;
      --qp.req.reads_outstanding;
    }
    w.responses_in = 0;
  }
  WqeState& w = qp.sq.slots[index].wqe;
  const bool whole = is_read_like(qp.sq.slots[index].wr.opcode);
  qp.req.cursor_wqe = index;
  qp.req.cursor_packet = whole ? 0 : static_cast<std::uint32_t>(psn_diff(psn, w.first_psn));
  qp.req.next_psn = whole ? w.first_psn : psn;
  ++qp.req.tx_generation;
  arm_retry_timer(sim, qp);
  tx_.activate(sim, qp);
}

void Requester::drop_early_responses(sim::Simulator& sim, Qp& qp) {
  if (!qp.rare_state)
    return;
  for (const ReorderHold::Held& h : qp.rare_state->early_responses.packets)
    responder_.consume_packet(sim, h.packet);
  qp.rare_state->early_responses.packets.clear();
}

void Requester::on_acknowledge(sim::Simulator& sim, Qp& qp, const link::Packet& packet, const TransportHeaders& h) {
  if (qp.state != verbs::QpState::rts || qp.type != verbs::QpType::rc)
    return;
  if (packet.becn) [[unlikely]]
    on_becn(sim, qp, packet.sl);
  switch (static_cast<Aeth>(h.syndrome)) {
  case Aeth::ack:
    acknowledge_upto(sim, qp, packet.psn);
    return;
  case Aeth::nak_sequence:
    ++qp.rare().counters.sequence_naks_received;
    acknowledge_upto(sim, qp, psn_add(packet.psn, psn_mask));
    rewind(sim, qp, packet.psn);
    return;
  case Aeth::rnr_nak:
    ++qp.rare().counters.rnr_naks_received;
    acknowledge_upto(sim, qp, psn_add(packet.psn, psn_mask));
    if (qp.attr.rnr_retry != 7) {
      if (qp.req.rnr_retries_left == 0) {
        fail_qp(sim, qp, verbs::WcStatus::rnr_retry_exc_err);
        return;
      }
      --qp.req.rnr_retries_left;
    }
    qp.req.rnr_waiting = true;
    qp.req.rnr_resume_psn = packet.psn;
    qp.req.retry_deadline = sim::Time::max();
    ++qp.req.tx_generation;
    sim.schedule_in(rnr_timer_duration(h.nak_timer), core_.self, static_cast<std::uint8_t>(Hca::Kind::rnr_timer),
                    qp.index);
    return;
  case Aeth::nak_invalid_request:
  case Aeth::nak_remote_access:
    acknowledge_upto(sim, qp, psn_add(packet.psn, psn_mask));
    fail_qp(sim, qp,
            static_cast<Aeth>(h.syndrome) == Aeth::nak_invalid_request ? verbs::WcStatus::rem_inv_req_err
                                                                       : verbs::WcStatus::rem_access_err);
    return;
  }
}

void Requester::on_becn(sim::Simulator& sim, Qp& qp, std::uint8_t sl) {
  CongestionState& cc = core_.cc;
  if (!cc.setting.applies_to(sl))
    return;
  ++cc.counters.becn_received;
  ++qp.rare().counters.becn_received;
  CcFlow& flow = tx_.cc_flow(qp, sl);
  const std::uint16_t index = flow.ccti.on_becn(sim.now(), cc.setting);
  if (cc.tracer != nullptr)
    tx_.trace_ccti(sim, qp, sl, flow, index);
  cc.counters.max_ccti = std::max(cc.counters.max_ccti, index);
  if (index == cc.setting.trigger_threshold)
    ++cc.counters.trigger_events;
  if (cc.tracer != nullptr && cc.tracer->wants(cc.component_id, qp.qpn, sim.now(), sim.now()))
    cc.tracer->instant(cc.component_id, 0, "congestion", "BECN", sim.now(),
                       "\"qpn\": " + std::to_string(qp.qpn) + ", \"sl\": " + std::to_string(sl) +
                           ", \"ccti\": " + std::to_string(index));
}

void Requester::acknowledge_upto(sim::Simulator& sim, Qp& qp, std::uint32_t psn) {
  if (psn_diff(psn, qp.req.acked_psn) <= 0 || psn_diff(psn, qp.req.highest_sent_psn) > 0)
    return;
  // Requests up to `psn` are acknowledged; a READ or atomic there whose answer is missing stops the advance
  // (its responses were lost: the retry timer asks again).
  const std::uint32_t built_end = qp.req.cursor_wqe + (qp.req.cursor_packet > 0 ? 1u : 0u);
  for (std::uint32_t k = qp.req.uncompleted; k != built_end; ++k) {
    WqeState& w = qp.sq.slots[k].wqe;
    if (w.done)
      continue;
    if (psn_diff(psn, w.first_psn) < 0)
      break;
    if (is_read_like(qp.sq.slots[k].wr.opcode)) {
      psn = psn_add(w.first_psn, psn_mask);
      break;
    }
    if (psn_diff(psn, psn_add(w.first_psn, w.psn_count - 1)) >= 0 &&
        (k != qp.req.cursor_wqe || qp.req.cursor_packet == 0))
      w.done = true;
    else
      break;
  }
  if (psn_diff(psn, qp.req.acked_psn) <= 0)
    return;
  qp.req.acked_psn = psn;
  qp.req.retries_left = qp.attr.retry_cnt;
  qp.req.rnr_retries_left = qp.attr.rnr_retry;
  qp.req.retry_deadline = sim::Time::max();
  if (psn_diff(qp.req.highest_sent_psn, qp.req.acked_psn) > 0)
    arm_retry_timer(sim, qp);
  complete_requests(sim, qp);
}

std::uint32_t Requester::read_wqe_of(const Qp& qp, std::uint32_t psn) const {
  const std::uint32_t built_end = qp.req.cursor_wqe + (qp.req.cursor_packet > 0 ? 1u : 0u);
  std::uint32_t k = qp.req.uncompleted;
  for (; k != built_end; ++k) {
    const WqeState& w = qp.sq.slots[k].wqe;
    if (!w.done && is_read_like(qp.sq.slots[k].wr.opcode) && psn_diff(psn, w.first_psn) >= 0 &&
        psn_diff(psn, psn_add(w.first_psn, w.psn_count)) < 0)
      break;
  }
  return k == built_end || !qp.sq.slots[k].wqe.counted_read ? no_wqe : k;
}

std::int32_t Requester::response_gap(const Qp& qp, std::uint32_t k, std::uint32_t psn) const {
  // Within its own request: the adapter's atomic unit may answer atomics out of PSN order, and each request's
  // answers are checked apart (an earlier request still waiting keeps the retry timer going, below).
  const WqeState& w = qp.sq.slots[k].wqe;
  return psn_diff(psn, psn_add(w.first_psn, w.responses_in));
}

void Requester::on_read_response(sim::Simulator& sim, Qp& qp, link::PacketHandle handle) {
  take_response(sim, qp, handle);
  if (!qp.rare_state)
    return;
  // QpCaps::out_of_order: the responses held ahead of a gap that are now in sequence, until none is.
  ReorderHold& hold = qp.rare_state->early_responses;
  for (bool progress = true; progress && !hold.empty();) {
    progress = false;
    for (std::size_t i = 0; i < hold.packets.size(); ++i) {
      const ReorderHold::Held h = hold.packets[i];
      const std::uint32_t k = qp.state == verbs::QpState::rts ? read_wqe_of(qp, h.psn) : no_wqe;
      if (k != no_wqe && response_gap(qp, k, h.psn) > 0)
        continue; // the gap before it is still open
      hold.packets.erase(hold.packets.begin() + static_cast<std::ptrdiff_t>(i));
      take_response(sim, qp, h.packet); // in sequence, or a duplicate by now
      progress = true;
      break;
    }
  }
}

void Requester::take_response(sim::Simulator& sim, Qp& qp, link::PacketHandle handle) {
  const link::Packet& p = core_.wire.packets[handle];
  if (qp.state != verbs::QpState::rts || qp.type != verbs::QpType::rc) {
    responder_.consume_packet(sim, handle);
    return;
  }
  const std::uint32_t k = read_wqe_of(qp, p.psn);
  if (k == no_wqe) {
    ++qp.rare().counters.duplicates_received; // an answer to a request given up on, or a duplicate
    responder_.consume_packet(sim, handle);
    return;
  }
  SendSlot& slot = qp.sq.slots[k];
  WqeState& w = slot.wqe;
  const verbs::SendWr& wr = slot.wr;
  if (const std::int32_t ahead = response_gap(qp, k, p.psn); ahead != 0) {
    if (ahead > 0 && qp.caps.out_of_order &&
        responder_.hold_early(sim, qp, qp.rare().early_responses, ahead, handle) != Responder::Early::beyond_window)
      return;                     // placed once the responses before it are in
    ++qp.rare().counters.dropped; // a gap: the timer asks again
    responder_.consume_packet(sim, handle);
    return;
  }
  // A response implicitly acknowledges every request before it.
  acknowledge_upto(sim, qp, psn_add(w.first_psn, psn_mask));
  ++qp.counters.packets_received;
  const TransportHeaders& h = core_.headers_of(handle);
  if (p.opcode == link::Opcode::atomic_acknowledge) {
    std::array<std::uint8_t, 8> bytes{};
    for (std::size_t i = 0; i < 8; ++i)
      bytes[i] = static_cast<std::uint8_t>(h.original >> (8 * i));
    core_.memory.write(wr.local_address, bytes);
    const DmaHandle op = core_.new_op(sim, Purpose::place_atomic, qp.index);
    core_.ops[op].packet = handle;
    ++core_.pcie.payload_writes;
    core_.pcie.payload_write_bytes += 8;
    core_.bus.dma_write(sim, wr.local_address, 8, op.value);
    w.responses_in = 1;
  } else {
    const std::uint64_t address = wr.local_address + std::uint64_t{w.responses_in} * qp.mtu;
    if (p.payload_bytes > 0) {
      if (core_.memory.keeps_contents())
        core_.memory.write(address, h.payload);
      const DmaHandle op = core_.new_op(sim, Purpose::place_response, qp.index);
      core_.ops[op].packet = handle;
      ++core_.pcie.payload_writes;
      core_.pcie.payload_write_bytes += p.payload_bytes;
      core_.bus.dma_write(sim, address, p.payload_bytes, op.value);
    } else {
      responder_.consume_packet(sim, handle);
    }
    ++w.responses_in;
  }
  // A response in sequence is forward progress, which restarts the transport timer (IBA vol. 1 ch. 9): else a READ
  // whose responses take longer than the timeout to stream in would be retried from its start until it failed.
  qp.req.retries_left = qp.attr.retry_cnt;
  arm_retry_timer(sim, qp);
  if (w.responses_in == w.psn_count) {
    w.done = true;
    w.counted_read = false;
    --qp.req.reads_outstanding;
    // Acknowledged through its last PSN, and through those of later requests answered before it; but not while an
    // earlier READ or atomic waits for its answer, which may be lost: the retry timer must keep running for it.
    bool earlier_waits = false;
    for (std::uint32_t j = qp.req.uncompleted; j != k && !earlier_waits; ++j)
      earlier_waits = !qp.sq.slots[j].wqe.done && is_read_like(qp.sq.slots[j].wr.opcode);
    std::uint32_t last = psn_add(w.first_psn, w.psn_count - 1);
    const std::uint32_t built_end = qp.req.cursor_wqe + (qp.req.cursor_packet > 0 ? 1u : 0u);
    for (std::uint32_t j = k + 1; j != built_end && qp.sq.slots[j].wqe.done; ++j)
      last = psn_add(qp.sq.slots[j].wqe.first_psn, qp.sq.slots[j].wqe.psn_count - 1);
    if (!earlier_waits && psn_diff(last, qp.req.acked_psn) > 0) {
      qp.req.acked_psn = last;
      qp.req.retries_left = qp.attr.retry_cnt;
      qp.req.retry_deadline = sim::Time::max();
      if (psn_diff(qp.req.highest_sent_psn, qp.req.acked_psn) > 0)
        arm_retry_timer(sim, qp);
    }
    complete_requests(sim, qp);
    tx_.activate(sim, qp);
  }
}

void Requester::complete_requests(sim::Simulator& sim, Qp& qp) {
  while (qp.req.uncompleted != qp.req.processed && qp.sq.slots[qp.req.uncompleted].wqe.done) {
    const std::uint32_t k = qp.req.uncompleted;
    const verbs::SendWr& wr = qp.sq.slots[k].wr;
    if (qp.type == verbs::QpType::rc && wr.opcode != WrOpcode::rdma_read && !is_atomic(wr.opcode)) {
      bytes_completed_ += wr.length_bytes;
      ++qp.counters.rc_requests_completed;
    }
    if (wr.signaled) {
      verbs::WorkCompletion wc;
      wc.wr_id = wr.wr_id;
      wc.status = verbs::WcStatus::success;
      wc.opcode = completion_opcode(wr.opcode);
      wc.byte_len = wr.length_bytes;
      wc.qp_num = qp.qpn;
      completions_.write(sim, qp.send_cq, wc, qp.index, k, true);
    }
    ++qp.req.uncompleted;
  }
}

void Requester::fail_qp(sim::Simulator& sim, Qp& qp, verbs::WcStatus status) {
  if (qp.state == verbs::QpState::error)
    return;
  qp.state = verbs::QpState::error;
  ++failed_qps_;
  ++qp.req.tx_generation;
  qp.req.rnr_waiting = false;
  qp.req.retry_deadline = sim::Time::max();
  // The WQE that failed reports why; every other outstanding one is flushed (completions regardless of signaling).
  bool first = true;
  for (std::uint32_t k = qp.req.uncompleted; k != qp.sq.posted; ++k) {
    const verbs::SendWr& wr = qp.sq.slots[k].wr;
    verbs::WorkCompletion wc;
    wc.wr_id = wr.wr_id;
    wc.status = first && status != verbs::WcStatus::wr_flush_err ? status : verbs::WcStatus::wr_flush_err;
    wc.opcode = completion_opcode(wr.opcode);
    wc.qp_num = qp.qpn;
    completions_.write(sim, qp.send_cq, wc, qp.index, k, true);
    ++qp.rare().counters.error_completions;
    if (qp.type == verbs::QpType::rc && wr.opcode != WrOpcode::rdma_read && !is_atomic(wr.opcode))
      ++qp.rare().counters.rc_requests_failed;
    first = false;
  }
  qp.req.uncompleted = qp.sq.posted;
  qp.req.processed = qp.req.processing = qp.req.cursor_wqe = qp.sq.fetched = qp.sq.doorbell_producer = qp.sq.posted;
  qp.req.cursor_packet = 0;
  drop_early_responses(sim, qp);
  responder_.flush(sim, qp);
}

} // namespace ib::hca
