// Command-line parsing shared by the ibnetsim subcommands: boost::program_options plus positional arguments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "models/scenario/budget.h"

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

/// The value of unsigned integer option `option` (given, as text), checked to lie in [min, max]: a UsageError
/// naming the option otherwise. (boost's own unsigned parsing takes "-1" as 2^64 - 1, and "-j 0" was taken as 1.)
std::uint64_t unsigned_option(const boost::program_options::variables_map& values, const std::string& option,
                              std::uint64_t min, std::uint64_t max);

/// The options of ibnetsim itself, accepted before or after the subcommand: `--data-dir DIR` (or --data-dir=DIR)
/// and `--max-memory SIZE` (or --max-memory=SIZE).
struct GlobalOptions {
  std::optional<std::string> data_dir;
  std::optional<std::uint64_t> max_memory_bytes;
};

/// Removes the global options from `args` (the command line without the program name) and returns them. A
/// --data-dir without a value, or a --max-memory that is not a size, is a UsageError.
GlobalOptions take_global_options(std::vector<std::string>& args);

/// "512M", "8G", "1.5GiB", "2T", "1048576": bytes (K, M, G, T are powers of 1024; "B" and "iB" may follow); nullopt
/// unless `text` is such a size above 0.
std::optional<std::uint64_t> parse_memory_size(const std::string& text);

/// The memory a run may take, and where that figure came from (for messages).
struct MemoryLimit {
  std::uint64_t bytes = 0;
  std::string source;
};
/// --max-memory if given, else the machine's available memory now (MemAvailable in /proc/meminfo), else none.
MemoryLimit memory_limit();

/// The memory estimate of a run of `scenario`, checked against memory_limit(): InputError (exit 2) naming what to
/// change when it does not fit. `validate`, `run` and every point of `sweep` and `compare` check it first.
ib::scenario::MemoryEstimate check_memory_budget(const ib::scenario::Scenario& scenario);

/// Applies `options` for the lifetime of the scope and restores what was before: --data-dir becomes the data
/// directory (sim::set_data_directory) and, made absolute, IBNETSIM_DATA_DIR in the environment, so child processes
/// (sweep, compare points) read the same data; --max-memory becomes memory_limit().
class GlobalOptionsScope {
public:
  explicit GlobalOptionsScope(const GlobalOptions& options);
  ~GlobalOptionsScope();
  GlobalOptionsScope(const GlobalOptionsScope&) = delete;
  GlobalOptionsScope& operator=(const GlobalOptionsScope&) = delete;

private:
  bool applied_ = false;
  std::optional<std::string> previous_option_;
  std::optional<std::string> previous_environment_;
  std::optional<std::uint64_t> previous_max_memory_;
};

} // namespace cli
