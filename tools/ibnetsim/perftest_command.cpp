#include "tools/ibnetsim/perftest_command.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string_view>

#include "models/topology/catalog.h"
#include "models/topology/topology.h"

namespace po = boost::program_options;

namespace cli {

namespace {

/// The tests perftest ships (and ibnetsim models as workloads of the same names).
constexpr std::string_view perftest_tests[] = {"ib_write_lat", "ib_write_bw", "ib_read_lat",   "ib_read_bw",
                                               "ib_send_lat",  "ib_send_bw",  "ib_atomic_lat", "ib_atomic_bw"};

/// A perftest option the workload models: its long name (a key of the parsed options), its letter, and the
/// workload keys it sets.
struct MappedOption {
  const char* name;
  char letter;
  std::vector<const char*> keys;
  bool flag = false;
};

const std::vector<MappedOption>& mapped_options() {
  static const std::vector<MappedOption> options = {
      {"size", 's', {"size_bytes"}},
      {"all", 'a', {"all_sizes"}, true},
      {"iters", 'n', {"iterations"}},
      {"tx-depth", 't', {"tx_depth"}},
      {"qp", 'q', {"qps"}},
      {"post_list", 'l', {"post_list"}},
      {"cq-mod", 'Q', {"cq_mod"}},
      {"inline_size", 'I', {"inline_size_bytes"}},
      {"mtu", 'm', {"mtu_bytes"}},
      {"qp-timeout", 'u', {"qp_timeout"}},
      {"connection", 'c', {"connection"}},
      {"bidirectional", 'b', {"bidirectional"}, true},
      {"atomic_type", 'A', {"atomic"}},
      // perftest takes the same options on both sides: -i is the port of each.
      {"ib-port", 'i', {"client_ib_port", "server_ib_port"}},
  };
  return options;
}

/// A perftest option with no meaning in the simulator: ignored with a note on stderr (`note` non-empty), silently
/// (harmless), or refused, exit 2 (`refusal` non-empty).
struct OtherOption {
  const char* name;
  char letter; ///< 0: no letter
  bool takes_value;
  const char* note;
  const char* refusal;
};

const std::vector<OtherOption>& other_options() {
  static const std::vector<OtherOption> options = {
      {"ib-dev", 'd', true, "the HCA is --hca PROFILE (or the topology's)", ""},
      {"gid-index", 'x', true, "an InfiniBand fabric addresses by LID; the GID index changes nothing", ""},
      {"port", 'p', true, "no TCP connection is made to exchange QP numbers", ""},
      {"rdma_cm", 'R', false, "QPs are connected before the run; how they are connected is not simulated", ""},
      {"comm_rdma_cm", 'z', false, "QP numbers are exchanged before the run; how is not simulated", ""},
      {"noPeak", 'N', false, "BW peak is reported all the same", ""},
      {"CPU-freq", 'F', false, "", ""},   // only silences perftest's warning about the CPU's frequency governor
      {"report_gbits", 0, false, "", ""}, // the table always gives bandwidth in Gb/sec
      {"duration", 'D', true, "", "a run counts iterations (-n); timed runs are not modelled"},
      {"margin", 'f', true, "", "a run counts iterations (-n); timed runs are not modelled"},
      {"run_infinitely", 0, false, "", "a run counts iterations (-n); it cannot run forever"},
      // perftest's --events is run's --events here (events counted by part of the model): -e alone is perftest's.
      {"cq-events", 'e', false, "",
       "completions are polled; CQ events (interrupts, perftest's --events) are not modelled. --events here "
       "counts the simulator's events, as in 'ibnetsim run'"},
      {"rx-depth", 'r', true, "", "the SEND server posts perftest's default receives (512 per QP); not an option"},
      {"sl", 'S', true, "",
       "a QP's SL is the one the subnet manager's path record gives (0 unless the routing engine sets SLs, as "
       "lash and dor do); not an option"},
      {"outs", 'o', true, "",
       "outstanding READs and atomics are the HCA's max_qp_rd_atom: --set /profiles/PROFILE/max_qp_rd_atom=N"},
      {"recv_post_list", 0, true, "", "receives are posted one at a time; not an option"},
      {"dualport", 'O', false, "", "dual-port runs are not modelled (-i chooses the port)"},
      {"mcg", 'g', true, "", "multicast is not modelled"},
      {"MGID", 'M', true, "", "multicast is not modelled"},
      {"report-cycles", 'C', false, "", "times are reported in microseconds only"},
      {"report-histogram", 'H', false, "", "the report gives perftest's summary figures, not every iteration"},
      {"report-unsorted", 'U', false, "", "the report gives perftest's summary figures, not every iteration"},
      {"version", 'V', false, "", "'ibnetsim --version' gives the simulator's version"},
  };
  return options;
}

std::string option_label(const char* name, char letter) {
  return letter == 0 ? std::string("--") + name : std::string("-") + letter + " (--" + name + ")";
}

std::string boost_name(const char* name, char letter) {
  return letter == 0 ? std::string(name) : std::string(name) + "," + letter;
}

/// A number when `text` is an unsigned integer (JSON's type for counts and sizes); else the text itself, which the
/// workload then refuses with what it expected.
nlohmann::json integer_or_text(const std::string& text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (!text.empty() && error == std::errc() && end == text.data() + text.size())
    return value;
  return text;
}

nlohmann::json number_or_text(const std::string& text) {
  if (const nlohmann::json integer = integer_or_text(text); integer.is_number())
    return integer; // "2" stays 2, as a scenario file writes it
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() && *end == '\0')
    return value;
  return text;
}

std::string lower(std::string text) {
  for (char& c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string text_option(const Parsed& parsed, const char* name, const char* fallback) {
  return parsed.values.count(name) ? parsed.values[name].as<std::string>() : fallback;
}

/// The link speed of HCA profile `hca` and the shipped switch of that generation, by the speed its name ends in
/// (connectx6-hdr: HDR, quantum-hdr); EDR and Switch-IB 2 otherwise.
std::pair<std::string, std::string> generation_of(const std::string& hca) {
  static constexpr std::array<std::array<const char*, 3>, 4> generations = {{{"-fdr", "FDR", "switchx2-fdr"},
                                                                             {"-edr", "EDR", "switch-ib2-edr"},
                                                                             {"-hdr", "HDR", "quantum-hdr"},
                                                                             {"-ndr", "NDR", "quantum2-ndr"}}};
  for (const auto& [suffix, speed, switch_profile] : generations)
    if (hca.ends_with(suffix))
      return {speed, switch_profile};
  return {"EDR", "switch-ib2-edr"};
}

/// Two hosts, h0 and h1, through one switch s0 (as scenarios/experiments/write_lat.json) or back to back, 4x at the
/// HCA's speed unless --width and --speed say otherwise.
nlohmann::json default_topology(const Parsed& parsed) {
  const std::string hca = text_option(parsed, "hca", "connectx4-edr");
  const bool back_to_back = parsed.values.count("back-to-back") > 0;
  nlohmann::json topology;
  topology["name"] = back_to_back ? "pair" : "two-hosts-one-switch";
  const auto [speed, switch_profile] = generation_of(hca);
  topology["link_defaults"] = {{"width", text_option(parsed, "width", "4x")},
                               {"speed", text_option(parsed, "speed", speed.c_str())},
                               {"length_m", number_or_text(text_option(parsed, "length-m", "2"))},
                               {"cable", text_option(parsed, "cable", "copper-dac")}};
  nlohmann::json nodes = nlohmann::json::array();
  if (!back_to_back)
    nodes.push_back(
        {{"name", "s0"}, {"kind", "switch"}, {"profile", text_option(parsed, "switch", switch_profile.c_str())}});
  for (const char* host : {"h0", "h1"})
    nodes.push_back({{"name", host}, {"kind", "hca"}, {"profile", hca}});
  topology["nodes"] = nodes;
  topology["links"] = back_to_back
                          ? nlohmann::json::array({{{"a", "h0/1"}, {"b", "h1/1"}}})
                          : nlohmann::json::array({{{"a", "h0/1"}, {"b", "s0/1"}}, {{"a", "h1/1"}, {"b", "s0/2"}}});
  return topology;
}

/// The first two hosts of the topology file `path`, in its order.
std::vector<std::string> first_hosts(const std::string& path) {
  ib::topo::ProfileCatalog catalog;
  const ib::topo::Topology topology = ib::topo::load_topology(path, catalog);
  std::vector<std::string> hosts;
  for (const ib::topo::Node& node : topology.nodes())
    if (node.kind == ib::topo::NodeKind::hca && hosts.size() < 2)
      hosts.push_back(node.name);
  return hosts;
}

} // namespace

po::options_description perftest_options() {
  po::options_description options("perftest's options (docs/user-guide.md lists what each does here)");
  auto add = options.add_options();
  for (const MappedOption& o : mapped_options()) {
    const std::string name = boost_name(o.name, o.letter);
    if (o.flag)
      add(name.c_str(), ("workload option " + std::string(o.keys[0]) + " true").c_str());
    else
      add(name.c_str(), po::value<std::string>(), ("workload option " + std::string(o.keys[0])).c_str());
  }
  for (const OtherOption& o : other_options()) {
    const std::string name = boost_name(o.name, o.letter);
    const std::string help = *o.refusal != '\0' ? std::string("refused: ") + o.refusal
                             : *o.note != '\0'  ? std::string("ignored: ") + o.note
                                                : "accepted, no effect";
    if (o.takes_value)
      add(name.c_str(), po::value<std::string>(), help.c_str());
    else
      add(name.c_str(), help.c_str());
  }
  return options;
}

po::options_description perftest_fabric_options() {
  po::options_description options("where the test runs");
  options.add_options()("hca", po::value<std::string>(), "HCA profile of both hosts (default connectx4-edr)")(
      "switch", po::value<std::string>(),
      "switch profile between them (default: the HCA's generation, switch-ib2-edr for EDR)")(
      "back-to-back", "cable the two hosts to each other, with no switch")("width", po::value<std::string>(),
                                                                           "link width (default 4x)")(
      "speed", po::value<std::string>(),
      "link speed (default: the HCA's, by its profile's name: EDR for connectx4-edr)")(
      "cable", po::value<std::string>(), "cable profile (default copper-dac)")("length-m", po::value<std::string>(),
                                                                               "cable length in metres (default 2)")(
      "topology", po::value<std::string>(), "run on the hosts of this topology file instead")(
      "client", po::value<std::string>(), "client host (default: the first host; h0)")(
      "server", po::value<std::string>(), "server host (default: the second host; h1)")(
      "print-scenario", "print the scenario as JSON (a file 'ibnetsim run' takes) and run nothing");
  return options;
}

nlohmann::json perftest_scenario(const Parsed& parsed, std::ostream& err) {
  if (parsed.positional.empty())
    throw UsageError{"perftest needs a TEST: ibnetsim perftest ib_write_bw -s 65536"};
  const std::string test = parsed.positional[0];
  if (std::find(std::begin(perftest_tests), std::end(perftest_tests), test) == std::end(perftest_tests)) {
    std::string names;
    for (const std::string_view name : perftest_tests)
      names += (names.empty() ? "" : ", ") + std::string(name);
    throw UsageError{"unknown perftest test '" + test + "'; tests: " + names};
  }
  for (const OtherOption& o : other_options()) {
    if (!parsed.values.count(o.name))
      continue;
    if (*o.refusal != '\0')
      throw UsageError{option_label(o.name, o.letter) + " is not supported: " + o.refusal};
    if (*o.note != '\0')
      err << "ibnetsim perftest: note: " << option_label(o.name, o.letter) << " ignored: " << o.note << "\n";
  }

  nlohmann::json workload;
  workload["type"] = test;
  for (const MappedOption& o : mapped_options()) {
    if (!parsed.values.count(o.name))
      continue;
    nlohmann::json value = true;
    if (!o.flag) {
      const std::string text = parsed.values[o.name].as<std::string>();
      if (std::string_view(o.name) == "connection")
        value = text;
      else if (std::string_view(o.name) == "atomic_type")
        value = lower(text); // perftest's CMP_AND_SWAP, FETCH_AND_ADD
      else
        value = integer_or_text(text);
    }
    for (const char* key : o.keys)
      workload[key] = value;
  }

  nlohmann::json scenario;
  scenario["name"] = "perftest " + test;
  scenario["description"] = "ibnetsim perftest " + test +
                            ": perftest's test between two hosts, built from the "
                            "command line";
  scenario["seed"] = 1;
  std::string client = "h0";
  std::string server = "h1";
  if (parsed.values.count("topology")) {
    for (const char* fabric : {"hca", "switch", "back-to-back", "width", "speed", "cable", "length-m"})
      if (parsed.values.count(fabric))
        throw UsageError{std::string("--") + fabric + " builds a topology: not with --topology FILE"};
    const std::string path = parsed.values["topology"].as<std::string>();
    scenario["topology"] = path;
    if (!parsed.values.count("client") || !parsed.values.count("server")) {
      const std::vector<std::string> hosts = first_hosts(path);
      if (hosts.size() < 2)
        throw UsageError{"--topology " + path + " has fewer than two hosts: nowhere to run a client and a server"};
      client = hosts[0];
      server = hosts[1];
    }
  } else {
    if (parsed.values.count("back-to-back") && parsed.values.count("switch"))
      throw UsageError{"--switch and --back-to-back: the hosts are cabled through a switch or to each other"};
    scenario["topology"] = default_topology(parsed);
  }
  workload["client"] = text_option(parsed, "client", client.c_str());
  workload["server"] = text_option(parsed, "server", server.c_str());
  scenario["workloads"] = nlohmann::json::array({workload});
  return scenario;
}

std::optional<std::string> perftest_option_of(const std::string& json_pointer, const nlohmann::json& scenario) {
  constexpr std::string_view workload = "/workloads/0/";
  // A profile of the built topology: --hca or --switch, by the node's kind.
  constexpr std::string_view nodes = "/topology/nodes/";
  if (json_pointer.starts_with(nodes) && json_pointer.ends_with("/profile") && scenario["topology"].is_object()) {
    const nlohmann::json::json_pointer node(json_pointer.substr(0, json_pointer.size() - 8) + "/kind");
    if (scenario.contains(node))
      return scenario.at(node) == "switch" ? "--switch" : "--hca";
  }
  if (json_pointer == "/workloads/0/client" || json_pointer == "/workloads/0/server")
    return "--" + json_pointer.substr(workload.size());
  for (const char* key : {"width", "speed", "cable"})
    if (json_pointer == std::string("/topology/link_defaults/") + key)
      return std::string("--") + key;
  if (json_pointer == "/topology/link_defaults/length_m")
    return "--length-m";
  if (json_pointer.starts_with(workload)) {
    const std::string key = json_pointer.substr(workload.size());
    for (const MappedOption& o : mapped_options())
      for (const char* k : o.keys)
        if (key == k)
          return option_label(o.name, o.letter);
  }
  return std::nullopt;
}

} // namespace cli
