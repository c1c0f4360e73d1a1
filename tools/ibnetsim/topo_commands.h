// `ibnetsim topo SUBCOMMAND`: generate topologies (gen), convert ibnetdiscover output (import), write a topology
// in ibnetdiscover or ibsim form (export) and summarise one (show). See topologies/README.md.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace cli {

/// Runs `ibnetsim topo ARGS...` and returns the exit code: bad options print their message and the usage on
/// `err` and return 2; bad input files raise sim::InputError, which the caller reports (exit 2).
int command_topo(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

} // namespace cli
