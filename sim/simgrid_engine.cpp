// The module libibnetsim_simgrid.so: ProgramEngine (sim/program_engine.h) on SimGrid's S4U. Only this file sees
// SimGrid; it calls nothing of ibnetsim's but the callbacks it is given, so the module needs no symbol of the
// program that loads it.
#include <csignal>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>
#include <simgrid/simix.hpp>

#include "sim/program_engine.h"

namespace {

namespace sg4 = simgrid::s4u;

class SimGridEngine final : public sim::ProgramEngine {
public:
  ~SimGridEngine() override {
    semaphores_.clear(); // before the engine they belong to
  }

  void start(const std::vector<std::string>& settings, const std::vector<std::string>& actor_names, Callback main,
             void* context) override {
    std::vector<std::string> args = settings;
    std::vector<char*> argv;
    for (auto& arg : args)
      argv.push_back(arg.data());
    argv.push_back(nullptr);
    int argc = static_cast<int>(args.size());
    // SimGrid's engine takes SIGINT for itself (to print every actor's state and exit 1): the process keeps the
    // handler it had, so that a caller can stop an interrupted run cleanly.
    struct sigaction previous_sigint {};
    sigaction(SIGINT, nullptr, &previous_sigint);
    engine_.emplace(&argc, argv.data());
    sigaction(SIGINT, &previous_sigint, nullptr);

    auto* zone = sg4::create_full_zone("hosts");
    sg4::Host* host = zone->create_host("cpu", 1e9);
    zone->seal();
    semaphores_.reserve(actor_names.size());
    for (std::uint32_t i = 0; i < actor_names.size(); ++i) {
      semaphores_.push_back(sg4::Semaphore::create(0));
      sg4::Actor::create(actor_names[i], host, [main, context, i] { main(context, i); });
    }
  }

  void run() override { engine_->run(); }
  void acquire(std::uint32_t actor) override { semaphores_[actor]->acquire(); }
  void release(std::uint32_t actor) override { semaphores_[actor]->release(); }

  void run_in_kernel(Callback code, void* context, std::uint32_t argument) override {
    simgrid::kernel::actor::simcall_answered([code, context, argument] { code(context, argument); });
  }

private:
  std::optional<sg4::Engine> engine_;
  std::vector<sg4::SemaphorePtr> semaphores_;
};

} // namespace

extern "C" __attribute__((visibility("default"))) sim::ProgramEngine* ibnetsim_make_program_engine(int interface) {
  if (interface != sim::program_engine_interface)
    return nullptr;
  return new SimGridEngine();
}
