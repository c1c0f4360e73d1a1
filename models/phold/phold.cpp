#include "models/phold/phold.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "sim/errors.h"

namespace phold {

const sim::ParamTable<Params>& param_table() {
  static const sim::ParamTable<Params> table(
      "phold",
      {
          {"lp_count", &Params::lp_count, "count", "logical processes", 1, 1 << 24},
          {"initial_events_per_lp", &Params::initial_events_per_lp, "count", "events each LP starts with", 1, 1 << 16},
          {"lookahead_ns", &Params::lookahead, "ns", "minimum delay of every event", 0.001, 1e9},
          {"mean_extra_delay_ns", &Params::mean_extra_delay, "ns", "mean exponential delay added to the lookahead", 0,
           1e9},
          {"remote_fraction", &Params::remote_fraction, "fraction", "probability an event goes to another LP", 0, 1},
          {"program_count", &Params::program_count, "count", "host programs (SimGrid actors); 0 for none", 0, 1 << 20},
          {"program_every_events", &Params::program_every_events, "count",
           "hand every Nth event handled to a program; 0 with no programs", 0, 1u << 30},
          {"program_compute_ns", &Params::program_compute, "ns", "CPU time a program spends per event", 0, 1e9},
      });
  return table;
}

// Events handed to one program and not yet re-injected, as LP indices in arrival order.
struct Model::Inbox {
  std::unique_ptr<sim::Signal> arrived;
  std::vector<std::uint32_t> lps;
  std::size_t head = 0;
};

Params read_params(sim::JsonObjectReader& reader) {
  Params params = param_table().read(reader);
  if ((params.program_count > 0) != (params.program_every_events > 0))
    throw sim::InputError(reader.file(), reader.pointer_to("program_every_events"),
                          "a value above 0 exactly when program_count is above 0",
                          std::to_string(params.program_every_events) + " with program_count " +
                              std::to_string(params.program_count));
  if (const sim::ProgramLimit limit = sim::program_limit(); params.program_count > limit.programs)
    throw sim::InputError(reader.file(), reader.pointer_to("program_count"),
                          "at most " + std::to_string(limit.programs) + " programs (" + limit.why + ")",
                          std::to_string(params.program_count));
  return params;
}

Model::Model(const Params& params, sim::Simulator& sim, std::uint64_t drop_event_number)
    : params_(params), sim_(sim), drop_event_number_(drop_event_number) {
  lp_component_id_.reserve(params_.lp_count);
  lp_rng_.reserve(params_.lp_count);
  for (std::uint32_t lp = 0; lp < params_.lp_count; ++lp) {
    const std::uint32_t id = sim_.add_component("lp" + std::to_string(lp));
    lp_component_id_.push_back(id);
    lp_rng_.push_back(sim_.rng_for(id));
  }
  handled_per_lp_.assign(params_.lp_count, 0);
  population_ = std::uint64_t{params_.lp_count} * params_.initial_events_per_lp;
  for (std::uint32_t lp = 0; lp < params_.lp_count; ++lp)
    for (std::uint32_t i = 0; i < params_.initial_events_per_lp; ++i)
      send_from(lp, sim_.now());
}

void Model::send_from(std::uint32_t lp, sim::Time earliest) {
  sim::Rng& rng = lp_rng_[lp];
  std::uint32_t destination = lp;
  if (params_.lp_count > 1 && rng.bernoulli(params_.remote_fraction)) {
    // Uniform over the other LPs.
    destination = static_cast<std::uint32_t>(rng.uniform_below(params_.lp_count - 1));
    if (destination >= lp)
      ++destination;
    ++counters_.events_sent_remote;
  }
  const double extra_ps = rng.exponential(static_cast<double>(params_.mean_extra_delay.ps()));
  const sim::Time delay = params_.lookahead + sim::Time::from_ps(std::llround(extra_ps));
  ++in_flight_;
  ++counters_.events_sent;
  sim_.schedule(earliest + delay, sim::Target{component_type, destination},
                static_cast<std::uint8_t>(Kind::event_arrives));
}

void Model::on_event(const sim::Event& event) {
  switch (static_cast<Kind>(event.kind)) {
  case Kind::event_arrives: {
    const std::uint32_t lp = event.index;
    --in_flight_;
    ++handled_per_lp_[lp];
    const std::uint64_t number = ++counters_.events_handled;
    if (number == drop_event_number_) {
      // Deliberately lost, to show that the check below catches it.
    } else if (params_.program_every_events > 0 && number % params_.program_every_events == 0) {
      Inbox& inbox = inboxes_[lp % params_.program_count];
      inbox.lps.push_back(lp);
      ++counters_.events_to_programs;
      ++in_flight_; // held by the program until it re-injects the event
      inbox.arrived->notify();
    } else {
      send_from(lp, sim_.now());
    }
    break;
  }
  }
  if (in_flight_ != population_)
    check_invariants();
}

void Model::attach_programs(sim::HostRuntime& runtime) {
  inboxes_.resize(params_.program_count);
  for (std::uint32_t i = 0; i < params_.program_count; ++i) {
    inboxes_[i].arrived = std::make_unique<sim::Signal>(runtime);
    runtime.spawn("program" + std::to_string(i), [this, i](sim::Program& program) { program_body(program, i); });
  }
}

void Model::program_body(sim::Program& program, std::uint32_t index) {
  Inbox& inbox = inboxes_[index];
  // Runs until the run ends, which unwinds it from wait().
  for (;;) {
    program.wait(*inbox.arrived);
    program.compute(params_.program_compute);
    const std::uint32_t lp = inbox.lps[inbox.head++];
    if (inbox.head == inbox.lps.size()) {
      inbox.lps.clear();
      inbox.head = 0;
    }
    --in_flight_;
    ++counters_.events_from_programs;
    send_from(lp, program.now());
  }
}

void Model::check_invariants() const {
  if (in_flight_ != population_)
    throw sim::InvariantViolation("event-conservation", "phold",
                                  "the event population changed: " + std::to_string(in_flight_) +
                                      " in flight, expected " + std::to_string(population_),
                                  "events_handled=" + std::to_string(counters_.events_handled) +
                                      " to_programs=" + std::to_string(counters_.events_to_programs) +
                                      " from_programs=" + std::to_string(counters_.events_from_programs) +
                                      " at t=" + std::to_string(sim_.now().ps()) + " ps");
}

Counters Model::counters() const {
  Counters c = counters_;
  const auto [lo, hi] = std::minmax_element(handled_per_lp_.begin(), handled_per_lp_.end());
  c.min_events_per_lp = *lo;
  c.max_events_per_lp = *hi;
  return c;
}

const sim::ProfileModel profile_model =
    sim::profile_model<Params, &param_table>("phold", "synthetic PHOLD workload of the kernel");

} // namespace phold

namespace phold {

namespace {
// The composer's dispatcher: PHOLD has one component type, so the switch has one case.
struct Dispatch {
  Model& model;
  void operator()(const sim::Event& event) {
    switch (event.type) {
    case component_type:
      model.on_event(event);
      return;
    }
    throw std::logic_error("phold: event for unknown component type " + std::to_string(event.type));
  }
};
} // namespace

RunResult run(const Params& params, const RunOptions& options) {
  sim::Simulator sim(options.seed);
  sim.set_progress_hook(options.progress_hook, options.progress_context);
  Model model(params, sim, options.drop_event_number);
  Dispatch dispatch{model};
  RunResult result;
  if (params.program_count > 0) {
    sim::HostRuntime runtime(sim);
    model.attach_programs(runtime);
    const sim::HostRuntime::Outcome outcome = runtime.run(dispatch, options.duration);
    result.program_wakeups = outcome.wakeups;
  } else {
    sim.run_until(dispatch, options.duration);
  }
  // Events due later stay pending; the run covers exactly [0, duration], unless it was halted short of it.
  result.halted = sim.halted();
  if (!result.halted)
    sim.advance_to(options.duration);
  model.check_invariants();
  result.counters = model.counters();
  result.events_dispatched = sim.events_dispatched();
  result.events_pending = sim.pending_events();
  result.simulated_time = sim.now();
  result.events_per_lp = model.events_per_lp();
  return result;
}

} // namespace phold
