#include "models/hca/atomic_unit.h"

#include <algorithm>
#include <array>

#include "models/hca/hca.h"
#include "models/hca/hca_state.h"

namespace ib::hca {

AtomicUnit::AtomicUnit(Core& core) : core_(core) {
  bucket_busy_.assign(core.params.atomic_lock_buckets, 0);
}

void AtomicUnit::start(sim::Simulator& sim, std::uint32_t qp, link::PacketHandle request, std::uint64_t address) {
  // Atomics on addresses that share a lock bucket (the low address bits) run one at a time, each holding the
  // lock for its PCIe read-modify-write.
  const DmaHandle op = core_.new_op(sim, Purpose::atomic_read, qp);
  core_.ops[op].packet = request;
  core_.ops[op].address = address;
  core_.ops[op].bucket = static_cast<std::uint32_t>(address % bucket_busy_.size());
  waiting_.push_back(op);
  run(sim, core_.ops[op].bucket);
}

void AtomicUnit::run(sim::Simulator& sim, std::uint32_t bucket) {
  if (bucket_busy_[bucket] != 0)
    return;
  // The oldest waiting atomic on this bucket goes; the others keep their order: the ring turns once in place, each
  // item popped before it is pushed back, so it never grows and nothing is allocated.
  bool started = false;
  for (std::uint32_t n = waiting_.size(); n > 0; --n) {
    const DmaHandle op = waiting_.front();
    waiting_.pop_front();
    if (!started && core_.ops[op].bucket == bucket) {
      started = true;
      bucket_busy_[bucket] = 1;
      // The atomic unit takes atomics one at a time, then their read-modify-write goes to host memory.
      unit_free_ = std::max(sim.now(), unit_free_) + core_.params.atomic_processing;
      sim.schedule(unit_free_, core_.self, static_cast<std::uint8_t>(Hca::Kind::atomic_issue), op.value);
    } else {
      waiting_.push_back(op);
    }
  }
}

void AtomicUnit::issue(sim::Simulator& sim, DmaHandle op) {
  ++core_.pcie.atomic_reads;
  core_.bus.dma_read(sim, core_.ops[op].address, 8, op.value);
}

void AtomicUnit::on_read_done(sim::Simulator& sim, DmaHandle h) {
  DmaOp& op = core_.ops[h];
  const link::Packet& request = core_.wire.packets[op.packet];
  TransportHeaders& hd = core_.headers_of(op.packet);
  std::array<std::uint8_t, 8> bytes{};
  core_.memory.read(op.address, bytes);
  std::uint64_t original = 0;
  for (int i = 7; i >= 0; --i)
    original = original << 8 | bytes[static_cast<std::size_t>(i)];
  const std::uint64_t updated = request.opcode == link::Opcode::compare_swap
                                    ? (original == hd.compare_add ? hd.swap : original)
                                    : original + hd.compare_add;
  for (std::size_t i = 0; i < 8; ++i)
    bytes[i] = static_cast<std::uint8_t>(updated >> (8 * i));
  core_.memory.write(op.address, bytes);
  op.purpose = Purpose::atomic_write;
  op.issued = sim.now();
  op.count = 0;
  hd.original = original;
  ++core_.pcie.atomic_writes;
  core_.bus.dma_write(sim, op.address, 8, h.value);
}

void AtomicUnit::release(sim::Simulator& sim, std::uint32_t bucket) {
  bucket_busy_[bucket] = 0;
  run(sim, bucket);
}

} // namespace ib::hca
