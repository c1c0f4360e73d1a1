#include "tools/ibnetsim/options.h"

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

} // namespace cli
