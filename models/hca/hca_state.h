// The HCA's private state, shared by its implementation files: the QPs' per-stage state, the DMA transactions, and
// the stages as the Hca holds them. Not part of the model's public interface.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/hca/atomic_unit.h"
#include "models/hca/completion_writer.h"
#include "models/hca/core.h"
#include "models/hca/engines.h"
#include "models/hca/hca.h"
#include "models/hca/qp_contexts.h"
#include "models/hca/receive_queues.h"
#include "models/hca/requester.h"
#include "models/hca/responder.h"
#include "models/hca/transmitter.h"
#include "sim/ring.h"
#include "sim/sequence_ring.h"

namespace ib::hca {

inline constexpr std::uint32_t psn_mask = 0xffffff;
inline std::uint32_t psn_add(std::uint32_t psn, std::uint32_t n) {
  return (psn + n) & psn_mask;
}
/// a - b in PSN space, as a signed distance within half the 24-bit space (IBA vol 1 §9.7.1).
inline std::int32_t psn_diff(std::uint32_t a, std::uint32_t b) {
  const std::uint32_t d = (a - b) & psn_mask;
  return d >= 0x800000 ? static_cast<std::int32_t>(d) - 0x1000000 : static_cast<std::int32_t>(d);
}

/// What a DMA or MMIO transaction is for; the bus hands its token back when it is done.
enum class Purpose : std::uint8_t {
  doorbell,       ///< MMIO: doorbell or BlueFlame
  wqe_fetch,      ///< read of send WQEs
  payload_read,   ///< read of a packet's payload (request data, or READ response data at the responder)
  recv_wqe_fetch, ///< read of a receive WQE
  place_payload,  ///< write of a received SEND or WRITE packet's payload
  place_response, ///< write of READ response data at the requester
  place_atomic,   ///< write of an atomic's original value at the requester
  cqe_write,      ///< write of a CQE
  atomic_read,    ///< responder: the read of a read-modify-write
  atomic_write,   ///< responder: the write of a read-modify-write
  qp_context,     ///< read of a QP context missing from the on-chip cache
};

/// The HCA's transport state of one send WQE once fetched.
struct WqeState {
  std::uint32_t first_psn = 0;
  std::uint32_t psn_count = 1;    ///< PSNs the message uses (READ: its response packets)
  std::uint32_t packets = 1;      ///< request packets it sends
  std::uint32_t responses_in = 0; ///< READ: response packets received in order
  bool blueflame = false;         ///< arrived with its doorbell
  bool done = false;              ///< acknowledged or responded
  bool counted_read = false;      ///< a READ/atomic request of it is outstanding (counts against initiator depth)
  verbs::WcStatus status = verbs::WcStatus::success;
};

/// One send queue entry: the WQE as the driver wrote it in host memory, and the HCA's transport state of it. One
/// allocation for both: a run may hold a million queues (docs/performance.md, "Memory of big runs").
struct SendSlot {
  verbs::SendWr wr;
  std::uint64_t address = 0;
  std::uint32_t wqe_bytes = 0;
  WqeState wqe;
};

struct AtomicResult {
  std::uint32_t psn = 0;
  std::uint64_t original = 0;
  bool valid = false;
};

struct ReadJob {
  std::uint32_t first_psn;
  std::uint64_t address; ///< responder memory
  std::uint32_t length;
  std::uint32_t packets;
  std::uint32_t next_packet; ///< packets built so far
};

/// A send queue: its ring in host memory as the driver writes it, and how far the adapter has read it.
struct SendQueue {
  std::uint64_t address = 0;
  std::uint32_t bytes = 0;             ///< ring size
  std::uint32_t byte_cursor = 0;       ///< where the next WQE goes
  sim::SequenceRing<SendSlot> slots;   ///< by WQE index; room for the posted and not yet freed ones
  std::uint32_t posted = 0, freed = 0; ///< driver: WQEs written, and freed by polled completions
  // Device side.
  std::uint32_t doorbell_producer = 0; ///< the latest producer index a doorbell announced
  std::uint32_t fetched = 0;           ///< WQEs on the HCA (fetched or arrived by BlueFlame)
  bool fetching = false;
};

/// Packets an out-of-order QP (QpCaps::out_of_order) took ahead of a missing PSN: the responder's requests, or the
/// requester's READ responses. Their link buffer is free at once (the adapter keeps them on chip); they are processed
/// as if they had just arrived once the gap before them closes.
struct ReorderHold {
  struct Held {
    std::uint32_t psn;
    link::PacketHandle packet;
  };
  std::vector<Held> packets; ///< by PSN (distance from the oldest expected PSN; at most the window apart)
  bool empty() const { return packets.empty(); }
};

/// The requester's transport state (IBA vol 1 §9.7, the requester's side) and its place in the send pipeline.
/// Small fields are grouped against padding: a run may hold a million of these (docs/performance.md).
struct RequesterState {
  std::uint32_t processing = 0;    ///< WQEs handed to the send engines
  std::uint32_t processed = 0;     ///< WQEs the send engines have finished with
  std::uint32_t cursor_wqe = 0;    ///< next request packet: its WQE ...
  std::uint32_t cursor_packet = 0; ///< ... and its packet within the message
  std::uint32_t next_psn = 0;
  std::uint32_t highest_sent_psn = 0;  ///< last PSN sent (RC)
  std::uint32_t acked_psn = 0;         ///< last PSN acknowledged
  std::uint32_t uncompleted = 0;       ///< WQEs before this one have completed
  std::uint32_t reads_outstanding = 0; ///< READ/atomic requests sent and not answered
  std::uint32_t rnr_resume_psn = 0;
  std::uint32_t tx_generation = 0; ///< bumped on rewind: packets built before are discarded unsent
  std::uint8_t retries_left = 7, rnr_retries_left = 7;
  bool on_engine = false; ///< one of its WQEs is being processed on the send engines now
  bool retry_timer_pending = false;
  bool rnr_waiting = false;
  bool active = false;  ///< in its port's builder ring
  bool cc_held = false; ///< out of the builder ring until its congestion control flow's wake
  sim::Time retry_deadline = sim::Time::max();
  sim::Time tx_busy;          ///< its last work item on the send engines ends here
  std::unique_ptr<CcFlow> cc; ///< congestion control per QP, made when first needed (Transmitter::cc_flow)
};

/// A responder's messages that wait on RECV WQEs (SEND, UD), in arrival order.
struct RecvWaits {
  sim::Ring<std::uint32_t> claims;      ///< RECV WQE indices its accepted messages claimed, not yet placed
  sim::Ring<link::PacketHandle> parked; ///< received packets waiting for their RECV WQE
};

/// The responder's state (IBA vol 1 §9.7, the responder's side): PSN checks, the message being placed, the RECV
/// WQEs its messages claimed, and the READs and atomics it serves. Small fields grouped, as in RequesterState.
struct ResponderState {
  std::uint32_t expected_psn = 0;
  std::uint32_t msn = 0;
  std::uint32_t rq = 0; ///< its receive queue (ReceiveQueues): its own (not_made before its first post) or an SRQ
  std::uint32_t recv_index = 0; ///< the RECV WQE the current message is placed into, if recv_in_use
  std::uint32_t message_offset = 0;
  std::uint32_t write_length = 0;
  std::uint32_t busy = 0; ///< READs and atomics being served
  bool nak_sent = false;
  bool in_message = false;     ///< a multi-packet SEND or WRITE is being received
  bool message_failed = false; ///< UC: the current message lost a packet; drop until FIRST/ONLY
  bool recv_in_use = false;    ///< the current message uses a RECV WQE (a SEND between its first and last packet)
  std::uint64_t write_address = 0;
  sim::Time rx_busy; ///< its last packet on the receive engines is checked here
  /// What waits on RECV WQEs; null until the first message that consumes one (a WRITE-only QP never makes it).
  std::unique_ptr<RecvWaits> waits;

  RecvWaits& recv_waits() {
    if (!waits) [[unlikely]]
      waits = std::make_unique<RecvWaits>();
    return *waits;
  }
  bool has_parked() const { return waits && !waits->parked.empty(); }
  bool has_claims() const { return waits && !waits->claims.empty(); }
};

/// What a QP needs only once something most QPs never see happens to it: loss, an error, a packet out of order, a
/// READ or atomic to serve, a congestion mark. Made on first need (Qp::rare), so that a run's million quiet QPs
/// do not carry it (docs/models/hca.md, "Memory per QP").
struct QpRare {
  QpEventCounters counters;
  ReorderHold early;                        ///< responder, QpCaps::out_of_order: requests ahead of expected_psn
  ReorderHold early_responses;              ///< requester, QpCaps::out_of_order: READ responses ahead of a missing one
  sim::Ring<ReadJob> read_jobs;             ///< responder: READs being answered
  std::vector<AtomicResult> atomic_results; ///< responder: the last max_qp_dest_rd_atom atomics' results
  std::uint32_t atomic_results_next = 0;
  /// Verification mode: the data copied into inline WQEs at post time, by WQE index beside SendQueue::slots.
  sim::SequenceRing<std::vector<std::uint8_t>> inline_payloads;
};

/// A QP: what the driver set up, its send queue, and the adapter's requester and responder state for it.
struct Qp {
  verbs::QpType type = verbs::QpType::rc;
  verbs::QpState state = verbs::QpState::reset;
  std::uint32_t qpn = 0;
  std::uint32_t index = 0;
  verbs::QpCaps caps;
  verbs::QpAttr attr;
  std::uint32_t send_cq = 0, recv_cq = 0;
  std::uint32_t mtu = 4096;

  SendQueue sq;
  RequesterState req;
  ResponderState resp;

  // What waits for its context to be read (QpContexts).
  std::uint32_t wqes_waiting = 0;           ///< WQEs fetched, not yet handed to the send engines
  sim::Ring<link::PacketHandle> rx_waiting; ///< packets arrived

  QpTrafficCounters counters;
  std::unique_ptr<QpRare> rare_state; ///< null until rare() is first called

  /// Its rare state, made now if it has none (QpRare).
  QpRare& rare() {
    if (!rare_state) [[unlikely]]
      rare_state = std::make_unique<QpRare>();
    return *rare_state;
  }
  /// Packets held out of order, as responder or requester.
  bool holds_early() const {
    return rare_state && (!rare_state->early.empty() || !rare_state->early_responses.empty());
  }
};

struct DmaOp {
  Purpose purpose = Purpose::doorbell;
  std::uint32_t qp = 0;
  std::uint32_t count = 0; ///< WQEs fetched; doorbell: the producer index it announces
  std::uint32_t port = 0;
  link::PacketHandle packet; ///< the packet whose payload moves, or the atomic request
  TxHandle tx;               ///< payload_read
  std::uint64_t address = 0;
  std::uint32_t bytes = 0;
  std::uint32_t bucket = 0; ///< atomics
  bool blueflame = false;
  sim::Time issued; ///< when the transaction started, for traces
  CqEntry cqe;
};

inline Qp* Core::find_qp(std::uint32_t qpn) {
  const std::uint32_t index = qpn - 2; // QP0 and QP1 are the management QPs
  return qpn >= 2 && index < qps.size() ? &qps[index] : nullptr;
}

inline DmaHandle Core::new_op(const sim::Simulator& sim, Purpose purpose, std::uint32_t qp) {
  const DmaHandle h = ops.acquire();
  DmaOp& op = ops[h];
  op.purpose = purpose;
  op.qp = qp;
  op.issued = sim.now();
  return h;
}

inline TransportHeaders& Core::headers_of(link::PacketHandle packet) {
  return wire.headers[sim::Handle<TransportHeaders>{wire.packets[packet].transport_headers}];
}

inline void Core::free_packet(link::PacketHandle packet) {
  wire.headers.release(sim::Handle<TransportHeaders>{wire.packets[packet].transport_headers});
  wire.packets.release(packet);
}

/// The pipeline's stages (docs/models/hca.md, "Code structure"), each wired to the ones it calls.
struct Hca::Stages {
  Core core;
  QpContexts contexts;
  ReceiveQueues recv;
  AtomicUnit atomics;
  CompletionWriter completions;
  Transmitter tx;
  SendEngines send_engines; ///< the requester's, and the responder's for READ responses
  Requester requester;
  Responder responder;

  explicit Stages(const Core& shared)
      : core(shared), contexts(core), recv(core), atomics(core), completions(core), tx(core, requester, responder),
        send_engines(core.params, contexts), requester(core, contexts, send_engines, tx, completions, responder),
        responder(core, contexts, send_engines, tx, recv, atomics, completions, requester) {}
};

} // namespace ib::hca
