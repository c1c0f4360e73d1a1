#include "tools/ibnetsim/options.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sim/data_dir.h"

namespace po = boost::program_options;

namespace cli {

std::string parse_options(const std::vector<std::string>& args, const po::options_description& options,
                          std::size_t max_positional, Parsed& parsed) {
  po::options_description all;
  all.add(options);
  all.add_options()("positional", po::value<std::vector<std::string>>(), "");
  po::positional_options_description positional;
  positional.add("positional", -1);
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), parsed.values);
    po::notify(parsed.values);
  } catch (const po::error& e) {
    return e.what();
  }
  if (parsed.values.count("positional"))
    parsed.positional = parsed.values["positional"].as<std::vector<std::string>>();
  if (parsed.positional.size() > max_positional)
    return "unexpected argument '" + parsed.positional[max_positional] + "'";
  return "";
}

Parsed parse_or_throw(const std::vector<std::string>& args, const po::options_description& options,
                      std::size_t max_positional) {
  Parsed parsed;
  const std::string problem = parse_options(args, options, max_positional, parsed);
  if (!problem.empty())
    throw UsageError{problem};
  return parsed;
}

std::uint64_t unsigned_option(const po::variables_map& values, const std::string& option, std::uint64_t min,
                              std::uint64_t max) {
  const std::string text = values[option].as<std::string>();
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < min || value > max)
    throw UsageError{"--" + option + " expects an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                     "], got '" + text + "'"};
  return value;
}

namespace {

/// --max-memory of the command running now, if it gave one.
std::optional<std::uint64_t> max_memory_option;

std::uint64_t memory_size_or_throw(const std::string& text) {
  const std::optional<std::uint64_t> bytes = parse_memory_size(text);
  if (!bytes)
    throw UsageError{"--max-memory expects a size such as 512M, 8G or 1T (powers of 1024), got '" + text + "'"};
  return *bytes;
}

} // namespace

std::optional<std::uint64_t> parse_memory_size(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(value > 0))
    return std::nullopt;
  std::string unit(end);
  for (char& c : unit)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.ends_with("IB"))
    unit.erase(unit.size() - 2);
  else if (unit.ends_with("B"))
    unit.erase(unit.size() - 1);
  static const std::string units = "KMGTP";
  double bytes = value;
  if (!unit.empty()) {
    const std::size_t power = units.find(unit);
    if (unit.size() != 1 || power == std::string::npos)
      return std::nullopt;
    bytes *= std::pow(1024.0, static_cast<double>(power + 1));
  }
  if (bytes < 1 || bytes > 1.8e19)
    return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

MemoryLimit memory_limit() {
  if (max_memory_option)
    return {*max_memory_option, "--max-memory"};
  if (const auto available = ib::scenario::available_memory_bytes())
    return {*available, "the machine's available memory; --max-memory SIZE sets the limit"};
  return {UINT64_MAX, "no limit: the machine's available memory is unknown"};
}

ib::scenario::MemoryEstimate check_memory_budget(const ib::scenario::Scenario& scenario) {
  const ib::scenario::MemoryEstimate estimate = ib::scenario::estimate_memory(scenario);
  const MemoryLimit limit = memory_limit();
  ib::scenario::check_memory(scenario, estimate, limit.bytes, limit.source);
  return estimate;
}

GlobalOptions take_global_options(std::vector<std::string>& args) {
  GlobalOptions options;
  constexpr std::string_view data_dir = "--data-dir";
  constexpr std::string_view max_memory = "--max-memory";
  for (std::size_t i = 0; i < args.size();) {
    const std::string& arg = args[i];
    if (arg == max_memory) {
      if (i + 1 >= args.size())
        throw UsageError{"--max-memory needs a size: --max-memory SIZE (such as 512M, 8G)"};
      options.max_memory_bytes = memory_size_or_throw(args[i + 1]);
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
    } else if (arg.starts_with(std::string(max_memory) + "=")) {
      options.max_memory_bytes = memory_size_or_throw(arg.substr(max_memory.size() + 1));
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (arg == data_dir) {
      if (i + 1 >= args.size() || args[i + 1].empty())
        throw UsageError{"--data-dir needs a directory: --data-dir DIR"};
      options.data_dir = args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
    } else if (arg.starts_with(std::string(data_dir) + "=")) {
      options.data_dir = arg.substr(data_dir.size() + 1);
      if (options.data_dir->empty())
        throw UsageError{"--data-dir needs a directory: --data-dir DIR"};
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  return options;
}

GlobalOptionsScope::GlobalOptionsScope(const GlobalOptions& options) {
  previous_max_memory_ = max_memory_option;
  if (options.max_memory_bytes)
    max_memory_option = options.max_memory_bytes;
  if (!options.data_dir)
    return;
  applied_ = true;
  previous_option_ = sim::data_directory_option();
  if (const char* environment = std::getenv(sim::data_dir_environment))
    previous_environment_ = environment;
  sim::set_data_directory(options.data_dir);
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(*options.data_dir, error);
  ::setenv(sim::data_dir_environment, error ? options.data_dir->c_str() : absolute.c_str(), 1);
}

GlobalOptionsScope::~GlobalOptionsScope() {
  max_memory_option = previous_max_memory_;
  if (!applied_)
    return;
  sim::set_data_directory(previous_option_);
  if (previous_environment_)
    ::setenv(sim::data_dir_environment, previous_environment_->c_str(), 1);
  else
    ::unsetenv(sim::data_dir_environment);
}

} // namespace cli
