// What a host program calls (docs/models/kernel.md): the verbs API of its host's HCA, each call charging the CPU time
// the driver spends (host profile: post_send, WQE build, inline copy, MMIO store, post_recv, poll_cq) to the program
// before its effect goes to the bus. Programs are SimGrid actors (sim::Program); they block only here or through
// sim::Program.
//
// The CPU time a call spends after its effect (the MMIO stores after a post, the CQE reads after a poll) is owed,
// not slept at once: the next call pays it before it does anything, in one sleep with its own cost where it has
// one. Every effect happens at the instant it did when each cost was slept separately, with one wake-up fewer
// per post and per poll. now() includes what is owed; program(), hca() and memory() pay it first.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "models/hca/hca.h"
#include "sim/host_runtime.h"

namespace ib::host {

struct HostNode;

class Context {
public:
  Context(sim::Program& program, HostNode& node);

  sim::Program& program() {
    settle();
    return program_;
  }
  /// The host runtime the program runs in (for signals between programs).
  sim::HostRuntime& runtime();
  /// Faults are injected into this run: work requests may fail, and messages may never come.
  bool faults() const;
  /// The program's time, CPU time owed included.
  sim::Time now() const { return program_.now() + owed_; }
  hca::Hca& hca();
  /// The host's memory: allocate buffers here; in verification mode they hold bytes.
  pcie::HostMemory& memory();
  std::uint16_t lid(std::uint8_t port = 1) const;
  /// The SL of the path to `dlid`, as the SM's path record gives it (routing engines such as dor with datelines
  /// need it to stay deadlock-free; 0 for most).
  std::uint8_t path_sl(std::uint16_t dlid, std::uint8_t port = 1) const;

  std::uint32_t create_cq(std::uint32_t depth);
  /// A CQ on the completion channel of CQ `channel_of` (verbs lets CQs share one): a CQE on either wakes a
  /// program in wait_any_cq() over both.
  std::uint32_t create_cq(std::uint32_t depth, std::uint32_t channel_of);
  /// ibv_create_qp. On a fabric that routes adaptively, RC QPs get out-of-order data placement (HostNode).
  std::uint32_t create_qp(verbs::QpType type, const verbs::QpCaps& caps, std::uint32_t send_cq, std::uint32_t recv_cq);
  /// RESET → INIT → RTR → RTS with `attr`; throws std::runtime_error with verbs' reason if a step is refused.
  void connect_qp(std::uint32_t qpn, const verbs::QpAttr& attr);
  std::string modify_qp(std::uint32_t qpn, verbs::QpState state, const verbs::QpAttr& attr);

  verbs::PostResult post_send(std::uint32_t qpn, std::span<const verbs::SendWr> wrs);
  verbs::PostResult post_send(std::uint32_t qpn, const verbs::SendWr& wr) { return post_send(qpn, {&wr, 1}); }
  verbs::PostResult post_recv(std::uint32_t qpn, std::span<const verbs::RecvWr> wrs);
  verbs::PostResult post_recv(std::uint32_t qpn, const verbs::RecvWr& wr) { return post_recv(qpn, {&wr, 1}); }
  /// A shared receive queue (ibv_create_srq); pass it as QpCaps::srq to the QPs that take from it.
  std::uint32_t create_srq(std::uint32_t depth) { return hca().create_srq(depth); }
  verbs::PostResult post_srq_recv(std::uint32_t srq, std::span<const verbs::RecvWr> wrs);
  verbs::PostResult post_srq_recv(std::uint32_t srq, const verbs::RecvWr& wr) { return post_srq_recv(srq, {&wr, 1}); }
  /// One ibv_poll_cq: up to out.size() completions, -1 if the CQ overran.
  int poll_cq(std::uint32_t cq, std::span<verbs::WorkCompletion> out);
  /// Polls until at least one completion is there (a busy-polling loop, simulated without simulating every empty
  /// poll: the program sleeps until a CQE becomes visible, then pays one poll). Returns what that poll took, or 0
  /// if `deadline` passed first.
  int wait_cq(std::uint32_t cq, std::span<verbs::WorkCompletion> out, sim::Time deadline = sim::Time::max());
  /// Polls `cqs`, all on one completion channel, in turn until one has a completion (simulated as wait_cq is):
  /// the index in `cqs` of the first that has, left to poll, or -1 if `deadline` passed first. Costs nothing:
  /// the caller's poll_cq pays for the poll that finds it.
  int wait_any_cq(std::span<const std::uint32_t> cqs, sim::Time deadline = sim::Time::max());

  /// Starts counting the HCA's payload writes that cover `address` (a byte a program will spin on); its id.
  std::size_t watch_buffer(std::uint64_t address);
  /// Blocks until `count` writes have covered the watched byte and are visible: a program spinning on a buffer
  /// until it changes, without simulating every read of the spin. Costs one read of the spin.
  void wait_for_writes(std::size_t watch, std::uint64_t count);

  /// Pays the CPU time owed (the program's body ends with it).
  void settle() {
    if (owing_)
      program_.compute(take_owed());
  }

private:
  std::uint32_t add_cq(std::uint32_t depth, sim::Signal& signal);
  void owe(sim::Time cpu) {
    owed_ += cpu;
    owing_ = true;
  }
  sim::Time take_owed() {
    const sim::Time owed = owed_;
    owed_ = sim::Time::zero();
    owing_ = false;
    return owed;
  }

  sim::Program& program_;
  HostNode& node_;
  sim::Time owed_ = sim::Time::zero();
  bool owing_ = false; ///< even a zero cost was a yield: paying it keeps the order of events at that instant
};

} // namespace ib::host
