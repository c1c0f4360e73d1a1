#include "models/topology/catalog.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "models/hca/params.h"
#include "models/link/cable.h"
#include "models/link/port.h"
#include "models/switch/switch.h"
#include "sim/errors.h"
#include "sim/profile.h"

namespace ib::topo {

namespace {

/// The capabilities of a node profile whose Params carry port_count, link_widths and link_speeds.
template <class P>
NodeCapabilities node_capabilities(const sim::Profile& profile, const std::vector<sim::Override>& overrides,
                                   const sim::ParamTable<P>& table, std::string (*validate)(const P&)) {
  const P params = sim::read_checked_profile(table, profile, overrides, validate);
  // validate() has checked both lists parse.
  return NodeCapabilities{params.port_count, *link::parse_width_set(params.link_widths),
                          *link::parse_speed_set(params.link_speeds), *link::parse_device_ids(params.device_ids)};
}

std::string_view model_of(NodeKind kind) {
  return kind == NodeKind::switch_node ? "switch" : "hca";
}

} // namespace

bool Catalog::is_cable(const std::string& /*name*/) {
  return true;
}

std::string Catalog::describe(const std::string& /*profile*/) {
  return "";
}

std::vector<std::string> Catalog::profile_names(std::string_view /*model*/) {
  return {};
}

std::optional<std::string> Catalog::profile_for_device(NodeKind kind, std::uint16_t device_id) {
  for (const std::string& name : profile_names(model_of(kind))) {
    const std::optional<NodeCapabilities> c = capabilities(kind, name);
    if (c && std::find(c->device_ids.begin(), c->device_ids.end(), device_id) != c->device_ids.end())
      return name;
  }
  return std::nullopt;
}

const ProfileCatalog::Entry& ProfileCatalog::entry(const std::string& name) {
  const auto found = entries_.find(name);
  if (found != entries_.end()) {
    return found->second;
  }
  Entry e;
  const std::string path = sim::profile_path(name);
  std::error_code error;
  if (!name.empty() && std::filesystem::is_regular_file(path, error)) {
    const sim::Profile profile = sim::load_profile(path);
    const std::vector<sim::Override>& overrides = sim::overrides_for(overrides_, name);
    e.model = profile.model;
    if (profile.model == "switch") {
      e.capabilities = node_capabilities(profile, overrides, sw::param_table(), &sw::validate);
    } else if (profile.model == "hca") {
      e.capabilities = node_capabilities(profile, overrides, hca::param_table(), &hca::validate);
    } else if (profile.model == "cable") {
      (void)sim::read_profile(link::param_table(), profile, overrides);
    }
  }
  return entries_.emplace(name, std::move(e)).first->second;
}

std::optional<NodeCapabilities> ProfileCatalog::capabilities(NodeKind kind, const std::string& profile) {
  const Entry& e = entry(profile);
  if (e.model != model_of(kind)) {
    return std::nullopt;
  }
  return e.capabilities;
}

bool ProfileCatalog::is_cable(const std::string& name) {
  return entry(name).model == "cable";
}

std::string ProfileCatalog::describe(const std::string& profile) {
  const Entry& e = entry(profile);
  if (e.model.empty()) {
    return "";
  }
  return (e.model == "hca" ? "an " : "a ") + e.model + " profile";
}

std::vector<std::string> ProfileCatalog::profile_names(std::string_view model) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& file : std::filesystem::directory_iterator(sim::find_profile_directory().value_or(""), error)) {
    if (file.path().extension() != ".json") {
      continue;
    }
    const std::string name = file.path().stem().string();
    if (entry(name).model == model) {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string describe_widths(link::WidthSet widths) {
  std::string text;
  for (const link::Width w : {link::Width::x1, link::Width::x2, link::Width::x4, link::Width::x8, link::Width::x12}) {
    if (widths & link::width_bit(w)) {
      text += (text.empty() ? "" : ", ") + std::string(link::to_string(w));
    }
  }
  return text.empty() ? "none" : text;
}

std::string describe_speeds(link::SpeedSet speeds) {
  std::string text;
  for (unsigned s = 0; s <= static_cast<unsigned>(link::Speed::ndr); ++s) {
    const auto speed = static_cast<link::Speed>(s);
    if (speeds & link::speed_bit(speed)) {
      text += (text.empty() ? "" : ", ") + std::string(link::to_string(speed));
    }
  }
  return text.empty() ? "none" : text;
}

} // namespace ib::topo
