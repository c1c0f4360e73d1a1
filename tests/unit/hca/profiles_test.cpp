// The shipped HCA profiles against hca::param_table() and hca::validate(), and hca::validate()'s rules.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "models/hca/params.h"
#include "models/link/link.h"
#include "sim/errors.h"
#include "sim/profile.h"
#include "tests/support/profile_files.h"

namespace hca = ib::hca;

namespace {

hca::Params hca_profile(const std::string& name) {
  return sim::read_profile(hca::param_table(), sim::load_profile(sim::profile_path(name)));
}

} // namespace

TEST_CASE("hca profiles: each reads, validates and cites a source per parameter", "[hca][quick]") {
  REQUIRE(testing::profiles_of("hca") == std::set<std::string>{"connect-ib-fdr", "connectx3-fdr", "connectx4-edr",
                                                               "connectx5-edr", "connectx6-hdr", "connectx7-ndr"});
  for (const std::string& name : testing::profiles_of("hca")) {
    INFO(name);
    const sim::Profile p = sim::load_profile(sim::profile_path(name));
    const hca::Params params = sim::read_profile(hca::param_table(), p);
    CHECK(hca::validate(params) == "");
    testing::check_sources(hca::param_table(), p);
    const nlohmann::json digest = sim::digest(hca::param_table(), params, p);
    CHECK(digest.size() == hca::param_table().fields().size());
    for (const auto& [key, row] : digest.items())
      CHECK(row.at("source") != "override");
    // Every adapter sits in a shipped slot and host, and uses the mlx5 queue layout.
    CHECK(testing::profiles_of("pcie-link").count(params.pcie_link) == 1);
    CHECK(params.host == (name == "connectx7-ndr" ? "xeon-sapphire-rapids" : "xeon-e5-haswell"));
    CHECK(params.wqe_basic_block_bytes == 64);
    CHECK(params.recv_wqe_bytes == 16);
    CHECK(params.cqe_bytes == 64);
    CHECK(params.blueflame_buffer_bytes == 256);
  }
  const hca::Params cx4 = hca_profile("connectx4-edr");
  CHECK(cx4.port_count == 2); // MCX456A: dual-port variants exist; a single-port card is "ports": 1
  CHECK(*ib::link::parse_speed_set(cx4.link_speeds) & ib::link::speed_bit(ib::link::Speed::edr));
  CHECK_FALSE(*ib::link::parse_speed_set(cx4.link_speeds) & ib::link::speed_bit(ib::link::Speed::hdr));
  CHECK(cx4.pcie_link == "gen3-x16");
}

TEST_CASE("hca profiles: Connect-IB is the ATC'16 CIB adapter", "[hca][quick]") {
  const hca::Params cib = hca_profile("connect-ib-fdr");
  CHECK(cib.port_count == 2);
  CHECK(cib.pcie_link == "gen3-x16");
  CHECK(*ib::link::parse_speed_set(cib.link_speeds) & ib::link::speed_bit(ib::link::Speed::fdr));
  CHECK_FALSE(*ib::link::parse_speed_set(cib.link_speeds) & ib::link::speed_bit(ib::link::Speed::edr));
  // Reference E14: atomics serialize on the 12 low address bits.
  CHECK(cib.atomic_lock_buckets == 4096);
}

TEST_CASE("hca profiles: the slots and atomics locking of each generation", "[hca][quick]") {
  const hca::Params cx3 = hca_profile("connectx3-fdr");
  CHECK(cx3.pcie_link == "gen3-x8");
  CHECK(cx3.atomic_lock_buckets == 1); // reference E14: ConnectX-3 serializes every atomic
  CHECK(cx3.max_qp_wr == 16351);
  const hca::Params cx5 = hca_profile("connectx5-edr");
  CHECK(cx5.port_count == 2);
  CHECK(hca_profile("connectx6-hdr").port_count == 2);
  CHECK(cx5.pcie_link == "gen3-x16");
  CHECK(hca_profile("connectx6-hdr").pcie_link == "gen4-x16");
}

TEST_CASE("hca profiles: ConnectX-7 is one 4x NDR port on PCIe Gen5 x16 in a Sapphire Rapids host", "[hca][quick]") {
  namespace link = ib::link;
  const hca::Params cx7 = hca_profile("connectx7-ndr");
  CHECK(cx7.port_count == 1);
  CHECK(cx7.pcie_link == "gen5-x16");
  CHECK(cx7.host == "xeon-sapphire-rapids");
  const link::SpeedSet speeds = *link::parse_speed_set(cx7.link_speeds);
  CHECK(speeds & link::speed_bit(link::Speed::ndr));
  CHECK(speeds & link::speed_bit(link::Speed::hdr));
  CHECK(speeds & link::speed_bit(link::Speed::edr));
  CHECK_FALSE(speeds & link::speed_bit(link::Speed::fdr)); // MLNX_OFED lists EDR, HDR, NDR for ConnectX-7
  CHECK(*link::parse_width_set(cx7.link_widths) & link::width_bit(link::Width::x2)); // the dual-port NDR200 card
  CHECK(link::data_rate(link::Width::x4, link::Speed::ndr).bps() == 400e9);
  CHECK(link::data_rate(link::Width::x2, link::Speed::ndr).bps() == 200e9);
  // Its payload buffer covers a DMA read of the E7 host at NDR (50 B/ns x 1.1 us) at least four times over.
  CHECK(cx7.tx_payload_buffer_bytes >= 4 * 50 * 1100);
  // One VL's receive buffer covers a 100 m round trip at NDR with the FEC latency at both ends (reference E4).
  CHECK(cx7.input_buffer_bytes_per_port / cx7.vl_cap / link::block_bytes >= 844 + 66);
}

TEST_CASE("hca profiles: per-WQE costs across the send engines meet each adapter's message rate", "[hca][quick]") {
  // rate = send_engines / (wqe_processing + tx_packet_processing), within 15 % of the figure each profile cites.
  struct Rate {
    const char* profile;
    double mops;
  };
  // CX3: between E12's 26.0 regular and 32.1 header-only; CIB: E12's 157 header-only; CX4 150, CX5 ~200 and CX6
  // 215 Mpps vendor claims; CX7: no published rate, twice CX6's with the port rate (an estimate).
  for (const Rate& r : {Rate{"connectx3-fdr", 29}, Rate{"connect-ib-fdr", 157}, Rate{"connectx4-edr", 150},
                        Rate{"connectx5-edr", 200}, Rate{"connectx6-hdr", 215}, Rate{"connectx7-ndr", 430}}) {
    INFO(r.profile);
    const hca::Params p = hca_profile(r.profile);
    const double per_wqe_ns = (p.wqe_processing + p.tx_packet_processing).ns();
    CHECK(p.send_engines / per_wqe_ns * 1000 == Approx(r.mops).epsilon(0.15));
  }
}

TEST_CASE("hca profiles: the schema lists exactly the table's keys", "[hca][quick]") {
  CHECK(testing::schema_keys("hca") == testing::table_keys(hca::param_table()));
}

TEST_CASE("hca::validate names the broken rule", "[hca][quick]") {
  const hca::Params good = hca_profile("connectx4-edr");
  hca::Params p = good;
  p.link_speeds = "EDR,QDR,EDR";
  CHECK(hca::validate(p).rfind("link_speeds: ", 0) == 0);
  p = good;
  p.link_widths = "3x";
  CHECK(hca::validate(p).rfind("link_widths: ", 0) == 0);
  p = good;
  p.vl_cap = 3;
  CHECK(hca::validate(p) == "vl_cap: expected 1, 2, 4, 8 or 15, got 3");
  p = good;
  p.input_buffer_bytes_per_port = 4 * 65 * 64;
  CHECK(hca::validate(p).rfind("input_buffer_bytes_per_port: expected at least 16896", 0) == 0);
}

TEST_CASE("hca::validate names a broken queue layout or atomics rule", "[hca][quick]") {
  hca::Params p = hca_profile("connectx4-edr");
  std::string expected;
  SECTION("basic block not a power of two") {
    p.wqe_basic_block_bytes = 48;
    expected = "wqe_basic_block_bytes: expected a power of two, got 48";
  }
  SECTION("receive WQE not a power of two") {
    p.recv_wqe_bytes = 24;
    expected = "recv_wqe_bytes: expected a power of two, got 24";
  }
  SECTION("CQE not a power of two") {
    p.cqe_bytes = 96;
    expected = "cqe_bytes: expected a power of two, got 96";
  }
  SECTION("BlueFlame buffer not whole basic blocks") {
    p.blueflame_buffer_bytes = 200;
    expected = "blueflame_buffer_bytes: expected a multiple of wqe_basic_block_bytes (64), got 200";
  }
  SECTION("basic blocks larger than the BlueFlame buffer") {
    p.wqe_basic_block_bytes = 512;
    expected = "blueflame_buffer_bytes: expected a multiple of wqe_basic_block_bytes (512), got 256";
  }
  SECTION("lock buckets not a power of two") {
    p.atomic_lock_buckets = 3000;
    expected = "atomic_lock_buckets: expected a power of two, got 3000";
  }
  CHECK(hca::validate(p) == expected);
}

TEST_CASE("hca::validate names a slot or host that is no such profile", "[hca][quick]") {
  hca::Params p = hca_profile("connectx4-edr");
  std::string expected;
  SECTION("unknown PCIe link") {
    p.pcie_link = "gen3-x32";
    expected = "pcie_link: expected a pcie-link profile (gen3-x16, gen3-x8, gen4-x16, gen5-x16), got \"gen3-x32\", "
               "no such profile";
  }
  SECTION("PCIe link naming a profile of another model") {
    p.pcie_link = "xeon-e5-haswell";
    expected = "pcie_link: expected a pcie-link profile (gen3-x16, gen3-x8, gen4-x16, gen5-x16), got "
               "\"xeon-e5-haswell\", a host profile";
  }
  SECTION("empty host") {
    p.host = "";
    expected = "host: expected a host profile (xeon-e5-haswell, xeon-sapphire-rapids), got \"\", no such profile";
  }
  SECTION("host naming an HCA profile") {
    p.host = "connectx4-edr";
    expected =
        "host: expected a host profile (xeon-e5-haswell, xeon-sapphire-rapids), got \"connectx4-edr\", an hca profile";
  }
  CHECK(hca::validate(p) == expected);
}

TEST_CASE("hca profiles: a value the table refuses names the file or override and pointer", "[hca][quick]") {
  const sim::Profile p = sim::load_profile(sim::profile_path("connectx4-edr"));
  try {
    (void)sim::read_profile(hca::param_table(), p, {{"/port_count", "3"}});
    FAIL("expected an InputError");
  } catch (const sim::InputError& e) {
    CHECK(std::string(e.what()).find("/port_count") != std::string::npos);
  }
  try {
    (void)sim::read_profile(hca::param_table(), p, {{"/tx_payload_buffer_bytes", "2048"}});
    FAIL("expected an InputError");
  } catch (const sim::InputError& e) {
    CHECK(std::string(e.what()) ==
          "--set:/tx_payload_buffer_bytes: expected an integer in [4096, 1000000000], got number 2048");
  }
  // An override that reads but breaks validate() is caught by it, and the digest says where the value came from.
  const hca::Params params = sim::read_profile(hca::param_table(), p, {{"/pcie_link", "gen9-x16"}});
  CHECK(hca::validate(params).rfind("pcie_link: expected a pcie-link profile", 0) == 0);
  CHECK(sim::digest(hca::param_table(), params, p).at("pcie_link").at("source") == "override");
}
