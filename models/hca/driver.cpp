// The driver's side of the HCA (what libibverbs and the mlx5 provider do on the CPU): queues allocated in host
// memory, QP state transitions, WQEs written into the send queue followed by a doorbell or a BlueFlame copy,
// receive WQEs, and CQ polling that frees send-queue entries up to each completed WQE.
#include <algorithm>
#include <stdexcept>

#include "models/hca/hca.h"
#include "models/hca/hca_state.h"

namespace ib::hca {

std::uint32_t Hca::create_cq(std::uint32_t depth, sim::Signal* signal) {
  return stages_->completions.create_cq(depth, signal);
}

std::uint32_t Hca::create_qp(verbs::QpType type, const verbs::QpCaps& caps, std::uint32_t send_cq,
                             std::uint32_t recv_cq) {
  const bool own_rq = caps.srq == verbs::no_srq;
  if (caps.max_send_wr == 0 || caps.max_send_wr > params_.max_qp_wr ||
      (own_rq && (caps.max_recv_wr == 0 || caps.max_recv_wr > params_.max_qp_wr)))
    throw std::invalid_argument("queue depths must be 1.." + std::to_string(params_.max_qp_wr));
  if (!own_rq && caps.srq >= stages_->recv.srq_count())
    throw std::invalid_argument("no SRQ " + std::to_string(caps.srq));
  if (caps.max_inline_data > params_.max_inline_data_bytes)
    throw std::invalid_argument("max_inline_data above the device's " + std::to_string(params_.max_inline_data_bytes) +
                                " bytes");
  if (send_cq >= stages_->completions.cq_count() || recv_cq >= stages_->completions.cq_count())
    throw std::invalid_argument("no such CQ");
  if (caps.out_of_order && (type != verbs::QpType::rc || params_.out_of_order_window_packets == 0))
    throw std::invalid_argument(type != verbs::QpType::rc
                                    ? "out-of-order data placement is for RC QPs only"
                                    : "the device has no out-of-order data placement (out_of_order_window_packets 0)");
  Qp qp;
  qp.type = type;
  qp.index = static_cast<std::uint32_t>(qps_.size());
  qp.qpn = qp.index + 2; // QP0 and QP1 are the management QPs
  qp.caps = caps;
  qp.send_cq = send_cq;
  qp.recv_cq = recv_cq;
  // The send queue holds max_send_wr of its largest WQEs (mlx5 sizes it from max_inline_data the same way).
  verbs::SendWr largest;
  largest.opcode = verbs::WrOpcode::rdma_write;
  largest.inline_data = caps.max_inline_data > 0;
  largest.length_bytes = caps.max_inline_data;
  verbs::SendWr atomic;
  atomic.opcode = verbs::WrOpcode::atomic_cmp_and_swp;
  atomic.length_bytes = 8;
  const std::uint32_t block = params_.wqe_basic_block_bytes;
  const std::uint32_t wqe_max = std::max(send_wqe_bytes(type, largest, block), send_wqe_bytes(type, atomic, block));
  qp.sq.bytes = caps.max_send_wr * wqe_max;
  qp.sq.address = memory_.allocate(qp.sq.bytes);
  qp.resp.rq = own_rq ? ReceiveQueues::not_made : stages_->recv.attach(caps.srq, qp.index);
  stages_->contexts.create(qp.index);
  qps_.push_back(std::move(qp));
  return qps_.back().qpn;
}

std::uint32_t Hca::create_srq(std::uint32_t depth) {
  return stages_->recv.create_srq(depth);
}

void Hca::arm_srq_limit(std::uint32_t srq, std::uint32_t limit, sim::Signal* signal) {
  stages_->recv.arm_srq_limit(srq, limit, signal);
}

std::uint64_t Hca::srq_limit_events(std::uint32_t srq) const {
  return stages_->recv.srq_limit_events(srq);
}

verbs::QpState Hca::qp_state(std::uint32_t qpn) const {
  return qp_by_qpn(qpn).state;
}

std::string Hca::modify_qp(sim::Simulator& sim, std::uint32_t qpn, verbs::QpState state, const verbs::QpAttr& attr) {
  Qp* found = stages_->core.find_qp(qpn);
  if (found == nullptr)
    return "no QP " + std::to_string(qpn);
  Qp& qp = *found;
  using S = verbs::QpState;
  if (state == S::error) {
    stages_->requester.fail_qp(sim, qp, verbs::WcStatus::wr_flush_err);
    return "";
  }
  const bool connected = qp.type != verbs::QpType::ud;
  switch (state) {
  case S::init:
    if (qp.state != S::reset)
      return "INIT: expected a QP in RESET";
    if (attr.port < 1 || attr.port > stages_->tx.ports().size())
      return "INIT: port " + std::to_string(attr.port) + " does not exist";
    qp.attr.port = attr.port;
    qp.attr.qkey = attr.qkey;
    break;
  case S::rtr:
    if (qp.state != S::init)
      return "RTR: expected a QP in INIT";
    if (connected && attr.dest_lid == 0)
      return "RTR: dest_lid must be set";
    if (static_cast<std::uint32_t>(attr.path_mtu) > 4096 || static_cast<std::uint32_t>(attr.path_mtu) < 256)
      return "RTR: path_mtu must be 256..4096";
    if (attr.max_dest_rd_atomic > params_.max_qp_dest_rd_atom)
      return "RTR: max_dest_rd_atomic above the device's " + std::to_string(params_.max_qp_dest_rd_atom);
    qp.attr.dest_lid = attr.dest_lid;
    qp.attr.dest_qpn = attr.dest_qpn;
    qp.attr.sl = attr.sl;
    qp.attr.path_mtu = attr.path_mtu;
    qp.attr.rq_psn = attr.rq_psn & psn_mask;
    qp.attr.min_rnr_timer = attr.min_rnr_timer;
    qp.attr.max_dest_rd_atomic = attr.max_dest_rd_atomic;
    qp.mtu = static_cast<std::uint32_t>(attr.path_mtu);
    qp.resp.expected_psn = qp.attr.rq_psn;
    break;
  case S::rts:
    if (qp.state != S::rtr)
      return "RTS: expected a QP in RTR";
    if (attr.max_rd_atomic > params_.max_qp_rd_atom)
      return "RTS: max_rd_atomic above the device's " + std::to_string(params_.max_qp_rd_atom);
    if (attr.retry_cnt > 7 || attr.rnr_retry > 7 || attr.timeout > 31)
      return "RTS: retry_cnt and rnr_retry are 0..7, timeout 0..31";
    qp.attr.sq_psn = attr.sq_psn & psn_mask;
    qp.attr.timeout = attr.timeout;
    qp.attr.retry_cnt = attr.retry_cnt;
    qp.attr.rnr_retry = attr.rnr_retry;
    qp.attr.max_rd_atomic = std::max<std::uint8_t>(attr.max_rd_atomic, 1);
    qp.req.next_psn = qp.attr.sq_psn;
    qp.req.acked_psn = qp.req.highest_sent_psn = psn_add(qp.attr.sq_psn, psn_mask);
    qp.req.retries_left = attr.retry_cnt;
    qp.req.rnr_retries_left = attr.rnr_retry;
    break;
  case S::reset:
    return "RESET: not supported after creation";
  case S::error:
    break;
  }
  qp.state = state;
  return "";
}

verbs::PostResult Hca::post_send(sim::Simulator& sim, std::uint32_t qpn, std::span<const verbs::SendWr> wrs,
                                 std::uint32_t* mmio_stores) {
  if (mmio_stores != nullptr)
    *mmio_stores = 0;
  Qp& qp = qp_by_qpn(qpn);
  if (qp.state != verbs::QpState::rts)
    return {verbs::PostError::invalid_state, 0};
  const std::uint32_t depth = qp.caps.max_send_wr;
  std::uint32_t posted = 0;
  verbs::PostResult result;
  std::uint32_t last_wqe_bytes = 0;
  for (const verbs::SendWr& wr : wrs) {
    using Op = verbs::WrOpcode;
    const bool atomic = wr.opcode == Op::atomic_cmp_and_swp || wr.opcode == Op::atomic_fetch_and_add;
    const bool valid_opcode =
        qp.type == verbs::QpType::rc || (qp.type == verbs::QpType::uc && wr.opcode != Op::rdma_read && !atomic) ||
        (qp.type == verbs::QpType::ud && (wr.opcode == Op::send || wr.opcode == Op::send_with_imm));
    const bool bad = !valid_opcode || (wr.inline_data && wr.length_bytes > qp.caps.max_inline_data) ||
                     (wr.inline_data && (wr.opcode == Op::rdma_read || atomic)) || (atomic && wr.length_bytes != 8) ||
                     (qp.type == verbs::QpType::ud && (wr.length_bytes > qp.mtu || wr.ah.dlid == 0));
    if (bad) {
      result = {verbs::PostError::invalid_wr, posted};
      break;
    }
    if (qp.sq.posted - qp.sq.freed >= depth) {
      result = {verbs::PostError::queue_full, posted};
      break;
    }
    qp.sq.slots.make_room(qp.sq.freed, qp.sq.posted);
    SendSlot& slot = qp.sq.slots[qp.sq.posted];
    slot.wr = wr;
    slot.wqe_bytes = send_wqe_bytes(qp.type, wr, params_.wqe_basic_block_bytes);
    if (qp.sq.byte_cursor + slot.wqe_bytes > qp.sq.bytes)
      qp.sq.byte_cursor = 0; // the driver pads to the ring's end with a NOP
    slot.address = qp.sq.address + qp.sq.byte_cursor;
    qp.sq.byte_cursor += slot.wqe_bytes;
    if (memory_.keeps_contents()) {
      sim::SequenceRing<std::vector<std::uint8_t>>& payloads = qp.rare().inline_payloads;
      payloads.make_room(qp.sq.freed, qp.sq.posted);
      std::vector<std::uint8_t>& bytes = payloads[qp.sq.posted];
      bytes.clear();
      if (wr.inline_data) {
        bytes.resize(wr.length_bytes);
        memory_.read(wr.local_address, bytes);
      }
    }
    last_wqe_bytes = slot.wqe_bytes;
    ++qp.sq.posted;
    if (qp.type == verbs::QpType::rc && wr.opcode != verbs::WrOpcode::rdma_read &&
        wr.opcode != verbs::WrOpcode::atomic_cmp_and_swp && wr.opcode != verbs::WrOpcode::atomic_fetch_and_add)
      ++qp.counters.rc_requests_posted;
    ++posted;
  }
  if (posted == 0)
    return result;
  // One doorbell per post: BlueFlame copies a lone small WQE through write-combining MMIO instead.
  const DmaHandle op = stages_->core.new_op(sim, Purpose::doorbell, qp.index);
  ops_[op].count = qp.sq.posted;
  const bool blueflame = qp.caps.blueflame && posted == 1 && last_wqe_bytes <= params_.blueflame_buffer_bytes;
  ops_[op].blueflame = blueflame;
  if (blueflame) {
    ++pcie_.blueflame_writes;
    pcie_.blueflame_bytes += last_wqe_bytes;
    pcie_.mmio_bytes += last_wqe_bytes;
    bus_->mmio_write(sim, last_wqe_bytes, host_.write_combining_bytes, op.value);
    if (mmio_stores != nullptr)
      *mmio_stores = (last_wqe_bytes + host_.write_combining_bytes - 1) / host_.write_combining_bytes;
  } else {
    if (mmio_stores != nullptr)
      *mmio_stores = 1;
    ++pcie_.doorbells;
    pcie_.mmio_bytes += host_.mmio_doorbell_bytes;
    bus_->mmio_write(sim, host_.mmio_doorbell_bytes, host_.mmio_doorbell_bytes, op.value);
  }
  return result;
}

verbs::PostResult Hca::post_recv(sim::Simulator& sim, std::uint32_t qpn, std::span<const verbs::RecvWr> wrs) {
  (void)sim;
  Qp& qp = qp_by_qpn(qpn);
  if (qp.state == verbs::QpState::reset || qp.state == verbs::QpState::error ||
      stages_->recv.shared(qp.resp.rq)) // a QP on an SRQ has no receive queue of its own (EINVAL)
    return {verbs::PostError::invalid_state, 0};
  if (qp.resp.rq == ReceiveQueues::not_made)
    qp.resp.rq = stages_->recv.create(qp.caps.max_recv_wr, qp.index);
  return stages_->recv.post(qp.resp.rq, wrs);
}

verbs::PostResult Hca::post_srq_recv(sim::Simulator& sim, std::uint32_t srq, std::span<const verbs::RecvWr> wrs) {
  (void)sim;
  return stages_->recv.post(stages_->recv.srq_queue(srq), wrs);
}

int Hca::poll_cq(std::uint32_t cq, std::span<verbs::WorkCompletion> out) {
  return stages_->completions.poll(cq, out, [this](const CqEntry& e) {
    Qp& qp = qps_[e.qp_index];
    // A completion frees its WQE and every unsignaled one before it.
    if (e.is_send)
      qp.sq.freed = std::max(qp.sq.freed, e.wqe_index + 1);
    else
      stages_->recv.complete(qp.resp.rq, e.wqe_index);
  });
}

std::uint32_t Hca::cq_ready(std::uint32_t cq) const {
  return stages_->completions.ready(cq);
}

} // namespace ib::hca
