// `ibnetsim compare`: one scenario under every combination of the driver features that change what a post costs
// (inline, BlueFlame, postlist, unsignaled completions), or under named variants, side by side: latency, message
// rate, and the PCIe transactions, TLPs and CPU MMIO bytes per message, each against the baseline, and one line per
// feature saying which PCIe transactions it removed. Each variant runs as its own `ibnetsim run` process.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace cli {

/// `ibnetsim compare ...` (after the command word); returns the exit code.
int command_compare(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

} // namespace cli
