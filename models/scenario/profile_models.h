// The component types whose parameters come from profile files: one list, in the order `ibnetsim params` shows
// them. Each entry is the sim::ProfileModel its model defines beside its parameter table; this is the one place that
// names them all, because only the composition root may know every model.
#pragma once

#include <span>
#include <string_view>

#include "sim/profile.h"

namespace ib::scenario {

/// Every model with a parameter table: phold, switch, hca, cable, pcie-link, host, sm, topo-import.
std::span<const sim::ProfileModel* const> profile_models();
/// The model called `name` (a profile's "model"); nullptr for none.
const sim::ProfileModel* find_profile_model(std::string_view name);

} // namespace ib::scenario
