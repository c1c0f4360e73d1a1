// The PCIe connection between one host and one device (an HCA): both directions of the link, the root complex
// with host memory behind it, and the device's DMA engine. Every transfer is a sequence of TLPs:
//   - dma_write: posted MWr TLPs upstream, split at MPS and 4 KiB boundaries; the root complex takes each
//     posted_accept_latency after it arrives and frees its credits, and its data is visible in host memory
//     memory_write_latency after it arrives.
//   - dma_read: MRd TLPs upstream, split at MRRS and 4 KiB boundaries, each holding one of the device's tags until
//     its last completion is back; the root complex answers each after host memory's read latency (base + per byte)
//     with CplD TLPs downstream, split at RCB or MPS, in order.
//   - mmio_write: the CPU's MMIO store (8-byte doorbell, or 64-byte write-combined chunks) as posted MWr TLPs
//     downstream after the CPU-side cost.
// Each direction serializes TLPs at the link's data rate with their real overheads. A TLP leaves only when the
// receiver's credits of its class (posted, non-posted, completion; header and 16-byte data credits) cover it;
// receivers return credits with UpdateFC DLLPs in the other direction, no later than the UpdateFC interval after
// they free them. A direction also sends an Ack and an UpdateFC DLLP after every interval's worth of TLP wire
// time, as pcie-bench's model charges them (intervals in symbol times counted as bytes of the link, as that model
// does), so that the usable TLP bandwidth under load is the model's and a lone transfer pays none. Ordering: a TLP
// never passes an older posted TLP of its direction; posted TLPs may pass non-posted ones and completions blocked on
// credits (PCIe ordering rules). Left out: replay (no link errors), relaxed ordering and ID-based ordering, power
// states, ATS/IOMMU, and host memory contention between devices.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "models/pcie/flow_control.h"
#include "models/pcie/params.h"
#include "models/pcie/tlp.h"
#include "sim/event.h"
#include "sim/pool.h"
#include "sim/ring.h"
#include "sim/simulator.h"
#include "sim/time.h"

namespace ib::pcie {

enum class Direction : std::uint8_t { upstream, downstream }; ///< device to host, host to device

/// Credits one receiver advertises, per class; 0 means infinite (PCIe's advertisement of 0).
struct CreditAdvertisement {
  std::uint32_t posted_headers, posted_data;
  std::uint32_t non_posted_headers, non_posted_data;
  std::uint32_t completion_headers, completion_data;
};

/// Everything the bus needs, resolved from the pcie-link and host profiles (models/pcie/params.h).
struct BusConfig {
  sim::Rate data_rate;                  ///< per direction, after line coding
  sim::Time propagation;                ///< one way through both PHYs and the channel
  std::uint32_t max_payload_bytes;      ///< MPS
  std::uint32_t max_read_request_bytes; ///< MRRS
  std::uint32_t read_completion_boundary_bytes;
  CompletionSplit completion_split; ///< read completions end at every RCB, or at the last RCB within MPS
  bool ecrc;
  bool addresses_64bit;                  ///< host buffers above 4 GiB: 4DW headers
  CreditAdvertisement root_port;         ///< what the root port accepts from the device
  CreditAdvertisement device;            ///< what the device accepts from the root port
  std::uint32_t device_tags;             ///< outstanding non-posted requests the device may have
  sim::Time ack_interval;                ///< a busy direction sends an Ack DLLP at least this often
  sim::Time update_fc_interval;          ///< and an UpdateFC DLLP; freed credits go back no later than this
  bool cadence_dllps = true;             ///< false: only credit-bearing UpdateFCs (for exact-latency tests)
  bool defer_events = true;              ///< false: every event through the calendar (the tests' oracle)
  sim::Time memory_read_base;            ///< root complex + memory, MRd arrival to first CplD ready
  std::uint32_t memory_read_ps_per_byte; ///< added per byte of the request
  sim::Time posted_accept_latency;       ///< MWr arrival until the root complex has taken it and frees its credits
  sim::Time memory_write_latency;        ///< MWr arrival until its data is visible in host memory
  sim::Time mmio_cpu_cost;               ///< CPU time of one MMIO store before its TLP is queued
};

/// The bus of a device on `link` in front of `host`. Preconditions: validate(link, host) == "". Symbol intervals
/// become time at one byte per lane at the lane's data rate. `addresses_64bit`: host buffers above 4 GiB.
BusConfig bus_config(const LinkParams& link, const HostParams& host, bool addresses_64bit = true);

/// Hears what the bus delivers. Called from Bus::on_event.
class BusClient {
public:
  virtual ~BusClient() = default;
  virtual void dma_read_done(sim::Simulator& sim, std::uint32_t token) = 0;
  /// Every TLP of the write has left the device.
  virtual void dma_write_done(sim::Simulator& sim, std::uint32_t token) = 0;
  /// The write's last byte is visible in host memory (what a CPU polling it sees; after dma_write_done).
  virtual void dma_write_visible(sim::Simulator& sim, std::uint32_t token) = 0;
  /// The whole MMIO write has arrived at the device.
  virtual void mmio_arrived(sim::Simulator& sim, std::uint32_t token) = 0;
};

inline constexpr std::size_t tlp_kind_count = 4; ///< TlpKind values

struct DirectionCounters {
  std::array<std::uint64_t, tlp_kind_count> tlps{};      ///< by TlpKind
  std::array<std::uint64_t, tlp_kind_count> tlp_bytes{}; ///< wire bytes, by TlpKind
  std::uint64_t payload_bytes = 0;
  std::uint64_t ack_dllps = 0;
  std::uint64_t update_fc_dllps = 0;
  std::uint64_t credit_stalls = 0; ///< times the head TLP waited for credits
  sim::Time busy;                  ///< serializer time, TLPs and DLLPs
};

class Bus {
public:
  /// Events for the bus go to `owner` with kinds first_kind .. first_kind + kind_count - 1; the owner hands them
  /// back through on_event().
  static constexpr std::uint8_t kind_count = 10;
  Bus(const BusConfig& config, sim::Target owner, std::uint8_t first_kind, BusClient& client);

  /// Device side: read `size_bytes` of host memory at `address`; dma_read_done(token) when all data is in.
  void dma_read(sim::Simulator& sim, std::uint64_t address, std::uint32_t size_bytes, std::uint32_t token);
  /// Device side: write `size_bytes` to host memory at `address`; dma_write_done(token) when all TLPs have left.
  /// Without `notify_done`, only dma_write_visible(token) comes (a CQE: only its visibility matters).
  void dma_write(sim::Simulator& sim, std::uint64_t address, std::uint32_t size_bytes, std::uint32_t token,
                 bool notify_done = true);
  /// Host side: a CPU MMIO write of `size_bytes` (8 for a doorbell; multiples of the write-combining chunk for
  /// BlueFlame), one MWr per `chunk_bytes`; mmio_arrived(token) when its last TLP reaches the device.
  void mmio_write(sim::Simulator& sim, std::uint32_t size_bytes, std::uint32_t chunk_bytes, std::uint32_t token);

  bool owns(std::uint8_t kind) const { return kind >= first_kind_ && kind < first_kind_ + kind_count; }
  void on_event(sim::Simulator& sim, const sim::Event& event);

  /// Handles the deferred events due no later than `until` (see below): call once the run has ended, before
  /// reading counters or idle().
  void settle(sim::Simulator& sim, sim::Time until);

  const DirectionCounters& counters(Direction d) const { return lanes_[static_cast<int>(d)].counters; }
  std::uint32_t tags_in_use() const { return tags_in_use_; }
  /// True when nothing is queued, in flight or outstanding.
  bool idle() const;
  /// Events handled without the calendar (deferred), for the benchmark's breakdown.
  std::uint64_t deferred_events() const { return deferred_handled_; }

private:
  enum class Kind : std::uint8_t {
    transmit_done,    ///< handle = direction: its serializer is free
    tlp_arrives,      ///< handle = TLP
    memory_read_done, ///< handle = TLP (the MRd): its completions may go
    posted_accepted,  ///< handle = TLP (the MWr): the root complex has taken it; its posted credits free
    update_fc_due,    ///< handle = direction whose receiver returns its freed credits now
    credits_arrive,   ///< handle = direction whose sender's limits the UpdateFC raises
    mmio_issue,       ///< handle = MMIO op: the CPU has done its stores
    write_visible,    ///< handle = write transfer: its last byte is in host memory
    deferred_due,     ///< a checkpoint: catch up (keep_moments())
    tag_returned,     ///< deferred only: reads wait for a tag, and the first of tags_returning_ is back
  };
  // Deferred events (docs/models/pcie.md#events). Every event above but mmio_issue, write_visible and the end of a
  // write the client hears of changes only the bus. Those wait in deferred_ and memory_reads_, each in (time, seq)
  // order and each event holding the seq the calendar would have given it, and are handled when the bus is next
  // touched, before whatever touches it, or by settle(): the bus's results are those of handling each at its moment.
  // What the client sees is scheduled in the calendar by whichever event leads to it, deferred or not; keep_moments()
  // keeps a checkpoint in the calendar early enough that the bus has always caught up before any of it is due.
  enum class Op : std::uint8_t { read, write, mmio };
  struct Transfer {
    Op op;
    std::uint32_t token;
    std::uint64_t address;
    std::uint32_t bytes;
    std::uint32_t requested = 0;          ///< bytes covered by TLPs created so far
    std::uint32_t finished = 0;           ///< bytes delivered (read: completions in; write and MMIO: TLPs out or in)
    std::uint32_t chunk = 0;              ///< MMIO chunk size
    std::uint32_t completions_queued = 0; ///< read: bytes of CplD queued (the last one queued arrives last)
  };
  using TransferHandle = sim::Handle<Transfer>;
  /// 40 bytes: payloads and wire sizes are at most 4 KiB plus headers (MPS and MRRS), so 16 bits hold them.
  struct Tlp {
    std::uint64_t age; ///< queueing order in its direction, for the ordering rules
    std::uint64_t address;
    sim::Time wire; ///< wire time of wire_bytes, kept with the TLP: picks and queue sums read it, not the memo
    TransferHandle transfer;
    std::uint16_t payload_bytes; ///< data carried (MWr, CplD) or requested (MRd)
    std::uint16_t wire_bytes;
    TlpKind kind;
    std::uint8_t credit_class; ///< 0 posted, 1 non-posted, 2 completion
    Direction direction = Direction::upstream;
    bool last_of_request = false;  ///< CplD: the last completion of its MRd (frees the tag)
    bool last_of_transfer = false; ///< write: its last MWr (MWr of a write never pass each other)
    bool end_seen = false;         ///< write: its last MWr, whose end the client hears of (dma_write_done)
  };
  static_assert(sizeof(Tlp) == 40);
  using TlpHandle = sim::Handle<Tlp>;
  /// The credits of one link direction, per class (posted, non-posted, completion): the sender's consumed counts
  /// and limits, and the receiver's freed and returned counts. Counts are cumulative (64-bit, so the 8- and
  /// 12-bit fields' wraparound never matters here).
  struct Credits {
    std::array<std::uint64_t, 3> headers_consumed{}, data_consumed{};
    std::array<std::uint64_t, 3> headers_limit{}, data_limit{};
    std::array<std::uint64_t, 3> initial_headers{}, initial_data{};
    std::array<bool, 3> infinite_headers{}, infinite_data{};
    std::array<std::uint64_t, 3> headers_freed{}, data_freed{};
    std::array<std::uint64_t, 3> headers_returned{}, data_returned{};
    /// Infinite for headers and data: such a class takes no UpdateFC after initialisation (PCIe Base Spec r5.0
    /// §2.6.1), and the transmitter never checks it.
    bool infinite(int k) const { return infinite_headers[k] && infinite_data[k]; }
  };
  /// What one round of UpdateFC DLLPs tells the sender: cumulative freed counts; and when its last DLLP arrives,
  /// with the calendar place its arrival would have had as an event.
  struct CreditReturn {
    std::array<std::uint64_t, 3> headers;
    std::array<std::uint64_t, 3> data;
    sim::Time arrives;
    std::uint64_t seq = 0;
  };
  struct Lane {
    Direction direction;
    std::array<sim::Ring<TlpHandle>, 3> queues; ///< posted, non-posted, completion
    sim::Time busy_until;
    bool transmitting = false;
    TlpHandle sending;
    bool release_sent = false; ///< `sending` takes no arrival event: released when its serialization ends
    /// Per class queue: its visible TLPs (visible()), the wire time of all its TLPs and of those ahead of its first
    /// visible one, which must leave before it (keep_moments()).
    std::array<std::uint32_t, 3> visible_queued{};
    std::array<sim::Time, 3> queued_wire{};
    std::array<sim::Time, 3> wire_before_visible{};
    std::array<sim::Time, 3> visible_slack{}; ///< the least slack() of each queue's visible TLPs
    /// How many of them have that least slack: removing one of those leaves the least unchanged unless it was the
    /// last, so the queue is rescanned only then.
    std::array<std::uint32_t, 3> visible_at_least_slack{};
    /// Folds one visible TLP's slack into class `k`'s least slack and its count; `first` starts the fold afresh.
    void fold_least_slack(int k, sim::Time own, bool first) {
      if (first || own < visible_slack[k]) {
        visible_slack[k] = own;
        visible_at_least_slack[k] = 1;
      } else if (own == visible_slack[k]) {
        ++visible_at_least_slack[k];
      }
    }
    Credits credits;
    sim::Time sent_since_ack;       ///< TLP wire time since this direction's last Ack DLLP
    sim::Time sent_since_update_fc; ///< and since its last UpdateFC DLLP
    sim::Time last_update_fc;       ///< this direction's receiver last returned credits (sent on the reverse lane)
    bool update_fc_pending = false;
    /// Credit returns on their way to this direction's sender, oldest first. With deferred events the sender
    /// takes those that have arrived whenever it looks at its credits (absorb_returns()), and only a stalled sender
    /// gets an event (a wake) at the next one's arrival: a return that finds the sender busy or idle changes
    /// nothing but its limits, which no one reads before the sender's next pick.
    sim::Ring<CreditReturn> returns_in_flight;
    bool wake_pending = false;          ///< a credits_arrive for this direction's front return is deferred
    std::uint32_t finite_in_flight = 0; ///< TLPs sent in a class whose credits come back, not yet freed
    DirectionCounters counters;
  };

  Lane& lane(Direction d) { return lanes_[static_cast<int>(d)]; }
  Lane& reverse(Direction d) { return lanes_[d == Direction::upstream ? 1 : 0]; }
  void queue(sim::Simulator& sim, Direction d, TlpHandle tlp);
  void try_transmit(sim::Simulator& sim, Direction d);
  /// Whether the pick the serializer's end on `d` would make is certain now and may be made now (a train), with
  /// the end less than `train_end` away.
  bool next_pick_certain(Direction d, sim::Time train_end) const;
  bool credits_cover(const Lane& lane, const Tlp& tlp) const;
  /// Charges a DLLP on `lane`'s serializer at the first moment it is free from `now`; returns when it ends.
  sim::Time send_dllp(sim::Simulator& sim, Lane& lane);
  void tlp_arrived(sim::Simulator& sim, Direction d, TlpHandle h);
  /// Whether a TLP's arrival needs no event: a completion that changes nothing on arrival but its read's bytes and,
  /// if it ends its request, a tag (tags_returning_).
  bool arrival_takes_no_event(Direction d, const Tlp& tlp) const;
  void free_credits(sim::Simulator& sim, Direction d, const Tlp& tlp);
  void return_credits(sim::Simulator& sim, Direction d);
  /// Raises `l`'s limits by the returns that have arrived by the bus's position (its own included).
  void absorb_returns(Lane& l);
  static void raise_limits(Lane& l, const CreditReturn& r);
  /// A stalled sender with returns on their way is woken at the first one's arrival, as its event would have.
  void wake_at_next_return(Direction d);
  void issue_read_requests(sim::Simulator& sim);
  /// Whether (at, seq) comes after the bus's position: something placed there has not happened yet.
  bool after_position(sim::Time at, std::uint64_t seq) const { return at > now_ || (at == now_ && seq > seq_); }
  /// Frees the tags of tags_returning_ back by the bus's position (inclusive of it).
  void absorb_tag_returns() {
    while (!tags_returning_.empty()) {
      const TagReturn& r = tags_returning_.front();
      if (after_position(r.arrives, r.seq))
        return;
      --tags_in_use_;
      tags_returning_.pop_front();
    }
  }
  void transmitted(sim::Simulator& sim, Direction d);
  /// What every serialization's end does to its lane: the serializer is free, and a TLP without an arrival event
  /// is released.
  void free_serializer(Lane& l);
  void handle(sim::Simulator& sim, Kind kind, std::uint32_t handle);
  /// Whether an arrival must keep its moment: it ends a read or an MMIO (an MRd's arrival and a write's last are
  /// deferred: the memory read and the visibility they start are not due before the checkpoint, keep_moments()).
  bool arrival_is_visible(Direction d, const Tlp& tlp) const;
  /// Schedules bus event `kind` of direction `d` at `at`: in the calendar, or deferred when `deferrable`; returns its
  /// seq if deferred. The caller names the direction, which picks the deferred source, so that none is looked up.
  std::uint64_t post(sim::Simulator& sim, sim::Time at, Kind kind, Direction d, std::uint32_t handle, bool deferrable);
  /// Defers bus event `kind` of direction `d` at (at, seq), a place reserved earlier.
  void post_reserved(sim::Time at, std::uint64_t seq, Kind kind, Direction d, std::uint32_t handle);
  /// Handles the deferred events placed before the bus's current position (inclusive: up to and including it).
  void catch_up(sim::Simulator& sim, bool inclusive);
  void enter(sim::Simulator& sim) {
    now_ = sim.now();
    seq_ = sim.dispatching_seq();
    if (deferred_before(now_, seq_, false))
      catch_up(sim, false);
  }
  bool stalled(const Lane& l) const {
    return !l.transmitting && !(l.queues[0].empty() && l.queues[1].empty() && l.queues[2].empty());
  }
  /// Whether a TLP's pick must happen at its moment: its end or its arrival tells the client something, starts a
  /// memory read, or frees a tag.
  bool visible(Direction d, const Tlp& tlp) const {
    if (d == Direction::upstream)
      return tlp.kind == TlpKind::mrd || tlp.last_of_transfer;
    return arrival_is_visible(d, tlp);
  }
  /// The least time from a visible TLP's pick to the first thing outside the bus sees of it: a write's end, or the
  /// arrival of a read's or an MMIO's end, or the memory read an MRd starts.
  sim::Time slack(Direction d, const Tlp& tlp) const {
    const sim::Time wire = tlp.wire;
    if (d == Direction::downstream)
      return wire + config_.propagation;
    // An MRd starts a memory read; a write's last MWr ends the write (if the client hears of it) and makes its
    // data visible.
    if (tlp.kind == TlpKind::mrd)
      return wire + config_.propagation + config_.memory_read_base;
    return tlp.end_seen ? wire : wire + config_.propagation + config_.memory_write_latency;
  }
  /// Keeps a checkpoint in the calendar no later than the earliest moment at which deferred events could make
  /// something visible happen: the first visible TLP of a queue cannot leave before the serializer is free (and,
  /// if it waits on credits, before the next deferred event, which alone brings them) plus the wire time of what
  /// is queued ahead of it; a read waiting for a tag needs the next deferred event. At the checkpoint, the bus
  /// catches up and sets the next one.
  void keep_moments(sim::Simulator& sim);
  /// Wire time of `bytes` on this link, memoized: a 128-bit division per TLP costs more than the rest of a pick.
  /// Slots by Fibonacci hashing: the low bits alone put a DLLP, an MRd and a full MWr (8, 24 and 280 bytes) in one
  /// slot, each evicting the others.
  sim::Time wire_time(std::uint32_t bytes) {
    WireTime& w = wire_times_[(bytes * 2654435769u) >> (32 - wire_time_slot_bits)];
    if (w.bytes != bytes) {
      w.bytes = bytes;
      w.time = sim::transfer_time(bytes, config_.data_rate);
    }
    return w.time;
  }
  /// A TLP of `kind` for `transfer`, its wire size and time filled in.
  Tlp make_tlp(TlpKind kind, std::uint64_t address, std::uint32_t payload_bytes, bool addresses_64bit,
               TransferHandle transfer);
  void queued_wire_add(Lane& l, const Tlp& tlp, bool is_visible);
  void queued_wire_remove(Lane& l, const Tlp& tlp, bool is_visible);

  BusConfig config_;
  sim::Target owner_;
  std::uint8_t first_kind_;
  BusClient& client_;
  std::array<Lane, 2> lanes_;
  // One bus per host: small chunks keep thousands of idle hosts cheap; a busy one grows as it needs.
  sim::Pool<Tlp, 256> tlps_;
  sim::Pool<Transfer, 256> transfers_;
  sim::Ring<TransferHandle> reads_waiting_; ///< reads with bytes not yet requested, oldest first
  std::uint32_t tags_in_use_ = 0;
  /// Tags on their way back: the arrival, with the calendar place its event would have had, of completions that
  /// only free a tag (arrival_takes_no_event()), oldest first. Reads waiting for a tag get a wake (tag_returned) at
  /// the first one's arrival.
  struct TagReturn {
    sim::Time arrives;
    std::uint64_t seq;
  };
  sim::Ring<TagReturn> tags_returning_;
  bool tag_wake_pending_ = false;
  std::uint64_t next_age_ = 0;
  std::uint64_t outstanding_ = 0; ///< transfers not yet done
  /// Where deferred events come from: arrivals and credit returns per direction, posted accepts, the one pending
  /// serialization end and UpdateFC timer per direction, memory reads and the tag wake. Each source's events come
  /// in time order but for memory reads (a read's latency grows with its size); a few questions ask for one source.
  enum Source : std::uint8_t {
    arrivals_up,
    arrivals_down,
    credits_up,
    credits_down,
    accepts,
    done_up,
    done_down,
    update_fc_up,
    update_fc_down,
    memory_reads,
    tag_wakes, ///< at most one: tag_returned
    source_count
  };
  static Source source_of(Kind kind, Direction d);
  struct Deferred {
    sim::Time time;
    std::uint64_t seq;
    std::uint32_t handle;
    Kind kind;
    Source source;
  };
  /// Deferred events in one array sorted by (time, seq), the order they are handled in, sorted in from the back:
  /// the earliest is the front, and a question about one source reads the first of its events from the front.
  /// Two per bus (deferred_, memory_reads_), not one per source: a bus entered after a while touches the lines of
  /// two fronts, not those of eleven queues (1,024 buses do not stay in cache). Memory reads have their own: they
  /// end far ahead (hundreds of ns), so every other event would be sorted in past them.
  class DeferredQueue {
  public:
    bool empty() const { return head_ == tail_; }
    /// Preconditions: !empty().
    const Deferred& front() const { return items_[head_]; }
    void pop_front() {
      const Source source = items_[head_].source;
      if (--count_[source] == 0)
        present_ = static_cast<std::uint16_t>(present_ & ~(1u << source));
      if (++head_ == tail_) // emptied: start again at the first slot, whose lines were touched last
        head_ = tail_ = 0;
    }
    void insert(const Deferred& event);
    /// The time of the earliest event of a source in `sources` (bit per Source) if it is before `bound`, else
    /// `bound`.
    sim::Time first_of(std::uint16_t sources, sim::Time bound) const {
      if ((present_ & sources) == 0)
        return bound;
      for (std::uint32_t i = head_; i < tail_ && items_[i].time < bound; ++i)
        if ((sources >> items_[i].source & 1u) != 0)
          return items_[i].time;
      return bound;
    }

  private:
    std::unique_ptr<Deferred[]> items_;
    std::uint32_t head_ = 0, tail_ = 0, capacity_ = 0; ///< items_[head_, tail_), sorted
    std::uint16_t present_ = 0;                        ///< bit per source with events
    std::array<std::uint16_t, source_count> count_{};
  };
  /// The queue whose front is the earliest deferred event, or nullptr when there is none.
  DeferredQueue* earliest_queue();
  /// Whether the earliest deferred event comes before (time, seq), or at it with `inclusive`.
  bool deferred_before(sim::Time time, std::uint64_t seq, bool inclusive) const {
    return (!deferred_.empty() && before(deferred_.front(), time, seq, inclusive)) ||
           (!memory_reads_.empty() && before(memory_reads_.front(), time, seq, inclusive));
  }
  static bool before(const Deferred& d, sim::Time time, std::uint64_t seq, bool inclusive) {
    return d.time < time || (d.time == time && (inclusive ? d.seq <= seq : d.seq < seq));
  }
  bool has_deferred() const { return !deferred_.empty() || !memory_reads_.empty(); }
  DeferredQueue deferred_;     ///< every deferred event but memory reads
  DeferredQueue memory_reads_; ///< memory reads' ends
  sim::Time now_;              ///< the bus's position: the calendar's, or a deferred event's while handled
  std::uint64_t seq_ = 0;
  bool settling_ = false;
  std::uint64_t deferred_handled_ = 0;
  struct WireTime {
    std::uint32_t bytes = 0;
    sim::Time time;
  };
  static constexpr int wire_time_slot_bits = 4;
  std::array<WireTime, std::size_t{1} << wire_time_slot_bits> wire_times_{};
  sim::Time dllp_wire_;                        ///< wire time of a DLLP
  sim::Time checkpoint_at_ = sim::Time::max(); ///< the earliest checkpoint in the calendar, as far as known
};

} // namespace ib::pcie
