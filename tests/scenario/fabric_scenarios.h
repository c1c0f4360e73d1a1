// Scenario pieces the fabric and experiment tests share: small topologies as JSON, a scenario around them, and
// hardware profile values (so that expectations follow the profiles rather than copies of their numbers).
#pragma once

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/scenario/cli_harness.h"

namespace testing {

using nlohmann::json;

/// A parameter's value in a hardware profile of topologies/hardware.
inline double profile_value(const std::string& profile, const std::string& key) {
  std::ifstream file(source_path("topologies/hardware/" + profile + ".json"));
  return json::parse(file).at("parameters").at(key).at("value").get<double>();
}

inline json hca(const std::string& name) {
  return {{"name", name}, {"kind", "hca"}, {"profile", "connectx4-edr"}};
}

/// Two ConnectX-4 hosts a and b cabled port to port, 2 m of copper.
inline json back_to_back() {
  return {{"name", "back-to-back"},
          {"nodes", {hca("a"), hca("b")}},
          {"links", json::array({{{"a", "a/1"},
                                  {"b", "b/1"},
                                  {"width", "4x"},
                                  {"speed", "EDR"},
                                  {"length_m", 2},
                                  {"cable", "copper-dac"}}})}};
}

/// Hosts h0..h(n-1) on ports 1..n of one Switch-IB 2, 2 m of copper each.
inline json star(int hosts) {
  json nodes = json::array();
  json links = json::array();
  // Names built by appending: GCC 12 warns falsely (-Wrestrict, bug 105329) on "literal" + std::string here.
  for (int i = 0; i < hosts; ++i) {
    std::string host = "h";
    host += std::to_string(i);
    std::string switch_port = "s0/";
    switch_port += std::to_string(i + 1);
    nodes.push_back(hca(host));
    links.push_back({{"a", host + "/1"}, {"b", switch_port}});
  }
  nodes.push_back({{"name", "s0"}, {"kind", "switch"}, {"profile", "switch-ib2-edr"}});
  std::string name = "star-";
  name += std::to_string(hosts);
  return {{"name", name},
          {"link_defaults", {{"width", "4x"}, {"speed", "EDR"}, {"length_m", 2}, {"cable", "copper-dac"}}},
          {"nodes", nodes},
          {"links", links}};
}

inline json scenario(const std::string& name, const json& topology, const json& workloads) {
  return {{"name", name}, {"seed", 1}, {"topology", topology}, {"workloads", workloads}};
}

} // namespace testing
