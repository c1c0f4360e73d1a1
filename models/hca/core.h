// What the stages of the HCA's pipeline share (docs/models/hca.md, "Code structure"): where their events go, the
// bus and the DMA transactions on it, the wire's packet pools, the QPs, and the PCIe counters. The Hca owns all of
// it; a stage holds this and owns the rest of its state itself. Private to the HCA model.
#pragma once

#include <cstdint>
#include <vector>

#include "models/hca/params.h"
#include "models/link/packet.h"
#include "models/pcie/bus.h"
#include "models/pcie/host_memory.h"
#include "sim/pool.h"
#include "sim/simulator.h"
#include "sim/stable_vector.h"

namespace ib::hca {

struct Qp;
struct DmaOp;
struct Wire;
struct TransportHeaders;
struct PcieCounters;
struct CongestionState;
enum class Purpose : std::uint8_t;
using DmaHandle = sim::Handle<DmaOp>;

struct Core {
  const Params& params;
  sim::Target self; ///< the Hca: every stage's events go there (Hca::Kind)
  Wire& wire;
  pcie::HostMemory& memory;
  pcie::Bus& bus;
  sim::StableVector<Qp>& qps;
  sim::Pool<DmaOp, 256>& ops; ///< the bus hands each one's token back to the stage that issued it
  PcieCounters& pcie;
  CongestionState& cc; ///< congestion control (IBA A10) as the SM set it on this CA

  // Defined in hca_state.h, where the types are complete.
  /// The QP of number `qpn`, or null.
  Qp* find_qp(std::uint32_t qpn);
  DmaHandle new_op(const sim::Simulator& sim, Purpose purpose, std::uint32_t qp);
  TransportHeaders& headers_of(link::PacketHandle packet);
  void free_packet(link::PacketHandle packet);
};

} // namespace ib::hca
