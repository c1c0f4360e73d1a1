// A hardware-profile catalog the topology harnesses share across inputs (tests/fuzz). ProfileCatalog reads, checks
// and caches each profile a topology names; reading the shipped profiles afresh for every input took most of each
// run. It is renewed every 10,000 inputs, so that the profile names inputs make up do not pile up in its cache.
#pragma once

#include <memory>

#include "models/topology/catalog.h"

namespace fuzz {

inline ib::topo::ProfileCatalog& shared_catalog() {
  static std::unique_ptr<ib::topo::ProfileCatalog> catalog;
  static unsigned inputs = 0;
  if (!catalog || ++inputs % 10'000 == 0)
    catalog = std::make_unique<ib::topo::ProfileCatalog>();
  return *catalog;
}

} // namespace fuzz
