// What a topology needs to know about hardware profiles (docs/scenario-reference.md): a node's port count and the link
// widths and speeds its ports support, and which names are cable profiles. Catalog is the interface the loader,
// generators and importers ask; ProfileCatalog answers from topologies/hardware/<profile>.json through the switch and
// HCA parameter tables, checking each profile once and caching it. Tests may supply their own catalog.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/link/link_rate.h"
#include "models/topology/topology.h"
#include "sim/profile.h"

namespace ib::topo {

/// A node profile's port-side capabilities.
struct NodeCapabilities {
  unsigned port_count;                   ///< physical ports of that device, numbered 1..port_count
  link::WidthSet widths;                 ///< link widths every port supports
  link::SpeedSet speeds;                 ///< link speeds every port supports
  std::vector<std::uint16_t> device_ids; ///< NodeInfo.DeviceIDs that identify the device (ibnetdiscover's devid=)
};

class Catalog {
public:
  virtual ~Catalog() = default;
  /// The capabilities of `profile` read as a `kind` node; nullopt = no such profile of that model.
  virtual std::optional<NodeCapabilities> capabilities(NodeKind kind, const std::string& profile) = 0;
  /// Whether `name` is a cable profile. The default accepts any name (for catalogs without cable files).
  virtual bool is_cable(const std::string& name);
  /// For error messages: what `profile` is ("a cable profile") when it exists, else "".
  virtual std::string describe(const std::string& profile);
  /// For error messages: the known profiles of `model` ("switch", "hca", "cable"), sorted; may be empty.
  virtual std::vector<std::string> profile_names(std::string_view model);
  /// The profile of a `kind` node whose device_ids list `device_id`, the first by name if several do; nullopt if
  /// none does.
  std::optional<std::string> profile_for_device(NodeKind kind, std::uint16_t device_id);
};

/// The catalog of hardware profiles: a bare name is topologies/hardware/<name>.json, a name with '/' or ending in
/// ".json" is a path (sim::profile_path). A profile that exists but fails its table or validate() is an
/// InputError against the profile file.
class ProfileCatalog : public Catalog {
public:
  ProfileCatalog() = default;
  /// Profiles read with `overrides` (a scenario's "profiles"), which must outlive the catalog.
  explicit ProfileCatalog(const sim::ProfileOverrides& overrides) : overrides_(overrides) {}

  std::optional<NodeCapabilities> capabilities(NodeKind kind, const std::string& profile) override;
  bool is_cable(const std::string& name) override;
  std::string describe(const std::string& profile) override;
  std::vector<std::string> profile_names(std::string_view model) override;

private:
  struct Entry {
    std::string model; ///< "" when no such file
    std::optional<NodeCapabilities> capabilities;
  };
  /// The profile `name`, loaded, read through its model's table and validated on first use.
  const Entry& entry(const std::string& name);

  static inline const sim::ProfileOverrides no_overrides{};
  const sim::ProfileOverrides& overrides_ = no_overrides;
  std::map<std::string, Entry, std::less<>> entries_;
};

/// "1x, 4x" and "SDR, DDR, QDR": a set as error messages and summaries print it.
std::string describe_widths(link::WidthSet widths);
std::string describe_speeds(link::SpeedSet speeds);

} // namespace ib::topo
