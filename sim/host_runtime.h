// Host programs as SimGrid S4U actors, coupled to the kernel's calendar (docs/models/kernel.md). SimGrid itself is
// a module loaded when a run first has programs (sim/program_engine.h).
//
// A program is sequential code (`compute`, `wait` on a Signal, verbs calls later) run by an S4U actor. Every
// instant at which a program can act is an event in the kernel's calendar: its compute() end or the notify() of
// a signal it waits on. The program that blocks last, leaving none runnable, runs the fabric in SimGrid's kernel (a
// simcall), which stops at the first such event, so it never runs past an instant at which a program can act; the
// program woken resumes there (at once, if it is the one that ran the fabric). SimGrid's clock never moves: no
// timer, and no round of SimGrid's models, per wake-up. SimGrid sees only program wake-ups, never packets.
// Programs must block only through this API: SimGrid's own sleeps or mailboxes would bypass the calendar.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/event.h"
#include "sim/program_engine.h"
#include "sim/simulator.h"

namespace sim {

/// How many programs one HostRuntime can run in this process, and why no more (docs/models/kernel.md).
struct ProgramLimit {
  std::uint32_t programs = 0;
  std::string why; ///< for messages: what bounds it ("" when only memory does)
};

/// Programs that run as OS threads (ASan builds) take three memory mappings each (stack, guard page, sanitizer
/// state), so they are bounded by the kernel's per-process limit (/proc/sys/vm/max_map_count) less a reserve for the
/// process's other mappings; past it SimGrid cannot create a thread and aborts. Raw contexts (other builds) give up
/// their stacks' guard pages when those would not fit, and are bounded by memory only (UINT32_MAX here).
ProgramLimit program_limit();

class HostRuntime;
/// Program events to the runtime, the rest to the fabric's dispatcher (and its prefetch hints, if it has them).
template <class Dispatch>
struct CompositeDispatch {
  Dispatch& fabric;
  HostRuntime& runtime;
  void operator()(const Event& event);
  void prefetch(const Event& event) requires requires { fabric.prefetch(event); }
  {
    if (event.type != program_component_type)
      fabric.prefetch(event);
  }
  void prefetch_near(const Event& event) requires requires { fabric.prefetch_near(event); }
  {
    if (event.type != program_component_type)
      fabric.prefetch_near(event);
  }
};

/// Something the fabric raises and a program waits on (a completion channel, a CQ event). It counts
/// notifications, so a notify before the wait is not lost.
class Signal {
public:
  explicit Signal(HostRuntime& runtime) : runtime_(&runtime) {}
  /// Raises the signal at the current instant; a program blocked on it resumes at this instant.
  void notify();
  std::uint32_t pending() const { return pending_; }
  /// Forgets notifications not waited for (a poller that has already looked at what they announced).
  void clear() { pending_ = 0; }

private:
  friend class Program;
  HostRuntime* runtime_;
  std::uint32_t pending_ = 0;
  std::int64_t waiter_ = -1; // index of the program blocked on this signal, or -1
  Time waiter_not_before_;   // the waiter resumes no earlier than this
};

/// The face a program's body sees. Valid only inside the body.
class Program {
public:
  Time now() const;
  /// Occupies the program's CPU for `duration`, then returns.
  void compute(Time duration);
  /// Blocks until the absolute instant `at` (not earlier than now()).
  void sleep_until(Time at);
  /// Blocks until `signal` has a notification, then consumes one.
  void wait(Signal& signal);
  /// As wait(), resuming no earlier than `not_before`: the CPU time a program still owes (a store, a poll's reads)
  /// overlaps its wait, and costs a wake-up only when the notification comes first.
  void wait(Signal& signal, Time not_before);
  /// As wait(), but gives up after `timeout`; true when a notification was consumed.
  bool wait_for(Signal& signal, Time timeout);
  const std::string& name() const;
  std::uint32_t index() const { return index_; }
  Simulator& simulator();

private:
  friend class HostRuntime;
  Program(HostRuntime& runtime, std::uint32_t index) : runtime_(runtime), index_(index) {}
  HostRuntime& runtime_;
  std::uint32_t index_;
};

class HostRuntime {
public:
  /// Counts of how programs ended, for reports.
  struct Outcome {
    std::uint32_t programs_finished = 0; ///< bodies that returned
    std::uint32_t programs_stopped = 0;  ///< still blocked when the run ended, then unwound
    std::uint64_t wakeups = 0;           ///< program resumptions driven by the calendar
  };

  explicit HostRuntime(Simulator& sim);
  ~HostRuntime();
  HostRuntime(const HostRuntime&) = delete;
  HostRuntime& operator=(const HostRuntime&) = delete;

  /// Adds a program that starts at the beginning of run(). Call before run().
  void spawn(std::string name, std::function<void(Program&)> body);
  std::size_t program_count() const { return programs_.size(); }

  /// Runs programs and fabric together until every program has ended and the calendar is empty, until no
  /// event remains at or before `until`, or until the simulator's progress hook halts it (Simulator::halted()).
  /// `fabric_dispatch(const Event&)` handles every event not addressed to a program. Exceptions thrown by the fabric or
  /// a program end the run and are rethrown here.
  template <class Dispatch>
  Outcome run(Dispatch& fabric_dispatch, Time until) {
    using Composite = CompositeDispatch<Dispatch>;
    Composite composite{fabric_dispatch, *this};
    // One indirect call per burst of fabric events (one per program wake-up), never per event.
    burst_context_ = &composite;
    burst_ = [](void* context, Simulator& sim, Time until_at) {
      sim.run_until(*static_cast<Composite*>(context), until_at);
    };
    return run_engine(until);
  }

private:
  friend class Program;
  friend class Signal;
  template <class Dispatch>
  friend struct CompositeDispatch;
  struct ProgramState;
  enum class Kind : std::uint8_t { wake };

  Outcome run_engine(Time until);
  void on_program_event(const Event& event);
  /// Runs the fabric in SimGrid's kernel, from the program `driver` (or -1, a program that has ended) that has
  /// just left none runnable: until an event wakes a program, or to the end.
  void drive_from(std::int64_t driver);
  void drive(std::int64_t driver);
  void block(std::uint32_t program);
  void schedule_wake(std::uint32_t program, Time at);
  void program_main(std::uint32_t program);
  void program_left();
  void finish_run();

  Simulator& sim_;
  std::vector<std::unique_ptr<ProgramState>> programs_;
  void* burst_context_ = nullptr;
  void (*burst_)(void*, Simulator&, Time) = nullptr;
  Time until_ = Time::max();
  std::unique_ptr<ProgramEngine> engine_; // SimGrid, loaded for runs with programs (sim/program_engine.h)
  std::int64_t driver_ = -1;              // while the fabric runs: the program whose simcall runs it, or -1
  std::uint32_t runnable_ = 0;            // programs that are running or ready to run
  bool stopping_ = false;
  bool ran_ = false;
  std::exception_ptr failure_;
  Outcome outcome_;
};

template <class Dispatch>
void CompositeDispatch<Dispatch>::operator()(const Event& event) {
  if (event.type == program_component_type)
    runtime.on_program_event(event);
  else
    fabric(event);
}

} // namespace sim
