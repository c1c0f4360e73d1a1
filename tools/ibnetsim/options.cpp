#include "tools/ibnetsim/options.h"

#include <cstdlib>
#include <filesystem>

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

GlobalOptions take_global_options(std::vector<std::string>& args) {
  GlobalOptions options;
  constexpr std::string_view data_dir = "--data-dir";
  for (std::size_t i = 0; i < args.size();) {
    const std::string& arg = args[i];
    if (arg == data_dir) {
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
  if (!applied_)
    return;
  sim::set_data_directory(previous_option_);
  if (previous_environment_)
    ::setenv(sim::data_dir_environment, previous_environment_->c_str(), 1);
  else
    ::unsetenv(sim::data_dir_environment);
}

} // namespace cli
