// ProfileCatalog against the shipped hardware profiles: capabilities, models, cables, and a broken profile file
// reported against that file.
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "models/topology/catalog.h"
#include "sim/errors.h"
#include "sim/json_reader.h"
#include "sim/profile.h"

namespace topo = ib::topo;
using ib::link::Speed;
using ib::link::Width;

TEST_CASE("topology::ProfileCatalog: capabilities of the shipped switch and HCA profiles", "[topology][quick]") {
  topo::ProfileCatalog catalog;
  const auto edr = catalog.capabilities(topo::NodeKind::switch_node, "switch-ib2-edr");
  REQUIRE(edr.has_value());
  CHECK(edr->port_count == 36);
  CHECK(edr->widths == (ib::link::width_bit(Width::x1) | ib::link::width_bit(Width::x4)));
  CHECK(edr->speeds & ib::link::speed_bit(Speed::edr));
  CHECK_FALSE(edr->speeds & ib::link::speed_bit(Speed::hdr));
  CHECK(catalog.capabilities(topo::NodeKind::switch_node, "quantum-hdr")->port_count == 40);
  const auto cx3 = catalog.capabilities(topo::NodeKind::hca, "connectx3-fdr");
  REQUIRE(cx3.has_value());
  CHECK(cx3->port_count == 2);
  CHECK(topo::describe_speeds(cx3->speeds) == "SDR, DDR, QDR, FDR10, FDR");
  CHECK(topo::describe_widths(cx3->widths) == "1x, 4x");
}

TEST_CASE("topology::ProfileCatalog: a profile of another model is no profile of this one", "[topology][quick]") {
  topo::ProfileCatalog catalog;
  CHECK_FALSE(catalog.capabilities(topo::NodeKind::hca, "switch-ib2-edr").has_value());
  CHECK_FALSE(catalog.capabilities(topo::NodeKind::switch_node, "fibre").has_value());
  CHECK_FALSE(catalog.capabilities(topo::NodeKind::switch_node, "no-such-profile").has_value());
  CHECK(catalog.describe("fibre") == "a cable profile");
  CHECK(catalog.describe("connectx4-edr") == "an hca profile");
  CHECK(catalog.describe("no-such-profile").empty());
  CHECK(catalog.is_cable("copper-dac"));
  CHECK(catalog.is_cable("fibre"));
  CHECK_FALSE(catalog.is_cable("quantum-hdr"));
  CHECK_FALSE(catalog.is_cable("no-such-profile"));
  CHECK(catalog.profile_names("switch") ==
        std::vector<std::string>{"quantum-hdr", "quantum2-ndr", "switch-ib2-edr", "switchx2-fdr"});
  CHECK(catalog.profile_names("cable") == std::vector<std::string>{"copper-dac", "fibre"});
}

TEST_CASE("topology::ProfileCatalog: a profile that breaks its model's rules is an error in that file",
          "[topology][quick]") {
  nlohmann::json doc = sim::load_json_file(sim::profile_path("switch-ib2-edr")).root;
  doc["parameters"]["vl_cap"]["value"] = 3;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ibnetsim_catalog_test_" + std::to_string(::getpid()) + ".json"))
          .string();
  std::ofstream(path) << doc.dump(2);
  topo::ProfileCatalog catalog;
  try {
    (void)catalog.capabilities(topo::NodeKind::switch_node, path);
    FAIL("no sim::InputError was thrown");
  } catch (const sim::InputError& e) {
    CHECK(std::string(e.what()) == path + ":/parameters/vl_cap/value: expected 1, 2, 4, 8 or 15, got 3");
  }
  std::filesystem::remove(path);
}
