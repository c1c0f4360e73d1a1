// Compares ibnetsim's subnet manager with a run of the real OpenSM saved by tools/opensm (run.txt, guid2lid,
// opensm-lfts.dump and the ibnetdiscover.txt of the simulated fabric). The fabric is imported from that
// ibnetdiscover output, so GUIDs, port numbers and node names are exactly the ones OpenSM saw; our SM then runs
// the same engine with OpenSM's LID order, the same SM port, LMC and roots.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "models/sm/credit_loops.h"
#include "models/sm/dump.h"
#include "models/sm/subnet.h"
#include "models/topology/catalog.h"
#include "models/topology/ibnetdiscover.h"

namespace ib::testing {

struct OpenSmRun {
  std::map<std::string, std::string> fields; ///< run.txt: netfile, engine_used, sm_node, extra_args, ...
  unsigned lmc = 0;
  std::string roots_file; ///< "-a FILE" in extra_args
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline OpenSmRun read_run(const std::string& dir) {
  OpenSmRun run;
  std::istringstream in(read_text(dir + "/run.txt"));
  for (std::string line; std::getline(in, line);) {
    const std::size_t space = line.find(' ');
    run.fields[line.substr(0, space)] = space == std::string::npos ? "" : line.substr(space + 1);
  }
  std::istringstream args(run.fields["extra_args"]);
  for (std::string arg; args >> arg;) {
    if (arg == "--lmc" || arg == "-l")
      args >> run.lmc;
    else if (arg == "-a" || arg == "--root_guid_file")
      args >> run.roots_file;
  }
  return run;
}

struct OpenSmComparison {
  topo::Topology topology;
  sm::Subnet ours;
  sm::Routing theirs; ///< OpenSM's LFTs, read through the file engine onto our LIDs
  std::uint64_t lids = 0, lid_mismatches = 0;
  std::uint64_t lft_entries = 0, lft_mismatches = 0; ///< switch x destination LID
  std::uint64_t routes = 0, hop_mismatches = 0;      ///< HCA port x destination LID
  unsigned balance_difference = 0;                   ///< largest |ours - theirs| of HCA routes over one switch port
  std::vector<std::string> notes;                    ///< the first few differences
};

inline OpenSmComparison compare_with_opensm(const std::string& dir) {
  const OpenSmRun run = read_run(dir);
  topo::ProfileCatalog catalog;
  topo::ImportOptions import;
  import.length_m = 2;
  import.cable = "copper-dac";
  import.name = run.fields.at("netfile");
  // The golden set keeps one ibnetdiscover.txt per fabric, in its minhop run (and one per run with the SM elsewhere).
  std::string fabric = dir + "/ibnetdiscover.txt";
  if (!std::filesystem::exists(fabric)) {
    const std::string net = run.fields.at("netfile");
    fabric = std::filesystem::path(dir).parent_path().string() + "/" + net.substr(0, net.rfind('.')) +
             "-minhop/ibnetdiscover.txt";
  }
  OpenSmComparison c;
  c.topology = topo::import_ibnetdiscover(read_text(fabric), fabric, import, catalog).topology;
  const topo::Topology& t = c.topology;
  sm::SmOptions options;
  options.engine = run.fields.at("engine_used");
  options.lids.lmc = run.lmc;
  options.lids.order = sm::LidOrder::opensm;
  // SIM_HOST: an HCA's port 1 (all our HCAs have one port), or a switch's management port 0.
  const topo::NodeIndex sm_node = *t.find(run.fields.at("sm_node"));
  options.lids.sm_port = {sm_node, static_cast<topo::PortNumber>(t.node(sm_node).kind == topo::NodeKind::hca)};
  options.routing.data_vls = 8;
  if (!run.roots_file.empty()) {
    std::istringstream roots(read_text(run.roots_file));
    for (std::string guid; roots >> guid;)
      for (topo::NodeIndex n = 0; n < t.node_count(); ++n)
        if (t.node(n).node_guid == std::strtoull(guid.c_str(), nullptr, 16))
          options.routing.roots.push_back(n);
  }
  c.ours = sm::run_subnet_manager(t, options);

  // LIDs: guid2lid lines "0x<guid> 0x<base> 0x<top>".
  std::map<std::uint64_t, unsigned> their_lid;
  std::istringstream guid2lid(read_text(dir + "/guid2lid"));
  for (std::string guid, base, top; guid2lid >> guid >> base >> top;)
    their_lid[std::strtoull(guid.c_str(), nullptr, 16)] =
        static_cast<unsigned>(std::strtoul(base.c_str(), nullptr, 16));
  for (topo::NodeIndex n = 0; n < t.node_count(); ++n) {
    const topo::Node& node = t.node(n);
    const bool is_switch = node.kind == topo::NodeKind::switch_node;
    for (unsigned p = is_switch ? 0 : 1; p <= (is_switch ? 0 : node.port_count); ++p) {
      const std::uint64_t guid = is_switch ? node.node_guid : node.port_guids[p - 1];
      const auto it = their_lid.find(guid);
      if (it == their_lid.end())
        continue;
      ++c.lids;
      if (it->second != c.ours.lids.base_lid(n, static_cast<topo::PortNumber>(p))) {
        ++c.lid_mismatches;
        if (c.notes.size() < 8)
          c.notes.push_back(node.name + " LID: OpenSM " + std::to_string(it->second) + ", ours " +
                            std::to_string(c.ours.lids.base_lid(n, static_cast<topo::PortNumber>(p))));
      }
    }
  }

  sm::SmOptions file_options = options;
  file_options.engine = "file";
  file_options.routing.lft_file = dir + "/opensm-lfts.dump";
  c.theirs = sm::run_subnet_manager(t, file_options).routing;

  std::map<std::pair<topo::NodeIndex, unsigned>, int> balance;
  for (topo::NodeIndex n = 0; n < t.node_count(); ++n) {
    if (t.node(n).kind != topo::NodeKind::switch_node)
      continue;
    for (sm::Lid lid = 1; lid <= c.ours.lids.max_lid(); ++lid) {
      const topo::PortRef owner = c.ours.lids.owner(lid);
      if (owner.node == topo::no_node)
        continue;
      const std::uint8_t mine = c.ours.routing.lfts[n][lid];
      const std::uint8_t theirs = c.theirs.lfts[n][lid];
      ++c.lft_entries;
      if (mine != theirs) {
        ++c.lft_mismatches;
        if (c.notes.size() < 8)
          c.notes.push_back(t.node(n).name + " LID " + std::to_string(lid) + " (" + t.node(owner.node).name +
                            "): OpenSM port " + std::to_string(theirs) + ", ours " + std::to_string(mine));
      }
      if (t.node(owner.node).kind == topo::NodeKind::hca) {
        ++balance[{n, mine}];
        --balance[{n, theirs}];
      }
    }
  }
  for (const auto& [port, difference] : balance)
    c.balance_difference = std::max(c.balance_difference, static_cast<unsigned>(std::abs(difference)));

  for (topo::NodeIndex n = 0; n < t.node_count(); ++n) {
    if (t.node(n).kind != topo::NodeKind::hca)
      continue;
    const sm::Lid src = c.ours.lids.base_lid(n, 1);
    for (sm::Lid dst = 1; dst <= c.ours.lids.max_lid(); ++dst) {
      if (c.ours.lids.owner(dst).node == topo::no_node || c.ours.lids.owner(dst).node == n)
        continue;
      ++c.routes;
      const std::size_t mine = sm::trace_route(t, c.ours.lids, c.ours.routing, src, dst).size();
      const std::size_t theirs = sm::trace_route(t, c.ours.lids, c.theirs, src, dst).size();
      if (mine != theirs || mine == 0) {
        ++c.hop_mismatches;
        if (c.notes.size() < 8)
          c.notes.push_back(t.node(n).name + " to LID " + std::to_string(dst) + ": OpenSM " + std::to_string(theirs) +
                            " ports, ours " + std::to_string(mine));
      }
    }
  }
  return c;
}

} // namespace ib::testing
