#include "models/link/port.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "models/link/link_rate.h"
#include "sim/errors.h"

namespace ib::link {

namespace {

/// The largest operational VL count both ends support (PortInfo.OperationalVLs takes one of 1, 2, 4, 8, 15).
std::uint8_t operational_vls(std::uint8_t a_cap, std::uint8_t b_cap) {
  const std::uint8_t common = std::min(a_cap, b_cap);
  for (const std::uint8_t vls : {15, 8, 4, 2, 1}) {
    if (vls <= common) {
      return vls;
    }
  }
  return 1;
}

} // namespace

void Port::bind(sim::Target owner, std::uint32_t owner_component_id, std::uint8_t number, const PortConfig& config) {
  owner_ = owner;
  owner_component_id_ = owner_component_id;
  number_ = number;
  config_ = config;
}

void connect(Port& a, Port& b, const LinkConfig& link) {
  if (a.tx_.connected || b.tx_.connected) {
    throw std::invalid_argument("port already connected");
  }
  const std::uint8_t vls = operational_vls(a.config_.vl_cap, b.config_.vl_cap);
  for (Port* side : {&a, &b}) {
    const std::uint32_t blocks = std::min(side->config_.buffer_bytes / vls / block_bytes, max_credits);
    if (blocks < largest_packet_blocks) {
      throw std::invalid_argument("a receive buffer of " + std::to_string(side->config_.buffer_bytes) + " bytes over " +
                                  std::to_string(vls) + " data VLs gives " + std::to_string(blocks) +
                                  " blocks per VL, below one largest packet (" + std::to_string(largest_packet_blocks) +
                                  " blocks)");
    }
    side->tx_.data_vls = vls;
    side->link_ = link;
    side->tx_.propagation_delay = link.propagation_delay;
    side->flow_control_packet_time_ = sim::transfer_time(flow_control_packet_bytes, link.data_rate);
    // A tick is a number of symbol times, one byte on one lane, whatever the width (IBA §16.1.3.2; NVIDIA's
    // ibdiagnet manual: 4 ns at SDR): on all lanes at once, tick_symbols × lanes bytes go by.
    side->xmit_wait_tick_ =
        sim::transfer_time(std::uint64_t{side->config_.xmit_wait_tick_symbols} * link.lanes, link.data_rate);
    side->arbiter_ = VlArbiter(VlArbConfig::opensm_default(vls));
    for (int vl = 0; vl < vl_slots; ++vl) {
      side->vls_[vl].receiver = CreditReceiver(blocks);
    }
    side->tx_.connected = true;
  }
  a.peer_ = &b;
  b.peer_ = &a;
  a.tx_.peer_type = b.owner_.type;
  a.tx_.peer_index = b.owner_.index;
  a.tx_.peer_number = b.number_;
  a.tx_.peer_inbox = &b.inbox_;
  b.tx_.peer_type = a.owner_.type;
  b.tx_.peer_index = a.owner_.index;
  b.tx_.peer_number = a.number_;
  b.tx_.peer_inbox = &a.inbox_;
  // A cut-through receiver cannot act before the LRH (with the DLID) is in.
  const sim::Time header_time = sim::transfer_time(lrh_bytes, link.data_rate);
  for (auto [tx, rx] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    tx->tx_.peer_arrival_after_tail = rx->config_.arrival_after_tail;
    tx->tx_.peer_arrival_delay =
        rx->config_.arrival_after_tail ? rx->config_.arrival_delay : std::max(rx->config_.arrival_delay, header_time);
  }
  // Link initialization ends with each side holding the other's first FCCL (IBA §7.9.4); its timing is left out.
  for (int vl = 0; vl < vls; ++vl) {
    a.vls_[vl].sender.on_flow_control(b.vls_[vl].receiver.fccl());
    b.vls_[vl].sender.on_flow_control(a.vls_[vl].receiver.fccl());
    a.vls_[vl].last_sent_fccl = static_cast<std::uint16_t>(a.vls_[vl].receiver.fccl());
    b.vls_[vl].last_sent_fccl = static_cast<std::uint16_t>(b.vls_[vl].receiver.fccl());
  }
}

void Port::add_xmit_wait(sim::Time start_at) {
  const sim::Time waited = start_at - blocked_since_;
  counters_.xmit_wait += waited;
  // The hardware counts ticks in which nothing at all was sent: a wait's whole ticks.
  if (xmit_wait_tick_ > sim::Time::zero())
    counters_.xmit_wait_ticks += static_cast<std::uint64_t>(waited.ps() / xmit_wait_tick_.ps());
  blocked_since_ = sim::Time::max();
}

void Port::trace_packet(const Packet& packet, sim::Time start_at, sim::Time end_at) {
  tracer_->name_track(owner_component_id_, number_, "port " + std::to_string(number_));
  tracer_->span(owner_component_id_, number_, "link", to_string(packet.opcode), start_at, end_at,
                "\"dlid\": " + std::to_string(packet.dlid) + ", \"slid\": " + std::to_string(packet.slid) +
                    ", \"dest_qpn\": " + std::to_string(packet.dest_qpn) + ", \"psn\": " + std::to_string(packet.psn) +
                    ", \"vl\": " + std::to_string(packet.vl) +
                    ", \"wire_bytes\": " + std::to_string(packet.wire_bytes));
}

void Port::note_blocked(sim::Simulator& sim) {
  const sim::Time now = sim.now();
  if (blocked_since_ == sim::Time::max()) {
    blocked_since_ = now;
  }
  absorb_flow_control(now);
  if (inbox_.empty()) {
    inbox_.owner_waiting = true; // the peer's next FC packet schedules our wake-up
    return;
  }
  const sim::Time next_at = inbox_.front_arrives_at();
  if (wake_scheduled_at_ <= now || next_at < wake_scheduled_at_) {
    wake_scheduled_at_ = next_at;
    sim.schedule(next_at, owner_, static_cast<std::uint8_t>(PortEventKind::flow_control_arrives), number_);
  }
}

void Port::absorb_flow_control(sim::Time now) {
  while (!inbox_.empty() && inbox_.front_arrives_at() <= now) {
    const FlowControlUpdate update = inbox_.front();
    vls_[update.vl].sender.on_flow_control(update.fccl);
    // The FCTBS it carries is not compared with ABR here (IBA §7.9.4 resynchronises ABR to it, which recovers
    // blocks lost to errors): nothing is lost on these links, and packets sent after this FC packet may already
    // be counted in ABR when it is taken in lazily. credit-conservation checks FCTBS - ABR against the blocks in
    // flight instead, exactly.
    inbox_.pop_front();
  }
}

void Port::send_pending_flow_control(sim::Simulator& sim) {
  if (down_) { // nothing leaves a port whose link is down; link_up() resynchronises the credits
    tx_.flow_control_pending = 0;
    return;
  }
  while (tx_.flow_control_pending != 0) {
    const auto vl = static_cast<std::uint8_t>(std::countr_zero(tx_.flow_control_pending));
    tx_.flow_control_pending &= static_cast<std::uint16_t>(tx_.flow_control_pending - 1);
    tx_.sent_since_flow_control &= static_cast<std::uint16_t>(~(1u << vl));
    tx_.busy_until = std::max(sim.now(), tx_.busy_until) + flow_control_packet_time_;
    ++flow_control_pkts_;
    if (tx_.lossy && flow_control_corrupted()) {
      // The peer drops it on its CRC. FCTBS and FCCL are absolute, so the next FC packet for this VL heals the
      // loss: the refresh timer sends one even if nothing else changes.
      ++peer_->counters_.flow_control_lost;
      ++peer_->counters_.symbol_errors;
      tx_.sent_since_flow_control |= static_cast<std::uint16_t>(1u << vl);
      vls_[vl].last_sent_fctbs = static_cast<std::uint16_t>(~0u); // differs from any 12-bit FCTBS
      arm_refresh(sim);
      continue;
    }
    const std::uint32_t fctbs = vls_[vl].sender.fctbs();
    const std::uint32_t fccl = vls_[vl].receiver.fccl();
    const sim::Time arrives_at = tx_.busy_until + tx_.propagation_delay;
    tx_.peer_inbox->push_back({arrives_at, static_cast<std::uint16_t>(fccl), vl});
    if (tx_.peer_inbox->owner_waiting) {
      tx_.peer_inbox->owner_waiting = false;
      sim.schedule(arrives_at, tx_.peer(), static_cast<std::uint8_t>(PortEventKind::flow_control_arrives),
                   tx_.peer_number);
    }
    vls_[vl].last_sent_fctbs = static_cast<std::uint16_t>(fctbs);
    vls_[vl].last_sent_fccl = static_cast<std::uint16_t>(fccl);
  }
}

void Port::uncount_rcv(const Packet& packet) {
  const std::uint64_t words = (packet.wire_bytes + 3) / 4;
  vls_[packet.vl].rcv_data_words -= words;
  vls_[packet.vl].rcv_pkts -= 1;
  if (tx_.rcv_sl == mixed_sls) // else the packet's SL is the port's one, whose count is the total
    rcv_data_words_by_sl_[packet.sl & 15u] -= words;
}

void Port::count_by_sl(std::uint8_t& sl_so_far, std::array<std::uint64_t, 16>& by_sl,
                       std::uint64_t VlState::*words_per_vl, std::uint8_t sl, std::uint64_t words) {
  if (sl_so_far == no_sl) {
    sl_so_far = sl;
    return;
  }
  if (sl_so_far != mixed_sls) {
    std::uint64_t before = 0;
    for (const VlState& state : vls_)
      before += state.*words_per_vl;
    by_sl[sl_so_far] = before - words;
    sl_so_far = mixed_sls;
  }
  by_sl[sl] += words;
}

bool Port::on_vl15_arrives(const Packet& packet) {
  if (down_) {
    uncount_rcv(packet); // never received
    ++counters_.lost_on_wire;
    return false;
  }
  if (vl15_used_ >= config_.vl15_buffer_packets) {
    ++counters_.vl15_dropped;
    return false;
  }
  ++vl15_used_;
  return true;
}

bool Port::on_unexpected_arrival(const sim::Simulator& sim, const Packet& packet) {
  if (!down_)
    overrun(sim, packet);
  // It was on the wire when the link went down: it never arrives.
  uncount_rcv(packet);
  ++counters_.lost_on_wire;
  return false;
}

bool Port::on_corrupted_arrival(sim::Simulator& sim, const Packet& packet) {
  if (down_) {
    ++counters_.lost_on_wire;
    return false;
  }
  ++counters_.symbol_errors;
  ++counters_.rcv_errors;
  if (packet.vl == management_vl)
    return false; // VL15 holds no credits
  // The sender counted its blocks in FCTBS. A real receiver never counts them in ABR and resynchronises ABR to
  // the next FCTBS; taking and freeing them at once leaves every FCCL the same and keeps the accounting exact.
  const std::uint32_t blocks = blocks_for(packet.wire_bytes);
  VlState& state = vls_[packet.vl];
  if (packet.vl >= tx_.data_vls || !state.receiver.on_packet_arrived(blocks))
    overrun(sim, packet);
  state.blocks_received += blocks;
  release(sim, packet.vl, packet.wire_bytes);
  return false;
}

void Port::count_loss(Loss why) {
  switch (why) {
  case Loss::xmit_discard:
    ++counters_.xmit_discards;
    return;
  case Loss::switch_relay:
    ++counters_.rcv_switch_relay_errors;
    return;
  case Loss::in_buffer:
    ++counters_.lost_in_buffer;
    return;
  }
}

void Port::discard_buffered(std::uint8_t vl, std::uint32_t wire_bytes) {
  if (vl == management_vl) {
    release_vl15();
    return;
  }
  vls_[vl].receiver.on_packet_freed(blocks_for(wire_bytes));
}

void Port::set_bit_error_rate(double bit_error_rate, sim::Rng rng) {
  if (bit_error_rate <= 0) {
    errors_.reset();
    tx_.lossy = false;
    return;
  }
  errors_ = std::make_unique<BitErrors>(BitErrors{bit_error_rate, rng});
  tx_.lossy = true;
}

void Port::corrupt_maybe(Packet& packet) {
  BitErrors& e = *errors_;
  if (packet.wire_bytes != e.memo_wire_bytes) {
    // P(at least one of n bits wrong) = 1 - (1 - BER)^n, in a form exact for tiny rates.
    e.memo_wire_bytes = packet.wire_bytes;
    e.memo_probability = -std::expm1(8.0 * packet.wire_bytes * std::log1p(-e.bit_error_rate));
  }
  packet.corrupted = e.rng.bernoulli(e.memo_probability);
}

bool Port::flow_control_corrupted() {
  BitErrors& e = *errors_;
  return e.rng.bernoulli(-std::expm1(8.0 * flow_control_packet_bytes * std::log1p(-e.bit_error_rate)));
}

void link_down(sim::Simulator& sim, Port& a, Port& b) {
  assert(a.peer_ == &b && b.peer_ == &a && "link_down() on ports that are not one link");
  for (Port* side : {&a, &b}) {
    if (side->down_)
      continue;
    if (side->blocked_since_ != sim::Time::max())
      side->add_xmit_wait(sim.now());
    side->down_ = true;
    ++side->counters_.link_downed;
    side->up_data_vls_ = side->tx_.data_vls;
    // No VL is operational, so every data packet still arriving takes the lost path, and neither end may start
    // a packet.
    side->tx_.data_vls = 0;
    side->tx_.connected = false;
    side->tx_.busy_until = sim::Time::max();
    side->tx_.data_busy_until = sim::Time::max();
    side->tx_.flow_control_pending = 0;
    side->tx_.sent_since_flow_control = 0;
    side->inbox_ = FlowControlInbox{}; // flow-control packets on the wire are lost
    side->wake_scheduled_at_ = sim::Time::max();
  }
}

void link_up(sim::Simulator& sim, Port& a, Port& b) {
  assert(a.peer_ == &b && b.peer_ == &a && "link_up() on ports that are not one link");
  if (!a.down_ && !b.down_)
    return;
  for (Port* side : {&a, &b}) {
    side->down_ = false;
    side->tx_.data_vls = side->up_data_vls_;
    side->tx_.connected = true;
    side->tx_.busy_until = sim.now();
    side->tx_.data_busy_until = sim.now();
  }
  // Link initialisation's flow-control exchange: each receiver takes its sender's FCTBS as ABR (IBA §7.9.4), so
  // blocks lost with the link stop counting, and the sender holds the resulting FCCL.
  for (auto [tx, rx] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    for (int vl = 0; vl < tx->tx_.data_vls; ++vl) {
      Port::VlState& out = tx->vls_[vl];
      Port::VlState& in = rx->vls_[vl];
      in.receiver.on_fctbs(out.sender.fctbs());
      in.blocks_received = out.blocks_sent;
      out.sender.on_flow_control(in.receiver.fccl());
      in.last_sent_fccl = static_cast<std::uint16_t>(in.receiver.fccl());
    }
  }
  for (Port* side : {&a, &b})
    sim.schedule(sim.now(), side->owner_, static_cast<std::uint8_t>(PortEventKind::flow_control_arrives),
                 side->number_);
}

void Port::overrun(const sim::Simulator& sim, const Packet& packet) const {
  const std::uint32_t blocks = blocks_for(packet.wire_bytes);
  throw sim::InvariantViolation(
      std::string(credit_conservation_id), name(sim, packet.vl),
      "a packet of " + std::to_string(blocks) + " blocks arrived with " +
          std::to_string(packet.vl < tx_.data_vls ? vls_[packet.vl].receiver.free_blocks() : 0) +
          " blocks free: the sender overran its credits",
      "data_vls=" + std::to_string(tx_.data_vls) +
          " used_blocks=" + std::to_string(packet.vl < tx_.data_vls ? vls_[packet.vl].receiver.used_blocks() : 0));
}

void Port::release_vl15() {
  assert(vl15_used_ > 0);
  --vl15_used_;
}

void Port::on_flow_control_arrives(sim::Simulator& sim) {
  absorb_flow_control(sim.now());
}

void Port::on_flow_control_refresh(sim::Simulator& sim) {
  tx_.refresh_armed = false;
  if (down_)
    return;
  // Only a VL that has sent since its last FC packet can differ from what that packet carried: its FCTBS moved
  // (or wrapped back to the same 12 bits, which the comparison leaves out, as before).
  for (std::uint16_t vls = tx_.sent_since_flow_control; vls != 0; vls &= static_cast<std::uint16_t>(vls - 1)) {
    const int vl = std::countr_zero(vls);
    if (vls_[vl].sender.fctbs() != vls_[vl].last_sent_fctbs || vls_[vl].receiver.fccl() != vls_[vl].last_sent_fccl) {
      tx_.flow_control_pending |= static_cast<std::uint16_t>(1u << vl);
    }
  }
  tx_.sent_since_flow_control = 0;
  if (tx_.flow_control_pending != 0 && may_start(sim.now())) {
    flush_flow_control(sim);
  }
  // A pending FC packet left here goes out before the data packet in flight's successor, or at the owner's
  // tx_done (flush_flow_control). The timer re-arms only on further activity, so an idle fabric goes quiet.
}

void Port::arm_refresh_timer(sim::Simulator& sim) {
  if (config_.flow_control_refresh <= sim::Time::zero()) {
    return;
  }
  tx_.refresh_armed = true;
  sim.schedule_in(config_.flow_control_refresh, owner_, static_cast<std::uint8_t>(PortEventKind::flow_control_refresh),
                  number_);
}

PortCounters Port::counters() const {
  PortCounters snapshot = counters_;
  snapshot.flow_control_pkts = flow_control_pkts_;
  for (int vl = 0; vl < vl_slots; ++vl) {
    snapshot.xmit_data_words_by_vl[vl] = vls_[vl].xmit_data_words;
    snapshot.xmit_pkts_by_vl[vl] = vls_[vl].xmit_pkts;
    snapshot.xmit_data_words += vls_[vl].xmit_data_words;
    snapshot.xmit_pkts += vls_[vl].xmit_pkts;
    snapshot.rcv_data_words += vls_[vl].rcv_data_words;
    snapshot.rcv_pkts += vls_[vl].rcv_pkts;
  }
  snapshot.xmit_data_words_by_sl = xmit_data_words_by_sl_;
  snapshot.rcv_data_words_by_sl = rcv_data_words_by_sl_;
  if (tx_.xmit_sl < no_sl)
    snapshot.xmit_data_words_by_sl[tx_.xmit_sl] = snapshot.xmit_data_words;
  if (tx_.rcv_sl < no_sl)
    snapshot.rcv_data_words_by_sl[tx_.rcv_sl] = snapshot.rcv_data_words;
  return snapshot;
}

std::uint8_t Port::port_of(const sim::Event& event) {
  switch (static_cast<PortEventKind>(event.kind)) {
  case PortEventKind::flow_control_arrives:
  case PortEventKind::flow_control_refresh:
    return static_cast<std::uint8_t>(event.handle);
  case PortEventKind::packet_arrives:
    break;
  }
  assert(false && "packet_arrives carries its port in the packet");
  return 0;
}

std::string Port::name(const sim::Simulator& sim, int vl) const {
  return sim.component_name(owner_component_id_) + "/p" + std::to_string(number_) + " vl" + std::to_string(vl);
}

std::string check_credit_conservation(const Port& tx, const Port& rx, bool quiescent) {
  std::string problems;
  for (int vl = 0; vl < tx.tx_.data_vls; ++vl) {
    const std::uint32_t in_flight = tx.vls_[vl].blocks_sent - rx.vls_[vl].blocks_received;
    // FC packets still on the link count as delivered: the newest one is what the sender will hold.
    CreditSender sender = tx.vls_[vl].sender;
    for (std::uint32_t i = 0; i < tx.inbox_.size(); ++i) {
      if (tx.inbox_[i].vl == vl) {
        sender.on_flow_control(tx.inbox_[i].fccl);
      }
    }
    const std::string problem =
        check_credit_conservation(sender, rx.vls_[vl].receiver, static_cast<std::uint32_t>(in_flight),
                                  quiescent ? FcclDelivery::latest : FcclDelivery::pending);
    if (!problem.empty()) {
      // Appended piece by piece: GCC 12 warns falsely (-Wrestrict, bug 105329) on "literal" + std::string.
      problems += 'p';
      problems += std::to_string(tx.number_);
      problems += "->p";
      problems += std::to_string(rx.number_);
      problems += " vl";
      problems += std::to_string(vl);
      problems += ": ";
      problems += problem;
      problems += "; ";
    }
  }
  return problems;
}

std::string validate_port_parameters(const std::string& link_widths, const std::string& link_speeds,
                                     std::uint32_t vl_cap, std::uint32_t input_buffer_bytes_per_port) {
  if (!parse_width_set(link_widths))
    return "link_widths: expected a comma-separated list of distinct widths (1x, 2x, 4x, 8x, 12x), got \"" +
           link_widths + "\"";
  if (!parse_speed_set(link_speeds))
    return "link_speeds: expected a comma-separated list of distinct speeds (SDR, DDR, QDR, FDR10, FDR, EDR, HDR, "
           "NDR), got \"" +
           link_speeds + "\"";
  if (vl_cap != 1 && vl_cap != 2 && vl_cap != 4 && vl_cap != 8 && vl_cap != 15)
    return "vl_cap: expected 1, 2, 4, 8 or 15, got " + std::to_string(vl_cap);
  if (input_buffer_bytes_per_port / vl_cap / block_bytes < largest_packet_blocks)
    return "input_buffer_bytes_per_port: expected at least " +
           std::to_string(largest_packet_blocks * block_bytes * vl_cap) + " (one largest packet per VL), got " +
           std::to_string(input_buffer_bytes_per_port);
  return "";
}

std::optional<std::vector<std::uint16_t>> parse_device_ids(std::string_view text) {
  std::vector<std::uint16_t> ids;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ')
      item.remove_suffix(1);
    if (!item.starts_with("0x") || item.size() < 3 || item.size() > 6)
      return std::nullopt;
    unsigned value = 0;
    for (const char c : item.substr(2)) {
      const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (digit < 0)
        return std::nullopt;
      value = value * 16 + static_cast<unsigned>(digit);
    }
    ids.push_back(static_cast<std::uint16_t>(value));
    if (comma == std::string_view::npos)
      break;
    text.remove_prefix(comma + 1);
    if (text.empty())
      return std::nullopt; // a trailing comma
  }
  return ids;
}

std::string validate_device_ids(const std::string& device_ids) {
  if (!parse_device_ids(device_ids))
    return "device_ids: expected comma-separated lowercase hexadecimal device IDs as ibnetdiscover prints them "
           "(0x1017), each at most 0xffff, or \"\", got \"" +
           device_ids + "\"";
  return "";
}

} // namespace ib::link
