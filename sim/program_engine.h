// The SimGrid side of HostRuntime (sim/host_runtime.h), built as a module of its own (sim/simgrid_engine.cpp,
// libibnetsim_simgrid.so) and loaded the first time a run has programs. Debian's SimGrid pulls in the ns-3
// libraries, whose loading and static initialisers cost about 60 ms at every start: runs without programs
// (fabric-level hosts, PHOLD, validate, the topology and SM commands) never pay it.
//
// The module is found by the dynamic loader's search from the object that links this library: the ibnetsim
// executable's RUNPATH names <its directory>/../lib/ibnetsim, in the build tree as where it is installed; the Python
// module's and a find_package(ibnetsim) consumer's RUNPATH name the same directory of their prefix.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sim {

/// Bumped whenever ProgramEngine changes: a module built for another version is refused, not called.
inline constexpr int program_engine_interface = 2;
/// The module's file name, as the dynamic loader searches for it.
inline constexpr const char* program_engine_module = "libibnetsim_simgrid.so";

/// One SimGrid engine for one run: a host with one actor per program and a semaphore per actor. Callbacks receive
/// the context given with them and an argument (the actor's index, or run_in_kernel's).
class ProgramEngine {
public:
  using Callback = void (*)(void* context, std::uint32_t argument);

  virtual ~ProgramEngine() = default;
  /// Creates SimGrid's engine with the command-line `settings` (argv[0] first), then one actor per name, each
  /// running `main(context, its index)` once run() starts. SIGINT keeps the handler the process had.
  virtual void start(const std::vector<std::string>& settings, const std::vector<std::string>& actor_names,
                     Callback main, void* context) = 0;
  /// Runs the actors until none is left.
  virtual void run() = 0;
  /// Called from actor `actor`: blocks it until release(actor).
  virtual void acquire(std::uint32_t actor) = 0;
  virtual void release(std::uint32_t actor) = 0;
  /// Called from an actor: runs code(context, argument) in SimGrid's kernel (maestro) as a simcall, then returns.
  /// The fabric runs there: within SimGrid's scheduling round, without a timer, so no round of its models per
  /// wake-up. Other actors of the round may run before the simcall is handled.
  virtual void run_in_kernel(Callback code, void* context, std::uint32_t argument) = 0;
};

/// A new engine from the module, loaded on first use and kept for the process's life. Throws std::runtime_error
/// naming the module and the loader's reason when it cannot be loaded or is of another interface version.
std::unique_ptr<ProgramEngine> make_program_engine();

/// Loads the module now, if it can be, and never throws: for a process that forks runs (a sweep's points), so that
/// each child starts with SimGrid and the ns-3 libraries it needs already loaded and initialised, instead of paying
/// their loading (about 100 M instructions) itself. A module that cannot be loaded fails in the child that needs it,
/// with make_program_engine()'s error.
void preload_program_engine() noexcept;

} // namespace sim

/// The module's one entry point: a new engine, or nullptr if `interface` is not program_engine_interface.
extern "C" sim::ProgramEngine* ibnetsim_make_program_engine(int interface);
