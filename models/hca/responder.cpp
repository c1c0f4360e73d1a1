// The receive side: packets from the port through the QP's receive engine, answers to the requester; the RC
// responder's PSN checks (duplicates, sequence NAKs, RNR NAKs), payload placement by DMA write into the receive
// WQEs the receive queues bring (a QP's own receive queue or an SRQ), READ responses and atomics; UC and UD receive.
#include "models/hca/responder.h"

#include <algorithm>

#include "models/hca/hca.h"
#include "models/hca/hca_state.h"
#include "sim/errors.h"

namespace ib::hca {
namespace {

using link::Opcode;

bool is_send(Opcode op) {
  return op == Opcode::send_first || op == Opcode::send_middle || op == Opcode::send_last ||
         op == Opcode::send_last_with_immediate || op == Opcode::send_only || op == Opcode::send_only_with_immediate;
}
bool is_write(Opcode op) {
  return op == Opcode::rdma_write_first || op == Opcode::rdma_write_middle || op == Opcode::rdma_write_last ||
         op == Opcode::rdma_write_last_with_immediate || op == Opcode::rdma_write_only ||
         op == Opcode::rdma_write_only_with_immediate;
}
bool starts_message(Opcode op) {
  return op == Opcode::send_first || op == Opcode::send_only || op == Opcode::send_only_with_immediate ||
         op == Opcode::rdma_write_first || op == Opcode::rdma_write_only ||
         op == Opcode::rdma_write_only_with_immediate;
}
bool ends_message(Opcode op) {
  return op == Opcode::send_last || op == Opcode::send_last_with_immediate || op == Opcode::send_only ||
         op == Opcode::send_only_with_immediate || op == Opcode::rdma_write_last ||
         op == Opcode::rdma_write_last_with_immediate || op == Opcode::rdma_write_only ||
         op == Opcode::rdma_write_only_with_immediate;
}
bool has_immediate(Opcode op) {
  return op == Opcode::send_last_with_immediate || op == Opcode::send_only_with_immediate ||
         op == Opcode::rdma_write_last_with_immediate || op == Opcode::rdma_write_only_with_immediate;
}
/// Whether the packet consumes a RECV WQE (every SEND packet uses its message's; WRITE with immediate at its end).
bool needs_recv(Opcode op) {
  return is_send(op) || op == Opcode::rdma_write_last_with_immediate || op == Opcode::rdma_write_only_with_immediate;
}
/// Whether the packet starts the use of a RECV WQE (a SEND's first packet, a WRITE with immediate's last).
bool claims_recv(Opcode op) {
  return (is_send(op) && starts_message(op)) || op == Opcode::rdma_write_last_with_immediate ||
         op == Opcode::rdma_write_only_with_immediate;
}
bool is_response(Opcode op) {
  return op == Opcode::acknowledge || op == Opcode::atomic_acknowledge || op == Opcode::rdma_read_response_first ||
         op == Opcode::rdma_read_response_middle || op == Opcode::rdma_read_response_last ||
         op == Opcode::rdma_read_response_only;
}

} // namespace

Responder::Responder(Core& core, QpContexts& contexts, SendEngines& send_engines, Transmitter& tx, ReceiveQueues& recv,
                     AtomicUnit& atomics, CompletionWriter& completions, Requester& requester)
    : core_(core), contexts_(contexts), send_engines_(send_engines), tx_(tx), recv_(recv), atomics_(atomics),
      completions_(completions), requester_(requester) {
  receive_engines_.resize(core.params.receive_engines);
}

void Responder::on_packet_arrives(sim::Simulator& sim, PortState& port, link::PacketHandle handle) {
  link::Packet& p = core_.wire.packets[handle];
  if (!port.port.on_packet_arrives(sim, p)) {
    core_.free_packet(handle);
    return;
  }
  if (swap_next_ > 0 && p.opcode != Opcode::acknowledge) [[unlikely]] { // test hook: reordering
    if (!swapped_.valid()) {
      swapped_ = handle;
      return;
    }
    --swap_next_;
    const link::PacketHandle late = swapped_;
    swapped_ = link::PacketHandle{};
    take_arrival(sim, handle);
    take_arrival(sim, late);
    return;
  }
  take_arrival(sim, handle);
}

void Responder::take_arrival(sim::Simulator& sim, link::PacketHandle handle) {
  link::Packet& p = core_.wire.packets[handle];
  if (drop_next_ > 0) { // fault injection
    --drop_next_;
    ++dropped_by_fault_;
    consume_packet(sim, handle);
    return;
  }
  if (mark_fecn_next_ > 0 && !is_response(p.opcode) && p.opcode != Opcode::congestion_notification) { // test hook
    --mark_fecn_next_;
    p.fecn = true;
  }
  Qp* qp = core_.find_qp(p.dest_qpn);
  if (qp == nullptr) { // still takes an engine's time to be found so
    sim::Time no_qp_busy;
    const sim::Time t = receive_engines_.reserve(sim.now(), no_qp_busy, core_.params.rx_packet_processing);
    sim.schedule(t, core_.self, static_cast<std::uint8_t>(Hca::Kind::rx_processed), handle.value);
    return;
  }
  if (!contexts_.ready(sim, qp->index)) {
    qp->rx_waiting.push_back(handle);
    return;
  }
  receive_packet(sim, *qp, handle);
}

void Responder::receive_packet(sim::Simulator& sim, Qp& qp, link::PacketHandle handle) {
  // The receive engines check a QP's packets in arrival order (one engine at a time per QP).
  const sim::Time t = receive_engines_.reserve(sim.now(), qp.resp.rx_busy, core_.params.rx_packet_processing);
  sim.schedule(t, core_.self, static_cast<std::uint8_t>(Hca::Kind::rx_processed), handle.value);
}

void Responder::consume_packet(sim::Simulator& sim, link::PacketHandle handle) {
  const link::Packet& p = core_.wire.packets[handle];
  if (!p.buffer_released) [[likely]]
    tx_.port(p.in_port - 1u).port.release(sim, p.vl, p.wire_bytes);
  core_.free_packet(handle);
}

Responder::Early Responder::hold_early(sim::Simulator& sim, Qp& qp, ReorderHold& hold, std::int32_t ahead,
                                       link::PacketHandle handle) {
  link::Packet& p = core_.wire.packets[handle];
  if (ahead <= 0 || static_cast<std::uint32_t>(ahead) > core_.params.out_of_order_window_packets)
    return Early::beyond_window;
  auto at = std::find_if(hold.packets.begin(), hold.packets.end(),
                         [&](const ReorderHold::Held& h) { return psn_diff(h.psn, p.psn) >= 0; });
  if (at != hold.packets.end() && at->psn == p.psn) { // a retransmission of one held
    ++qp.rare().counters.duplicates_received;
    consume_packet(sim, handle);
    return Early::duplicate;
  }
  // The adapter keeps it on chip: the link's buffer must not wait for the gap, or the missing packet, behind it on
  // the same link, could never come.
  tx_.port(p.in_port - 1u).port.release(sim, p.vl, p.wire_bytes);
  p.buffer_released = true;
  hold.packets.insert(at, {p.psn, handle});
  ++qp.rare().counters.packets_out_of_order;
  qp.rare().counters.reorder_depth_max =
      std::max(qp.rare().counters.reorder_depth_max, static_cast<std::uint32_t>(hold.packets.size()));
  return Early::kept;
}

void Responder::take_early_requests(sim::Simulator& sim, Qp& qp) {
  ReorderHold& hold = qp.rare_state->early;
  while (!hold.empty() && qp.state != verbs::QpState::error) {
    const ReorderHold::Held next = hold.packets.front();
    if (psn_diff(next.psn, qp.resp.expected_psn) > 0)
      return;
    hold.packets.erase(hold.packets.begin());
    respond(sim, qp, next.packet); // behind expected_psn by now (a READ's responses span PSNs): a duplicate
  }
}

void Responder::on_rx_processed(sim::Simulator& sim, link::PacketHandle handle) {
  const link::Packet& p = core_.wire.packets[handle];
  Qp* qp = core_.find_qp(p.dest_qpn);
  if (qp == nullptr || qp->state == verbs::QpState::reset || qp->state == verbs::QpState::init) {
    if (qp != nullptr)
      ++qp->rare().counters.dropped;
    consume_packet(sim, handle);
    return;
  }
  if (p.opcode == Opcode::congestion_notification) [[unlikely]] { // the BECN of a UC or UD request the QP sent
    requester_.on_becn(sim, *qp, p.sl);
    consume_packet(sim, handle);
    return;
  }
  if (is_response(p.opcode)) {
    if (p.opcode == Opcode::acknowledge) {
      requester_.on_acknowledge(sim, *qp, p, core_.headers_of(handle));
      consume_packet(sim, handle);
    } else {
      requester_.on_read_response(sim, *qp, handle);
    }
    return;
  }
  if (qp->state == verbs::QpState::error) {
    ++qp->rare().counters.dropped;
    consume_packet(sim, handle);
    return;
  }
  respond(sim, *qp, handle);
  if (qp->rare_state && !qp->rare_state->early.empty()) [[unlikely]]
    take_early_requests(sim, *qp);
}

void Responder::respond(sim::Simulator& sim, Qp& qp, link::PacketHandle handle) {
  const link::Packet& p = core_.wire.packets[handle];
  if (!p.fecn || !core_.cc.setting.enabled) [[likely]] {
    respond_to(sim, qp, handle);
    return;
  }
  // FECN (IBA A10): the request's source hears of the congestion at once. RC: the ACK or NAK the request gets
  // carries BECN, or an ACK of what is in order so far if it gets none; UC and UD, which have no ACKs: a CNP to
  // the source QP (a datagram's from its DETH).
  ++core_.cc.counters.fecn_received;
  ++qp.rare().counters.fecn_received;
  if (qp.type != verbs::QpType::rc) {
    const bool ud = qp.type == verbs::QpType::ud;
    const std::uint16_t dlid = ud ? p.slid : qp.attr.dest_lid;
    const std::uint32_t dest_qpn = ud ? core_.headers_of(handle).src_qpn : qp.attr.dest_qpn;
    const std::uint8_t sl = p.sl;
    respond_to(sim, qp, handle); // may free the packet
    send_cnp(sim, qp, dlid, sl, dest_qpn);
    return;
  }
  becn_owed_ = true;
  respond_to(sim, qp, handle);
  if (becn_owed_ && qp.state != verbs::QpState::error)
    send_ack(sim, qp, Aeth::ack, psn_add(qp.resp.expected_psn, psn_mask));
  becn_owed_ = false;
}

void Responder::send_cnp(sim::Simulator& sim, Qp& qp, std::uint16_t dlid, std::uint8_t sl, std::uint32_t dest_qpn) {
  const link::PacketHandle cnp = tx_.new_packet(qp, dlid, sl, Opcode::congestion_notification, 0, 0, dest_qpn);
  core_.wire.packets[cnp].becn = true;
  ++core_.cc.counters.becn_sent;
  tx_.send_control(sim, qp, cnp);
}

void Responder::respond_to(sim::Simulator& sim, Qp& qp, link::PacketHandle handle) {
  const link::Packet& p = core_.wire.packets[handle];
  const Opcode op = p.opcode;
  ++qp.counters.packets_received;

  if (qp.type == verbs::QpType::ud) {
    if (!claim_recv(sim, qp)) { // no RECV: the datagram is silently dropped
      ++qp.rare().counters.dropped;
      consume_packet(sim, handle);
      return;
    }
    place_or_park(sim, qp, handle);
    return;
  }

  if (qp.type == verbs::QpType::uc) {
    // No ACKs, no retries: a gap drops the rest of the message; the next FIRST or ONLY resynchronizes.
    if (p.psn != qp.resp.expected_psn) {
      qp.resp.message_failed = true;
      if (!starts_message(op)) {
        ++qp.rare().counters.dropped;
        qp.resp.expected_psn = psn_add(p.psn, 1);
        consume_packet(sim, handle);
        return;
      }
    }
    if (!starts_message(op) && qp.resp.message_failed) {
      ++qp.rare().counters.dropped;
      qp.resp.expected_psn = psn_add(p.psn, 1);
      consume_packet(sim, handle);
      return;
    }
    if (starts_message(op)) {
      if (qp.resp.in_message && is_send(op) && !qp.resp.message_failed) {
        // unreachable for a well-formed stream; the old message is abandoned
      }
      qp.resp.message_failed = false;
      qp.resp.in_message = false;
    }
  } else {
    const std::int32_t d = psn_diff(p.psn, qp.resp.expected_psn);
    if (d < 0) { // duplicate: answered again, never executed again
      ++qp.rare().counters.duplicates_received;
      if (op == Opcode::rdma_read_request) {
        start_read_response(sim, qp, p, core_.headers_of(handle));
      } else if (op == Opcode::compare_swap || op == Opcode::fetch_add) {
        for (const AtomicResult& r : qp.rare().atomic_results) {
          if (r.valid && r.psn == p.psn) {
            const link::PacketHandle ack = tx_.new_packet(qp, qp.attr.dest_lid, qp.attr.sl, Opcode::atomic_acknowledge,
                                                          0, p.psn, qp.attr.dest_qpn);
            core_.headers_of(ack).original = r.original;
            core_.headers_of(ack).msn = qp.resp.msn;
            tx_.send_control(sim, qp, ack);
            break;
          }
        }
      } else if (p.ack_request) {
        send_ack(sim, qp, Aeth::ack, psn_add(qp.resp.expected_psn, psn_mask));
      }
      consume_packet(sim, handle);
      return;
    }
    if (d > 0 && qp.caps.out_of_order) {
      const Early early = hold_early(sim, qp, qp.rare().early, d, handle);
      if (early == Early::kept)
        --qp.counters.packets_received; // counted when taken, in sequence
      if (early != Early::beyond_window)
        return;
    }
    if (d > 0) { // a gap: one NAK, then silence until the missing PSN comes
      if (!qp.resp.nak_sent) {
        qp.resp.nak_sent = true;
        ++qp.rare().counters.sequence_naks_sent;
        send_ack(sim, qp, Aeth::nak_sequence, qp.resp.expected_psn);
      }
      ++qp.rare().counters.dropped;
      consume_packet(sim, handle);
      return;
    }
  }

  // The expected packet.
  if (op == Opcode::rdma_read_request) {
    qp.resp.nak_sent = false;
    const TransportHeaders& h = core_.headers_of(handle);
    const std::uint32_t responses = h.dma_length == 0 ? 1 : (h.dma_length + qp.mtu - 1) / qp.mtu;
    start_read_response(sim, qp, p, h);
    qp.resp.expected_psn = psn_add(qp.resp.expected_psn, responses);
    ++qp.resp.msn;
    consume_packet(sim, handle);
    return;
  }
  if (op == Opcode::compare_swap || op == Opcode::fetch_add) {
    qp.resp.nak_sent = false;
    qp.resp.expected_psn = psn_add(qp.resp.expected_psn, 1);
    ++qp.resp.msn;
    start_atomic(sim, qp, handle);
    return;
  }
  // A message that needs a RECV when none is posted: RNR NAK (RC); UC drops it.
  if (claims_recv(op) && !claim_recv(sim, qp)) {
    if (qp.type == verbs::QpType::rc) {
      // Every retry that still finds no RECV is NAKed again; the rest of its message is dropped silently.
      ++qp.rare().counters.rnr_naks_sent;
      const link::PacketHandle nak =
          tx_.new_packet(qp, qp.attr.dest_lid, qp.attr.sl, Opcode::acknowledge, 0, p.psn, qp.attr.dest_qpn);
      core_.headers_of(nak).syndrome = static_cast<std::uint8_t>(Aeth::rnr_nak);
      core_.headers_of(nak).nak_timer = qp.attr.min_rnr_timer;
      core_.headers_of(nak).msn = qp.resp.msn;
      tx_.send_control(sim, qp, nak);
      qp.resp.nak_sent = true; // the rest of the message is dropped silently until the retry
    } else {
      qp.resp.message_failed = true;
      qp.resp.expected_psn = psn_add(p.psn, 1);
    }
    ++qp.rare().counters.dropped;
    consume_packet(sim, handle);
    return;
  }
  qp.resp.nak_sent = false;
  qp.resp.expected_psn = psn_add(qp.resp.expected_psn, 1);
  if (ends_message(op)) {
    ++qp.resp.msn;
    if (qp.type == verbs::QpType::rc)
      ++qp.counters.rc_messages_accepted;
  }
  if (p.ack_request && qp.type == verbs::QpType::rc)
    send_ack(sim, qp, Aeth::ack, p.psn);
  place_or_park(sim, qp, handle);
}

bool Responder::claim_recv(sim::Simulator& sim, Qp& qp) {
  std::uint32_t index = 0;
  if (!recv_.claim(sim, qp.resp.rq, index))
    return false;
  qp.resp.recv_waits().claims.push_back(index);
  return true;
}

bool Responder::ready_to_place(const Qp& qp, link::PacketHandle handle) const {
  const Opcode op = core_.wire.packets[handle].opcode;
  if (!needs_recv(op))
    return true;
  const std::uint32_t recv = claims_recv(op) ? qp.resp.waits->claims.front() : qp.resp.recv_index;
  return recv_.on_hca(qp.resp.rq, recv); // if not, the read in flight, or the one the claim started, brings it
}

void Responder::place_or_park(sim::Simulator& sim, Qp& qp, link::PacketHandle handle) {
  // Packets are placed in order; those of a message whose RECV WQE is not on the HCA yet wait for it.
  if (!qp.resp.has_parked() && ready_to_place(qp, handle)) {
    receive_payload(sim, qp, handle);
    return;
  }
  qp.resp.recv_waits().parked.push_back(handle);
}

void Responder::drain_parked(sim::Simulator& sim, Qp& qp) {
  while (qp.resp.has_parked()) {
    const link::PacketHandle handle = qp.resp.waits->parked.front();
    if (!ready_to_place(qp, handle))
      return;
    qp.resp.waits->parked.pop_front();
    receive_payload(sim, qp, handle);
  }
}

void Responder::receive_payload(sim::Simulator& sim, Qp& qp, link::PacketHandle handle) {
  const link::Packet& p = core_.wire.packets[handle];
  const Opcode op = p.opcode;
  const TransportHeaders& h = core_.headers_of(handle);
  if (starts_message(op) || qp.type == verbs::QpType::ud) {
    qp.resp.in_message = true;
    qp.resp.message_offset = 0;
    if (is_write(op)) {
      qp.resp.write_address = h.remote_address;
      qp.resp.write_length = h.dma_length;
    }
  }
  if (claims_recv(op)) {
    qp.resp.recv_index = qp.resp.waits->claims.front();
    qp.resp.waits->claims.pop_front();
    qp.resp.recv_in_use = true;
  }
  std::uint64_t address;
  if (is_send(op)) {
    const verbs::RecvWr& recv = recv_.wqe(qp.resp.rq, qp.resp.recv_index);
    const std::uint32_t grh_space = qp.type == verbs::QpType::ud ? 40 : 0;
    if (qp.resp.message_offset + grh_space + p.payload_bytes > recv.length_bytes) {
      // The message does not fit its receive buffer: the RECV completes in error; RC tells the requester.
      verbs::WorkCompletion wc;
      wc.wr_id = recv.wr_id;
      wc.status = verbs::WcStatus::loc_len_err;
      wc.opcode = verbs::WcOpcode::recv;
      wc.qp_num = qp.qpn;
      completions_.write(sim, qp.recv_cq, wc, qp.index, qp.resp.recv_index, false);
      qp.resp.in_message = false;
      qp.resp.recv_in_use = false;
      if (qp.type == verbs::QpType::rc) {
        send_ack(sim, qp, Aeth::nak_invalid_request, p.psn);
        consume_packet(sim, handle);
        requester_.fail_qp(sim, qp, verbs::WcStatus::wr_flush_err);
        return;
      }
      qp.resp.message_failed = qp.type == verbs::QpType::uc;
      consume_packet(sim, handle);
      return;
    }
    address = recv.address + grh_space + qp.resp.message_offset;
  } else {
    address = qp.resp.write_address + qp.resp.message_offset;
    if (qp.resp.message_offset + p.payload_bytes > qp.resp.write_length ||
        !core_.memory.contains(address, p.payload_bytes)) {
      if (qp.type == verbs::QpType::rc) {
        send_ack(sim, qp, Aeth::nak_remote_access, p.psn);
        consume_packet(sim, handle);
        requester_.fail_qp(sim, qp, verbs::WcStatus::wr_flush_err);
        return;
      }
      ++qp.rare().counters.dropped;
      consume_packet(sim, handle);
      return;
    }
  }
  qp.resp.message_offset += p.payload_bytes;
  qp.counters.bytes_received += p.payload_bytes;
  const bool last = ends_message(op);
  if (last)
    finish_message(sim, qp, p, h);
  if (p.payload_bytes == 0) {
    consume_packet(sim, handle);
    return;
  }
  place_payload(sim, qp, handle, address, Purpose::place_payload);
}

void Responder::place_payload(sim::Simulator& sim, Qp& qp, link::PacketHandle handle, std::uint64_t address,
                              Purpose purpose) {
  const link::Packet& p = core_.wire.packets[handle];
  if (core_.memory.keeps_contents())
    core_.memory.write(address, core_.headers_of(handle).payload);
  if (qp.type == verbs::QpType::rc)
    bytes_placed_ += p.payload_bytes;
  const DmaHandle op = core_.new_op(sim, purpose, qp.index);
  core_.ops[op].packet = handle;
  core_.ops[op].address = address;
  core_.ops[op].bytes = p.payload_bytes;
  ++core_.pcie.payload_writes;
  core_.pcie.payload_write_bytes += p.payload_bytes;
  core_.bus.dma_write(sim, address, p.payload_bytes, op.value);
}

void Responder::finish_message(sim::Simulator& sim, Qp& qp, const link::Packet& last, const TransportHeaders& h) {
  qp.resp.in_message = false;
  qp.resp.recv_in_use = false;
  ++qp.counters.messages_received;
  if (!needs_recv(last.opcode))
    return;
  // The CQE is issued after the last payload write is queued: posted writes stay in order, so the program sees
  // the data before the completion.
  const verbs::RecvWr& recv = recv_.wqe(qp.resp.rq, qp.resp.recv_index);
  verbs::WorkCompletion wc;
  wc.wr_id = recv.wr_id;
  wc.status = verbs::WcStatus::success;
  wc.qp_num = qp.qpn;
  wc.slid = last.slid;
  wc.with_imm = has_immediate(last.opcode);
  wc.immediate = h.immediate;
  if (is_send(last.opcode)) {
    wc.opcode = verbs::WcOpcode::recv;
    wc.byte_len = qp.resp.message_offset + (qp.type == verbs::QpType::ud ? 40 : 0);
    wc.src_qp = qp.type == verbs::QpType::ud ? h.src_qpn : qp.attr.dest_qpn;
  } else {
    wc.opcode = verbs::WcOpcode::recv_rdma_with_imm;
    wc.byte_len = qp.resp.write_length;
  }
  completions_.write(sim, qp.recv_cq, wc, qp.index, qp.resp.recv_index, false);
}

void Responder::send_ack(sim::Simulator& sim, Qp& qp, Aeth syndrome, std::uint32_t psn) {
  const link::PacketHandle ack =
      tx_.new_packet(qp, qp.attr.dest_lid, qp.attr.sl, Opcode::acknowledge, 0, psn, qp.attr.dest_qpn);
  TransportHeaders& h = core_.headers_of(ack);
  h.syndrome = static_cast<std::uint8_t>(syndrome);
  h.msn = qp.resp.msn;
  if (becn_owed_) [[unlikely]] {
    becn_owed_ = false;
    core_.wire.packets[ack].becn = true;
    ++core_.cc.counters.becn_sent;
  }
  tx_.send_control(sim, qp, ack);
}

void Responder::start_read_response(sim::Simulator& sim, Qp& qp, const link::Packet& request,
                                    const TransportHeaders& h) {
  if (!core_.memory.contains(h.remote_address, h.dma_length)) {
    send_ack(sim, qp, Aeth::nak_remote_access, request.psn);
    return;
  }
  ReadJob job{};
  job.first_psn = request.psn;
  job.address = h.remote_address;
  job.length = h.dma_length;
  job.packets = h.dma_length == 0 ? 1 : (h.dma_length + qp.mtu - 1) / qp.mtu;
  job.next_packet = 0;
  qp.rare().read_jobs.push_back(job);
  ++qp.resp.busy;
  tx_.activate(sim, qp);
}

bool Responder::can_build(const Qp& qp) const {
  return qp.rare_state && !qp.rare_state->read_jobs.empty() && qp.state != verbs::QpState::error;
}

void Responder::build_packet(sim::Simulator& sim, PortState& port, Qp& qp) {
  sim::Ring<ReadJob>& jobs = qp.rare_state->read_jobs; // can_build
  ReadJob& job = jobs.front();
  const std::uint32_t i = job.next_packet;
  const std::uint32_t payload = std::min(qp.mtu, job.length - i * qp.mtu);
  const Opcode opcode = job.packets == 1       ? Opcode::rdma_read_response_only
                        : i == 0               ? Opcode::rdma_read_response_first
                        : i + 1 == job.packets ? Opcode::rdma_read_response_last
                                               : Opcode::rdma_read_response_middle;
  const link::PacketHandle packet =
      tx_.new_packet(qp, qp.attr.dest_lid, qp.attr.sl, opcode, payload, psn_add(job.first_psn, i), qp.attr.dest_qpn);
  TransportHeaders& h = core_.headers_of(packet);
  h.syndrome = static_cast<std::uint8_t>(Aeth::ack);
  h.msn = qp.resp.msn;

  const TxHandle th = tx_.new_entry();
  TxEntry& entry = tx_.entry(th);
  entry.packet = packet;
  entry.qp_index = qp.index;
  entry.generation = qp.req.tx_generation;
  entry.payload_bytes = payload;
  // A READ response is a send job the responder makes for itself: the engine parses it as it would a WQE, then
  // builds each packet.
  if (i == 0) {
    entry.ready_at = send_engines_.build_first_response(sim.now(), qp.index, qp.req.tx_busy);
  } else {
    entry.ready_at = send_engines_.build_headers(sim.now(), qp.index, qp.req.tx_busy);
  }
  entry.payload_in = payload == 0;
  tx_.queue(sim, port, th, job.address + std::uint64_t{i} * qp.mtu);
  if (++job.next_packet == job.packets) {
    jobs.pop_front();
    --qp.resp.busy;
  }
}

void Responder::start_atomic(sim::Simulator& sim, Qp& qp, link::PacketHandle request) {
  const TransportHeaders& h = core_.headers_of(request);
  if (!core_.memory.contains(h.remote_address, 8) || h.remote_address % 8 != 0) {
    send_ack(sim, qp, Aeth::nak_remote_access, core_.wire.packets[request].psn);
    consume_packet(sim, request);
    return;
  }
  ++qp.resp.busy;
  atomics_.start(sim, qp.index, request, h.remote_address);
}

void Responder::on_atomic_write_done(sim::Simulator& sim, DmaHandle h) {
  // The atomic unit's read-modify-write is done: answer, and let the next atomic on this bucket go.
  DmaOp& op = core_.ops[h];
  Qp& qp = core_.qps[op.qp];
  const link::Packet& request = core_.wire.packets[op.packet];
  const std::uint64_t original = core_.headers_of(op.packet).original;
  const std::uint32_t psn = request.psn;
  // Made on the QP's first atomic: most QPs never serve one, and with a million QPs their rings would weigh.
  QpRare& rare = qp.rare();
  if (rare.atomic_results.empty())
    rare.atomic_results.resize(std::max<std::uint32_t>(core_.params.max_qp_dest_rd_atom, 1));
  AtomicResult& slot = rare.atomic_results[rare.atomic_results_next++ % rare.atomic_results.size()];
  slot = {psn, original, true};
  consume_packet(sim, op.packet);
  op.packet = link::PacketHandle{};
  const std::uint32_t bucket = op.bucket; // the op itself goes when its write is visible
  --qp.resp.busy;
  const link::PacketHandle ack =
      tx_.new_packet(qp, qp.attr.dest_lid, qp.attr.sl, Opcode::atomic_acknowledge, 0, psn, qp.attr.dest_qpn);
  TransportHeaders& ah = core_.headers_of(ack);
  ah.syndrome = static_cast<std::uint8_t>(Aeth::ack);
  ah.msn = qp.resp.msn;
  ah.original = original;
  tx_.send_control(sim, qp, ack);
  atomics_.release(sim, bucket);
}

void Responder::flush(sim::Simulator& sim, Qp& qp) {
  // Receive WQEs: the one a message is being placed into, those claimed by accepted messages, and (for the QP's own
  // queue) every other posted one are flushed; an SRQ keeps its unclaimed WQEs for its other QPs.
  const auto flush_recv = [&](std::uint32_t k) {
    verbs::WorkCompletion wc;
    wc.wr_id = recv_.wqe(qp.resp.rq, k).wr_id;
    wc.status = verbs::WcStatus::wr_flush_err;
    wc.opcode = verbs::WcOpcode::recv;
    wc.qp_num = qp.qpn;
    completions_.write(sim, qp.recv_cq, wc, qp.index, k, false);
    ++qp.rare().counters.error_completions;
  };
  if (qp.resp.in_message && qp.resp.recv_in_use)
    flush_recv(qp.resp.recv_index);
  for (; qp.resp.has_claims(); qp.resp.waits->claims.pop_front())
    flush_recv(qp.resp.waits->claims.front());
  recv_.flush_unclaimed(qp.resp.rq, flush_recv);
  qp.resp.in_message = false;
  qp.resp.recv_in_use = false;
  for (; qp.resp.has_parked(); qp.resp.waits->parked.pop_front())
    consume_packet(sim, qp.resp.waits->parked.front());
  if (!qp.rare_state)
    return;
  for (const ReorderHold::Held& h : qp.rare_state->early.packets)
    consume_packet(sim, h.packet);
  qp.rare_state->early.packets.clear();
}

} // namespace ib::hca
