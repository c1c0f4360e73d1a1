#include "tools/ibnetsim/sm_commands.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <boost/program_options.hpp>

#include "models/sm/dump.h"
#include "models/sm/sm_error.h"
#include "models/sm/subnet.h"
#include "models/switch/switch.h"
#include "models/topology/catalog.h"
#include "models/topology/topology.h"
#include "sim/errors.h"
#include "sim/profile.h"
#include "tools/ibnetsim/options.h"

namespace po = boost::program_options;

namespace cli {
namespace {

namespace topo = ib::topo;
namespace sm = ib::sm;

struct SmUsageError {
  std::string message;
  bool show_usage = true; ///< false for the SM's refusals, which are about the fabric, not the options
};

/// --routing's help: every registered engine, one per line, with what it does (OpenSM's names and behaviour).
const std::string& engine_help() {
  static const std::string text = [] {
    std::string help = "routing engine (OpenSM's names and behaviour):";
    for (const ib::sm::EngineInfo* engine : ib::sm::engines())
      help += "\n  " + std::string(engine->name) + ": " + std::string(engine->description);
    return help;
  }();
  return text;
}

po::options_description sm_options(const char* title) {
  po::options_description options(title);
  options.add_options()("help,h", "show this help")(
      "routing", po::value<std::string>()->default_value(std::string(ib::sm::default_engine)),
      engine_help().c_str())("lmc", po::value<unsigned>()->default_value(0), "LIDs per HCA port: 2^LMC, LMC 0..7")(
      "lid-order", po::value<std::string>()->default_value("topology"),
      "topology (node order) or opensm (the SM's port first, then OpenSM's GUID-table order, as OpenSM on a fresh "
      "subnet)")(
      "sm-port", po::value<std::string>(),
      "the port the SM runs on, whose LIDs come first (implies --lid-order opensm): HCA/PORT, or SWITCH/0 (a "
      "switch's management port; SWITCH alone means the same); default: the first HCA port in OpenSM's "
      "GUID order")("roots", po::value<std::string>(),
                    "root switches for updn, comma-separated names (default: found as OpenSM)")(
      "vls", po::value<unsigned>(),
      "data VLs the engines may use (default: the smallest VLCap of the topology's switch profiles)")(
      "lft-file", po::value<std::string>(), "for --routing file: an opensm-lfts.dump or dump_lfts output to replay")(
      "guid2lid-file", po::value<std::string>(),
      "take every LID from OpenSM's guid2lid file (lines '0x<port GUID> <first LID> <last LID>') instead of "
      "--lid-order; with --routing file, traffic runs on exactly OpenSM's LIDs and routes");
  return options;
}

/// The options and the topology FILE; with --help, no FILE is needed.
struct SmArgs {
  po::variables_map values;
  std::string file;
};

SmArgs parse(const std::vector<std::string>& args, const po::options_description& options) {
  Parsed parsed;
  const std::string problem = parse_options(args, options, 1, parsed);
  if (!problem.empty())
    throw SmUsageError{problem};
  SmArgs result{std::move(parsed.values), ""};
  if (result.values.count("help"))
    return result;
  if (parsed.positional.empty())
    throw SmUsageError{"needs a topology FILE"};
  result.file = parsed.positional[0];
  return result;
}

topo::NodeIndex node_named(const topo::Topology& t, const std::string& name, const char* option) {
  const auto n = t.find(name);
  if (!n)
    throw SmUsageError{std::string(option) + ": no node named '" + name + "' in the topology"};
  return *n;
}

/// The smallest VLCap among the switch profiles: what every switch-to-switch link runs at least.
unsigned fabric_vls(const topo::Topology& t) {
  std::set<std::string> profiles;
  for (const topo::Node& n : t.nodes())
    if (n.kind == topo::NodeKind::switch_node)
      profiles.insert(n.profile);
  unsigned vls = 15;
  for (const std::string& name : profiles) {
    const sim::Profile profile = sim::load_profile(sim::profile_path(name));
    vls = std::min(vls, sim::read_profile(ib::sw::param_table(), profile).vl_cap);
  }
  return vls;
}

sm::SmOptions sm_options_from(const SmArgs& parsed, const topo::Topology& t) {
  sm::SmOptions options;
  options.engine = parsed.values["routing"].as<std::string>();
  options.lids.lmc = parsed.values["lmc"].as<unsigned>();
  if (options.lids.lmc > 7)
    throw SmUsageError{"--lmc: expected 0..7, got " + std::to_string(options.lids.lmc)};
  const std::string order = parsed.values["lid-order"].as<std::string>();
  if (order != "topology" && order != "opensm")
    throw SmUsageError{"--lid-order: expected topology or opensm, got '" + order + "'"};
  options.lids.order = order == "opensm" ? sm::LidOrder::opensm : sm::LidOrder::topology;
  if (parsed.values.count("sm-port")) {
    // The SM's port matters only to OpenSM's order, where its LIDs come first: --sm-port asks for that order.
    if (!parsed.values["lid-order"].defaulted() && options.lids.order == sm::LidOrder::topology)
      throw SmUsageError{"--sm-port: the SM's port decides LIDs only in --lid-order opensm (its LIDs come first); "
                         "in topology order it would change nothing"};
    options.lids.order = sm::LidOrder::opensm;
    try {
      options.lids.sm_port = sm::parse_sm_port(t, parsed.values["sm-port"].as<std::string>());
    } catch (const sm::SmError& e) {
      throw SmUsageError{std::string("--sm-port: ") + e.what()};
    }
  }
  if (parsed.values.count("roots")) {
    std::stringstream names(parsed.values["roots"].as<std::string>());
    for (std::string name; std::getline(names, name, ',');)
      options.routing.roots.push_back(node_named(t, name, "--roots"));
  }
  options.routing.data_vls = parsed.values.count("vls") ? parsed.values["vls"].as<unsigned>() : fabric_vls(t);
  if (options.routing.data_vls < 1 || options.routing.data_vls > 15)
    throw SmUsageError{"--vls: expected 1..15, got " + std::to_string(options.routing.data_vls)};
  if (parsed.values.count("lft-file"))
    options.routing.lft_file = parsed.values["lft-file"].as<std::string>();
  if (parsed.values.count("guid2lid-file"))
    options.lids.guid2lid_file = parsed.values["guid2lid-file"].as<std::string>();
  return options;
}

/// Runs the SM; its refusals are input errors of the option that chose the engine.
sm::Subnet run(const topo::Topology& t, const sm::SmOptions& options) {
  try {
    return sm::run_subnet_manager(t, options);
  } catch (const sm::SmError& e) {
    throw SmUsageError{e.what(), false};
  }
}

int usage_error(const char* sub, const po::options_description& options, const SmUsageError& e, std::ostream& err) {
  err << "ibnetsim topo " << sub << ": " << e.message << "\n";
  if (e.show_usage)
    err << options;
  return sim::exit_input_error;
}

} // namespace

int command_topo_check(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description options = sm_options("ibnetsim topo check FILE [options]");
  try {
    const SmArgs parsed = parse(args, options);
    if (parsed.values.count("help")) {
      out << options << "\n";
      return sim::exit_ok;
    }
    topo::ProfileCatalog catalog;
    const topo::Topology t = topo::load_topology(parsed.file, catalog);
    const sm::SmOptions sm_options = sm_options_from(parsed, t);
    const sm::Subnet subnet = run(t, sm_options);
    const sm::RouteCheck& check = subnet.check;
    std::size_t switches = 0;
    for (const topo::Node& n : t.nodes())
      switches += n.kind == topo::NodeKind::switch_node;
    out << "topology      " << parsed.file << ": " << t.node_count() - switches << " HCAs, " << switches
        << " switches, " << t.link_count() << " links\n"
        << "LIDs          1.." << subnet.lids.max_lid() << " (LMC " << subnet.lids.lmc() << ", "
        << (!sm_options.lids.guid2lid_file.empty()          ? "from " + sm_options.lids.guid2lid_file
            : sm_options.lids.order == sm::LidOrder::opensm ? std::string("OpenSM order")
                                                            : std::string("topology order"))
        << ")\n"
        << "routing       " << subnet.routing.engine << ", " << subnet.routing.vls_needed << " of "
        << sm_options.routing.data_vls << " VLs used\n"
        << "routes        " << (check.unrouted_pairs + check.looping_pairs == 0 ? "all arrive" : "BROKEN") << ", "
        << check.unrouted_pairs << " unrouted, " << check.looping_pairs << " looping, longest " << check.max_hops
        << " hops\n";
    for (const std::string& problem : check.problems)
      out << "  " << problem << "\n";
    out << "credit loops  ";
    if (check.cycle.empty()) {
      out << "none (" << check.channels << " channels, " << check.dependencies << " dependencies)\n";
    } else {
      out << "FOUND, " << check.cycle.size() << " channels: " << sm::describe_cycle(t, check.cycle) << "\n";
    }
    return subnet.sound() ? sim::exit_ok : sim::exit_invariant_violation;
  } catch (const SmUsageError& e) {
    return usage_error("check", options, e, err);
  }
}

int command_topo_route(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options = sm_options("ibnetsim topo route FILE [options] [--format F] [-o FILE]");
  options.add_options()("format", po::value<std::string>()->default_value("opensm-lfts"),
                        "opensm-lfts (opensm-lfts.dump), dump_lfts (dump_lfts.sh / ibroute) or guid2lid")(
      "output,o", po::value<std::string>(), "write to FILE instead of stdout");
  try {
    const SmArgs parsed = parse(args, options);
    if (parsed.values.count("help")) {
      out << options << "\n";
      return sim::exit_ok;
    }
    const std::string format = parsed.values["format"].as<std::string>();
    if (format != "opensm-lfts" && format != "dump_lfts" && format != "guid2lid")
      throw SmUsageError{"--format: expected opensm-lfts, dump_lfts or guid2lid, got '" + format + "'"};
    topo::ProfileCatalog catalog;
    const topo::Topology t = topo::load_topology(parsed.file, catalog);
    const sm::Subnet subnet = run(t, sm_options_from(parsed, t));
    std::ostringstream text;
    if (format == "opensm-lfts")
      sm::write_opensm_lfts(text, t, subnet.lids, subnet.routing);
    else if (format == "dump_lfts")
      sm::write_dump_lfts(text, t, subnet.lids, subnet.routing);
    else
      sm::write_guid2lid(text, t, subnet.lids);
    if (parsed.values.count("output")) {
      const std::string path = parsed.values["output"].as<std::string>();
      std::ofstream file(path, std::ios::binary);
      file << text.str();
      if (!file)
        throw SmUsageError{"cannot write -o file '" + path + "'"};
    } else {
      out << text.str();
    }
    if (!subnet.sound())
      err << "ibnetsim topo route: warning: the routing is not sound; 'ibnetsim topo check' says why\n";
    return sim::exit_ok;
  } catch (const SmUsageError& e) {
    return usage_error("route", options, e, err);
  }
}

} // namespace cli
