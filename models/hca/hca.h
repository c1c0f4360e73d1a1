// A host channel adapter (docs/models/hca.md): queue pairs whose queues live in host memory, reached through the PCIe
// bus (models/pcie/bus.h), and IB ports (models/link/port.h) into the fabric. Every step is a transaction of the models
// underneath:
//   post_send  the driver writes WQEs into the send queue in host memory, then rings the doorbell (an 8-byte MMIO
//              write) or, for a single small WQE, copies it through BlueFlame (64-byte write-combined MMIO);
//   fetch      after a doorbell the QP's send engine reads the new WQEs by one DMA read per contiguous range;
//   packets    the port's packet builder takes QPs round robin, builds one packet per turn at the path MTU and
//              fetches its payload by DMA read unless it was inlined; packets leave in build order when their
//              payload is in and the link has credits;
//   responder  received packets are checked by the QP's receive engine; payloads go to host memory by DMA
//              write (the IB receive buffer frees when the write has left the HCA); a SEND takes its RECV WQE
//              from the receive queue's cache on the HCA, which reads WQEs ahead in batches and misses (one DMA
//              read on the message's path) only when the program posted too late or the cache ran dry; the
//              queue is the QP's own or a shared one (SRQ); READs are answered with packets whose payload is read from
//              host memory; atomics are a DMA read and write under a lock on the address's bucket;
//   completion RC requests complete on ACK or response, UC and UD ones when their last packet has left; a CQE is
//              built and written to the CQ in host memory by DMA write; the program sees it when it is visible.
// RC recovers losses with go-back-N (sequence NAKs and the retry timer, limited by retry_cnt) and waits out RNR
// NAKs (rnr_retry); a QP that exhausts them goes to the error state and flushes its work requests.
// Left out: multiple scatter/gather entries, memory registration keys and their checks beyond bounds, GRH/global
// routing, APM, and multicast. The code is the pipeline's stages behind this face (docs/models/hca.md, "Code
// structure").
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "models/hca/params.h"
#include "models/hca/verbs.h"
#include "models/link/congestion.h"
#include "models/link/link.h"
#include "models/link/packet.h"
#include "models/link/port.h"
#include "models/pcie/bus.h"
#include "models/pcie/host_memory.h"
#include "models/pcie/params.h"
#include "sim/host_runtime.h"
#include "sim/pool.h"
#include "sim/simulator.h"
#include "sim/stable_vector.h"
#include "sim/trace.h"

namespace ib::hca {

/// The extension headers of one packet (IBA vol 1 §9.3) and, in verification mode, its payload bytes.
struct TransportHeaders {
  std::uint64_t remote_address = 0;  ///< RETH.VA
  std::uint32_t dma_length = 0;      ///< RETH.DMALength
  std::uint32_t immediate = 0;       ///< ImmDt
  std::uint64_t compare_add = 0;     ///< AtomicETH
  std::uint64_t swap = 0;            ///< AtomicETH
  std::uint64_t original = 0;        ///< AtomicAckETH
  std::uint32_t src_qpn = 0;         ///< DETH
  std::uint32_t qkey = 0;            ///< DETH
  std::uint32_t msn = 0;             ///< AETH
  std::uint8_t syndrome = 0;         ///< AETH: Aeth below
  std::uint8_t nak_timer = 0;        ///< AETH of an RNR NAK: the encoded wait
  std::vector<std::uint8_t> payload; ///< verification mode only
};

/// AETH syndromes (IBA vol 1 §9.7.5.2.1), the ones the model sends.
enum class Aeth : std::uint8_t { ack, rnr_nak, nak_sequence, nak_invalid_request, nak_remote_access };

/// What travels between HCAs: packets and their extension headers. The composer owns one for the fabric.
struct Wire {
  link::PacketPool& packets;
  sim::Pool<TransportHeaders> headers;
  explicit Wire(link::PacketPool& pool) : packets(pool) {}
};

/// The microseconds an encoded RNR NAK timer stands for (IBA vol 1 Table 45); 0 encodes 655.36 ms.
sim::Time rnr_timer_duration(std::uint8_t encoded);
/// Bytes of a send WQE in the mlx5 layout: control segment, address or datagram segment, data or inline segment,
/// rounded up to basic blocks.
std::uint32_t send_wqe_bytes(verbs::QpType type, const verbs::SendWr& wr, std::uint32_t basic_block_bytes);

/// Counters every busy QP moves: its traffic.
struct QpTrafficCounters {
  std::uint64_t messages_sent = 0, bytes_sent = 0, packets_sent = 0;
  std::uint64_t messages_received = 0, bytes_received = 0, packets_received = 0;
  /// RC SEND and WRITE work requests: posted, and completed successfully (QpEventCounters: in error).
  /// The responder's rc_messages_accepted must lie between completed and posted (exactly-once).
  std::uint64_t rc_requests_posted = 0, rc_requests_completed = 0;
  /// As responder: RC messages accepted in PSN order (each one MSN, acknowledged from then on); they are
  /// delivered (messages_received) once their payload is placed.
  std::uint64_t rc_messages_accepted = 0;
};

/// Counters of what most QPs never see: loss and recovery, errors, reordering, READs, congestion marks. The model
/// keeps them apart from the traffic counters, made on first use (docs/models/hca.md, "Memory per QP").
struct QpEventCounters {
  std::uint64_t retransmitted_packets = 0, timeouts = 0, sequence_naks_received = 0, rnr_naks_received = 0;
  std::uint64_t rnr_naks_sent = 0, sequence_naks_sent = 0, duplicates_received = 0, dropped = 0;
  std::uint64_t rc_requests_failed = 0; ///< RC SEND and WRITE work requests completed in error (flushes included)
  std::uint64_t error_completions = 0;  ///< send and receive work requests completed in error
  /// QpCaps::out_of_order: packets taken ahead of a missing PSN (requests, or READ responses), and the most held
  /// at once.
  std::uint64_t packets_out_of_order = 0;
  std::uint32_t reorder_depth_max = 0;
  std::uint32_t peak_reads_outstanding = 0; ///< most READs/atomics in flight at once as initiator
  /// Congestion control (IBA A10): requests that came marked FECN, and BECNs (ACK or CNP) that came back for it.
  std::uint64_t fecn_received = 0, becn_received = 0;
};

/// Counters of one QP. PCIe transactions are counted by purpose; the bus counts their TLPs.
struct QpCounters : QpTrafficCounters, QpEventCounters {};

/// An RC QP's connection: its QPN and where its requests go.
struct RcConnection {
  std::uint32_t qpn;
  std::uint16_t dest_lid;
  std::uint32_t dest_qpn;
};

/// PCIe transactions of an HCA by what they were for.
struct PcieCounters {
  std::uint64_t doorbells = 0, blueflame_writes = 0, blueflame_bytes = 0;
  std::uint64_t mmio_bytes = 0; ///< what the CPU stored: doorbell records and BlueFlame WQEs
  std::uint64_t wqe_fetches = 0, wqe_fetch_bytes = 0;
  std::uint64_t payload_reads = 0, payload_read_bytes = 0;   ///< requester payload and READ responder data
  std::uint64_t payload_writes = 0, payload_write_bytes = 0; ///< received payload and READ response data
  std::uint64_t recv_wqe_fetches = 0;                        ///< DMA reads of receive WQEs (each a batch)
  std::uint64_t recv_wqes_fetched = 0;                       ///< receive WQEs they brought
  std::uint64_t recv_wqe_misses = 0; ///< messages that found their receive WQE not yet on the HCA
  std::uint64_t cqe_writes = 0;
  std::uint64_t atomic_reads = 0, atomic_writes = 0;
  std::uint64_t qp_context_reads = 0; ///< QP-context cache misses, each a DMA read of the context
};

/// Congestion control on this CA (IBA A10, docs/models/congestion-control.md): the SM's setting, what it counted, and
/// where BECNs are traced.
struct CongestionState {
  link::cc::CaSetting setting;
  link::cc::CaCounters counters;
  sim::Tracer* tracer = nullptr;
  std::uint32_t component_id = 0;
};

// The model's own state (hca_state.h) and its pipeline stages; not for other models.
struct Qp;
struct DmaOp;
using DmaHandle = sim::Handle<DmaOp>;

class Hca : public pcie::BusClient {
public:
  enum class Kind : std::uint8_t {
    packet_arrives = static_cast<std::uint8_t>(link::PortEventKind::packet_arrives),
    flow_control_arrives = static_cast<std::uint8_t>(link::PortEventKind::flow_control_arrives),
    flow_control_refresh = static_cast<std::uint8_t>(link::PortEventKind::flow_control_refresh),
    tx_done = link::first_node_event_kind, ///< handle = port index
    tx_wake,                               ///< handle = port index: the builder is free or a packet is ready
    doorbell_ready,                        ///< handle = DMA op of the doorbell
    wqe_processed,                         ///< handle = QP index: its next WQE is processed
    rx_processed,                          ///< handle = packet
    cqe_ready,                             ///< handle = DMA op of the CQE: built, its write may go
    retry_timer,                           ///< handle = QP index
    rnr_timer,                             ///< handle = QP index
    atomic_issue,                          ///< handle = DMA op of an atomic: the atomic unit is done with it
    cc_wake,    ///< handle = QP index: its congestion control hold is over (per QP; generation: the hold's)
    cc_sl_wake, ///< handle = port index x 16 + SL: that SL's hold is over (per SL; generation: the hold's)
    first_bus_kind,
  };
  static constexpr std::uint8_t kind_count = static_cast<std::uint8_t>(Kind::first_bus_kind) + pcie::Bus::kind_count;

  /// An HCA of `params` behind a bus of `bus`, in a host with `host` CPU costs and `memory`. Events go to `self`.
  Hca(const Params& params, const pcie::BusConfig& bus, const pcie::HostParams& host, sim::Target self,
      std::uint32_t component_id, Wire& wire, pcie::HostMemory& memory);
  ~Hca() override;
  Hca(const Hca&) = delete;
  Hca& operator=(const Hca&) = delete;

  // The fabric's face.
  link::Port& port(std::uint8_t number);
  void set_lid(std::uint8_t port_number, std::uint16_t lid);
  std::uint16_t lid(std::uint8_t port_number) const;
  /// SL→VL of a port's transmit side (default: SL modulo the port's data VLs).
  void set_sl_to_vl(std::uint8_t port_number, const std::array<std::uint8_t, 16>& table);
  void on_event(sim::Simulator& sim, const sim::Event& event);

  // The driver's face (what libibverbs and the mlx5 provider do on the CPU). Called by host programs at the
  // current instant; the CPU time they take is the caller's to charge (models/host).
  const Params& params() const { return params_; }
  const pcie::HostParams& host_params() const { return host_; }
  pcie::HostMemory& memory() { return memory_; }
  /// A CQ of `depth` entries in host memory; `signal` (may be null) is raised whenever a CQE becomes visible.
  std::uint32_t create_cq(std::uint32_t depth, sim::Signal* signal);
  /// A shared receive queue of `depth` WQEs (ibv_create_srq); its number, for QpCaps::srq and post_srq_recv.
  /// Throws std::invalid_argument for a depth beyond the device's.
  std::uint32_t create_srq(std::uint32_t depth);
  /// Arms the SRQ limit (ibv_modify_srq with IBV_SRQ_LIMIT): once fewer than `limit` WQEs remain posted and
  /// unclaimed, the limit event fires once (counted, and `signal` raised if given) and the limit disarms.
  void arm_srq_limit(std::uint32_t srq, std::uint32_t limit, sim::Signal* signal);
  std::uint64_t srq_limit_events(std::uint32_t srq) const;
  verbs::PostResult post_srq_recv(sim::Simulator& sim, std::uint32_t srq, std::span<const verbs::RecvWr> wrs);
  /// A QP in RESET; its QPN. Throws std::invalid_argument for caps beyond the device's.
  std::uint32_t create_qp(verbs::QpType type, const verbs::QpCaps& caps, std::uint32_t send_cq, std::uint32_t recv_cq);
  /// Moves a QP to `state` with `attr` (RESET→INIT→RTR→RTS, or →ERROR); "" or why the transition is invalid.
  std::string modify_qp(sim::Simulator& sim, std::uint32_t qpn, verbs::QpState state, const verbs::QpAttr& attr);
  verbs::QpState qp_state(std::uint32_t qpn) const;
  /// Writes the WRs' WQEs into the send queue and rings the doorbell (or BlueFlame); `mmio_stores` (if given)
  /// receives the CPU stores that took: 1 for a doorbell, the WQE's write-combining chunks for BlueFlame.
  verbs::PostResult post_send(sim::Simulator& sim, std::uint32_t qpn, std::span<const verbs::SendWr> wrs,
                              std::uint32_t* mmio_stores = nullptr);
  verbs::PostResult post_recv(sim::Simulator& sim, std::uint32_t qpn, std::span<const verbs::RecvWr> wrs);
  /// Counts the payload DMA writes covering `address` as they become visible in host memory, raising `signal` at
  /// each: how a program spinning on a buffer (ib_write_lat's iteration byte) sees data arrive. Returns its id.
  std::size_t watch_writes(std::uint64_t address, sim::Signal* signal) {
    watches_.push_back({address, 0, signal});
    return watches_.size() - 1;
  }
  std::uint64_t writes_seen(std::size_t watch) const { return watches_[watch].writes; }
  /// Takes up to out.size() visible CQEs; -1 if the CQ overran.
  int poll_cq(std::uint32_t cq, std::span<verbs::WorkCompletion> out);
  /// CQEs visible and not yet polled.
  std::uint32_t cq_ready(std::uint32_t cq) const;

  /// Congestion control as the SM configures it (IBA A10): this CA answers FECN with BECN (in the ACK, or a CNP
  /// for UC and UD), raises its QPs' (or SLs') CCTI on BECN and delays their request packets by the table's entry.
  void set_congestion_control(const link::cc::CaSetting& setting);
  const link::cc::CaCounters& congestion_counters() const { return cc_.counters; }

  // Observation.
  /// Traces PCIe transactions, packets sent by its ports and the programs' verbs calls to `tracer` (nullptr: off).
  void set_tracer(sim::Tracer* tracer);
  /// A program's verbs call on QP `qpn` as an instant on the trace (no-op without a tracer).
  void trace_program(const sim::Simulator& sim, std::uint32_t qpn, std::string_view what, const std::string& args);
  /// A tracer is set: trace_program() may record (callers skip building its arguments otherwise).
  bool traces_programs() const { return tracer_ != nullptr; }
  QpCounters qp_counters(std::uint32_t qpn) const;
  /// The traffic counters alone, by reference: the end-of-run check reads two QPs' for each of a million QPs.
  const QpTrafficCounters& qp_traffic_counters(std::uint32_t qpn) const;
  /// The counters of all its QPs added up (peak_reads_outstanding: the largest).
  QpCounters totals() const;
  const PcieCounters& pcie_counters() const { return pcie_; }
  const pcie::Bus& bus() const { return *bus_; }
  /// Lets the PCIe bus finish the deferred events due by `until` (pcie::Bus::settle): once the run has ended.
  void settle(sim::Simulator& sim, sim::Time until);
  std::uint32_t qp_count() const;
  /// The run is over and reported on: frees every QP's state and receive queue (as the programs' ibv_destroy_qp
  /// would), keeping what the reports read afterwards: totals() and qp_count(). With a million RC QPs this is most
  /// of a run's memory, and the report of their flows is built next. Nothing may reach a QP afterwards.
  void release_queue_pairs();
  /// Every RC QP that was connected (RTR or later), with its destination.
  std::vector<RcConnection> rc_connections() const;
  /// Bytes of SEND and WRITE payload this HCA placed in host memory as a responder, and requested ones it sent
  /// and had completed successfully: summed over a fabric, the two must agree.
  std::uint64_t responder_bytes_placed() const;
  std::uint64_t requester_bytes_completed() const;
  /// QPs that went to the error state (their partial messages make the two byte counts differ).
  std::uint32_t failed_qps() const;
  /// Test hook (fault injection): the next `count` data packets this HCA receives are dropped on arrival.
  void drop_next_received(std::uint32_t count);
  std::uint64_t packets_dropped_by_fault() const;
  /// Test hook: the next `count` requests this HCA receives arrive marked FECN, as a congested switch marks them.
  void mark_next_received_fecn(std::uint32_t count);
  /// Test hook: `count` times, a received packet other than an ACK is taken only after the one that arrives next
  /// (the reordering adaptive routing causes, at a chosen packet).
  void swap_next_received(std::uint32_t count);
  /// Every posted send WR completed (or flushed) and nothing left in flight on the HCA: "" or what is left.
  /// `peers_failed`: some QP elsewhere went to the error state, so packets held out of order behind a PSN its
  /// sender gave up on may stay held.
  std::string check_quiescent(bool peers_failed = false) const;

  // pcie::BusClient.
  void dma_read_done(sim::Simulator& sim, std::uint32_t token) override;
  void dma_write_done(sim::Simulator& sim, std::uint32_t token) override;
  void dma_write_visible(sim::Simulator& sim, std::uint32_t token) override;
  void mmio_arrived(sim::Simulator& sim, std::uint32_t token) override;

private:
  // hca.cpp: wiring, events, the routing of each finished transaction back to its stage.
  Qp& qp_by_qpn(std::uint32_t qpn);
  const Qp& qp_by_qpn(std::uint32_t qpn) const;
  void trace_op(const sim::Simulator& sim, const DmaOp& op);
  static constexpr std::uint32_t pcie_track = 1'000'000;    ///< trace threads: PCIe work per QP
  static constexpr std::uint32_t program_track = 2'000'000; ///< and the program's verbs calls per QP

  /// Its context is on the adapter: what waited for it goes on.
  void on_context_read(sim::Simulator& sim, Qp& qp);

  Params params_;
  pcie::HostParams host_;
  sim::Target self_;
  std::uint32_t component_id_;
  Wire& wire_;
  pcie::HostMemory& memory_;
  std::unique_ptr<pcie::Bus> bus_;
  sim::StableVector<Qp> qps_; ///< by index; grows in chunks without moving them (no copy at each doubling)
  /// Set by release_queue_pairs(): what totals() and qp_count() answer from then on.
  std::optional<QpCounters> released_totals_;
  std::uint32_t released_qp_count_ = 0;
  sim::Pool<DmaOp, 256> ops_; // per HCA: small chunks (see pcie::Bus)
  PcieCounters pcie_;
  CongestionState cc_;
  /// The pipeline's stages and the Core they share (the above, as they see it); defined in hca_state.h, so that this
  /// header shows none of them.
  struct Stages;
  std::unique_ptr<Stages> stages_;
  struct Watch {
    std::uint64_t address;
    std::uint64_t writes;
    sim::Signal* signal;
  };
  std::vector<Watch> watches_;
  sim::Tracer* tracer_ = nullptr;
};

} // namespace ib::hca
