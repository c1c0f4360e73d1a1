#include "models/pcie/bus.h"

#include <algorithm>
#include <cassert>
#include <memory>

#include "models/pcie/pcie_rate.h"

namespace ib::pcie {

namespace {

constexpr int posted = 0;
constexpr int non_posted = 1;
constexpr int completion = 2;

/// Order of deferred events: by time, then seq.
template <class D>
bool later(const D& a, const D& b) {
  return a.time > b.time || (a.time == b.time && a.seq > b.seq);
}

/// Data credits a TLP takes: its payload in 16-byte units; an MRd carries none (the data comes back as CplD).
std::uint64_t data_credits_of(TlpKind kind, std::uint32_t payload_bytes) {
  return kind == TlpKind::mrd ? 0 : data_credits(payload_bytes);
}

} // namespace

BusConfig bus_config(const LinkParams& link, const HostParams& host, bool addresses_64bit) {
  BusConfig c{};
  const Generation generation = *parse_generation(link.generation);
  const Width width = *parse_width(link.width);
  c.data_rate = data_rate(generation, width);
  c.propagation = link.one_way_latency;
  c.max_payload_bytes = link.max_payload_bytes;
  c.max_read_request_bytes = link.max_read_request_bytes;
  c.read_completion_boundary_bytes = link.read_completion_boundary_bytes;
  c.completion_split = *parse_completion_split(link.completions_split_at);
  c.ecrc = link.ecrc;
  c.addresses_64bit = addresses_64bit;
  const auto advertised = [&](LinkEnd end) {
    return CreditAdvertisement{
        advertised_credits(link, end, CreditType::ph),   advertised_credits(link, end, CreditType::pd),
        advertised_credits(link, end, CreditType::nph),  advertised_credits(link, end, CreditType::npd),
        advertised_credits(link, end, CreditType::cplh), advertised_credits(link, end, CreditType::cpld)};
  };
  c.root_port = advertised(LinkEnd::root_port);
  c.device = advertised(LinkEnd::device);
  c.device_tags = link.device_tags;
  // pcie-model (and so the reference TLP bandwidths) charges one DLLP per interval of that many bytes of the
  // link; the spec's symbol times are per lane, which would make DLLPs 16 times rarer on x16.
  c.ack_interval = sim::transfer_time(link.ack_interval_symbols, c.data_rate);
  c.update_fc_interval = sim::transfer_time(link.update_fc_interval_symbols, c.data_rate);
  c.memory_read_base = host.root_complex_latency + host.memory_read_latency;
  c.memory_read_ps_per_byte = static_cast<std::uint32_t>(host.memory_read_ns_per_byte * 1000.0 + 0.5);
  c.posted_accept_latency = host.root_complex_latency;
  c.memory_write_latency = host.root_complex_latency + host.memory_write_latency;
  c.mmio_cpu_cost = host.mmio_write_cpu_cost;
  return c;
}

Bus::Bus(const BusConfig& config, sim::Target owner, std::uint8_t first_kind, BusClient& client)
    : config_(config), owner_(owner), first_kind_(first_kind), client_(client) {
  lanes_[0].direction = Direction::upstream;
  lanes_[1].direction = Direction::downstream;
  const auto advertise = [](Credits& c, const CreditAdvertisement& a) {
    const std::array<std::uint32_t, 3> headers{a.posted_headers, a.non_posted_headers, a.completion_headers};
    const std::array<std::uint32_t, 3> data{a.posted_data, a.non_posted_data, a.completion_data};
    for (int k = 0; k < 3; ++k) {
      c.infinite_headers[k] = headers[k] == 0;
      c.infinite_data[k] = data[k] == 0;
      c.headers_limit[k] = c.initial_headers[k] = headers[k];
      c.data_limit[k] = c.initial_data[k] = data[k];
    }
  };
  advertise(lanes_[0].credits, config.root_port); // the device sends against the root port's buffers
  advertise(lanes_[1].credits, config.device);    // the root complex sends against the device's
  dllp_wire_ = sim::transfer_time(dllp_bytes, config.data_rate);
}

bool Bus::idle() const {
  // A credit return on its way is a deferred event still to come, whether or not it has an event of its own.
  const bool returns_pending =
      config_.defer_events &&
      (!lanes_[0].returns_in_flight.empty() || !lanes_[1].returns_in_flight.empty() || !tags_returning_.empty());
  return outstanding_ == 0 && tlps_.live() == 0 && !has_deferred() && !returns_pending;
}

void Bus::dma_read(sim::Simulator& sim, std::uint64_t address, std::uint32_t size_bytes, std::uint32_t token) {
  assert(size_bytes > 0);
  enter(sim);
  const TransferHandle t = transfers_.acquire(Transfer{Op::read, token, address, size_bytes});
  ++outstanding_;
  reads_waiting_.push_back(t);
  issue_read_requests(sim);
  keep_moments(sim);
}

void Bus::dma_write(sim::Simulator& sim, std::uint64_t address, std::uint32_t size_bytes, std::uint32_t token,
                    bool notify_done) {
  assert(size_bytes > 0);
  enter(sim);
  const TransferHandle t = transfers_.acquire(Transfer{Op::write, token, address, size_bytes});
  ++outstanding_;
  const std::uint64_t end = address + size_bytes;
  for_each_write_tlp(address, size_bytes, config_.max_payload_bytes, [&](std::uint64_t at, std::uint32_t bytes) {
    const TlpHandle h = tlps_.acquire(make_tlp(TlpKind::mwr, at, bytes, config_.addresses_64bit, t));
    tlps_[h].last_of_transfer = at + bytes == end;
    tlps_[h].end_seen = notify_done && tlps_[h].last_of_transfer;
    queue(sim, Direction::upstream, h);
  });
  transfers_[t].requested = size_bytes;
  keep_moments(sim);
}

void Bus::mmio_write(sim::Simulator& sim, std::uint32_t size_bytes, std::uint32_t chunk_bytes, std::uint32_t token) {
  assert(size_bytes > 0 && chunk_bytes > 0);
  enter(sim);
  const TransferHandle t = transfers_.acquire(Transfer{Op::mmio, token, 0, size_bytes});
  transfers_[t].chunk = chunk_bytes;
  ++outstanding_;
  const std::uint32_t stores = (size_bytes + chunk_bytes - 1) / chunk_bytes;
  post(sim, now_ + config_.mmio_cpu_cost * stores, Kind::mmio_issue, Direction::downstream, t.value, false);
}

std::uint64_t Bus::post(sim::Simulator& sim, sim::Time at, Kind kind, Direction d, std::uint32_t handle,
                        bool deferrable) {
  if (!deferrable || !config_.defer_events) {
    // From a deferred event too: keep_moments() holds the bus to catching up before such a moment.
    assert(at >= sim.now());
    sim.schedule(at, owner_, static_cast<std::uint8_t>(first_kind_ + static_cast<int>(kind)), handle);
    return 0;
  }
  const std::uint64_t seq = sim.reserve_seq();
  post_reserved(at, seq, kind, d, handle);
  return seq;
}

void Bus::post_reserved(sim::Time at, std::uint64_t seq, Kind kind, Direction d, std::uint32_t handle) {
  const Source source = source_of(kind, d);
  (source == memory_reads ? memory_reads_ : deferred_).insert(Deferred{at, seq, handle, kind, source});
}

void Bus::DeferredQueue::insert(const Deferred& event) {
  if (tail_ == capacity_) {
    const std::uint32_t live = tail_ - head_;
    if (live > capacity_ / 2 || capacity_ == 0) { // grow; otherwise slide the live events to the start
      capacity_ = std::max<std::uint32_t>(16, 2 * capacity_);
      auto grown = std::make_unique<Deferred[]>(capacity_);
      std::copy(items_.get() + head_, items_.get() + tail_, grown.get());
      items_ = std::move(grown);
    } else {
      std::copy(items_.get() + head_, items_.get() + tail_, items_.get());
    }
    head_ = 0;
    tail_ = live;
  }
  // Sorted in from the back: most events are posted later than every pending one, or nearly.
  std::uint32_t i = tail_++;
  for (; i > head_ && later(items_[i - 1], event); --i)
    items_[i] = items_[i - 1];
  items_[i] = event;
  ++count_[event.source];
  present_ = static_cast<std::uint16_t>(present_ | (1u << event.source));
}

Bus::DeferredQueue* Bus::earliest_queue() {
  if (memory_reads_.empty())
    return deferred_.empty() ? nullptr : &deferred_;
  if (deferred_.empty() || later(deferred_.front(), memory_reads_.front()))
    return &memory_reads_;
  return &deferred_;
}

Bus::Source Bus::source_of(Kind kind, Direction d) {
  const bool up = d == Direction::upstream;
  switch (kind) {
  case Kind::tlp_arrives:
    return up ? arrivals_up : arrivals_down;
  case Kind::credits_arrive:
    return up ? credits_up : credits_down;
  case Kind::posted_accepted:
    return accepts;
  case Kind::transmit_done:
    return up ? done_up : done_down;
  case Kind::update_fc_due:
    return up ? update_fc_up : update_fc_down;
  case Kind::memory_read_done:
    return memory_reads;
  case Kind::tag_returned:
    return tag_wakes;
  default:
    assert(false && "not a deferrable bus event");
    return source_count;
  }
}

void Bus::keep_moments(sim::Simulator& sim) {
  if (settling_ || !config_.defer_events)
    return;
  sim::Time next_deferred = deferred_.empty() ? sim::Time::max() : deferred_.front().time;
  if (!memory_reads_.empty())
    next_deferred = std::min(next_deferred, memory_reads_.front().time);
  // Credit returns are deferred events too, without an entry of their own unless a sender waits for them.
  for (Lane& l : lanes_) {
    absorb_returns(l);
    if (!l.returns_in_flight.empty())
      next_deferred = std::min(next_deferred, l.returns_in_flight.front().arrives);
  }
  sim::Time horizon = reads_waiting_.empty() ? sim::Time::max() : next_deferred;
  // A memory read's end, deferred, before its first completion can arrive.
  if (!memory_reads_.empty())
    horizon = std::min(horizon, memory_reads_.front().time + config_.propagation);
  for (const Lane& l : lanes_) {
    if (l.visible_queued[0] + l.visible_queued[1] + l.visible_queued[2] == 0)
      continue;
    sim::Time free = std::max(now_, l.busy_until);
    if (stalled(l)) {
      if (next_deferred == sim::Time::max())
        continue; // nothing will ever bring its credits
      free = std::max(free, next_deferred);
    }
    for (int k = 0; k < 3; ++k)
      if (l.visible_queued[k] > 0)
        horizon = std::min(horizon, free + l.wire_before_visible[k] + l.visible_slack[k]);
  }
  if (horizon >= checkpoint_at_ && checkpoint_at_ >= now_)
    return;
  checkpoint_at_ = horizon;
  if (horizon != sim::Time::max())
    sim.schedule(horizon, owner_, static_cast<std::uint8_t>(first_kind_ + static_cast<int>(Kind::deferred_due)));
}

Bus::Tlp Bus::make_tlp(TlpKind kind, std::uint64_t address, std::uint32_t payload_bytes, bool addresses_64bit,
                       TransferHandle transfer) {
  // An MRd carries no data: payload_bytes is what it asks for.
  const std::uint32_t wire = wire_bytes(kind, kind == TlpKind::mrd ? 0 : payload_bytes, addresses_64bit, config_.ecrc);
  const std::uint8_t credit_class = kind == TlpKind::mrd ? non_posted : kind == TlpKind::mwr ? posted : completion;
  assert(payload_bytes <= 4096 && wire <= 0xffff);
  Tlp tlp{0,
          address,
          wire_time(wire),
          transfer,
          static_cast<std::uint16_t>(payload_bytes),
          static_cast<std::uint16_t>(wire),
          kind,
          credit_class};
  return tlp;
}

void Bus::queued_wire_add(Lane& l, const Tlp& tlp, bool is_visible) {
  const int k = tlp.credit_class;
  if (is_visible) {
    // The least slack of every visible TLP queued, not the first's: a later one may have less (a notified write's
    // end behind a CQE write whose visibility is further off), and it leaves no earlier than the wire ahead of the
    // first.
    const bool first = l.visible_queued[k]++ == 0;
    if (first)
      l.wire_before_visible[k] = l.queued_wire[k];
    l.fold_least_slack(k, slack(l.direction, tlp), first);
  }
  l.queued_wire[k] += tlp.wire;
}

void Bus::queued_wire_remove(Lane& l, const Tlp& tlp, bool is_visible) {
  // `tlp` has just left the front of its queue.
  const int k = tlp.credit_class;
  const sim::Time wire = tlp.wire;
  l.queued_wire[k] -= wire;
  if (!is_visible) {
    if (l.visible_queued[k] > 0)
      l.wire_before_visible[k] -= wire;
    return;
  }
  if (--l.visible_queued[k] == 0)
    return;
  // The next visible TLP: sum what lies ahead of it. The least slack of the visible ones left changes only if this
  // was the last with it (a queue of MRds, all alike, never needs the rescan).
  const bool rescan = slack(l.direction, tlp) == l.visible_slack[k] && --l.visible_at_least_slack[k] == 0;
  sim::Time ahead;
  bool found = false;
  const sim::Ring<TlpHandle>& q = l.queues[k];
  for (std::uint32_t i = 0; i < q.size(); ++i) {
    const Tlp& t = tlps_[q[i]];
    if (visible(l.direction, t)) {
      if (!rescan)
        break;
      l.fold_least_slack(k, slack(l.direction, t), !found);
      found = true;
    } else if (!found) {
      ahead += t.wire;
    }
  }
  l.wire_before_visible[k] = ahead;
}

void Bus::catch_up(sim::Simulator& sim, bool inclusive) {
  const sim::Time now = now_;
  const std::uint64_t seq = seq_;
  while (deferred_before(now, seq, inclusive)) {
    DeferredQueue& queue = *earliest_queue();
    const Deferred due = queue.front();
    queue.pop_front();
    now_ = due.time;
    seq_ = due.seq;
    ++deferred_handled_;
    handle(sim, due.kind, due.handle);
  }
  now_ = now;
  seq_ = seq;
}

void Bus::settle(sim::Simulator& sim, sim::Time until) {
  settling_ = true;
  for (DeferredQueue* queue = earliest_queue(); queue != nullptr; queue = earliest_queue()) {
    const Deferred due = queue->front();
    if (due.time > until)
      break;
    queue->pop_front();
    now_ = due.time;
    seq_ = due.seq;
    ++deferred_handled_;
    handle(sim, due.kind, due.handle);
    sim.note_deferred_activity(due.time);
  }
  if (config_.defer_events) {
    for (Lane& l : lanes_) {
      while (!l.returns_in_flight.empty() && l.returns_in_flight.front().arrives <= until) {
        const CreditReturn& r = l.returns_in_flight.front();
        raise_limits(l, r);
        sim.note_deferred_activity(r.arrives);
        l.returns_in_flight.pop_front();
      }
    }
    while (!tags_returning_.empty() && tags_returning_.front().arrives <= until) {
      --tags_in_use_;
      sim.note_deferred_activity(tags_returning_.front().arrives);
      tags_returning_.pop_front();
    }
  }
  settling_ = false;
}

void Bus::issue_read_requests(sim::Simulator& sim) {
  absorb_tag_returns();
  while (!reads_waiting_.empty() && tags_in_use_ < config_.device_tags) {
    const TransferHandle t = reads_waiting_.front();
    Transfer& read = transfers_[t];
    const std::uint64_t at = read.address + read.requested;
    const std::uint32_t bytes =
        tlp_detail::request_chunk(at, read.bytes - read.requested, config_.max_read_request_bytes);
    const TlpHandle h = tlps_.acquire(make_tlp(TlpKind::mrd, at, bytes, config_.addresses_64bit, t));
    read.requested += bytes;
    ++tags_in_use_;
    if (read.requested == read.bytes)
      reads_waiting_.pop_front();
    queue(sim, Direction::upstream, h);
  }
  // Reads wait for a tag: wake them when the first on its way back arrives (a completion picked from now on, while
  // they wait, keeps its arrival event).
  if (!reads_waiting_.empty() && !tags_returning_.empty() && !tag_wake_pending_) {
    tag_wake_pending_ = true;
    const TagReturn& r = tags_returning_.front();
    post_reserved(r.arrives, r.seq, Kind::tag_returned, Direction::upstream, 0);
  }
}

void Bus::queue(sim::Simulator& sim, Direction d, TlpHandle h) {
  Tlp& tlp = tlps_[h];
  tlp.age = next_age_++;
  tlp.direction = d;
  lane(d).queues[tlp.credit_class].push_back(h);
  queued_wire_add(lane(d), tlp, visible(d, tlp));
  try_transmit(sim, d);
}

bool Bus::credits_cover(const Lane& l, const Tlp& tlp) const {
  const int k = tlp.credit_class;
  const Credits& c = l.credits;
  const bool headers = c.infinite_headers[k] || c.headers_consumed[k] + 1 <= c.headers_limit[k];
  const std::uint64_t data = data_credits_of(tlp.kind, tlp.payload_bytes);
  const bool payload = data == 0 || c.infinite_data[k] || c.data_consumed[k] + data <= c.data_limit[k];
  return headers && payload;
}

void Bus::try_transmit(sim::Simulator& sim, Direction d) {
  Lane& l = lane(d);
  if (l.transmitting)
    return;
  if (config_.defer_events)
    absorb_returns(l);
  // A train (next_pick_certain()): picks whose moment is certain are made now, up to the propagation delay ahead.
  const sim::Time train_end = now_ + config_.propagation;
  for (;;) {
    // The oldest head whose credits allow, except that nothing passes an older posted TLP.
    const std::uint64_t oldest_posted =
        l.queues[posted].empty() ? ~std::uint64_t{0} : tlps_[l.queues[posted].front()].age;
    int pick = -1;
    bool waiting = false;
    for (int k = 0; k < 3; ++k) {
      if (l.queues[k].empty())
        continue;
      waiting = true;
      const Tlp& head = tlps_[l.queues[k].front()];
      if (k != posted && head.age > oldest_posted)
        continue;
      if (!credits_cover(l, head))
        continue;
      if (pick < 0 || head.age < tlps_[l.queues[pick].front()].age)
        pick = k;
    }
    if (pick < 0) {
      if (waiting) {
        ++l.counters.credit_stalls;
        wake_at_next_return(d);
      }
      return;
    }
    const TlpHandle h = l.queues[pick].front();
    l.queues[pick].pop_front();
    const Tlp& tlp = tlps_[h];
    queued_wire_remove(l, tlp, visible(d, tlp));
    if (!l.credits.infinite(pick))
      ++l.finite_in_flight;
    l.credits.headers_consumed[pick] += 1;
    l.credits.data_consumed[pick] += data_credits_of(tlp.kind, tlp.payload_bytes);
    const sim::Time start = std::max(now_, l.busy_until);
    const sim::Time wire = tlp.wire;
    l.busy_until = start + wire;
    l.counters.busy += wire;
    l.counters.tlps[static_cast<int>(tlp.kind)] += 1;
    l.counters.tlp_bytes[static_cast<int>(tlp.kind)] += tlp.wire_bytes;
    if (tlp.kind != TlpKind::mrd)
      l.counters.payload_bytes += tlp.payload_bytes;
    // The cadence DLLPs follow the TLP once an interval's worth of TLP time has gone out since the last ones.
    if (config_.cadence_dllps) {
      l.sent_since_ack += wire;
      l.sent_since_update_fc += wire;
    }
    while (l.sent_since_ack >= config_.ack_interval) {
      l.sent_since_ack -= config_.ack_interval;
      send_dllp(sim, l);
      ++l.counters.ack_dllps;
    }
    while (l.sent_since_update_fc >= config_.update_fc_interval) {
      l.sent_since_update_fc -= config_.update_fc_interval;
      send_dllp(sim, l);
      ++l.counters.update_fc_dllps;
    }
    l.transmitting = true;
    l.sending = h;
    // The serializer's end keeps its moment only if it ends a write; keep_moments() sees to picks that matter. In a
    // train, the next pick is made now and this end needs no event at all.
    const bool write_done = tlp.end_seen;
    const bool train = !write_done && next_pick_certain(d, train_end);
    if (!train)
      post(sim, l.busy_until, Kind::transmit_done, d, static_cast<std::uint32_t>(d), !write_done);
    const sim::Time arrives = l.busy_until + config_.propagation;
    // What an upstream TLP starts in the host is scheduled now, at its arrival plus the host's latency: the root
    // complex accepts an MWr (its arrival does nothing else, so it takes no event of its own); host memory reads an
    // MRd's data; a write's data becomes visible after its last MWr.
    if (d == Direction::upstream && tlp.kind == TlpKind::mwr) {
      post(sim, arrives + config_.posted_accept_latency, Kind::posted_accepted, d, h.value, true);
    } else if (arrival_takes_no_event(d, tlp)) {
      transfers_[tlp.transfer].finished += tlp.payload_bytes; // read only when the last completion, behind it, arrives
      l.release_sent = true;
      if (tlp.last_of_request)
        tags_returning_.push_back(TagReturn{arrives, sim.reserve_seq()}); // the place its event would have had
    } else {
      post(sim, arrives, Kind::tlp_arrives, d, h.value, !arrival_is_visible(d, tlp));
    }
    if (d == Direction::upstream && tlp.kind == TlpKind::mrd) {
      const sim::Time latency = config_.memory_read_base +
                                sim::Time::from_ps(std::int64_t{config_.memory_read_ps_per_byte} * tlp.payload_bytes);
      post(sim, arrives + latency, Kind::memory_read_done, d, h.value, true);
    } else if (d == Direction::upstream && tlp.last_of_transfer) {
      post(sim, arrives + config_.memory_write_latency, Kind::write_visible, d, tlp.transfer.value, false);
    }
    if (!train)
      return;
    free_serializer(l); // as at the serializer's end, which the pick below would have followed
  }
}

bool Bus::next_pick_certain(Direction d, sim::Time train_end) const {
  // The serializer's free moment is certain unless a DLLP is put before the next TLP: an UpdateFC that the other
  // direction's receiver sends back (cadence DLLPs come with this lane's own picks). It sends one only when a TLP
  // of a class it returns credits for is freed, or its UpdateFC timer runs out. One sent from now on arrives
  // after train_end (the propagation delay ahead). Of those on their way, the root complex frees the upstream
  // ones at deferred events of known moments (accepts, arrivals); the device frees downstream ones at arrivals
  // that may be calendar events, so a downstream TLP on its way stops an upstream train.
  if (!config_.defer_events)
    return false;
  const Lane& l = lanes_[static_cast<int>(d)];
  const Direction o = d == Direction::upstream ? Direction::downstream : Direction::upstream;
  const Lane& other = lanes_[static_cast<int>(o)];
  sim::Time bound = train_end;
  if (o == Direction::downstream) {
    if (other.finite_in_flight != 0 || other.update_fc_pending)
      return false;
  } else {
    bound = deferred_.first_of(1u << accepts | 1u << arrivals_up | 1u << update_fc_up, bound);
  }
  if (l.busy_until >= bound)
    return false;
  // The pick at the serializer's end: the oldest head, if its credits allow now (no older TLP can come, credits
  // only grow, and the oldest passes no older posted TLP). Not one whose pick the client sees (a write's last
  // MWr schedules its visibility, and its end if notified): those keep their moment.
  const Tlp* oldest = nullptr;
  for (int k = 0; k < 3; ++k)
    if (!l.queues[k].empty() && (oldest == nullptr || tlps_[l.queues[k].front()].age < oldest->age))
      oldest = &tlps_[l.queues[k].front()];
  return oldest != nullptr && !oldest->last_of_transfer && credits_cover(l, *oldest);
}

bool Bus::arrival_takes_no_event(Direction d, const Tlp& tlp) const {
  // A completion that neither ends its read nor returns credits (its class is infinite at the device, as an
  // endpoint's completions must be) only adds its bytes, which count once the last one is in; and, if it ends its
  // request, frees a tag, which comes back without an event (tags_returning_) unless a read already waits for one.
  const Credits& c = lanes_[static_cast<int>(d)].credits;
  return d == Direction::downstream && tlp.kind == TlpKind::cpld && !tlp.last_of_transfer && c.infinite(completion) &&
         (!tlp.last_of_request || (config_.defer_events && reads_waiting_.empty()));
}

bool Bus::arrival_is_visible(Direction d, const Tlp& tlp) const {
  if (d == Direction::upstream)
    return false; // see keep_moments()
  // A read or an MMIO ends. A completion that only frees a tag keeps its moment while reads wait for one.
  return tlp.last_of_transfer;
}

sim::Time Bus::send_dllp(sim::Simulator&, Lane& l) {
  const sim::Time start = std::max(now_, l.busy_until);
  const sim::Time wire = dllp_wire_;
  l.busy_until = start + wire;
  l.counters.busy += wire;
  return l.busy_until;
}

void Bus::transmitted(sim::Simulator& sim, Direction d) {
  Lane& l = lane(d);
  assert(l.transmitting);
  const Tlp& tlp = tlps_[l.sending];
  if (tlp.end_seen)
    client_.dma_write_done(sim, transfers_[tlp.transfer].token); // the transfer lives on until its data is visible
  free_serializer(l);
  try_transmit(sim, d);
}

void Bus::free_serializer(Lane& l) {
  l.transmitting = false;
  if (l.release_sent) { // a TLP without an arrival event is done with once it has left
    l.release_sent = false;
    tlps_.release(l.sending);
  }
}

void Bus::tlp_arrived(sim::Simulator& sim, Direction d, TlpHandle h) {
  Tlp& tlp = tlps_[h];
  if (d == Direction::upstream) {
    assert(tlp.kind == TlpKind::mrd); // an MWr's acceptance was scheduled when it left
    free_credits(sim, d, tlp);        // its memory read was scheduled when it left
    return;
  }
  free_credits(sim, d, tlp);
  Transfer& t = transfers_[tlp.transfer];
  t.finished += tlp.payload_bytes;
  if (tlp.kind == TlpKind::cpld && tlp.last_of_request) {
    --tags_in_use_;
    issue_read_requests(sim);
  }
  const TransferHandle th = tlp.transfer;
  tlps_.release(h);
  if (t.finished == t.bytes) {
    const std::uint32_t token = t.token;
    const Op op = t.op;
    transfers_.release(th);
    --outstanding_;
    if (op == Op::read)
      client_.dma_read_done(sim, token);
    else
      client_.mmio_arrived(sim, token);
  }
}

void Bus::free_credits(sim::Simulator& sim, Direction d, const Tlp& tlp) {
  Lane& l = lane(d);
  const int k = tlp.credit_class;
  // Returning an infinite class's credits would only spend DLLP bandwidth and events.
  if (l.credits.infinite(k))
    return;
  --l.finite_in_flight;
  l.credits.headers_freed[k] += 1;
  l.credits.data_freed[k] += data_credits_of(tlp.kind, tlp.payload_bytes);
  if (l.update_fc_pending)
    return;
  if (l.last_update_fc == sim::Time::zero() || now_ - l.last_update_fc >= config_.update_fc_interval) {
    return_credits(sim, d);
    return;
  }
  l.update_fc_pending = true;
  post(sim, l.last_update_fc + config_.update_fc_interval, Kind::update_fc_due, d, static_cast<std::uint32_t>(d), true);
}

void Bus::return_credits(sim::Simulator& sim, Direction d) {
  Lane& l = lane(d);
  l.update_fc_pending = false;
  l.last_update_fc = now_;
  // One UpdateFC DLLP per class with freed credits, on the other direction; they carry cumulative limits.
  Lane& back = reverse(d);
  CreditReturn r{};
  sim::Time arrives = now_;
  for (int k = 0; k < 3; ++k) {
    r.headers[k] = l.credits.headers_freed[k];
    r.data[k] = l.credits.data_freed[k];
    if (r.headers[k] != l.credits.headers_returned[k] || r.data[k] != l.credits.data_returned[k]) {
      arrives = send_dllp(sim, back) + config_.propagation;
      back.sent_since_update_fc = sim::Time::zero();
      ++back.counters.update_fc_dllps;
    }
    l.credits.headers_returned[k] = r.headers[k];
    l.credits.data_returned[k] = r.data[k];
  }
  r.arrives = arrives;
  if (!config_.defer_events) {
    l.returns_in_flight.push_back(r);
    post(sim, arrives, Kind::credits_arrive, d, static_cast<std::uint32_t>(d), true);
    return;
  }
  r.seq = sim.reserve_seq(); // its place, as an event would have had it
  l.returns_in_flight.push_back(r);
  if (stalled(l))
    wake_at_next_return(d);
}

void Bus::raise_limits(Lane& l, const CreditReturn& r) {
  // The receiver's returns are the sender's new limits (cumulative), on top of its initial advertisement.
  for (int k = 0; k < 3; ++k) {
    l.credits.headers_limit[k] = std::max(l.credits.headers_limit[k], l.credits.initial_headers[k] + r.headers[k]);
    l.credits.data_limit[k] = std::max(l.credits.data_limit[k], l.credits.initial_data[k] + r.data[k]);
  }
}

void Bus::absorb_returns(Lane& l) {
  while (!l.returns_in_flight.empty()) {
    const CreditReturn& r = l.returns_in_flight.front();
    if (after_position(r.arrives, r.seq))
      return;
    raise_limits(l, r);
    l.returns_in_flight.pop_front();
  }
}

void Bus::wake_at_next_return(Direction d) {
  Lane& l = lane(d);
  if (!config_.defer_events || l.wake_pending || l.returns_in_flight.empty())
    return;
  l.wake_pending = true;
  const CreditReturn& r = l.returns_in_flight.front();
  post_reserved(r.arrives, r.seq, Kind::credits_arrive, d, static_cast<std::uint32_t>(d));
}

void Bus::on_event(sim::Simulator& sim, const sim::Event& event) {
  const auto kind = static_cast<Kind>(event.kind - first_kind_);
  now_ = sim.now();
  seq_ = sim.dispatching_seq();
  if (kind == Kind::deferred_due && now_ >= checkpoint_at_)
    checkpoint_at_ = sim::Time::max(); // this is it
  if (has_deferred())
    catch_up(sim, kind == Kind::deferred_due);
  if (kind != Kind::deferred_due)
    handle(sim, kind, event.handle);
  keep_moments(sim);
}

void Bus::handle(sim::Simulator& sim, Kind kind, std::uint32_t handle) {
  switch (kind) {
  case Kind::transmit_done:
    transmitted(sim, static_cast<Direction>(handle));
    return;
  case Kind::tlp_arrives:
    tlp_arrived(sim, tlps_[TlpHandle{handle}].direction, TlpHandle{handle});
    return;
  case Kind::deferred_due:
    return;
  case Kind::tag_returned:
    tag_wake_pending_ = false;
    issue_read_requests(sim); // takes this tag and any back with it
    return;
  case Kind::memory_read_done: {
    const TlpHandle request{handle};
    const Tlp mrd = tlps_[request];
    tlps_.release(request);
    std::uint32_t sent = 0;
    for_each_completion(mrd.address, mrd.payload_bytes, config_.max_payload_bytes,
                        config_.read_completion_boundary_bytes, config_.completion_split,
                        [&](std::uint64_t at, std::uint32_t bytes) {
                          const TlpHandle h = tlps_.acquire(make_tlp(TlpKind::cpld, at, bytes, false, mrd.transfer));
                          sent += bytes;
                          tlps_[h].last_of_request = sent == mrd.payload_bytes;
                          Transfer& read = transfers_[mrd.transfer];
                          read.completions_queued += bytes;
                          tlps_[h].last_of_transfer = read.completions_queued == read.bytes;
                          queue(sim, Direction::downstream, h);
                        });
    return;
  }
  case Kind::posted_accepted: {
    const TlpHandle h{handle};
    free_credits(sim, Direction::upstream, tlps_[h]);
    tlps_.release(h);
    return;
  }
  case Kind::update_fc_due:
    return_credits(sim, static_cast<Direction>(handle));
    return;
  case Kind::credits_arrive: {
    const auto d = static_cast<Direction>(handle);
    Lane& l = lane(d);
    if (config_.defer_events) { // a wake: try_transmit() takes this return and any arrived with it
      l.wake_pending = false;
    } else {
      raise_limits(l, l.returns_in_flight.front());
      l.returns_in_flight.pop_front();
    }
    try_transmit(sim, d);
    return;
  }
  case Kind::write_visible: {
    const TransferHandle t{handle};
    const std::uint32_t token = transfers_[t].token;
    transfers_.release(t);
    --outstanding_;
    client_.dma_write_visible(sim, token);
    return;
  }
  case Kind::mmio_issue: {
    const TransferHandle t{handle};
    const Transfer mmio = transfers_[t];
    for (std::uint32_t offset = 0; offset < mmio.bytes; offset += mmio.chunk) {
      const std::uint32_t bytes = std::min(mmio.chunk, mmio.bytes - offset);
      // The BAR is mapped like host buffers (64-bit on the platforms modelled: E5's 32-byte doorbell).
      const TlpHandle h = tlps_.acquire(make_tlp(TlpKind::mwr, offset, bytes, config_.addresses_64bit, t));
      tlps_[h].last_of_transfer = offset + bytes >= mmio.bytes;
      queue(sim, Direction::downstream, h);
    }
    return;
  }
  }
  assert(false && "unknown PCIe bus event");
}

} // namespace ib::pcie
