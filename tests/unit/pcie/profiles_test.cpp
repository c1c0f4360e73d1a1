// The shipped PCIe link and host profiles against their tables and validate(), the rules validate() enforces, and
// the host profile's DMA-read figures against the pcie-bench medians they were fitted to (reference E7).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "models/pcie/bandwidth_model.h"
#include "models/pcie/latency_model.h"
#include "models/pcie/params.h"
#include "sim/errors.h"
#include "sim/profile.h"
#include "tests/support/profile_files.h"

namespace pcie = ib::pcie;

namespace {

pcie::LinkParams link_profile(const std::string& name) {
  return sim::read_profile(pcie::link_param_table(), sim::load_profile(sim::profile_path(name)));
}

pcie::HostParams host_profile() {
  return sim::read_profile(pcie::host_param_table(), sim::load_profile(sim::profile_path("xeon-e5-haswell")));
}

/// docs/references.md pcie_dma_read_latency_xeon_e5_2620v3: median ns by size (NFP-6000, Gen3 x8, warm cache).
struct Median {
  std::uint64_t size_bytes;
  double latency_ns;
};
constexpr Median e7_medians[] = {{8, 533}, {64, 547}, {128, 573}, {256, 627}, {512, 707}, {1024, 853}, {2048, 1133}};

} // namespace

TEST_CASE("pcie profiles: each link profile reads and validates with a source per parameter", "[pcie][quick]") {
  REQUIRE(testing::profiles_of("pcie-link") == std::set<std::string>{"gen3-x16", "gen3-x8", "gen4-x16", "gen5-x16"});
  const pcie::HostParams host = host_profile();
  for (const std::string& name : testing::profiles_of("pcie-link")) {
    INFO(name);
    const sim::Profile p = sim::load_profile(sim::profile_path(name));
    const pcie::LinkParams params = sim::read_profile(pcie::link_param_table(), p);
    CHECK(pcie::validate(params).empty());
    CHECK(pcie::validate(params, host).empty());
    testing::check_sources(pcie::link_param_table(), p);
    const nlohmann::json digest = sim::digest(pcie::link_param_table(), params, p);
    CHECK(digest.size() == pcie::link_param_table().fields().size());
    for (const auto& [key, row] : digest.items())
      CHECK(row.at("source") != "override");
    // The profile's name is its generation and width, and its DLLP intervals are the spec's recommended ones.
    CHECK(name == params.generation + "-" + params.width);
    const pcie::LinkConfig link = pcie::link_config(params);
    CHECK(params.ack_interval_symbols ==
          pcie::recommended_ack_interval_symbols(link.generation, link.width, params.max_payload_bytes));
    CHECK(params.update_fc_interval_symbols ==
          pcie::recommended_update_fc_interval_symbols(link.generation, link.width, params.max_payload_bytes));
    // Endpoints advertise infinite completion credits.
    CHECK(pcie::advertised_credits(params, pcie::LinkEnd::device, pcie::CreditType::cplh) == 0);
    CHECK(pcie::advertised_credits(params, pcie::LinkEnd::device, pcie::CreditType::cpld) == 0);
  }
  // The figures the profiles were built to: reference E6/E8's Gen3 x16 at MPS 256 gives 113.7 Gb/s of TLPs.
  const pcie::LinkConfig x16 = pcie::link_config(link_profile("gen3-x16"));
  CHECK(std::llround(pcie::tlp_bandwidth_gbps(x16) * 10) == 1137);
  CHECK(x16.address64);
  const pcie::LinkParams x8 = link_profile("gen3-x8");
  CHECK(pcie::advertised_credits(x8, pcie::LinkEnd::root_port, pcie::CreditType::pd) == 160);
  CHECK(pcie::advertised_credits(x8, pcie::LinkEnd::root_port, pcie::CreditType::ph) == 32);
}

TEST_CASE("pcie profiles: each host profile reads and validates with a source per parameter", "[pcie][quick]") {
  REQUIRE(testing::profiles_of("host") == std::set<std::string>{"xeon-e5-haswell", "xeon-sapphire-rapids"});
  for (const std::string& name : testing::profiles_of("host")) {
    INFO(name);
    const sim::Profile p = sim::load_profile(sim::profile_path(name));
    const pcie::HostParams host = sim::read_profile(pcie::host_param_table(), p);
    CHECK(pcie::validate(host).empty());
    testing::check_sources(pcie::host_param_table(), p);
    CHECK(host.remote_numa_penalty == sim::Time::from_ns(106));
    CHECK(host.mmio_doorbell_bytes == 8);
    CHECK(host.write_combining_bytes == 64);
    CHECK(host.infinite_completion_credits);
    // The verbs driver's CPU costs, each set.
    for (const auto& [key, cost] : {std::pair<const char*, sim::Time>{"post_send_cpu_cost_ns", host.post_send_cpu_cost},
                                    {"wqe_build_cpu_cost_ns", host.wqe_build_cpu_cost},
                                    {"post_recv_cpu_cost_ns", host.post_recv_cpu_cost},
                                    {"poll_cq_cpu_cost_ns", host.poll_cq_cpu_cost},
                                    {"cqe_read_cpu_cost_ns", host.cqe_read_cpu_cost}}) {
      INFO(key);
      CHECK(cost > sim::Time::zero());
      CHECK(cost < sim::Time::from_ns(100));
    }
    CHECK(host.inline_copy_ns_per_byte > 0);
  }
}

TEST_CASE("pcie profiles: xeon-sapphire-rapids is xeon-e5-haswell's figures, each source saying so", "[pcie][quick]") {
  // No DMA-latency or verbs-cost measurement of a Gen5 host was found: every figure is the Haswell profile's, and
  // each source either says "as xeon-e5-haswell" or cites a rule that holds on any host.
  const sim::Profile haswell = sim::load_profile(sim::profile_path("xeon-e5-haswell"));
  const sim::Profile spr = sim::load_profile(sim::profile_path("xeon-sapphire-rapids"));
  const pcie::HostParams spr_params = sim::read_profile(pcie::host_param_table(), spr);
  CHECK(pcie::host_param_table().to_json(spr_params) ==
        pcie::host_param_table().to_json(sim::read_profile(pcie::host_param_table(), haswell)));
  const nlohmann::json digest = sim::digest(pcie::host_param_table(), spr_params, spr);
  for (const auto& [key, row] : digest.items()) {
    INFO(key);
    const std::string source = row.at("source");
    CHECK((source.find("as xeon-e5-haswell") != std::string::npos ||
           source.find("PCI Express Base Specification") != std::string::npos));
  }
}

TEST_CASE("pcie profiles: the host's CPU costs give the ATC'16 single-core posting rates", "[pcie][quick]") {
  // Reference E13: one Haswell core posts 10.0 M UD SENDs/s of 60 B inline payload (a 128 B WQE: two 64 B
  // write-combined lines) by BlueFlame, CPU-bound; with Doorbell batches of 16 over 4 QPs, 32.2 M/s.
  const pcie::HostParams host = host_profile();
  const double inline_ns = 60 * host.inline_copy_ns_per_byte;
  const double blueflame_ns =
      (host.post_send_cpu_cost + host.wqe_build_cpu_cost + host.mmio_write_cpu_cost * 2).ns() + inline_ns;
  CHECK(1000 / blueflame_ns == Approx(10.0).epsilon(0.15));
  const double batched_ns =
      (host.post_send_cpu_cost + host.mmio_write_cpu_cost).ns() / 16 + host.wqe_build_cpu_cost.ns() + inline_ns;
  CHECK(1000 / batched_ns == Approx(32.2).epsilon(0.15));
}

TEST_CASE("pcie profiles: the schema lists exactly the link and host keys", "[pcie][quick]") {
  CHECK(testing::schema_keys("pcie-link") == testing::table_keys(pcie::link_param_table()));
  CHECK(testing::schema_keys("host") == testing::table_keys(pcie::host_param_table()));
}

TEST_CASE("pcie profiles: the host fit predicts every E7 median within 15 percent", "[pcie][quick]") {
  const pcie::LinkConfig link = pcie::link_config(link_profile("gen3-x8"));
  const pcie::HostParams host = host_profile();
  for (const Median& m : e7_medians) {
    INFO(m.size_bytes << " B: measured " << m.latency_ns << " ns");
    const double predicted = pcie::dma_read_latency(link, host, m.size_bytes, false).ns();
    CHECK(std::abs(predicted - m.latency_ns) <= 0.15 * m.latency_ns);
    // The residuals the profile quotes are at most 124 ns (13 %, at 2048 B).
    CHECK(std::abs(predicted - m.latency_ns) <= 125);
  }
  // E7's calibration band for a 64 B read on an E5-class host, and the remote-socket penalty.
  const sim::Time local = pcie::dma_read_latency(link, host, 64, false);
  CHECK(local >= sim::Time::from_ns(450));
  CHECK(local <= sim::Time::from_ns(700));
  CHECK(pcie::dma_read_latency(link, host, 64, true) - local == sim::Time::from_ns(106));
}

TEST_CASE("pcie profiles: the host's memory-read figures are the least-squares fit they claim", "[pcie][quick]") {
  // Refit: measured − the latency model with zero memory time is base + per_byte × min(size, MRRS).
  const pcie::LinkConfig link = pcie::link_config(link_profile("gen3-x8"));
  const pcie::HostParams host = host_profile();
  pcie::HostParams no_memory = host;
  no_memory.memory_read_latency = sim::Time::zero();
  no_memory.memory_read_ns_per_byte = 0;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = std::size(e7_medians);
  for (const Median& m : e7_medians) {
    const double x = static_cast<double>(std::min<std::uint32_t>(m.size_bytes, link.max_read_request_bytes));
    const double y = m.latency_ns - pcie::dma_read_latency(link, no_memory, m.size_bytes, false).ns();
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  const double intercept = (sy - slope * sx) / n;
  CHECK(host.memory_read_latency.ns() == Approx(intercept).margin(0.5));
  CHECK(host.memory_read_ns_per_byte == Approx(slope).margin(0.0005));
  // DMA writes: about E10's 250 ns to reach memory, plus the wire time.
  const double write_ns = pcie::dma_write_latency(link, host, 64, false).ns();
  CHECK(write_ns > 250);
  CHECK(write_ns < 265);
}

TEST_CASE("pcie::validate names the broken rule of a link", "[pcie][quick]") {
  const pcie::LinkParams good = link_profile("gen3-x8");
  pcie::LinkParams p = good;
  std::string expected;
  SECTION("generation") {
    p.generation = "gen6";
    expected = "generation: expected gen1, gen2, gen3, gen4 or gen5, got \"gen6\"";
  }
  SECTION("width") {
    p.width = "x32";
    expected = "width: expected x1, x2, x4, x8 or x16, got \"x32\"";
  }
  SECTION("MPS not a power of two") {
    p.max_payload_bytes = 384;
    expected = "max_payload_bytes: expected 128, 256, 512, 1024, 2048 or 4096, got 384";
  }
  SECTION("MRRS not a power of two") {
    p.max_read_request_bytes = 1000;
    expected = "max_read_request_bytes: expected 128, 256, 512, 1024, 2048 or 4096, got 1000";
  }
  SECTION("RCB") {
    p.read_completion_boundary_bytes = 96;
    expected = "read_completion_boundary_bytes: expected 64 or 128, got 96";
  }
  SECTION("completion split") {
    p.completions_split_at = "cacheline";
    expected = "completions_split_at: expected \"rcb\" or \"mps\", got \"cacheline\"";
  }
  SECTION("posted data credits below one MPS payload") {
    p.root_port_pd_credits = 8;
    expected = "root_port_pd_credits: expected 0 (infinite) or at least 16 (one 256 B payload), got 8";
  }
  SECTION("completion data credits below one MPS payload") {
    p.max_payload_bytes = 4096;
    p.device_cpld_credits = 128;
    expected = "device_cpld_credits: expected 0 (infinite) or at least 256 (one 4096 B payload), got 128";
  }
  CHECK(pcie::validate(p) == expected);
}

TEST_CASE("pcie::validate names the broken rule of a host and of a host with its link", "[pcie][quick]") {
  const pcie::HostParams good = host_profile();
  const pcie::LinkParams link = link_profile("gen3-x8");
  pcie::HostParams h = good;
  pcie::LinkParams l = link;
  SECTION("doorbell size") {
    h.mmio_doorbell_bytes = 12;
    CHECK(pcie::validate(h) == "mmio_doorbell_bytes: expected a power of two, got 12");
  }
  SECTION("write-combining size") {
    h.write_combining_bytes = 96;
    CHECK(pcie::validate(h) == "write_combining_bytes: expected a power of two, got 96");
  }
  SECTION("doorbell larger than a write-combining flush") {
    h.mmio_doorbell_bytes = 128;
    CHECK(pcie::validate(h) == "mmio_doorbell_bytes: expected at most write_combining_bytes (64), got 128");
  }
  SECTION("finite root-port completion credits with a host that advertises infinite ones") {
    l.root_port_cplh_credits = 64;
    CHECK(pcie::validate(l, h) ==
          "root_port_cplh_credits: expected 0 (infinite, as the host's infinite_completion_credits says), got 64");
  }
  SECTION("infinite root-port completion credits with a host that advertises finite ones") {
    h.infinite_completion_credits = false;
    CHECK(pcie::validate(l, h) == "root_port_cplh_credits: expected finite credits (the host's "
                                  "infinite_completion_credits is false), got 0 (infinite)");
  }
  SECTION("a write-combining flush larger than MPS") {
    h.write_combining_bytes = 512;
    CHECK(pcie::validate(h).empty());
    CHECK(pcie::validate(l, h) ==
          "write_combining_bytes: expected at most the link's max_payload_bytes (256), got 512");
  }
}

TEST_CASE("pcie profiles: a value the table refuses names the override and the range", "[pcie][quick]") {
  const sim::Profile p = sim::load_profile(sim::profile_path("gen3-x16"));
  struct Case {
    std::string pointer;
    std::string value;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"/max_payload_bytes", "8192", "--set:/max_payload_bytes: expected an integer in [128, 4096], got number 8192"},
      {"/device_ph_credits", "128", "--set:/device_ph_credits: expected an integer in [0, 127], got number 128"},
      {"/root_port_pd_credits", "2048",
       "--set:/root_port_pd_credits: expected an integer in [0, 2047], got number 2048"},
      {"/ecrc", "1", "--set:/ecrc: expected a boolean, got number 1"},
  };
  for (const Case& c : cases) {
    INFO(c.pointer);
    try {
      (void)sim::read_profile(pcie::link_param_table(), p, {{c.pointer, c.value}});
      FAIL("expected an InputError");
    } catch (const sim::InputError& e) {
      CHECK(e.file() == "--set");
      CHECK(e.json_pointer() == c.pointer);
      CHECK(std::string(e.what()) == c.message);
    }
  }
  // An override that reads but breaks validate() is caught by it, and the digest says where the value came from.
  const pcie::LinkParams params = sim::read_profile(pcie::link_param_table(), p, {{"/max_payload_bytes", "384"}});
  CHECK(pcie::validate(params).rfind("max_payload_bytes: ", 0) == 0);
  CHECK(sim::digest(pcie::link_param_table(), params, p).at("max_payload_bytes").at("source") == "override");
}
