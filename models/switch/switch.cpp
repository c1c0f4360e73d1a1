#include "models/switch/switch.h"

#include <bit>
#include <cassert>

#include "models/link/port_params.h"
#include "sim/errors.h"

namespace ib::sw {

namespace {

constexpr std::uint8_t kind(link::PortEventKind k) {
  return static_cast<std::uint8_t>(k);
}

} // namespace

const sim::ParamTable<Params>& param_table() {
  static const sim::ParamTable<Params> table(
      "switch", link::with_port_fields<Params>(
                    {{"port_count", &Params::port_count, "count", "external ports, numbered 1..port_count", 1, 254}},
                    {
                        {"port_to_port_latency_ns", &Params::port_to_port_latency, "ns",
                         "first bit in to first bit out, unloaded, cut-through", 0, 1e6},
                        {"cut_through", &Params::cut_through, "bool",
                         "forward once the header is in (false: store-and-forward)", 0, 1},
                        {"virtual_output_queues", &Params::virtual_output_queues, "bool",
                         "each input buffer keeps a FIFO per output port, so a packet waits only behind packets for "
                         "its own output (false: one FIFO per input port and VL, with head-of-line blocking)",
                         0, 1},
                    }));
  return table;
}

namespace {

/// Input queues a switch keeps: one per (port, VL slot), or with virtual output queues one per (port, data VL or
/// VL15, output port).
std::size_t input_queue_count(const Params& params) {
  const std::size_t ports = std::size_t{params.port_count} + 1;
  if (!params.virtual_output_queues)
    return std::size_t{link::vl_slots} << std::bit_width(params.port_count);
  return (std::size_t{params.vl_cap} + 1) * ports * ports;
}

} // namespace

std::string validate(const Params& params) {
  std::string problem = link::validate_port_parameters(params.link_widths, params.link_speeds, params.vl_cap,
                                                       params.input_buffer_bytes_per_port);
  if (problem.empty() && params.virtual_output_queues && input_queue_count(params) >= 0xffff)
    problem =
        "virtual_output_queues: (vl_cap + 1) x (port_count + 1)^2 = " + std::to_string(input_queue_count(params)) +
        " queues, more than the 65534 a switch can index";
  return problem.empty() ? link::validate_device_ids(params.device_ids) : problem;
}

Switch::Switch(const Params& params, sim::Target self, std::uint32_t component_id, link::PacketPool& pool)
    : self_(self), component_id_(component_id), pool_(pool), ports_(params.port_count + 1),
      port_shift_(static_cast<std::uint8_t>(std::bit_width(params.port_count))), voq_(params.virtual_output_queues),
      vl_cap_(static_cast<std::uint8_t>(params.vl_cap)), inputs_(input_queue_count(params)),
      outputs_(params.port_count + 1) {
  assert(validate(params).empty());
  // The port-to-port latency rides on the arrival event: a packet is routed and may leave at that instant.
  const link::PortConfig config{params.input_buffer_bytes_per_port,
                                static_cast<std::uint8_t>(params.vl_cap),
                                params.vl15_buffer_packets,
                                params.flow_control_refresh,
                                !params.cut_through,
                                params.port_to_port_latency,
                                params.xmit_wait_tick_symbols};
  for (std::uint32_t p = 1; p <= params.port_count; ++p) {
    ports_[p].bind(self, component_id, static_cast<std::uint8_t>(p), config);
  }
}

void Switch::set_sl_to_vl(std::uint8_t in_port, std::uint8_t out_port, const std::array<std::uint8_t, 16>& vl_by_sl) {
  const std::size_t ports = ports_.size();
  if (sl_to_vl_.empty()) {
    sl_to_vl_.resize(ports * ports * 16);
    for (std::size_t in = 0; in < ports; ++in) {
      for (std::size_t out = 1; out < ports; ++out) {
        for (std::uint8_t sl = 0; sl < 16; ++sl) {
          const std::uint8_t vls = ports_[out].connected() ? ports_[out].data_vls() : 1;
          sl_to_vl_[(in * ports + out) * 16 + sl] = link::default_vl(sl, vls);
        }
      }
    }
  }
  for (std::uint8_t sl = 0; sl < 16; ++sl) {
    sl_to_vl_[(in_port * ports + out_port) * 16 + sl] = vl_by_sl[sl];
  }
}

std::uint8_t Switch::output_vl(std::uint8_t in_port, std::uint8_t out_port, std::uint8_t sl) const {
  if (sl_to_vl_.empty()) {
    return link::default_vl(sl, ports_[out_port].data_vls());
  }
  return sl_to_vl_[(in_port * ports_.size() + out_port) * 16 + sl];
}

void Switch::on_event(sim::Simulator& sim, const sim::Event& event) {
  switch (static_cast<Kind>(event.kind)) {
  case Kind::packet_arrives:
    on_packet_arrives(sim, link::PacketHandle{event.handle});
    return;
  case Kind::flow_control_arrives: {
    const std::uint8_t port = link::Port::port_of(event);
    ports_[port].on_flow_control_arrives(sim);
    arbitrate(sim, port); // the new limit may let a waiting packet go
    return;
  }
  case Kind::flow_control_refresh:
    ports_[link::Port::port_of(event)].on_flow_control_refresh(sim);
    return;
  case Kind::tx_done:
    on_tx_done(sim, static_cast<std::uint8_t>(event.handle));
    return;
  }
  assert(false && "unknown switch event kind");
}

void Switch::prefetch_near(const sim::Event& event) const {
  if (event.kind == static_cast<std::uint8_t>(Kind::packet_arrives)) {
    const link::Packet& packet = pool_[link::PacketHandle{event.handle}];
    ports_[packet.in_port].prefetch_receive(packet.vl);
    // The LFTs are a few lines per switch and stay cached: the entry can be read to start on the output's lines.
    if (packet.dlid < lft_.size()) {
      const std::uint8_t out = lft_[packet.dlid];
      if (out < outputs_.size()) {
        __builtin_prefetch(&outputs_[out]);
        ports_[out].prefetch_send();
      }
    }
    if (!voq_) // a VOQ slot depends on the route
      __builtin_prefetch(&inputs_[slot(packet.in_port, packet.vl, 0)]);
  } else if (event.kind == static_cast<std::uint8_t>(Kind::tx_done)) {
    const Output& output = outputs_[event.handle];
    __builtin_prefetch(&inputs_[output.sending_from]);
    ports_[slot_port(output.sending_from)].prefetch_receive(slot_vl(output.sending_from));
    ports_[event.handle].prefetch_send();
  }
}

void Switch::on_packet_arrives(sim::Simulator& sim, link::PacketHandle handle) {
  link::Packet& packet = pool_[handle];
  const std::uint8_t in = packet.in_port;
  if (!ports_[in].on_packet_arrives(sim, packet)) {
    discard(handle); // VL15 overflow (IBA §7.9.5), or lost to a fault
    return;
  }
  // Route now: the LFT and SL2VL lookups happen as the header streams in.
  std::uint8_t out = packet.dlid < lft_.size() ? lft_[packet.dlid] : no_route;
  if (!ar_group_of_lid_.empty() && packet.dlid < ar_group_of_lid_.size() && packet.vl != link::management_vl)
      [[unlikely]] {
    if (const std::uint16_t group = ar_group_of_lid_[packet.dlid]; group != 0)
      out = adaptive_port(sim, packet, group, in, out);
  }
  if (out == no_route || out >= ports_.size() || out == in || (out != management_port && !ports_[out].connected()))
      [[unlikely]] {
    misrouted(sim, handle, in, out);
    return;
  }
  packet.out_port = out;
  if (out == management_port) {
    packet.out_vl = packet.vl;
  } else if (packet.vl == link::management_vl) {
    packet.out_vl = link::management_vl;
  } else {
    packet.out_vl = output_vl(in, out, packet.sl);
    if (packet.out_vl >= ports_[out].data_vls()) {
      unroutable(sim, packet, "SL2VL maps its SL to a VL the output port does not run");
    }
  }
  if (!congestion_.empty() && out != management_port) [[unlikely]]
    congestion_[out].queued_bytes[packet.out_vl] += packet.wire_bytes;
  if (!ar_waiting_bytes_.empty() && out != management_port) [[unlikely]]
    ar_waiting_bytes_[out] += packet.wire_bytes;
  const std::uint16_t input_slot = slot(in, packet.vl, out);
  Input& input = inputs_[input_slot];
  packet.next_in_queue = link::PacketHandle::invalid_value;
  if (input.head.valid()) {
    pool_[input.tail].next_in_queue = handle.value;
    input.tail = handle;
    return;
  }
  input.head = input.tail = handle;
  if (!input.busy) {
    serve_head(sim, input_slot);
  }
}

void Switch::serve_head(sim::Simulator& sim, std::uint16_t input_slot) {
  Input& input = inputs_[input_slot];
  const link::Packet& head = pool_[input.head];
  if (head.out_port == management_port) {
    // The switch's own management agent consumes it at once (SMA processing time is not modelled).
    const link::PacketHandle handle = input.head;
    const std::uint32_t wire_bytes = head.wire_bytes;
    input.head = link::PacketHandle{head.next_in_queue};
    pool_.release(handle);
    ++counters_.packets_to_management;
    ports_[slot_port(input_slot)].release(sim, slot_vl(input_slot), wire_bytes);
    if (input.head.valid()) {
      serve_head(sim, input_slot);
    }
    return;
  }
  Output& output = outputs_[head.out_port];
  const std::uint16_t bit = static_cast<std::uint16_t>(1u << head.out_vl);
  input.next_request = no_slot;
  if (output.requested_vls & bit) {
    inputs_[output.last_request[head.out_vl]].next_request = input_slot;
  } else {
    output.first_request[head.out_vl] = input_slot;
    output.requested_vls |= bit;
  }
  output.last_request[head.out_vl] = input_slot;
  arbitrate(sim, head.out_port);
}

void Switch::arbitrate(sim::Simulator& sim, std::uint8_t out_port) {
  Output& output = outputs_[out_port];
  if (output.sending || output.requested_vls == 0) {
    return;
  }
  link::Port& port = ports_[out_port];
  // A VL may send if its first requester's packet fits the downstream credits (first come, first served).
  std::uint16_t ready = 0;
  for (std::uint16_t vls = output.requested_vls; vls != 0; vls &= static_cast<std::uint16_t>(vls - 1)) {
    const int vl = std::countr_zero(vls);
    const link::Packet& head = pool_[inputs_[output.first_request[vl]].head];
    if (port.has_credits(sim.now(), static_cast<std::uint8_t>(vl), head.wire_bytes)) {
      ready |= static_cast<std::uint16_t>(1u << vl);
    }
  }
  if (!congestion_.empty()) [[unlikely]]
    congestion_[out_port].credit_waited_vls |= static_cast<std::uint16_t>(output.requested_vls & ~ready);
  const int vl = ready != 0 ? port.arbiter().pick(ready) : -1;
  if (vl < 0) {
    port.note_blocked(sim);
    return;
  }
  const std::uint16_t input_slot = output.first_request[vl];
  output.first_request[vl] = inputs_[input_slot].next_request;
  if (output.first_request[vl] == no_slot) {
    output.requested_vls &= static_cast<std::uint16_t>(~(1u << vl));
  }
  Input& input = inputs_[input_slot];
  const link::PacketHandle handle = input.head;
  link::Packet& packet = pool_[handle];
  if (!ar_waiting_bytes_.empty()) [[unlikely]]
    ar_waiting_bytes_[out_port] -= packet.wire_bytes;
  if (!congestion_.empty()) [[unlikely]] {
    CongestedOutput& c = congestion_[out_port];
    const auto bit = static_cast<std::uint16_t>(1u << vl);
    c.queued_bytes[static_cast<std::size_t>(vl)] -= packet.wire_bytes;
    mark_congestion(packet, out_port, static_cast<std::uint8_t>(vl), (c.credit_waited_vls & bit) != 0);
    c.credit_waited_vls &= static_cast<std::uint16_t>(~bit);
  }
  // Read before send(): from then on the next hop owns the per-hop fields.
  const sim::Time tail_in_at = packet.last_bit_at;
  input.head = link::PacketHandle{packet.next_in_queue};
  input.busy = true;
  input.sending_wire_bytes = packet.wire_bytes;
  output.sending = true;
  output.sending_from = input_slot;
  const sim::Time done_at = port.send(sim, pool_, handle, static_cast<std::uint8_t>(vl), tail_in_at);
  sim.schedule(done_at, self_, static_cast<std::uint8_t>(Kind::tx_done), out_port);
}

void Switch::on_tx_done(sim::Simulator& sim, std::uint8_t out_port) {
  Output& output = outputs_[out_port];
  assert(output.sending && "tx_done without a packet leaving");
  output.sending = false;
  const std::uint16_t input_slot = output.sending_from;
  Input& input = inputs_[input_slot];
  input.busy = false;
  ++counters_.packets_forwarded;
  ports_[slot_port(input_slot)].release(sim, slot_vl(input_slot), input.sending_wire_bytes);
  if (input.head.valid()) {
    serve_head(sim, input_slot);
  }
  arbitrate(sim, out_port);
  if (!output.sending) {
    ports_[out_port].flush_flow_control(sim);
  }
}

void Switch::set_congestion_control(const link::cc::SwitchSetting& setting) {
  cc_ = setting;
  if (!setting.enabled || setting.threshold == 0) { // Threshold 0: no marking at all
    congestion_.clear();
    return;
  }
  congestion_.assign(ports_.size(), CongestedOutput{}); // countdowns at 0: the first eligible packet is marked
}

void Switch::set_adaptive_routing(std::vector<std::uint16_t> group_of_lid,
                                  std::vector<std::vector<std::uint8_t>> groups) {
  ar_group_of_lid_ = std::move(group_of_lid);
  ar_groups_ = std::move(groups);
  ar_next_.assign(ar_groups_.size(), 0);
  ar_waiting_bytes_.assign(ports_.size(), 0);
}

void Switch::update_adaptive_routing(std::vector<std::uint16_t> group_of_lid,
                                     std::vector<std::vector<std::uint8_t>> groups) {
  assert(ar_waiting_bytes_.size() == ports_.size());
  ar_group_of_lid_ = std::move(group_of_lid);
  ar_groups_ = std::move(groups);
  // Only where the next choice starts looking, per group: the new groups' indices mean other port sets.
  ar_next_.assign(ar_groups_.size(), 0);
}

std::uint8_t Switch::adaptive_port(sim::Simulator& sim, const link::Packet& packet, std::uint16_t group,
                                   std::uint8_t in, std::uint8_t lft_port) {
  const std::vector<std::uint8_t>& ports = ar_groups_[group - 1u];
  std::uint16_t& next = ar_next_[group - 1u];
  // The least-loaded usable port: one whose link is up and whose next hop has credits for the packet now goes
  // before one that would wait; then the least load, the bytes waiting here to leave by it less the bytes its
  // next hop's buffer has free (so a port whose downstream fills up counts as loaded before its own queue does);
  // ties in round-robin order from `next`. The LFT's port (the group's first) stays unless the best is lighter by
  // more than the packet: balanced static routes are left alone.
  std::size_t best = ports.size();
  std::int64_t best_load = 0;
  bool best_ready = false;
  std::int64_t static_load = 0;
  bool static_ready = false, static_usable = false;
  for (std::size_t k = 0; k < ports.size(); ++k) {
    const std::size_t i = (next + k) % ports.size();
    const std::uint8_t p = ports[i];
    link::Port& port = ports_[p];
    if (p == in || !port.connected() || port.down())
      continue;
    const std::uint8_t vl = output_vl(in, p, packet.sl);
    const std::uint32_t free_blocks = port.available_blocks(sim.now(), vl);
    const bool ready = vl == link::management_vl || free_blocks >= link::blocks_for(packet.wire_bytes);
    const std::int64_t load =
        static_cast<std::int64_t>(ar_waiting_bytes_[p]) - std::int64_t{free_blocks} * link::block_bytes;
    if (i == 0) {
      static_load = load;
      static_ready = ready;
      static_usable = true;
    }
    if (best == ports.size() || (ready && !best_ready) || (ready == best_ready && load < best_load)) {
      best = i;
      best_load = load;
      best_ready = ready;
    }
  }
  if (best == ports.size())
    return lft_port; // none usable (links down): the LFT's port, which the fault handling then deals with
  if (static_usable && static_ready == best_ready && static_load <= best_load + std::int64_t{packet.wire_bytes})
    best = 0;
  next = static_cast<std::uint16_t>((best + 1) % ports.size());
  ++counters_.adaptive_decisions;
  counters_.adaptive_off_static += best != 0 ? 1 : 0;
  return ports[best];
}

void Switch::mark_congestion(link::Packet& packet, std::uint8_t out_port, std::uint8_t vl, bool waited_for_credits) {
  CongestedOutput& c = congestion_[out_port];
  const std::uint64_t limit =
      link::cc::congested_bytes(cc_.threshold, std::uint64_t{ports_[out_port].buffer_blocks_per_vl()} * 64);
  // Congested: at least the threshold's bytes wait behind the packet leaving (a packet that finds its output free
  // leaves at once, so a flow alone on its path never counts as congestion).
  if (c.queued_bytes[vl] < limit || packet.wire_bytes < cc_.packet_size_bytes || vl == link::management_vl)
    return;
  if (waited_for_credits && !cc_.victim_mask.test(out_port)) // a victim, not the root: left to the root to mark
    return;
  if (c.marking_countdown > 0) {
    --c.marking_countdown;
    return;
  }
  c.marking_countdown = cc_.marking_rate;
  if (!packet.fecn) {
    packet.fecn = true;
    ++c.fecn_marked;
  }
}

bool Switch::head_waits_for(std::uint8_t in_port, std::uint8_t vl, std::uint8_t& out_port, std::uint8_t& out_vl) const {
  // With virtual output queues the input has a head per output; once nothing moves, each waits on a blocked
  // channel, so the first one found is on the way to a cycle as much as any.
  const std::size_t outputs = voq_ ? ports_.size() : 1;
  for (std::size_t out = 0; out < outputs; ++out) {
    const Input& input = inputs_[slot(in_port, vl, static_cast<std::uint8_t>(out))];
    if (!input.head.valid() || input.busy)
      continue;
    out_port = pool_[input.head].out_port;
    out_vl = pool_[input.head].out_vl;
    if (out_port != management_port)
      return true;
  }
  return false;
}

void Switch::discard(link::PacketHandle handle) {
  if (discard_ != nullptr)
    discard_->discard(handle);
  else
    pool_.release(handle);
}

void Switch::misrouted(sim::Simulator& sim, link::PacketHandle handle, std::uint8_t in, std::uint8_t out) {
  const link::Packet& packet = pool_[handle];
  const bool port_down = out < ports_.size() && out != management_port && ports_[out].down();
  if (!faults_ || !(port_down || out == no_route || out == in))
    unroutable(sim, packet, out == in ? "the LFT sends it back out of its input port" : "no route for its DLID");
  // A real switch discards it: out of a down port until the SM reroutes, with no path after it has, or back out of
  // its input port while the SM's new LFT blocks are only partly written (one switch forwards by its new table, the
  // next by its old one): the switch relay's discard (PortRcvSwitchRelayErrors: "DLID mapping, VL mapping, looping").
  if (port_down)
    ports_[out].count_loss(link::Loss::xmit_discard);
  else
    ports_[in].count_loss(link::Loss::switch_relay);
  ++counters_.packets_dropped;
  const std::uint8_t vl = packet.vl;
  const std::uint32_t wire_bytes = packet.wire_bytes;
  discard(handle);
  ports_[in].release(sim, vl, wire_bytes);
}

void Switch::set_forwarding_entries(std::uint32_t first_lid, std::span<const std::uint8_t> entries) {
  if (lft_.size() < first_lid + entries.size())
    lft_.resize(first_lid + entries.size(), no_route);
  std::copy(entries.begin(), entries.end(), lft_.begin() + first_lid);
}

void Switch::on_link_down(sim::Simulator& sim, std::uint8_t number) {
  // Drop, from every input FIFO, the packets held in the down port's buffer and those queued for it. An input's
  // head may be waiting in an output's request list: note which heads went, to take them out of the lists.
  std::vector<std::uint8_t> head_dropped(inputs_.size(), 0);
  for (std::size_t s = 0; s < inputs_.size(); ++s) {
    Input& input = inputs_[s];
    const auto input_slot = static_cast<std::uint16_t>(s);
    const std::uint8_t in_port = slot_port(input_slot);
    const std::uint8_t vl = slot_vl(input_slot);
    link::PacketHandle previous;
    for (link::PacketHandle h = input.head; h.valid();) {
      link::Packet& packet = pool_[h];
      const link::PacketHandle next{packet.next_in_queue};
      if (in_port == number || packet.out_port == number) {
        if (h == input.head) {
          head_dropped[s] = 1;
          input.head = next;
        } else {
          pool_[previous].next_in_queue = next.value;
        }
        if (h == input.tail)
          input.tail = previous;
        const std::uint32_t wire_bytes = packet.wire_bytes;
        if (!congestion_.empty() && packet.out_port != management_port)
          congestion_[packet.out_port].queued_bytes[packet.out_vl] -= wire_bytes;
        if (!ar_waiting_bytes_.empty() && packet.out_port != management_port)
          ar_waiting_bytes_[packet.out_port] -= wire_bytes;
        discard(h);
        ++counters_.packets_dropped;
        if (in_port == number) {
          ports_[number].count_loss(link::Loss::in_buffer);
          ports_[number].discard_buffered(vl, wire_bytes);
        } else {
          ports_[number].count_loss(link::Loss::xmit_discard);
          ports_[in_port].release(sim, vl, wire_bytes);
        }
      } else {
        previous = h;
      }
      h = next;
    }
  }
  // Request lists without the dropped heads, in their order.
  for (std::size_t o = 1; o < outputs_.size(); ++o) {
    Output& output = outputs_[o];
    for (std::uint16_t vls = output.requested_vls; vls != 0; vls &= static_cast<std::uint16_t>(vls - 1)) {
      const int vl = std::countr_zero(vls);
      std::uint16_t kept_first = no_slot, kept_last = no_slot;
      for (std::uint16_t s = output.first_request[vl]; s != no_slot;) {
        const std::uint16_t next = inputs_[s].next_request;
        if (!head_dropped[s]) {
          if (kept_first == no_slot)
            kept_first = s;
          else
            inputs_[kept_last].next_request = s;
          kept_last = s;
          inputs_[s].next_request = no_slot;
        }
        s = next;
      }
      output.first_request[vl] = kept_first;
      output.last_request[vl] = kept_last;
      if (kept_first == no_slot)
        output.requested_vls &= static_cast<std::uint16_t>(~(1u << vl));
    }
  }
  // Inputs with a new head request its output.
  for (std::size_t s = 0; s < inputs_.size(); ++s)
    if (head_dropped[s] && inputs_[s].head.valid() && !inputs_[s].busy)
      serve_head(sim, static_cast<std::uint16_t>(s));
}

void Switch::unroutable(const sim::Simulator& sim, const link::Packet& packet, const char* why) const {
  throw sim::InvariantViolation("unroutable-packet",
                                sim.component_name(component_id_) + "/p" + std::to_string(packet.in_port),
                                std::string("packet SLID ") + std::to_string(packet.slid) + " DLID " +
                                    std::to_string(packet.dlid) + " SL " + std::to_string(packet.sl) + ": " + why,
                                "lft_size=" + std::to_string(lft_.size()));
}

std::string Switch::check_invariants() const {
  std::string problems;
  for (std::size_t p = 1; p < ports_.size(); ++p) {
    if (!ports_[p].connected()) {
      continue;
    }
    for (std::uint8_t vl = 0; vl < ports_[p].data_vls(); ++vl) {
      std::uint64_t queued_blocks = 0;
      for (std::size_t out = 0; out < (voq_ ? ports_.size() : 1); ++out) {
        const Input& input = inputs_[slot(static_cast<std::uint8_t>(p), vl, static_cast<std::uint8_t>(out))];
        // The packet leaving from here (if any) still holds its blocks.
        queued_blocks += input.busy ? link::blocks_for(input.sending_wire_bytes) : 0;
        for (link::PacketHandle h = input.head; h.valid(); h = link::PacketHandle{pool_[h].next_in_queue})
          queued_blocks += link::blocks_for(pool_[h].wire_bytes);
      }
      if (queued_blocks != ports_[p].used_blocks(vl)) {
        problems += "buffer-accounting: p" + std::to_string(p) + " vl" + std::to_string(vl) + " holds " +
                    std::to_string(queued_blocks) + " blocks of packets but " +
                    std::to_string(ports_[p].used_blocks(vl)) + " blocks are in use; ";
      }
    }
  }
  if (!ar_waiting_bytes_.empty()) { // adaptive routing's load: the bytes queued for each output, no more
    std::vector<std::uint64_t> waiting(ports_.size(), 0);
    for (const Input& input : inputs_)
      for (link::PacketHandle h = input.head; h.valid(); h = link::PacketHandle{pool_[h].next_in_queue})
        if (pool_[h].out_port != management_port)
          waiting[pool_[h].out_port] += pool_[h].wire_bytes;
    for (std::size_t p = 1; p < ports_.size(); ++p)
      if (waiting[p] != ar_waiting_bytes_[p])
        problems += "buffer-accounting: p" + std::to_string(p) + " has " + std::to_string(waiting[p]) +
                    " bytes queued for it but adaptive routing counts " + std::to_string(ar_waiting_bytes_[p]) + "; ";
  }
  return problems;
}

const sim::ProfileModel profile_model = sim::profile_model<Params, &param_table, &validate>(
    "switch", "IB switch: ports, latency, buffers, VLs (models/switch)");

} // namespace ib::sw
