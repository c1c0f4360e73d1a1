// The fabric formats of the real tools: `ibnetdiscover` output (infiniband-diags), which users get from their
// clusters, and ibsim's net files (ibsim-utils), which serve a fabric to the real OpenSM. ibsim reads a dialect
// of ibnetdiscover output, so one parser reads both: Switch/Ca/Hca blocks, their port lines, and the
// switchguid=/caguid=/sysimgguid= lines that set GUIDs (ibsim's rule: each sets the next node's GUID, and later
// nodes of that kind count up from it). Names come from the node descriptions, widths and speeds from the port
// lines ("4xEDR"), profiles from options or the fastest link speed, cables from options or a cables table. The
// ports report of ibnetdiscover -p (one line per port) is read too, and a node name map names nodes by GUID.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/topology/catalog.h"
#include "models/topology/topology.h"
#include "sim/errors.h"
#include "sim/params.h"
#include "sim/profile.h"

namespace ib::topo {

/// A bad line of a text format: prints as "FILE:LINE: expected ..., got ..." (exit 2, as any InputError).
class LineError : public sim::InputError {
public:
  LineError(std::string file, unsigned line, std::string expected, std::string got);
  unsigned line() const { return line_; }
  const char* what() const noexcept override { return message_.c_str(); }

private:
  unsigned line_;
  std::string message_;
};

/// An infiniband-diags node name map (ibnetdiscover --node-name-map): lines `GUID "name"`, '#' comments. Names
/// nodes on import, by node GUID.
struct NodeNameMap {
  struct Entry {
    std::string name;
    unsigned line;
  };
  std::string file;
  std::map<std::uint64_t, Entry> names;
};
/// Reads a node name map; a malformed line or a GUID given twice is a LineError.
NodeNameMap parse_node_name_map(std::string_view text, const std::string& file);

/// The cables of a fabric, which ibnetdiscover cannot see: a CSV file whose header names the columns node_guid
/// (a node GUID, "0x" and hex), port, length_m (metres) and cable (a cable profile), in any order; '#' comments.
/// A row gives the cable on one end of a link; an empty length_m or cable keeps --length-m or --cable.
struct CableTable {
  struct Row {
    unsigned line;
    std::uint64_t node_guid;
    unsigned port;
    std::optional<double> length_m;
    std::optional<std::string> cable;
  };
  std::string file;
  std::vector<Row> rows;
};
/// Reads a cables table; a malformed header or row is a LineError (cable names are checked on import).
CableTable parse_cable_table(std::string_view text, const std::string& file);

/// What `topo import` assumes where ibnetdiscover is silent; defaults and sources in
/// topologies/hardware/topo-import.json (model "topo-import").
struct ImportDefaults {
  double length_m;   ///< cable length of every link a cables table does not give
  std::string cable; ///< cable profile of every link a cables table does not give
};
/// The table of ImportDefaults: parsing, `ibnetsim params topo-import`.
const sim::ParamTable<ImportDefaults>& import_param_table();
/// The topo-import model, as `ibnetsim params` lists it.
extern const sim::ProfileModel import_profile_model;
/// The name of the shipped topo-import profile.
inline constexpr std::string_view import_profile = "topo-import";

struct ImportOptions {
  std::optional<std::string> switch_profile; ///< absent: inferred per switch from its fastest link speed
  std::optional<std::string> hca_profile;    ///< absent: inferred per HCA likewise
  double length_m;                           ///< cable length of every link the cables table does not give
  std::string cable;                         ///< cable profile of every link the cables table does not give
  std::string name;                          ///< the topology's name
  std::optional<NodeNameMap> node_names;     ///< names by node GUID, before the node descriptions
  std::optional<CableTable> cables;          ///< lengths and cable profiles per link
};

struct ImportResult {
  Topology topology;
  /// What was inferred (profiles) or taken from side files, one line each, for stderr.
  std::vector<std::string> notes;
  std::size_t links_with_default_length = 0; ///< links that took ImportOptions::length_m
  std::size_t links_with_default_cable = 0;  ///< links that took ImportOptions::cable
};

/// The profiles inferred for a link speed: FDR10 and FDR (and slower) → switchx2-fdr / connectx3-fdr, EDR →
/// switch-ib2-edr / connectx4-edr, HDR → quantum-hdr / connectx6-hdr, NDR → quantum2-ndr / connectx7-ndr; nullopt
/// for a speed with no shipped profile (none today).
std::optional<std::string> inferred_profile(NodeKind kind, link::Speed fastest);

/// Reads ibnetdiscover output (or an ibsim net file) from `text`, labelled `file` in errors. Syntax errors are
/// LineErrors; so are the topology loader's checks (profiles, port counts, speeds, connectivity), located at the
/// node's or port's line.
ImportResult import_ibnetdiscover(std::string_view text, const std::string& file, const ImportOptions& options,
                                  Catalog& catalog);

/// The topology as ibnetdiscover prints it (switches, then CAs; node ids "S-<guid>"/"H-<guid>", descriptions =
/// node names, LIDs 0): import_ibnetdiscover() gives the same graph back.
std::string export_ibnetdiscover(const Topology& topology);
/// The topology as an ibsim net file: node ids = names, a switchguid=/caguid= line before each node sets its GUID
/// (ibsim then gives switch port 0 the node GUID and HCA port p the node GUID + p), and each port line carries its
/// width and speed ("lid 0 4xEDR"), which ibsim enables on that port.
std::string export_ibsim_net(const Topology& topology);

} // namespace ib::topo
