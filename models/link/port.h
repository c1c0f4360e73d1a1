// One end of a full-duplex IB link (IBA vol 1 ch. 7): the transmit side serializes packets at the link's data
// rate, delivers them to the peer after the cable's propagation delay, and holds per-VL credits (FCTBS/FCCL);
// the receive side holds per-VL buffers (ABR, free blocks) and sends flow-control packets back when buffers free
// and periodically while credit state changes. Flow-control packets are serialized like data, before it, and
// never interrupt a packet. VL15 is not flow-controlled. Which packet goes next (VL arbitration, crossbar) is the
// owning node's choice; the port carries out send() and tells the peer node through events.
// Faults (a scenario's "faults"): a link goes down, losing what is on the wire and in its receive buffers, and comes
// back with its credits re-initialised as link initialisation leaves them (ABR = FCTBS); a bit error rate corrupts
// whole packets, which the receiver drops on its CRC check, data and flow-control packets alike.
// Left out: link training's timing and the initial flow-control handshake (credits start as after it), symbol-level
// error detail, physical-layer delimiters and idles (the reference's convention), buffers shared across VLs.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/link/credit_flow.h"
#include "models/link/packet.h"
#include "models/link/vl_arbiter.h"
#include "sim/event.h"
#include "sim/ring.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "sim/time.h"
#include "sim/trace.h"

namespace ib::link {

/// VL slots a port keeps state for: data VLs 0..14 and the management VL 15.
inline constexpr int vl_slots = 16;

/// Event kinds a port schedules at its own node or at its peer's. Each node model reserves these values at the
/// start of its own `Kind` and hands such events to the port they name (port_of()).
enum class PortEventKind : std::uint8_t {
  packet_arrives = 0,       ///< a data packet at the receiving node (PortConfig::arrival_*); handle = packet
  flow_control_arrives = 1, ///< a flow-control packet reaches a port whose owner waits for credits; handle = port
  flow_control_refresh = 2, ///< the periodic flow-control timer of a port; handle = port number
};
/// Node models number their own event kinds from here.
inline constexpr std::uint8_t first_node_event_kind = 3;

/// One end's link-level configuration, from its node's profile.
struct PortConfig {
  std::uint32_t buffer_bytes;        ///< receive buffer of the port, split evenly over the operational data VLs
  std::uint8_t vl_cap;               ///< data VLs the port supports: 1, 2, 4, 8 or 15 (PortInfo.VLCap)
  std::uint32_t vl15_buffer_packets; ///< receive slots of VL15, which drops when full instead of using credits
  sim::Time flow_control_refresh;    ///< longest wait before an FC packet carries changed FCTBS/FCCL (IBA §7.9.4)
  /// When the owning node hears of an arriving packet: `arrival_delay` after its first bit (a cut-through switch:
  /// its port-to-port latency, at least the LRH's serialization) or after its last bit (`arrival_after_tail`:
  /// store-and-forward, or a sink). Folding the node's pipeline delay into the one arrival event saves an event
  /// per packet; the buffer space is taken then, which leaves every FCCL the same (ABR and free blocks move
  /// together), so the sender sees no difference.
  bool arrival_after_tail;
  sim::Time arrival_delay;
  /// PortXmitWait's tick in symbol times (one byte on one lane): PortSamplesControl.Tick + 1 (IBA §16.1.3.2).
  std::uint32_t xmit_wait_tick_symbols;
};

/// A flow-control packet on its way: when its last bit arrives, and the credit limit it carries. (It carries the
/// FCTBS too, which nothing here reads: absorb_flow_control() says why.)
struct FlowControlUpdate {
  sim::Time arrives_at;
  std::uint16_t fccl;
  std::uint8_t vl;
};

/// The flow-control packets travelling towards one port, oldest first. The link, not an event per packet, carries
/// them (STYLE rule 18): the receiving port takes those already arrived whenever it looks at its credits, and only
/// a port whose owner waits for credits gets an event when the next one lands. The two oldest wait inline, on the
/// line the port's credit checks read anyway, so that the peer writing one and the port reading it touch one line;
/// more (long cables, many VLs) queue behind them in a ring allocated on first need.
class FlowControlInbox {
public:
  bool empty() const { return near_size_ == 0; }
  std::uint32_t size() const { return near_size_ + (far_ ? far_->size() : 0); }
  /// Preconditions for front(), front_arrives_at(), pop_front(): !empty(); for [i]: i < size().
  sim::Time front_arrives_at() const { return near_at_[near_head_]; }
  FlowControlUpdate front() const { return near(near_head_); }
  FlowControlUpdate operator[](std::uint32_t i) const {
    return i < near_size_ ? near((near_head_ + i) % near_capacity) : (*far_)[i - near_size_];
  }
  void push_back(const FlowControlUpdate& update) {
    if (near_size_ < near_capacity && (!far_ || far_->empty())) {
      set_near((near_head_ + near_size_) % near_capacity, update);
      ++near_size_;
      return;
    }
    if (!far_)
      far_ = std::make_unique<sim::Ring<FlowControlUpdate>>();
    far_->push_back(update);
  }
  void pop_front() {
    near_head_ = static_cast<std::uint8_t>((near_head_ + 1) % near_capacity);
    --near_size_;
    if (far_ && !far_->empty()) { // the oldest stay inline: the far ring holds only what follows them
      set_near((near_head_ + near_size_) % near_capacity, far_->front());
      ++near_size_;
      far_->pop_front();
    }
  }

  bool owner_waiting = false; ///< the owner is blocked on credits and no arrival event is scheduled

private:
  static constexpr std::uint8_t near_capacity = 2;
  FlowControlUpdate near(std::uint32_t slot) const { return {near_at_[slot], near_fccl_[slot], near_vl_[slot]}; }
  void set_near(std::uint32_t slot, const FlowControlUpdate& update) {
    near_at_[slot] = update.arrives_at;
    near_fccl_[slot] = update.fccl;
    near_vl_[slot] = update.vl;
  }
  // The inline slots field by field, so that they and the bookkeeping take 40 bytes.
  std::array<sim::Time, near_capacity> near_at_{};
  std::unique_ptr<sim::Ring<FlowControlUpdate>> far_; ///< beyond the inline slots, in order
  std::array<std::uint16_t, near_capacity> near_fccl_{};
  std::array<std::uint8_t, near_capacity> near_vl_{};
  std::uint8_t near_head_ = 0;
  std::uint8_t near_size_ = 0;
};
static_assert(sizeof(FlowControlInbox) == 40, "an inbox leaves room on its line for the port's other credit state");

/// The physical link, the same for both directions.
struct LinkConfig {
  sim::Rate data_rate;         ///< after line coding (link_rate.h)
  sim::Time propagation_delay; ///< cable length times the cable's delay per metre, plus FEC latency (link_delay)
  std::uint32_t lanes = 4;     ///< link width: a symbol time is one byte on one lane (PortXmitWait's tick)
};

/// Counters of one port, under perfquery's names (PortCounters and PortXmitWait, IBA §16.1.3.5) in their units.
struct PortCounters {
  std::uint64_t xmit_data_words = 0;   ///< PortXmitData: 4-byte words sent (whole packets, LRH through VCRC)
  std::uint64_t rcv_data_words = 0;    ///< PortRcvData
  std::uint64_t xmit_pkts = 0;         ///< PortXmitPkts
  std::uint64_t rcv_pkts = 0;          ///< PortRcvPkts
  sim::Time xmit_wait;                 ///< data waited but none could be sent, as a duration
  std::uint64_t xmit_wait_ticks = 0;   ///< PortXmitWait: whole ticks of each such wait (xmit_wait_tick())
  std::uint64_t flow_control_pkts = 0; ///< flow-control packets sent
  std::uint64_t vl15_dropped = 0;      ///< VL15 packets dropped for lack of a receive slot
  std::array<std::uint64_t, vl_slots> xmit_data_words_by_vl{}; ///< 4-byte words sent per VL (IBA counts none)
  std::array<std::uint64_t, vl_slots> xmit_pkts_by_vl{};       ///< packets sent per VL
  std::array<std::uint64_t, 16> xmit_data_words_by_sl{};       ///< PortXmitDataSL (perfquery -X), per SL
  std::array<std::uint64_t, 16> rcv_data_words_by_sl{};        ///< PortRcvDataSL (perfquery -S)
  // Errors, which only faults cause.
  std::uint64_t link_downed = 0;             ///< LinkDownedCounter: times the link went down
  std::uint64_t symbol_errors = 0;           ///< SymbolErrorCounter: one per corrupted packet received
  std::uint64_t rcv_errors = 0;              ///< PortRcvErrors: packets received with a bad CRC, dropped
  std::uint64_t xmit_discards = 0;           ///< PortXmitDiscards: packets for this output dropped, its link down
  std::uint64_t rcv_switch_relay_errors = 0; ///< PortRcvSwitchRelayErrors: received, but no route for the DLID
  std::uint64_t lost_on_wire = 0;            ///< packets travelling towards this port when its link went down
  std::uint64_t lost_in_buffer = 0;          ///< packets in this port's receive buffer when its link went down
  std::uint64_t flow_control_lost = 0;       ///< flow-control packets to this port dropped on their CRC
  /// Packets this port lost, whatever the cause.
  std::uint64_t packets_lost() const {
    return rcv_errors + xmit_discards + rcv_switch_relay_errors + lost_on_wire + lost_in_buffer;
  }
};

/// What a node counts against one of its ports when it drops a packet there (PortCounters' error fields).
enum class Loss : std::uint8_t { xmit_discard, switch_relay, in_buffer };

class Port {
public:
  /// Binds the port to its node: events for it go to `owner` (whose component id names it in errors) with its
  /// port `number`. Called once by the fabric, before connect().
  void bind(sim::Target owner, std::uint32_t owner_component_id, std::uint8_t number, const PortConfig& config);

  /// Cabled and its link up: packets may be sent and received.
  bool connected() const { return tx_.connected; }
  /// Cabled but its link is down (a fault): it sends nothing, and what arrives is lost.
  bool down() const { return down_; }
  /// Every packet this port sends goes to `tracer` (nullptr: none) as a span from first to last bit.
  void set_tracer(sim::Tracer* tracer) {
    tracer_ = tracer;
    tx_.tracing = tracer != nullptr;
  }
  /// The component the port belongs to (its name in reports: simulator.component_name()).
  std::uint32_t owner_component_id() const { return owner_component_id_; }
  std::uint8_t number() const { return number_; }
  /// Operational data VLs after connect(): the largest of 1, 2, 4, 8, 15 both ends support.
  std::uint8_t data_vls() const { return tx_.data_vls; }
  const LinkConfig& link() const { return link_; }
  /// PortXmitWait's unit on this link: xmit_wait_tick_symbols byte times of one lane. After connect().
  sim::Time xmit_wait_tick() const { return xmit_wait_tick_; }
  /// Receive buffer of one data VL, in 64-byte blocks.
  std::uint32_t buffer_blocks_per_vl() const { return vls_[0].receiver.capacity_blocks(); }
  /// Blocks of data VL `vl`'s receive buffer now holding packets.
  std::uint32_t used_blocks(std::uint8_t vl) const { return vls_[vl].receiver.used_blocks(); }
  /// A snapshot of the counters (per-VL ones live beside each VL's credit state, where the hot path is).
  PortCounters counters() const;
  /// The owner dropped a packet at this port for `why`.
  void count_loss(Loss why);
  /// The owner gets a flow_control_arrives event now: an owner that keeps its own transmit queue (an HCA) looks
  /// at the port again, e.g. to drop what it holds for a link that went down.
  void wake_owner(sim::Simulator& sim) const {
    sim.schedule(sim.now(), owner_, static_cast<std::uint8_t>(PortEventKind::flow_control_arrives), number_);
  }
  /// The physical link went down again while the port was still down for data (trained, in Init, not yet made
  /// Active): LinkDownedCounter counts it all the same.
  void count_link_downed() { ++counters_.link_downed; }
  /// Packets this port sends are corrupted with the probability that one of their bits is wrong at
  /// `bit_error_rate` (0: none), drawn from `rng`; the receiver drops them on its CRC check.
  void set_bit_error_rate(double bit_error_rate, sim::Rng rng);
  /// The port's VL arbitration; the subnet manager may replace its tables with set_vl_arbitration().
  VlArbiter& arbiter() { return arbiter_; }
  void set_vl_arbitration(const VlArbConfig& config) { arbiter_ = VlArbiter(config); }

  /// Prefetch hints for the owner (Simulator::run_until): the lines an arrival on `vl`, and a send, touch first.
  void prefetch_receive(std::uint8_t vl) const { __builtin_prefetch(&vls_[vl % vl_slots]); }
  void prefetch_send() const {
    __builtin_prefetch(&tx_);
    __builtin_prefetch(&inbox_);
    arbiter_.prefetch();
  }

  // Transmit side.
  /// Whether a new data packet may start: the last one has left (pending FC packets go before it).
  bool may_start(sim::Time now) const { return tx_.data_busy_until <= now; }
  /// Whether the peer's advertised credits on `vl` cover a packet of `wire_bytes` (always true on VL15), after
  /// taking in the flow-control packets that have arrived by `now`.
  bool has_credits(sim::Time now, std::uint8_t vl, std::uint32_t wire_bytes) {
    if (vl == management_vl)
      return true;
    if (!inbox_.empty() && inbox_.front_arrives_at() <= now) // inline: usually none has
      absorb_flow_control(now);
    return vls_[vl].sender.may_send(blocks_for(wire_bytes));
  }
  /// Blocks the peer's buffer on data VL `vl` has free for this port now (its advertised credits), after taking in
  /// the flow-control packets that have arrived by `now`.
  std::uint32_t available_blocks(sim::Time now, std::uint8_t vl) {
    if (!inbox_.empty() && inbox_.front_arrives_at() <= now)
      absorb_flow_control(now);
    return vls_[vl].sender.available_blocks();
  }
  /// Sends `packet` on `vl`: pending FC packets first, then the packet, ending no earlier than
  /// `tail_available_at` (a cut-through switch cannot send bits it has not received). Schedules packet_arrives at
  /// the peer and returns when the last bit leaves, the owner's tx_done instant.
  /// Preconditions: may_start(now), has_credits(vl, wire_bytes).
  sim::Time send(sim::Simulator& sim, PacketPool& pool, PacketHandle packet, std::uint8_t vl,
                 sim::Time tail_available_at);
  /// The owner has data waiting that arbitration cannot send (no credits): counts toward xmit_wait until send(),
  /// and the owner gets a flow_control_arrives event when the next flow-control packet lands.
  void note_blocked(sim::Simulator& sim);
  /// The owner drops a packet of `wire_bytes` it held in this port's buffer on `vl` because the link went down:
  /// frees its blocks without telling the peer (link_up() re-initialises the credits).
  void discard_buffered(std::uint8_t vl, std::uint32_t wire_bytes);
  /// A flow-control packet waits for the port to be free (flush_flow_control() sends it).
  bool flow_control_waiting() const { return tx_.flow_control_pending != 0; }
  /// The owner has nothing to send now: pending FC packets go out.
  void flush_flow_control(sim::Simulator& sim) {
    if (tx_.flow_control_pending != 0) // usually nothing waits: keep the call cheap on every send and tx_done
      send_pending_flow_control(sim);
  }

  // Receive side.
  /// A packet_arrives event: the packet takes its blocks of the VL's buffer. Returns false when the packet is
  /// dropped, which the owner then frees: a VL15 packet with no free slot, a corrupted packet (its blocks are freed
  /// at once, as ABR's resynchronisation to FCTBS would), or any packet reaching a port whose link is down. Throws
  /// sim::InvariantViolation (credit-conservation) if a data VL is overrun.
  bool on_packet_arrives(sim::Simulator& sim, const Packet& packet);
  /// The node is done with a packet of `wire_bytes` on `vl` (forwarded or consumed): frees its blocks and sends
  /// the new FCCL to the peer.
  void release(sim::Simulator& sim, std::uint8_t vl, std::uint32_t wire_bytes);
  /// A flow_control_arrives event: takes in the flow-control packets that have arrived (absorb_flow_control).
  void on_flow_control_arrives(sim::Simulator& sim);
  /// A flow_control_refresh event.
  void on_flow_control_refresh(sim::Simulator& sim);

  /// The port number a port event is for (packet_arrives events carry it in the packet instead).
  static std::uint8_t port_of(const sim::Event& event);

  /// Credit conservation on every data VL from `tx` to its peer `rx` (both ends of one link, as the fabric owns
  /// them): "" when it holds. `quiescent` = no FC packet is in flight, so both views must agree exactly.
  friend std::string check_credit_conservation(const Port& tx, const Port& rx, bool quiescent);
  /// Wires `a` and `b` into one link: peers, operational VLs, per-VL buffers, default VL arbitration (OpenSM's)
  /// and the credits each side holds after link initialization. Throws std::invalid_argument if a buffer cannot
  /// hold one largest packet (the fabric reports it as an input error).
  friend void connect(Port& a, Port& b, const LinkConfig& link);
  /// The link of `a` and `b` goes down now (both ends leave LinkUp): what is on the wire is lost on arrival, flow-
  /// control packets in flight are lost, and neither end sends until link_up(). The owners drop what their buffers
  /// hold for or from these ports (discard_buffered(), count_loss()).
  friend void link_down(sim::Simulator& sim, Port& a, Port& b);
  /// The link comes back: credits as link initialisation leaves them (each receiver's ABR set to its sender's
  /// FCTBS, each sender holding the receiver's FCCL), and both owners get a flow_control_arrives event to send.
  friend void link_up(sim::Simulator& sim, Port& a, Port& b);

private:
  /// Applies every flow-control packet arrived by `now`: its FCCL becomes our credit limit.
  void absorb_flow_control(sim::Time now);
  /// Sends an FC packet for every VL in tx_.flow_control_pending, ahead of any data.
  void send_pending_flow_control(sim::Simulator& sim);
  std::string name(const sim::Simulator& sim, int vl) const;
  /// Schedules the flow-control refresh unless one is armed (the timer is off with a zero period).
  void arm_refresh(sim::Simulator& sim) {
    if (!tx_.refresh_armed)
      arm_refresh_timer(sim);
  }
  void arm_refresh_timer(sim::Simulator& sim);
  // Off the per-packet path: VL15's slots, an overrun (throws), faults, xmit_wait's bookkeeping, tracing.
  bool on_vl15_arrives(const Packet& packet);
  void release_vl15();
  /// A data packet the buffer cannot take: lost (false) if the link is down, else an overrun (throws).
  bool on_unexpected_arrival(const sim::Simulator& sim, const Packet& packet);
  bool on_corrupted_arrival(sim::Simulator& sim, const Packet& packet);
  [[noreturn]] void overrun(const sim::Simulator& sim, const Packet& packet) const;
  void corrupt_maybe(Packet& packet);
  bool flow_control_corrupted();
  void add_xmit_wait(sim::Time start_at);
  void trace_packet(const Packet& packet, sim::Time start_at, sim::Time end_at);

  static constexpr std::uint8_t no_sl = 16;
  static constexpr std::uint8_t mixed_sls = 17;
  /// A received packet that never arrived after all (its link went down): uncounted.
  void uncount_rcv(const Packet& packet);

  // What one packet touches, packed: the first line holds what sending reads and writes, the second what
  // sending, arrival and flow control share (the inbox of flow-control packets first); each VL's credits and
  // counters fill one line of their own. The rest of the port (configuration, wiring, cold counters, tracing) is
  // read only off the hot path.
  struct alignas(64) TxState {
    sim::Time busy_until;         ///< the serializer's last scheduled bit, data or FC
    sim::Time data_busy_until;    ///< the last data packet's last bit
    sim::Time propagation_delay;  ///< link_.propagation_delay
    sim::Time peer_arrival_delay; ///< the peer's PortConfig::arrival_delay, at least its LRH time if cut-through
    sim::Time memo_serialization; ///< serialization time of a packet of memo_wire_bytes
    FlowControlInbox* peer_inbox = nullptr; ///< where our FC packets travel: the peer's inbox, on our link
    std::uint32_t peer_index = 0;           ///< the peer node's sim::Target, split to pack the line
    std::uint16_t memo_wire_bytes = 0;      ///< size of the last packet serialized (any larger never matches)
    std::uint16_t flow_control_pending = 0; ///< bit v: an FC packet for VL v waits to be sent
    /// Bit v: VL v has sent data since its last FC packet, the only way its FCTBS changes. A refresh looks at
    /// those VLs only (a changed FCCL is already in flow_control_pending).
    std::uint16_t sent_since_flow_control = 0;
    sim::ComponentType peer_type = 0;
    std::uint8_t peer_number = 0;
    /// The SL every packet sent (received) so far carried, no_sl before the first, mixed_sls once two differed:
    /// while one SL carries everything, its PortXmitDataSL (PortRcvDataSL) is the port's total and the per-SL
    /// arrays, two more lines per packet, stay untouched.
    std::uint8_t xmit_sl = no_sl;
    std::uint8_t rcv_sl = no_sl;
    std::uint8_t data_vls = 0; ///< operational data VLs (data_vls())
    bool peer_arrival_after_tail : 1 = false;
    bool connected : 1 = false; ///< a switch checks its output's on every arrival
    bool tracing : 1 = false;   ///< tracer_ is set
    bool refresh_armed : 1 = false;
    bool lossy : 1 = false; ///< a bit error rate is set (errors_)
    sim::Target peer() const { return {peer_type, peer_index}; }
  };
  static_assert(sizeof(TxState) == 64, "a send touches one line of port state");
  TxState tx_;
  FlowControlInbox inbox_;
  sim::Time blocked_since_ = sim::Time::max();
  sim::Time flow_control_packet_time_; ///< serialization of one 6-byte FC packet at the link's rate
  sim::Time xmit_wait_tick_;           ///< PortXmitWait's tick at the link's lane rate
  std::uint64_t flow_control_pkts_ = 0;

  /// Everything one packet on one VL touches, together: one cache line per packet instead of five.
  struct alignas(64) VlState {
    CreditSender sender;
    CreditReceiver receiver{1};    // sized by connect()
    std::uint32_t blocks_sent = 0; ///< wraps at 2^32; in flight = sent - received, far below that
    std::uint32_t blocks_received = 0;
    std::uint16_t last_sent_fctbs = 0; ///< 12-bit counters
    std::uint16_t last_sent_fccl = 0;
    std::uint64_t xmit_data_words = 0;
    std::uint64_t xmit_pkts = 0;
    std::uint64_t rcv_data_words = 0;
    std::uint64_t rcv_pkts = 0;
  };
  static_assert(sizeof(VlState) == 64, "one VL's state fits one cache line");
  /// A packet of `sl` with `words`, already counted per VL, whose SL is not the one `sl_so_far` names
  /// (TxState::xmit_sl or rcv_sl): the port's first SL, or one more once per-SL counting in `by_sl` has begun; on
  /// the second SL the first's count, all of `VlState::*words_per_vl` before this packet, goes to `by_sl`.
  void count_by_sl(std::uint8_t& sl_so_far, std::array<std::uint64_t, 16>& by_sl, std::uint64_t VlState::*words_per_vl,
                   std::uint8_t sl, std::uint64_t words);
  std::array<VlState, vl_slots> vls_{};
  std::array<std::uint64_t, 16> xmit_data_words_by_sl_{}; ///< once tx_.xmit_sl is mixed_sls
  std::array<std::uint64_t, 16> rcv_data_words_by_sl_{};  ///< once tx_.rcv_sl is mixed_sls
  VlArbiter arbiter_{VlArbConfig::opensm_default(1)};

  // Wiring.
  sim::Target owner_;
  std::uint32_t owner_component_id_ = 0;
  std::uint8_t number_ = 0;
  PortConfig config_{};

  LinkConfig link_{};
  PortCounters counters_; ///< xmit_wait and vl15_dropped; the rest live in vls_ and beside it (counters())
  sim::Tracer* tracer_ = nullptr;
  sim::Time wake_scheduled_at_ = sim::Time::max();
  std::uint32_t vl15_used_ = 0;

  // Faults, cold.
  Port* peer_ = nullptr; ///< the other end, once connected
  bool down_ = false;    ///< down() and the VLs it ran, restored by link_up()
  std::uint8_t up_data_vls_ = 0;
  struct BitErrors {
    double bit_error_rate;
    sim::Rng rng;
    std::uint32_t memo_wire_bytes = 0; ///< the packet size memo_probability is for
    double memo_probability = 0;
  };
  std::unique_ptr<BitErrors> errors_;
};

std::string check_credit_conservation(const Port& tx, const Port& rx, bool quiescent);
void connect(Port& a, Port& b, const LinkConfig& link);
void link_down(sim::Simulator& sim, Port& a, Port& b);
void link_up(sim::Simulator& sim, Port& a, Port& b);

/// Blocks of the largest packet the model builds: 4096-byte payload with GRH, AtomicETH-sized extension headers,
/// ICRC and VCRC (4194 bytes, 66 blocks). A VL buffer smaller than this could deadlock.
inline constexpr std::uint32_t largest_packet_blocks =
    blocks_for(4096 + lrh_bytes + grh_bytes + bth_bytes + atomic_eth_bytes + icrc_bytes + vcrc_bytes);

/// The rules every node profile's IB port parameters obey, switch or HCA: "" if they hold, else the broken rule
/// as "key: expected ..., got ..." under the profiles' keys (link_widths, link_speeds, vl_cap,
/// input_buffer_bytes_per_port).
std::string validate_port_parameters(const std::string& link_widths, const std::string& link_speeds,
                                     std::uint32_t vl_cap, std::uint32_t input_buffer_bytes_per_port);
/// A node profile's device_ids: NodeInfo.DeviceID values as ibnetdiscover prints them ("devid=0x1017"), comma-
/// separated hexadecimal, each at most 0xffff; "" is none. nullopt when malformed.
std::optional<std::vector<std::uint16_t>> parse_device_ids(std::string_view text);
/// "" when `device_ids` parses, else the problem (for a profile's validate()).
std::string validate_device_ids(const std::string& device_ids);

// Per packet, inline: every hop sends once, arrives once and releases once, from the owning node's translation unit.

inline sim::Time Port::send(sim::Simulator& sim, PacketPool& pool, PacketHandle handle, std::uint8_t vl,
                            sim::Time tail_available_at) {
  const sim::Time now = sim.now();
  assert(tx_.connected && may_start(now) && "send() while the previous packet is still leaving");
  // FC packets go first: they are sent between packets, ahead of data (IBA §7.9.4).
  flush_flow_control(sim);
  Packet& packet = pool[handle];
  assert(has_credits(now, vl, packet.wire_bytes) && "send() beyond the peer's advertised credits");
  const sim::Time start_at = std::max(now, tx_.busy_until);
  if (packet.wire_bytes != tx_.memo_wire_bytes) {
    // Exact, from the one helper (STYLE rule 9); remembered because consecutive packets usually have one size.
    tx_.memo_wire_bytes = static_cast<std::uint16_t>(packet.wire_bytes);
    tx_.memo_serialization = sim::transfer_time(packet.wire_bytes, link_.data_rate);
  }
  const sim::Time end_at = std::max(start_at + tx_.memo_serialization, tail_available_at);
  if (vl != management_vl) {
    const std::uint32_t blocks = blocks_for(packet.wire_bytes);
    vls_[vl].sender.on_sent(blocks);
    vls_[vl].blocks_sent += blocks;
    tx_.sent_since_flow_control |= static_cast<std::uint16_t>(1u << vl);
    arm_refresh(sim);
  }
  arbiter_.on_sent(vl, packet.wire_bytes);
  if (blocked_since_ != sim::Time::max())
    add_xmit_wait(start_at);
  vls_[vl].xmit_data_words += (packet.wire_bytes + 3) / 4;
  vls_[vl].xmit_pkts += 1;
  if ((packet.sl & 15u) != tx_.xmit_sl) [[unlikely]]
    count_by_sl(tx_.xmit_sl, xmit_data_words_by_sl_, &VlState::xmit_data_words, packet.sl & 15u,
                (packet.wire_bytes + 3) / 4);

  packet.vl = vl;
  packet.in_port = tx_.peer_number;
  if (tx_.lossy) [[unlikely]]
    corrupt_maybe(packet);
  packet.first_bit_at = start_at + tx_.propagation_delay;
  packet.last_bit_at = end_at + tx_.propagation_delay;
  sim.schedule((tx_.peer_arrival_after_tail ? packet.last_bit_at : packet.first_bit_at) + tx_.peer_arrival_delay,
               tx_.peer(), static_cast<std::uint8_t>(PortEventKind::packet_arrives), handle.value);
  tx_.busy_until = end_at;
  tx_.data_busy_until = end_at;
  if (tx_.tracing && tracer_->wants(owner_component_id_, packet.dest_qpn, start_at, end_at))
    trace_packet(packet, start_at, end_at);
  return end_at;
}

inline bool Port::on_packet_arrives(sim::Simulator& sim, const Packet& packet) {
  assert(packet.in_port == number_);
  if (packet.corrupted) [[unlikely]]
    return on_corrupted_arrival(sim, packet);
  VlState& state = vls_[packet.vl];
  state.rcv_data_words += (packet.wire_bytes + 3) / 4;
  state.rcv_pkts += 1;
  if ((packet.sl & 15u) != tx_.rcv_sl) [[unlikely]]
    count_by_sl(tx_.rcv_sl, rcv_data_words_by_sl_, &VlState::rcv_data_words, packet.sl & 15u,
                (packet.wire_bytes + 3) / 4);
  if (packet.vl == management_vl)
    return on_vl15_arrives(packet);
  const std::uint32_t blocks = blocks_for(packet.wire_bytes);
  if (packet.vl >= tx_.data_vls || !state.receiver.on_packet_arrived(blocks)) [[unlikely]]
    return on_unexpected_arrival(sim, packet);
  state.blocks_received += blocks;
  return true;
}

inline void Port::release(sim::Simulator& sim, std::uint8_t vl, std::uint32_t wire_bytes) {
  if (vl == management_vl) {
    release_vl15();
    return;
  }
  vls_[vl].receiver.on_packet_freed(blocks_for(wire_bytes));
  tx_.flow_control_pending |= static_cast<std::uint16_t>(1u << vl);
  if (may_start(sim.now()))
    flush_flow_control(sim);
  arm_refresh(sim);
}

} // namespace ib::link
