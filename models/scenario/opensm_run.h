// A scenario's routing "opensm": the real OpenSM (Debian `opensm`) computes the LIDs and LFTs of the scenario's
// fabric, served by ibsim (`ibsim-utils`) with no InfiniBand hardware, and the run replays them (the file engine
// with OpenSM's guid2lid). tools/opensm/README.md explains the setup this follows.
#pragma once

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "models/topology/topology.h"

namespace ib::scenario {

/// OpenSM 3.3.23's routing engines (osm_opensm.c static_routing_modules, less "none" and "file"): what a scenario's
/// subnet_manager/engine may name with routing "opensm".
std::span<const std::string_view> opensm_engines();

struct OpenSmRequest {
  std::string engine = "minhop";
  unsigned lmc = 0;
  topo::PortRef sm_port; ///< the port OpenSM binds to; node == no_node: ibsim's default (the net file's first HCA)
  double timeout_s = 60; ///< until OpenSM logs SUBNET UP
};

/// What OpenSM computed, in a temporary directory removed with this object.
class OpenSmRun {
public:
  OpenSmRun() = default;
  OpenSmRun(OpenSmRun&& other) noexcept;
  OpenSmRun& operator=(OpenSmRun&& other) noexcept;
  OpenSmRun(const OpenSmRun&) = delete;
  OpenSmRun& operator=(const OpenSmRun&) = delete;
  ~OpenSmRun();

  std::string directory;     ///< private temporary directory
  std::string lft_file;      ///< opensm-lfts.dump
  std::string guid2lid_file; ///< OpenSM's guid2lid cache
  std::string engine_used;   ///< the engine OpenSM says configured the switches (it may fall back to minhop)
};

/// Why OpenSM could not be run: a missing program (what to install in `install`) or a failed run.
class OpenSmError : public std::runtime_error {
public:
  explicit OpenSmError(const std::string& what, std::string install_hint = "")
      : std::runtime_error(what), install(std::move(install_hint)) {}
  std::string install; ///< non-empty when a package is missing: the command that installs it
};

/// Runs ibsim on `topology` (written as an ibsim net file) and OpenSM on it until SUBNET UP, then stops both.
/// Throws OpenSmError.
OpenSmRun run_opensm(const topo::Topology& topology, const OpenSmRequest& request);

} // namespace ib::scenario
