// An IB switch (IBA vol 1 ch. 18.2): ports from models/link, a FIFO input buffer per (port, VL) sized by the
// link's credits, a linear forwarding table (DLID -> output port), SL2VL per (input, output) port, and a crossbar
// where each output arbitrates among the input heads that want it: VL arbitration first (the port's VLArb
// tables), then first-come-first-served among inputs of that VL. A packet may leave once its header is in plus
// the port-to-port latency (cut-through; it never ends before its tail arrives) or once its tail is in plus the
// latency (store-and-forward); the port's arrival event comes at that instant. Only an input's head packet can move, so
// head-of-line blocking emerges from the buffers. Faults: once a port's link is down, the packets its buffer holds
// and those queued anywhere for it are dropped, as are later arrivals routed to it (PortXmitDiscards) or to no
// route after a reroute (PortRcvSwitchRelayErrors), until the subnet manager's new tables steer around it. Left out:
// multicast (MFT), credit starvation marking and packet lifetime limits. With virtual_output_queues, each input
// buffer (port, VL) keeps one FIFO per output port instead: the credits stay per input VL, but a packet waits only
// behind packets for its own output, and an input sends to several outputs at once (as a shared-memory switch
// reads its buffer), so head-of-line blocking between outputs is gone. Adaptive routing (set_adaptive_routing):
// a DLID with an AR group leaves by the group's least-loaded port (adaptive_port). Congestion control (IBA A10,
// set_congestion_control): an output VL is congested while the bytes waiting in the switch for it reach
// link::cc::congested_bytes(Threshold); a packet leaving it then is eligible for FECN if it is at least Packet_Size and
// the port is the root of the congestion (it did not wait for credits to send it) or its Victim_Mask bit is set, and
// one in Marking_Rate + 1 eligible packets is marked.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "models/link/congestion.h"
#include "models/link/link.h"
#include "sim/params.h"
#include "sim/profile.h"

namespace ib::sw {

enum class Forwarding : std::uint8_t { cut_through, store_and_forward };

/// A switch model's parameters; defaults and sources live in topologies/hardware/<profile>.json.
struct Params {
  std::uint32_t port_count;                  ///< external ports, numbered 1..port_count
  std::string link_widths;                   ///< widths its ports support, e.g. "1x,4x" (link::parse_width_set)
  std::string link_speeds;                   ///< speeds its ports support, e.g. "SDR,QDR,FDR,EDR"
  std::string device_ids;                    ///< NodeInfo.DeviceIDs that identify it in ibnetdiscover output
  sim::Time port_to_port_latency;            ///< first bit in to first bit out, unloaded, cut-through
  bool cut_through;                          ///< false = store-and-forward
  bool virtual_output_queues;                ///< each input buffer keeps a FIFO per output (false: one FIFO)
  std::uint32_t input_buffer_bytes_per_port; ///< receive buffer per port, split evenly over operational data VLs
  std::uint32_t vl_cap;                      ///< data VLs per port (PortInfo.VLCap): 1, 2, 4, 8 or 15
  std::uint32_t vl15_buffer_packets;         ///< VL15 receive slots per port
  sim::Time flow_control_refresh;            ///< longest wait before a changed FCTBS/FCCL is sent
  std::uint32_t xmit_wait_tick_symbols;      ///< PortXmitWait tick: symbol times (PortSamplesControl.Tick + 1)
};
const sim::ParamTable<Params>& param_table();
/// The switch's profiles as `ibnetsim params` and the runner's report see them.
extern const sim::ProfileModel profile_model;
/// "" if `params` are consistent, else the broken rule (e.g. vl_cap not in {1, 2, 4, 8, 15}), key first.
std::string validate(const Params& params);

struct Counters {
  std::uint64_t packets_forwarded = 0;     ///< packets that left through an output port
  std::uint64_t packets_to_management = 0; ///< packets for the switch's own LID (port 0), consumed
  std::uint64_t packets_dropped = 0;       ///< lost to faults (the ports' counters say where and why)
  std::uint64_t adaptive_decisions = 0;    ///< packets whose output an AR group chose
  std::uint64_t adaptive_off_static = 0;   ///< of those, sent by another port than the LFT's
};

/// The switch's event kinds: the ports' own first, then the switch's.
enum class Kind : std::uint8_t {
  packet_arrives = static_cast<std::uint8_t>(link::PortEventKind::packet_arrives),
  flow_control_arrives = static_cast<std::uint8_t>(link::PortEventKind::flow_control_arrives),
  flow_control_refresh = static_cast<std::uint8_t>(link::PortEventKind::flow_control_refresh),
  tx_done = link::first_node_event_kind, ///< an output's packet has left; handle = output port
};

/// LFT entry meaning "no route" (OpenSM's OSM_NO_PATH).
inline constexpr std::uint8_t no_route = 255;
/// LFT entry of the switch's own management port.
inline constexpr std::uint8_t management_port = 0;

class Switch {
public:
  /// `self` is how events reach this switch; `component_id` names it in errors; packets come from `pool`.
  /// Preconditions: validate(params) == "".
  Switch(const Params& params, sim::Target self, std::uint32_t component_id, link::PacketPool& pool);

  std::uint32_t port_count() const { return static_cast<std::uint32_t>(ports_.size() - 1); }
  /// Port `number`, 1..port_count, for the fabric to wire.
  link::Port& port(std::uint8_t number) { return ports_.at(number); }
  const link::Port& port(std::uint8_t number) const { return ports_.at(number); }
  /// The linear forwarding table: entry d is the output port for DLID d (0 = this switch, 255 = no route).
  void set_forwarding_table(std::vector<std::uint8_t> lft) { lft_ = std::move(lft); }
  const std::vector<std::uint8_t>& forwarding_table() const { return lft_; }
  /// Entries first_lid.. of the LFT take `entries` (an LFT block written by the subnet manager).
  void set_forwarding_entries(std::uint32_t first_lid, std::span<const std::uint8_t> entries);
  /// Where dropped packets go (faults), and that packets for a down port or for no route are a fault's loss
  /// rather than a routing error (an invariant violation, `unroutable-packet`). Without a sink the switch
  /// frees packets itself (fine for packets that carry no transport headers).
  void set_fault_handling(link::PacketDiscard* discard) {
    discard_ = discard;
    faults_ = true;
  }
  /// Port `number`'s link has gone down (link::link_down() was called): drops what its receive buffer holds
  /// and every packet queued for it as an output.
  void on_link_down(sim::Simulator& sim, std::uint8_t number);
  /// The SM's SwitchCongestionSetting (IBA A10.4.3.6). Call before traffic; a disabled or zero-threshold setting
  /// marks nothing and costs nothing.
  void set_congestion_control(const link::cc::SwitchSetting& setting);
  /// Packets port `number` marked with FECN as they left (congestion control).
  std::uint64_t fecn_marked(std::uint8_t number) const {
    return congestion_.empty() ? 0 : congestion_[number].fecn_marked;
  }
  /// Adaptive routing (NVIDIA's AR, "free" mode): DLID d may leave by any port of group group_of_lid[d] - 1 (0: the
  /// LFT's port alone); each packet takes the group's least-loaded port that has credits for it, load being the
  /// bytes waiting in this switch for the port, ties going round robin. Call before traffic.
  void set_adaptive_routing(std::vector<std::uint16_t> group_of_lid, std::vector<std::vector<std::uint8_t>> groups);
  /// The SM rewrote the AR tables mid-run (after a fault): packets already queued keep the outputs they chose, so
  /// the bytes waiting per port carry on. Precondition: set_adaptive_routing was called before traffic.
  void update_adaptive_routing(std::vector<std::uint16_t> group_of_lid, std::vector<std::vector<std::uint8_t>> groups);
  /// SL2VL of one (input, output) port pair; without it, SL s goes to VL (OpenSM default[s] mod output VLs).
  void set_sl_to_vl(std::uint8_t in_port, std::uint8_t out_port, const std::array<std::uint8_t, 16>& vl_by_sl);

  void on_event(sim::Simulator& sim, const sim::Event& event);
  /// Starts loading what on_event(`event`) will touch first (the packet, or the output), a few events ahead.
  void prefetch(const sim::Event& event) const {
    if (event.kind == static_cast<std::uint8_t>(Kind::packet_arrives))
      __builtin_prefetch(&pool_[link::PacketHandle{event.handle}]);
    else if (event.kind == static_cast<std::uint8_t>(Kind::tx_done))
      __builtin_prefetch(&outputs_[event.handle]);
  }
  /// The next event's second wave, found from what prefetch() loaded: the arriving packet's port, LFT entry and
  /// input, or the leaving packet's input and both ports.
  void prefetch_near(const sim::Event& event) const;

  const Counters& counters() const { return counters_; }
  /// For the deadlock diagnosis: the VLs on which packets wait for output `out_port` while nothing leaves by it
  /// (bit v: VL v), and the output port and VL the head packet of input (`in_port`, `vl`) waits for (false when
  /// that input has no waiting head).
  std::uint16_t waiting_vls(std::uint8_t out_port) const {
    return outputs_[out_port].sending ? 0 : outputs_[out_port].requested_vls;
  }
  bool head_waits_for(std::uint8_t in_port, std::uint8_t vl, std::uint8_t& out_port, std::uint8_t& out_vl) const;
  /// Buffer accounting: each input VL's used blocks equal its queued packets', and with adaptive routing each
  /// output's waiting bytes equal those of the packets queued for it (`buffer-accounting`); "" if so.
  std::string check_invariants() const;

private:
  static constexpr std::uint16_t no_slot = 0xffff;
  /// One input queue's FIFO of packets, threaded through Packet::next_in_queue: an input buffer's (port, VL), or
  /// with virtual output queues its share for one output. Its head is the only packet that may move; once it
  /// starts out it leaves the FIFO, but the queue stays busy (and its blocks held) until its last bit has left,
  /// so the next head waits for that.
  struct Input {
    link::PacketHandle head; ///< invalid: empty
    link::PacketHandle tail;
    std::uint32_t sending_wire_bytes = 0; ///< of the packet leaving from here, if busy
    std::uint16_t next_request = no_slot; ///< the input slot behind this one in its output VL's request list
    bool busy = false;                    ///< a packet from here is leaving through an output
  };
  static_assert(sizeof(Input) == 16, "four inputs per cache line");
  /// An input has at most one request out (its head's), so each output VL's waiting inputs form a list threaded
  /// through the inputs themselves: no queue storage, and an output's state fits one cache line.
  struct alignas(64) Output {
    // Hot first, from the start of a line: with VLs 0..12, what an output touches is one cache line.
    std::uint16_t requested_vls = 0;                         ///< bit v: VL v has waiting inputs
    bool sending = false;                                    ///< a packet has started and not yet left
    std::uint16_t sending_from = 0;                          ///< its input slot (slot())
    std::array<std::uint16_t, link::vl_slots> first_request; ///< per output VL: oldest waiting input slot
    std::array<std::uint16_t, link::vl_slots> last_request;  ///< per output VL: newest waiting input slot
  };

  /// Input slots are VL-major, (VL << port_shift_) | port: the inputs of one VL, which a fabric using few VLs keeps
  /// touching, share cache lines instead of each taking one. With virtual output queues a slot is
  /// ((VL index * ports) + port) * ports + output, VL15 taking the index after the data VLs.
  std::uint16_t slot(std::uint8_t port, std::uint8_t vl, std::uint8_t out_port) const {
    if (!voq_)
      return static_cast<std::uint16_t>(vl << port_shift_ | port);
    const std::size_t vl_index = vl == link::management_vl ? vl_cap_ : vl;
    return static_cast<std::uint16_t>((vl_index * ports_.size() + port) * ports_.size() + out_port);
  }
  std::uint8_t slot_port(std::uint16_t input_slot) const {
    if (!voq_)
      return static_cast<std::uint8_t>(input_slot & ((1u << port_shift_) - 1));
    return static_cast<std::uint8_t>(input_slot / ports_.size() % ports_.size());
  }
  std::uint8_t slot_vl(std::uint16_t input_slot) const {
    if (!voq_)
      return static_cast<std::uint8_t>(input_slot >> port_shift_);
    const std::size_t vl_index = input_slot / (ports_.size() * ports_.size());
    return vl_index == vl_cap_ ? link::management_vl : static_cast<std::uint8_t>(vl_index);
  }
  void on_packet_arrives(sim::Simulator& sim, link::PacketHandle handle);
  void on_tx_done(sim::Simulator& sim, std::uint8_t out_port);
  /// The input's new head (it has arrived, so it is ready) requests its output.
  void serve_head(sim::Simulator& sim, std::uint16_t input_slot);
  /// Starts the next packet on `out_port` if it is free and some request fits the credits.
  void arbitrate(sim::Simulator& sim, std::uint8_t out_port);
  std::uint8_t output_vl(std::uint8_t in_port, std::uint8_t out_port, std::uint8_t sl) const;
  [[noreturn]] void unroutable(const sim::Simulator& sim, const link::Packet& packet, const char* why) const;
  /// A packet that arrived on `in` and routes to `out`, which cannot take it: dropped if faults explain it (its
  /// blocks freed), else unroutable().
  void misrouted(sim::Simulator& sim, link::PacketHandle handle, std::uint8_t in, std::uint8_t out);
  void discard(link::PacketHandle handle);
  /// Adaptive routing: the port of AR group `group` (1-based) that a packet arriving on `in` should take;
  /// `lft_port` when none of the group's ports can take it.
  std::uint8_t adaptive_port(sim::Simulator& sim, const link::Packet& packet, std::uint16_t group, std::uint8_t in,
                             std::uint8_t lft_port);
  /// Congestion control: the packet leaving `out_port` on `vl` is marked with FECN if it should be.
  void mark_congestion(link::Packet& packet, std::uint8_t out_port, std::uint8_t vl, bool waited_for_credits);

  /// Congestion control state of one output port (kept apart from Output: only a run with CC touches it).
  struct CongestedOutput {
    std::array<std::uint64_t, link::vl_slots> queued_bytes{}; ///< in this switch, routed to this output VL
    std::uint16_t credit_waited_vls = 0; ///< bit v: VL v's next packet had to wait for credits (a victim)
    std::uint16_t marking_countdown = 0; ///< eligible packets to leave unmarked before the next FECN
    std::uint64_t fecn_marked = 0;
  };

  sim::Target self_;
  std::uint32_t component_id_;
  link::PacketPool& pool_;
  std::vector<link::Port> ports_; ///< index = port number; [0] is the management port, never wired
  std::uint8_t port_shift_;       ///< bits of a port number in a slot: std::bit_width(port_count)
  bool voq_;                      ///< virtual output queues: a slot per (port, VL, output)
  std::uint8_t vl_cap_;           ///< data VLs per port, for VOQ slots
  std::vector<Input> inputs_;     ///< index = slot(port, VL)
  std::vector<Output> outputs_;   ///< index = port number
  std::vector<std::uint8_t> lft_;
  std::vector<std::uint8_t> sl_to_vl_; ///< (in * ports + out) * 16 + SL; empty = default mapping
  Counters counters_;
  link::PacketDiscard* discard_ = nullptr;
  bool faults_ = false;
  link::cc::SwitchSetting cc_;
  std::vector<CongestedOutput> congestion_; ///< per port; empty when congestion control marks nothing
  // Adaptive routing; empty without it.
  std::vector<std::uint16_t> ar_group_of_lid_;       ///< per DLID: 1 + AR group, 0 for none
  std::vector<std::vector<std::uint8_t>> ar_groups_; ///< ports of each group, the LFT's first
  std::vector<std::uint16_t> ar_next_;               ///< per group: where the next choice starts looking
  std::vector<std::uint64_t> ar_waiting_bytes_;      ///< per port: bytes in this switch waiting to leave by it
};

} // namespace ib::sw
