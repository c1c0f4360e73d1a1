#include "tools/ibnetsim/topo_commands.h"

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <boost/program_options.hpp>

#include "models/topology/catalog.h"
#include "models/topology/generators.h"
#include "models/topology/ibnetdiscover.h"
#include "models/topology/topology.h"
#include "sim/errors.h"
#include "tools/ibnetsim/options.h"
#include "tools/ibnetsim/sm_commands.h"

namespace po = boost::program_options;

namespace cli {

namespace {

using nlohmann::json;
namespace topo = ib::topo;

constexpr const char* topo_usage = R"(usage: ibnetsim topo SUBCOMMAND [options]

subcommands:
  gen TYPE [options] [-o FILE]       write a generated topology; TYPE: fat-tree, leaf-spine, dragonfly, torus, mesh
  import FILE [options] [-o FILE]    convert ibnetdiscover output (or an ibsim net file) to a topology file
  export FILE --format F [-o FILE]   write a topology file as ibnetdiscover output (F = ibnetdiscover) or as an
                                     ibsim net file (F = ibsim)
  show FILE                          summarise a topology file: counts, ports, link rates, cables, grid
  check FILE [--routing E] [...]     assign LIDs, route with engine E (minhop, updn, ftree, dor, lash, file) and
                                     check every route and the credit loops (exit 3 if any)
  route FILE [--routing E] [...]     write the LFTs (--format opensm-lfts, dump_lfts) or the guid2lid table

Topology files write to stdout unless -o is given. 'ibnetsim topo SUBCOMMAND --help' lists the options;
'ibnetsim topo gen TYPE --help' a generator's. Formats and conventions: topologies/README.md.
)";

/// Width of option listings: the project's 120 columns, so each option's meaning fits on a line or two.
constexpr unsigned line_length = 120;

/// Bad options of one subcommand: reported with that subcommand's usage, exit 2.
struct TopoUsageError {
  std::string message;
  std::string usage;
};

std::string text_of(const po::options_description& options) {
  std::ostringstream text;
  text << options;
  return text.str();
}

Parsed parse(const std::vector<std::string>& args, const po::options_description& options, std::size_t max_positional) {
  Parsed parsed;
  const std::string problem = parse_options(args, options, max_positional, parsed);
  if (!problem.empty()) {
    throw TopoUsageError{problem, text_of(options)};
  }
  return parsed;
}

std::optional<std::string> value_of(const Parsed& parsed, const char* key) {
  if (!parsed.values.count(key)) {
    return std::nullopt;
  }
  return parsed.values[key].as<std::string>();
}

/// Writes `text` to -o FILE, or to `out`.
void emit(const Parsed& parsed, const std::string& text, std::ostream& out, const std::string& usage) {
  if (const auto path = value_of(parsed, "output")) {
    std::ofstream file(*path, std::ios::binary);
    file << text;
    if (!file) {
      throw TopoUsageError{"cannot write -o file '" + *path + "'", usage};
    }
    return;
  }
  out << text;
}

std::string dashed(std::string_view key) {
  std::string option = "--";
  for (const char c : key) {
    option += c == '_' ? '-' : c;
  }
  return option;
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) {
    text += (text.empty() ? "" : ", ") + item;
  }
  return text;
}

// ---- gen --------------------------------------------------------------------------------------------------

/// A command-line value as JSON: numbers and arrays as JSON when the text is one, "4x4x4" extents as an array,
/// anything else as a string (the generator's reader then says what it expected).
json option_json(const std::string& text, topo::ParamKind kind) {
  if (kind == topo::ParamKind::extents) {
    json extents = json::array();
    std::size_t start = 0;
    while (true) {
      const std::size_t x = text.find('x', start);
      const std::string_view part = std::string_view(text).substr(start, x - start);
      unsigned value = 0;
      const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
      if (part.empty() || error != std::errc() || end != part.data() + part.size()) {
        return text;
      }
      extents.push_back(value);
      if (x == std::string::npos) {
        return extents;
      }
      start = x + 1;
    }
  }
  if (kind == topo::ParamKind::count || kind == topo::ParamKind::length_m) {
    const json parsed = json::parse(text, nullptr, false);
    if (!parsed.is_discarded() && parsed.is_number()) {
      return parsed;
    }
  }
  return text;
}

int command_gen(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string types;
  for (const topo::GeneratorType& t : topo::generator_types()) {
    types += "  " + std::string(t.name) + std::string(12 - std::min<std::size_t>(t.name.size(), 11), ' ') +
             std::string(t.summary) + "\n";
  }
  const std::string gen_usage = "usage: ibnetsim topo gen TYPE [options] [-o FILE]\n\ntypes:\n" + types +
                                "\n'ibnetsim topo gen TYPE --help' lists a type's options.\n";
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    if (args.empty()) {
      throw TopoUsageError{"gen needs a TYPE", gen_usage};
    }
    out << gen_usage;
    return sim::exit_ok;
  }
  const topo::GeneratorType* type = nullptr;
  for (const topo::GeneratorType& t : topo::generator_types()) {
    if (t.name == args[0]) {
      type = &t;
    }
  }
  if (type == nullptr) {
    throw TopoUsageError{"unknown generator type '" + args[0] + "'", gen_usage};
  }
  po::options_description options("ibnetsim topo gen " + std::string(type->name) + " [options] [-o FILE]", line_length);
  options.add_options()("help,h", "show this help")("output,o", po::value<std::string>(), "write to FILE, not stdout")(
      "name", po::value<std::string>(), "the topology's name (default: from the type and its parameters)");
  for (const topo::GeneratorParam& p : type->params) {
    std::string meaning(p.meaning);
    if (!p.cli_default.empty()) {
      meaning += " (default " + std::string(p.cli_default) + ")";
    } else if (p.required) {
      meaning += " (required)";
    }
    options.add_options()(dashed(p.key).substr(2).c_str(), po::value<std::string>(), meaning.c_str());
  }
  const std::string usage = text_of(options);
  const Parsed parsed = parse(std::vector<std::string>(args.begin() + 1, args.end()), options, 0);
  if (parsed.values.count("help")) {
    out << options << "\n";
    return sim::exit_ok;
  }
  json block = {{"type", type->name}};
  std::vector<std::string> defaults;
  for (const topo::GeneratorParam& p : type->params) {
    const std::string option = dashed(p.key);
    if (const auto value = value_of(parsed, option.substr(2).c_str())) {
      block[std::string(p.key)] = option_json(*value, p.kind);
    } else if (!p.cli_default.empty()) {
      block[std::string(p.key)] = option_json(std::string(p.cli_default), p.kind);
      defaults.push_back(option + " " + std::string(p.cli_default));
    } else if (p.required) {
      throw TopoUsageError{option + " is required", usage};
    }
  }
  const std::string label = "ibnetsim topo gen";
  topo::ProfileCatalog catalog;
  topo::Topology topology;
  try {
    sim::JsonObjectReader reader(label, block, "/generator");
    topology = topo::generate(reader, catalog);
  } catch (const sim::InputError& e) {
    if (e.file() != label) {
      throw;
    }
    // "/generator/hosts_per_leaf" is the option --hosts-per-leaf.
    const std::string& pointer = e.json_pointer();
    const std::string key = pointer.size() > 11 ? pointer.substr(11, pointer.find('/', 11) - 11) : "";
    throw TopoUsageError{(key.empty() ? "" : dashed(key) + ": ") + "expected " + e.expected() + ", got " + e.got(),
                         usage};
  }
  if (!defaults.empty()) {
    err << "ibnetsim topo gen: defaults used: " << joined(defaults) << "\n";
  }
  if (const auto name = value_of(parsed, "name")) {
    topology.name = *name;
  }
  emit(parsed, topo::to_json_text(topology), out, usage);
  return sim::exit_ok;
}

// ---- import -----------------------------------------------------------------------------------------------

std::string read_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw sim::InputError(path, "", "a readable file", "a path that cannot be opened");
  }
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string metres(double length_m);

int command_import(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description options("ibnetsim topo import FILE [options] [-o FILE]", line_length);
  options.add_options()("help,h", "show this help")("output,o", po::value<std::string>(), "write to FILE, not stdout")(
      "switch-profile", po::value<std::string>(),
      "profile of every switch (default: inferred from its fastest link: FDR10/FDR and slower switchx2-fdr, EDR "
      "switch-ib2-edr, HDR quantum-hdr)")(
      "hca-profile", po::value<std::string>(),
      "profile of every HCA (default: inferred likewise: connectx3-fdr, connectx4-edr, connectx6-hdr)")(
      "length-m", po::value<std::string>(),
      "cable length of every link --cables does not give, metres (default: the topo-import profile's "
      "default_length_m, 2)")("cable", po::value<std::string>(),
                              "cable profile of every link --cables does not give (default: the topo-import "
                              "profile's default_cable, copper-dac)")(
      "cables", po::value<std::string>(),
      "CSV of cables per link end: header node_guid,port,length_m,cable, then one row per end (ibnetdiscover "
      "does not see cables)")("node-name-map", po::value<std::string>(),
                              "name nodes by GUID from an infiniband-diags node name map (lines GUID \"name\")")(
      "name", po::value<std::string>(), "the topology's name (default: the file's name without its extension)");
  const std::string usage = text_of(options);
  const Parsed parsed = parse(args, options, 1);
  if (parsed.values.count("help")) {
    out << options << "\n";
    return sim::exit_ok;
  }
  if (parsed.positional.empty()) {
    throw TopoUsageError{"import needs an ibnetdiscover FILE", usage};
  }
  const std::string& path = parsed.positional[0];
  topo::ProfileCatalog catalog;
  topo::ImportOptions o;
  std::vector<std::string> defaults;
  o.switch_profile = value_of(parsed, "switch-profile");
  o.hca_profile = value_of(parsed, "hca-profile");
  for (const auto& [profile, kind, option] :
       {std::tuple{o.switch_profile, topo::NodeKind::switch_node, "--switch-profile"},
        std::tuple{o.hca_profile, topo::NodeKind::hca, "--hca-profile"}}) {
    if (profile && !catalog.capabilities(kind, *profile)) {
      const std::string what = catalog.describe(*profile);
      const std::string model(topo::to_string(kind));
      throw TopoUsageError{std::string(option) + ": expected " + (kind == topo::NodeKind::hca ? "an " : "a ") + model +
                               " profile (" + joined(catalog.profile_names(model)) + "), got '" + *profile + "', " +
                               (what.empty() ? "no such profile" : what),
                           usage};
    }
  }
  // Where ibnetdiscover is silent, the topo-import profile's assumptions (topologies/hardware/topo-import.json).
  const topo::ImportDefaults assumed =
      sim::read_named_profile(topo::import_param_table(), std::string(topo::import_profile), {});
  if (const auto length_text = value_of(parsed, "length-m")) {
    const json length = json::parse(*length_text, nullptr, false);
    if (length.is_discarded() || !length.is_number() || !(length.get<double>() > 0 && length.get<double>() <= 1e6)) {
      throw TopoUsageError{"--length-m: expected a length in metres, > 0 and <= 1000000, got '" + *length_text + "'",
                           usage};
    }
    o.length_m = length.get<double>();
  } else {
    o.length_m = assumed.length_m;
  }
  o.cable = value_of(parsed, "cable").value_or(assumed.cable);
  if (!catalog.is_cable(o.cable) && !parsed.values.count("cable")) {
    throw sim::InputError(sim::profile_path(topo::import_profile), "/parameters/default_cable/value",
                          "a cable profile (" + joined(catalog.profile_names("cable")) + ")", "\"" + o.cable + "\"");
  }
  if (!catalog.is_cable(o.cable)) {
    throw TopoUsageError{"--cable: expected a cable profile (" + joined(catalog.profile_names("cable")) + "), got '" +
                             o.cable + "'",
                         usage};
  }
  if (const auto map = value_of(parsed, "node-name-map")) {
    o.node_names = topo::parse_node_name_map(read_text(*map), *map);
  }
  if (const auto cables = value_of(parsed, "cables")) {
    o.cables = topo::parse_cable_table(read_text(*cables), *cables);
  }
  const std::string stem = std::filesystem::path(path).stem().string();
  o.name = value_of(parsed, "name").value_or(stem.empty() ? "imported" : stem);
  const topo::ImportResult result = topo::import_ibnetdiscover(read_text(path), path, o, catalog);
  // A default is stated only when some link took it (a --cables file may give every link's).
  if (!parsed.values.count("length-m") && result.links_with_default_length > 0) {
    defaults.push_back("--length-m " + metres(o.length_m));
  }
  if (!parsed.values.count("cable") && result.links_with_default_cable > 0) {
    defaults.push_back("--cable " + o.cable);
  }
  if (!defaults.empty()) {
    err << "ibnetsim topo import: defaults used: " << joined(defaults) << "\n";
  }
  for (const std::string& note : result.notes) {
    err << "ibnetsim topo import: " << note << "\n";
  }
  emit(parsed, topo::to_json_text(result.topology), out, usage);
  return sim::exit_ok;
}

// ---- export and show --------------------------------------------------------------------------------------

int command_export(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description options("ibnetsim topo export FILE --format ibnetdiscover|ibsim [-o FILE]", line_length);
  options.add_options()("help,h", "show this help")("output,o", po::value<std::string>(), "write to FILE, not stdout")(
      "format", po::value<std::string>(),
      "ibnetdiscover: as ibnetdiscover prints a fabric; ibsim: an ibsim net file (GUIDs set explicitly)");
  const std::string usage = text_of(options);
  const Parsed parsed = parse(args, options, 1);
  if (parsed.values.count("help")) {
    out << options << "\n";
    return sim::exit_ok;
  }
  if (parsed.positional.empty()) {
    throw TopoUsageError{"export needs a topology FILE", usage};
  }
  const auto format = value_of(parsed, "format");
  if (!format || (*format != "ibnetdiscover" && *format != "ibsim")) {
    throw TopoUsageError{"--format expects ibnetdiscover or ibsim, got '" + format.value_or("") + "'", usage};
  }
  topo::ProfileCatalog catalog;
  const topo::Topology topology = topo::load_topology(parsed.positional[0], catalog);
  emit(parsed, *format == "ibsim" ? topo::export_ibsim_net(topology) : topo::export_ibnetdiscover(topology), out,
       usage);
  return sim::exit_ok;
}

/// A length as "42" or "2.5".
std::string metres(double length_m) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", length_m);
  return text;
}

/// "copper-dac 16, fibre 8" from counts by name.
std::string counts_text(const std::map<std::string, std::size_t>& counts) {
  std::string text;
  for (const auto& [name, count] : counts) {
    text += (text.empty() ? "" : ", ") + name + " " + std::to_string(count);
  }
  return text.empty() ? "none" : text;
}

int command_show(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description options("ibnetsim topo show FILE", line_length);
  options.add_options()("help,h", "show this help");
  const std::string usage = text_of(options);
  const Parsed parsed = parse(args, options, 1);
  if (parsed.values.count("help")) {
    out << options << "\n";
    return sim::exit_ok;
  }
  if (parsed.positional.empty()) {
    throw TopoUsageError{"show needs a topology FILE", usage};
  }
  topo::ProfileCatalog catalog;
  const topo::Topology t = topo::load_topology(parsed.positional[0], catalog);
  std::map<std::string, std::size_t> hosts;
  std::map<std::string, std::size_t> switches;
  std::size_t host_ports = 0;
  std::size_t switch_ports = 0;
  for (const topo::Node& n : t.nodes()) {
    (n.kind == topo::NodeKind::hca ? hosts : switches)[n.profile]++;
    (n.kind == topo::NodeKind::hca ? host_ports : switch_ports) += n.port_count;
  }
  std::map<std::string, std::size_t> rates;
  std::map<std::string, std::size_t> cables;
  std::map<std::string, double> cable_m;
  std::size_t host_links = 0;
  std::size_t host_ports_used = 0;
  for (const topo::Link& l : t.links()) {
    const bool a_host = t.node(l.a.node).kind == topo::NodeKind::hca;
    const bool b_host = t.node(l.b.node).kind == topo::NodeKind::hca;
    host_links += a_host || b_host ? 1 : 0;
    host_ports_used += (a_host ? 1 : 0) + (b_host ? 1 : 0);
    rates[std::string(ib::link::to_string(l.width)) + " " + std::string(ib::link::to_string(l.speed))]++;
    cables[l.cable]++;
    cable_m[l.cable] += l.length_m;
  }
  std::size_t host_count = 0;
  for (const auto& [profile, count] : hosts) {
    host_count += count;
  }
  std::string cable_text;
  for (const auto& [cable, count] : cables) {
    cable_text +=
        (cable_text.empty() ? "" : ", ") + cable + " " + std::to_string(count) + " (" + metres(cable_m[cable]) + " m)";
  }
  std::string grid = "none";
  if (t.grid) {
    grid.clear();
    for (const std::uint32_t e : t.grid->extents) {
      grid += grid.empty() ? "" : "x";
      grid += std::to_string(e);
    }
    grid += t.grid->torus ? " torus" : " mesh";
  }
  const std::size_t ports_used = 2 * t.link_count();
  out << "topology  " << t.name << (t.description.empty() ? "" : ": " + t.description) << "\n"
      << "file      " << parsed.positional[0] << "\n"
      << "hosts     " << host_count << " (" << counts_text(hosts) << ")\n"
      << "switches  " << t.node_count() - host_count << " (" << counts_text(switches) << ")\n"
      << "links     " << t.link_count() << " (" << host_links << " to hosts, " << t.link_count() - host_links
      << " between switches)\n"
      << "ports     " << ports_used << " of " << host_ports + switch_ports << " cabled (hosts " << host_ports_used
      << " of " << host_ports << ", switches " << ports_used - host_ports_used << " of " << switch_ports << ")\n"
      << "rates     " << counts_text(rates) << "\n"
      << "cables    " << (cable_text.empty() ? "none" : cable_text) << "\n"
      << "grid      " << grid << "\n";
  return sim::exit_ok;
}

} // namespace

int command_topo(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const std::string sub = args.empty() ? "" : args[0];
  try {
    if (sub.empty()) {
      throw TopoUsageError{"topo needs a SUBCOMMAND", topo_usage};
    }
    if (sub == "--help" || sub == "-h" || sub == "help") {
      out << topo_usage;
      return sim::exit_ok;
    }
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (sub == "gen") {
      return command_gen(rest, out, err);
    }
    if (sub == "import") {
      return command_import(rest, out, err);
    }
    if (sub == "export") {
      return command_export(rest, out);
    }
    if (sub == "show") {
      return command_show(rest, out);
    }
    if (sub == "check") {
      return command_topo_check(rest, out, err);
    }
    if (sub == "route") {
      return command_topo_route(rest, out, err);
    }
    throw TopoUsageError{"unknown subcommand '" + sub + "'", topo_usage};
  } catch (const TopoUsageError& e) {
    const bool named = !sub.empty() && sub[0] != '-' && sub != "help";
    err << "ibnetsim topo" << (named && e.usage != topo_usage ? " " + sub : "") << ": " << e.message << "\n" << e.usage;
    return sim::exit_input_error;
  }
}

} // namespace cli
