#include "models/scenario/profile_models.h"

#include "models/hca/params.h"
#include "models/link/cable.h"
#include "models/pcie/params.h"
#include "models/phold/phold.h"
#include "models/sm/congestion.h"
#include "models/sm/sm_params.h"
#include "models/switch/switch.h"
#include "models/topology/ibnetdiscover.h"

namespace ib::scenario {

namespace {
const sim::ProfileModel* const models[] = {
    &phold::profile_model,      &sw::profile_model,        &hca::profile_model,
    &link::cable_profile_model, &pcie::link_profile_model, &pcie::host_profile_model,
    &sm::profile_model,         &sm::cc::profile_model,    &topo::import_profile_model};
} // namespace

std::span<const sim::ProfileModel* const> profile_models() {
  return models;
}

const sim::ProfileModel* find_profile_model(std::string_view name) {
  for (const sim::ProfileModel* model : models)
    if (model->name == name)
      return model;
  return nullptr;
}

} // namespace ib::scenario
