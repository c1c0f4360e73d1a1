// The ibnetsim command line: subcommands run, validate and params (docs/user-guide.md). Callable in-process so
// tests can drive it; main() is a one-line wrapper.
#pragma once

#include <ostream>

namespace cli {

/// Runs the command line `argv` and returns the process exit code: 0 success, 2 bad input or options,
/// 3 violated invariant, 1 internal error.
int run_command_line(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

} // namespace cli
