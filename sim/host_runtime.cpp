#include "sim/host_runtime.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <dlfcn.h>
#include <fstream>
#include <link.h>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <utility>

#include "sim/memory.h"

namespace sim {

namespace {
// Unwinds a program that is still blocked when the run ends.
struct ProgramStopped {};

// Raw contexts switch stacks by hand, and ASan cannot follow them: unwinding a program that a run cut short (an
// exception on such a stack) then trips false reports. Under ASan, programs run as threads, whose stacks it knows;
// the semantics are the same (SimGrid runs one actor at a time), only slower.
#if defined(__SANITIZE_ADDRESS__)
const std::string context_factory = "thread";
#else
const std::string context_factory = "raw";
#endif

// A program's stack. The deepest any program of the test suite and the shipped scenarios went was 7.0 KB (release
// build; each stack zeroed below its first frame, scanned when its program ended): 64 KiB leaves nine times that.
// The stacks are kept off the heap's huge pages (sim/memory.h), so only the pages a program touched are resident.
// ASan's frames are several times larger, and its programs are threads: it keeps 256 KiB.
#if defined(__SANITIZE_ADDRESS__)
constexpr int program_stack_kib = 256;
#else
constexpr int program_stack_kib = 64;
#endif

// Memory mappings per program, measured (1000 programs add 2,943 mappings under ASan, 2,000 otherwise): an OS
// thread's stack, its guard page and, under ASan, the thread's own state; or a raw context's stack with its guard
// page cut out of the heap.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::uint64_t mappings_per_program = 3;
#else
constexpr std::uint64_t mappings_per_program = 2;
#endif
// Mappings the process holds besides the stacks: measured 344 under ASan and 168 otherwise before a run, none added
// by SimGrid's engine; the rest is room for the model's large buffers (each above malloc's mmap threshold is one).
constexpr std::uint64_t mapping_reserve = 2048;

std::uint64_t max_map_count() {
  std::ifstream file("/proc/sys/vm/max_map_count");
  std::uint64_t count = 0;
  if (file >> count && count > 0)
    return count;
  return 65'530; // Linux's default (DEFAULT_MAX_MAP_COUNT)
}

std::uint64_t mappings_in_use() {
  std::ifstream file("/proc/self/maps");
  std::uint64_t lines = 0;
  for (std::string line; std::getline(file, line);)
    ++lines;
  return lines;
}

/// Whether `programs` stacks still fit under the limit now, with 64 mappings to spare for the engine's own.
bool stacks_fit(std::size_t programs) {
  return mappings_in_use() + 64 + programs * mappings_per_program <= max_map_count();
}
} // namespace

ProgramLimit program_limit() {
  if (context_factory != "thread")
    return {UINT32_MAX, ""};
  // Fixed for a machine, so that a scenario `validate` accepts also runs.
  const std::uint64_t limit = max_map_count();
  const std::uint64_t allowed = limit > mapping_reserve ? (limit - mapping_reserve) / mappings_per_program : 0;
  return {static_cast<std::uint32_t>(std::min<std::uint64_t>(allowed, UINT32_MAX)),
          "this build runs each as an OS thread, whose stack, guard page and sanitizer state take " +
              std::to_string(mappings_per_program) + " of the process's " + std::to_string(limit) +
              " memory mappings (vm.max_map_count)"};
}

namespace {

/// The directories the dynamic loader searches for libraries needed by the object that holds this code (the
/// executable, or the Python module): its RUNPATH with $ORIGIN expanded, LD_LIBRARY_PATH, the system's.
std::vector<std::string> loader_search_path() {
  std::vector<std::string> directories;
  Dl_info info{};
  void* self = nullptr; // in glibc, a link_map is the object's handle
  if (dladdr1(reinterpret_cast<void*>(&loader_search_path), &info, &self, RTLD_DL_LINKMAP) == 0 || self == nullptr)
    return directories;
  Dl_serinfo size{};
  if (dlinfo(self, RTLD_DI_SERINFOSIZE, &size) != 0)
    return directories;
  std::vector<std::max_align_t> storage(size.dls_size / sizeof(std::max_align_t) + 1);
  auto* search = reinterpret_cast<Dl_serinfo*>(storage.data());
  *search = size;
  if (dlinfo(self, RTLD_DI_SERINFO, search) != 0)
    return directories;
  for (unsigned i = 0; i < search->dls_cnt; ++i)
    directories.emplace_back(search->dls_serpath[i].dls_name);
  return directories;
}

} // namespace

namespace {

using Factory = ProgramEngine* (*)(int);
struct Module {
  Factory factory = nullptr;
  std::string error;
};

/// Loaded once and never unloaded: SimGrid keeps process-wide state from engine to engine.
const Module& program_engine_module_loaded() {
  static const Module module = [] {
    Module m;
    void* handle = dlopen(program_engine_module, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      m.error = dlerror();
      // A sanitizer's dlopen interceptor calls the loader from its own library, whose RUNPATH is not ours: look
      // in our search path by hand.
      for (const std::string& directory : loader_search_path()) {
        const std::string path = directory + "/" + program_engine_module;
        if (access(path.c_str(), F_OK) != 0)
          continue;
        handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr)
          m.error = dlerror();
        break;
      }
    }
    if (handle != nullptr) {
      m.factory = reinterpret_cast<Factory>(dlsym(handle, "ibnetsim_make_program_engine"));
      if (m.factory == nullptr)
        m.error = dlerror();
    }
    return m;
  }();
  return module;
}

} // namespace

void preload_program_engine() noexcept {
  try {
    program_engine_module_loaded();
  } catch (...) { // std::bad_alloc building the message: the child that needs the module says what is wrong
  }
}

std::unique_ptr<ProgramEngine> make_program_engine() {
  const Module& module = program_engine_module_loaded();
  if (module.factory == nullptr)
    throw std::runtime_error(std::string("cannot load SimGrid for the host programs, the module ") +
                             program_engine_module + " (installed in <prefix>/lib/ibnetsim): " + module.error);
  std::unique_ptr<ProgramEngine> engine(module.factory(program_engine_interface));
  if (!engine)
    throw std::runtime_error(std::string(program_engine_module) + " belongs to another version of ibnetsim");
  return engine;
}

struct HostRuntime::ProgramState {
  std::string name;
  std::function<void(Program&)> body;
  std::uint32_t generation = 0; // bumped at each wake-up, so the other pending wake-up events become stale
  bool blocked = false;
};

// --- Signal and Program ----------------------------------------------------------------------------------------

void Signal::notify() {
  ++pending_;
  if (waiter_ >= 0) {
    runtime_->schedule_wake(static_cast<std::uint32_t>(waiter_), std::max(runtime_->sim_.now(), waiter_not_before_));
    waiter_ = -1;
  }
}

Time Program::now() const {
  return runtime_.sim_.now();
}
const std::string& Program::name() const {
  return runtime_.programs_[index_]->name;
}
Simulator& Program::simulator() {
  return runtime_.sim_;
}

void Program::compute(Time duration) {
  if (duration < Time::zero())
    throw std::invalid_argument("Program::compute: negative duration");
  sleep_until(now() + duration);
}

void Program::sleep_until(Time at) {
  if (at < now())
    throw std::invalid_argument("Program::sleep_until: instant in the past");
  runtime_.schedule_wake(index_, at);
  runtime_.block(index_);
}

void Program::wait(Signal& signal) {
  wait(signal, Time::zero());
}

void Program::wait(Signal& signal, Time not_before) {
  if (signal.pending_ > 0 && now() < not_before)
    sleep_until(not_before);
  while (signal.pending_ == 0) {
    if (signal.waiter_ >= 0 && signal.waiter_ != index_)
      throw std::logic_error("two programs wait on one signal");
    signal.waiter_ = index_;
    signal.waiter_not_before_ = not_before;
    runtime_.block(index_);
  }
  --signal.pending_;
}

bool Program::wait_for(Signal& signal, Time timeout) {
  if (signal.pending_ == 0) {
    if (signal.waiter_ >= 0 && signal.waiter_ != index_)
      throw std::logic_error("two programs wait on one signal");
    signal.waiter_ = index_;
    signal.waiter_not_before_ = Time::zero();
    // Both wake-ups carry the current generation; whichever fires first makes the other stale.
    runtime_.schedule_wake(index_, now() + timeout);
    runtime_.block(index_);
    if (signal.waiter_ == index_)
      signal.waiter_ = -1;
    if (signal.pending_ == 0)
      return false;
  }
  --signal.pending_;
  return true;
}

// --- HostRuntime -----------------------------------------------------------------------------------------------

HostRuntime::HostRuntime(Simulator& sim) : sim_(sim) {}
HostRuntime::~HostRuntime() = default;

void HostRuntime::spawn(std::string name, std::function<void(Program&)> body) {
  if (ran_)
    throw std::logic_error("HostRuntime::spawn after run");
  auto state = std::make_unique<ProgramState>();
  state->name = std::move(name);
  state->body = std::move(body);
  programs_.push_back(std::move(state));
}

HostRuntime::Outcome HostRuntime::run_engine(Time until) {
  if (ran_)
    throw std::logic_error("HostRuntime::run called twice");
  ran_ = true;
  until_ = until;
  if (programs_.empty()) {
    burst_(burst_context_, sim_, until_);
    return outcome_;
  }

  // Past the mapping limit SimGrid aborts the process: callers check program_limit() first and report bad input.
  if (context_factory == "thread" && !stacks_fit(programs_.size()))
    throw std::length_error("HostRuntime: " + std::to_string(programs_.size()) +
                            " programs: their threads do not fit under the memory mapping limit (" +
                            program_limit().why + ")");
  engine_ = make_program_engine();
  std::vector<std::string> args = {
      "ibnetsim", "--cfg=surf/precision:1e-15", "--cfg=contexts/factory:" + context_factory,
      "--cfg=contexts/stack-size:" + std::to_string(program_stack_kib), "--log=root.thres:warning"};
  // Guard pages catch a program overflowing its stack, but as mappings of their own they are kept only while they
  // fit under the limit (docs/models/kernel.md).
  if (context_factory == "raw" && !stacks_fit(programs_.size()))
    args.emplace_back("--cfg=contexts/guard-size:0");
  std::vector<std::string> names;
  names.reserve(programs_.size());
  for (const auto& program : programs_)
    names.push_back(program->name);
  runnable_ = static_cast<std::uint32_t>(programs_.size());
  // The stacks come next from the heap's top, and a program touches a few KiB of its own (sim/memory.h); the
  // engine's state per actor comes with them.
  if (context_factory == "raw")
    keep_heap_top_off_huge_pages(programs_.size() * ((program_stack_kib + 8) << 10) + (std::size_t{1} << 20));
  // A Simulator::halted() run is stopped by the caller's SIGINT handler, which the engine leaves in place.
  engine_->start(
      args, names, [](void* runtime, std::uint32_t i) { static_cast<HostRuntime*>(runtime)->program_main(i); }, this);
  engine_->run();
  engine_.reset();
  if (failure_)
    std::rethrow_exception(failure_);
  return outcome_;
}

void HostRuntime::schedule_wake(std::uint32_t program, Time at) {
  sim_.schedule(at, Target{program_component_type, program}, static_cast<std::uint8_t>(Kind::wake), 0,
                programs_[program]->generation);
}

void HostRuntime::program_main(std::uint32_t index) {
  Program face(*this, index);
  try {
    programs_[index]->body(face);
    ++outcome_.programs_finished;
  } catch (const ProgramStopped&) {
    ++outcome_.programs_stopped;
  } catch (...) {
    if (!failure_)
      failure_ = std::current_exception();
    stopping_ = true;
  }
  program_left();
}

void HostRuntime::program_left() {
  --runnable_;
  if (stopping_) {
    finish_run();
    return;
  }
  if (runnable_ == 0)
    drive_from(-1);
}

void HostRuntime::block(std::uint32_t index) {
  ProgramState& program = *programs_[index];
  program.blocked = true;
  --runnable_;
  if (runnable_ == 0 && !stopping_) {
    drive_from(index);
    if (!program.blocked) { // the fabric woke this very program (or the run ended): it goes on without a switch
      if (stopping_)
        throw ProgramStopped{};
      return;
    }
  }
  if (stopping_) {
    program.blocked = false;
    throw ProgramStopped{};
  }
  engine_->acquire(index);
  if (stopping_)
    throw ProgramStopped{};
}

void HostRuntime::drive_from(std::int64_t driver) {
  // The driver is passed along, not kept here: between this call and the simcall's handling, SimGrid runs the
  // other actors of its round (one that has just been woken, one on its way to acquire()).
  engine_->run_in_kernel(
      [](void* runtime, std::uint32_t driver_plus_one) {
        static_cast<HostRuntime*>(runtime)->drive(static_cast<std::int64_t>(driver_plus_one) - 1);
      },
      this, static_cast<std::uint32_t>(driver + 1));
}

void HostRuntime::drive(std::int64_t driver) {
  driver_ = driver;
  try {
    burst_(burst_context_, sim_, until_);
    // The burst ended on a program wake-up, because nothing remains at or before until_, or because the run was
    // halted (then it ends here: what has happened is all there is).
    if (sim_.halted() || runnable_ == 0)
      finish_run();
  } catch (...) {
    if (!failure_)
      failure_ = std::current_exception();
    finish_run();
  }
  driver_ = -1;
}

void HostRuntime::on_program_event(const Event& event) {
  ProgramState& program = *programs_[event.index];
  if (event.generation != program.generation || !program.blocked) {
    sim_.mark_stale(); // the other half of a wait_for, already woken
    return;
  }
  ++program.generation;
  program.blocked = false;
  ++runnable_;
  ++outcome_.wakeups;
  if (static_cast<std::int64_t>(event.index) != driver_)
    engine_->release(event.index); // the driver itself just returns from its simcall
  sim_.request_stop();
}

void HostRuntime::finish_run() {
  stopping_ = true;
  for (std::uint32_t i = 0; i < programs_.size(); ++i) {
    if (programs_[i]->blocked) {
      programs_[i]->blocked = false;
      ++runnable_;
      if (static_cast<std::int64_t>(i) != driver_)
        engine_->release(i);
    }
  }
}

} // namespace sim
