#include "models/host/context.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>

#include "models/host/cluster.h"

namespace ib::host {

Context::Context(sim::Program& program, HostNode& node) : program_(program), node_(node) {}

bool Context::faults() const {
  return node_.faults;
}

sim::HostRuntime& Context::runtime() {
  return *node_.runtime;
}

hca::Hca& Context::hca() {
  settle();
  return *node_.hca;
}
pcie::HostMemory& Context::memory() {
  settle();
  return *node_.memory;
}
std::uint16_t Context::lid(std::uint8_t port) const {
  return node_.hca->lid(port);
}

std::uint8_t Context::path_sl(std::uint16_t dlid, std::uint8_t port) const {
  if (node_.subnet == nullptr || node_.subnet->routing.path_sl_by_switch.empty())
    return 0;
  return sm::path_sl(node_.subnet->routing, *node_.switch_index, node_.subnet->lids, lid(port), dlid);
}

std::uint32_t Context::create_cq(std::uint32_t depth) {
  settle();
  node_.signals.emplace_back(*node_.runtime);
  return add_cq(depth, node_.signals.back());
}

std::uint32_t Context::create_cq(std::uint32_t depth, std::uint32_t channel_of) {
  settle();
  return add_cq(depth, *node_.cq_signals.at(channel_of));
}

std::uint32_t Context::add_cq(std::uint32_t depth, sim::Signal& signal) {
  const std::uint32_t cq = node_.hca->create_cq(depth, &signal);
  node_.cq_signals.push_back(&signal);
  if (cq + 1 != node_.cq_signals.size())
    throw std::logic_error("CQs created outside Context");
  return cq;
}

std::uint32_t Context::create_qp(verbs::QpType type, const verbs::QpCaps& caps, std::uint32_t send_cq,
                                 std::uint32_t recv_cq) {
  settle();
  if (node_.out_of_order_rc && type == verbs::QpType::rc && !caps.out_of_order) {
    verbs::QpCaps ooo = caps;
    ooo.out_of_order = true;
    return node_.hca->create_qp(type, ooo, send_cq, recv_cq);
  }
  return node_.hca->create_qp(type, caps, send_cq, recv_cq);
}

std::string Context::modify_qp(std::uint32_t qpn, verbs::QpState state, const verbs::QpAttr& attr) {
  settle();
  return node_.hca->modify_qp(program_.simulator(), qpn, state, attr);
}

void Context::connect_qp(std::uint32_t qpn, const verbs::QpAttr& attr) {
  for (const verbs::QpState s : {verbs::QpState::init, verbs::QpState::rtr, verbs::QpState::rts}) {
    const std::string error = modify_qp(qpn, s, attr);
    if (!error.empty())
      throw std::runtime_error("modify_qp " + std::to_string(qpn) + ": " + error);
  }
}

verbs::PostResult Context::post_send(std::uint32_t qpn, std::span<const verbs::SendWr> wrs) {
  // The driver builds every WQE (and copies inline data) before the doorbell or BlueFlame store.
  const pcie::HostParams& cpu = node_.hca->host_params();
  double inline_bytes = 0;
  for (const verbs::SendWr& wr : wrs)
    if (wr.inline_data)
      inline_bytes += wr.length_bytes;
  const sim::Time build =
      cpu.post_send_cpu_cost + cpu.wqe_build_cpu_cost * static_cast<std::int64_t>(wrs.size()) +
      sim::Time::from_ps(static_cast<std::int64_t>(inline_bytes * cpu.inline_copy_ns_per_byte * 1e3));
  program_.compute(take_owed() + build);
  if (node_.hca->traces_programs())
    node_.hca->trace_program(program_.simulator(), qpn, "post_send",
                             "\"wrs\": " + std::to_string(wrs.size()) +
                                 ", \"first_wr_id\": " + std::to_string(wrs.empty() ? 0 : wrs[0].wr_id));
  std::uint32_t stores = 0;
  const verbs::PostResult result = node_.hca->post_send(program_.simulator(), qpn, wrs, &stores);
  // The MMIO stores (the bus charged the same time before their TLPs left).
  owe(cpu.mmio_write_cpu_cost * stores);
  return result;
}

verbs::PostResult Context::post_recv(std::uint32_t qpn, std::span<const verbs::RecvWr> wrs) {
  const pcie::HostParams& cpu = node_.hca->host_params();
  program_.compute(take_owed() + cpu.post_recv_cpu_cost * static_cast<std::int64_t>(wrs.size()));
  return node_.hca->post_recv(program_.simulator(), qpn, wrs);
}

verbs::PostResult Context::post_srq_recv(std::uint32_t srq, std::span<const verbs::RecvWr> wrs) {
  const pcie::HostParams& cpu = node_.hca->host_params();
  program_.compute(take_owed() + cpu.post_recv_cpu_cost * static_cast<std::int64_t>(wrs.size()));
  return node_.hca->post_srq_recv(program_.simulator(), srq, wrs);
}

int Context::poll_cq(std::uint32_t cq, std::span<verbs::WorkCompletion> out) {
  settle();
  const int n = node_.hca->poll_cq(cq, out);
  for (int i = 0; node_.hca->traces_programs() && i < n; ++i) {
    const verbs::WorkCompletion& wc = out[static_cast<std::size_t>(i)];
    node_.hca->trace_program(program_.simulator(), wc.qp_num, "poll_cq",
                             "\"wr_id\": " + std::to_string(wc.wr_id) + ", \"opcode\": \"" +
                                 std::string(verbs::to_string(wc.opcode)) + "\", \"status\": \"" +
                                 std::string(verbs::to_string(wc.status)) + "\"");
  }
  const pcie::HostParams& cpu = node_.hca->host_params();
  owe(cpu.poll_cq_cpu_cost + cpu.cqe_read_cpu_cost * std::max(n, 0));
  return n;
}

int Context::wait_cq(std::uint32_t cq, std::span<verbs::WorkCompletion> out, sim::Time deadline) {
  return wait_any_cq({&cq, 1}, deadline) < 0 ? 0 : poll_cq(cq, out);
}

int Context::wait_any_cq(std::span<const std::uint32_t> cqs, sim::Time deadline) {
  if (deadline != sim::Time::max())
    settle();
  sim::Signal& signal = *node_.cq_signals.at(cqs.front());
  assert(std::all_of(cqs.begin(), cqs.end(), [&](std::uint32_t cq) { return node_.cq_signals.at(cq) == &signal; }) &&
         "wait_any_cq over CQs of different completion channels");
  while (true) {
    // A signal's notifications only say that something may have changed: the CQs themselves say what.
    signal.clear();
    for (std::size_t i = 0; i < cqs.size(); ++i) {
      if (node_.hca->cq_ready(cqs[i]) > 0) {
        settle(); // a CQE visible now is still there when the CPU time owed is paid
        return static_cast<int>(i);
      }
    }
    if (deadline == sim::Time::max()) {
      // Every CQE notifies the channel: the CPU time owed overlaps the wait, and the program looks again when
      // both are over, at the instant it would have looked after paying it first.
      program_.wait(signal, program_.now() + take_owed());
    } else {
      if (program_.now() >= deadline || !program_.wait_for(signal, deadline - program_.now()))
        return -1;
    }
  }
}

std::size_t Context::watch_buffer(std::uint64_t address) {
  settle();
  sim::Signal& signal = node_.watch_signals.emplace_back(*node_.runtime);
  return node_.hca->watch_writes(address, &signal);
}

void Context::wait_for_writes(std::size_t watch, std::uint64_t count) {
  settle();
  sim::Signal& signal = node_.watch_signals.at(watch);
  while (true) {
    signal.clear();
    if (node_.hca->writes_seen(watch) >= count)
      break;
    program_.wait(signal);
  }
  program_.compute(node_.hca->host_params().poll_cq_cpu_cost); // the read of the spin that saw it
}

} // namespace ib::host
