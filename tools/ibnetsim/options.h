// Command-line parsing shared by the ibnetsim subcommands: boost::program_options plus positional arguments.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace cli {

/// Bad command-line usage: reported with the command's name and a hint, like bad input (exit 2).
struct UsageError {
  std::string message;
};

struct Parsed {
  boost::program_options::variables_map values;
  std::vector<std::string> positional;
};

/// Parses `args` against `options`, collecting up to `max_positional` positional arguments into `parsed`.
/// Returns "" on success, else what is wrong (the parser's message, or the first unexpected argument); each
/// subcommand reports it with its own usage text.
std::string parse_options(const std::vector<std::string>& args,
                          const boost::program_options::options_description& options, std::size_t max_positional,
                          Parsed& parsed);

/// parse_options() for the subcommands that report problems as UsageError.
Parsed parse_or_throw(const std::vector<std::string>& args, const boost::program_options::options_description& options,
                      std::size_t max_positional);

} // namespace cli
