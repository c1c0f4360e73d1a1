// The static format layer of the PCIe model: link rates after line coding (pcie_rate.h), TLP and DLLP wire bytes
// and the splitting of DMA transfers into TLPs (tlp.h), and flow-control credit arithmetic (flow_control.h).
// Figures from docs/references.md (exact-spec) unless a comment says otherwise.
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "models/pcie/flow_control.h"
#include "models/pcie/pcie_rate.h"
#include "models/pcie/tlp.h"
#include "sim/rng.h"

namespace pcie = ib::pcie;
using pcie::CompletionSplit;
using pcie::Generation;
using pcie::TlpKind;
using pcie::Width;

namespace {

/// `value` rounded to `decimals` places, as an integer count of 10^-decimals (for "equal to printed precision").
std::int64_t printed(double value, int decimals) {
  return std::llround(value * std::pow(10.0, decimals));
}

struct Piece {
  std::uint64_t address;
  std::uint32_t size;
};

template <class Split>
std::vector<Piece> pieces(Split split) {
  std::vector<Piece> out;
  split([&](std::uint64_t address, std::uint32_t size) { out.push_back({address, size}); });
  return out;
}

std::vector<std::uint32_t> sizes_of(const std::vector<Piece>& ps) {
  std::vector<std::uint32_t> sizes;
  for (const Piece& p : ps)
    sizes.push_back(p.size);
  return sizes;
}

} // namespace

TEST_CASE("ib::pcie::data_rate: lane rates and link rates match the reference exactly", "[pcie][quick]") {
  // 8b/10b: exactly 2 and 4 Gb/s per lane.
  CHECK(pcie::data_rate(Generation::gen1, Width::x1).bps() == 2e9);
  CHECK(pcie::data_rate(Generation::gen2, Width::x1).bps() == 4e9);
  // 128b/130b: pcie_gen<N>_lane_rate to three decimals.
  CHECK(printed(pcie::data_rate(Generation::gen3, Width::x1).bps() / 1e9, 3) == 7877);
  CHECK(printed(pcie::data_rate(Generation::gen4, Width::x1).bps() / 1e9, 3) == 15754);
  CHECK(printed(pcie::data_rate(Generation::gen5, Width::x1).bps() / 1e9, 3) == 31508);
  // pcie_gen3_x8_raw_bw 63.02, x16 126.03, gen4 x16 252.06, gen5 x16 504.12 (two decimals).
  CHECK(printed(pcie::data_rate(Generation::gen3, Width::x8).bps() / 1e9, 2) == 6302);
  CHECK(printed(pcie::data_rate(Generation::gen3, Width::x16).bps() / 1e9, 2) == 12603);
  CHECK(printed(pcie::data_rate(Generation::gen4, Width::x16).bps() / 1e9, 2) == 25206);
  CHECK(printed(pcie::data_rate(Generation::gen5, Width::x16).bps() / 1e9, 2) == 50412);
  // Kept as the exact fraction 8 × 8 GT/s × 128 / 130.
  const sim::Rate gen3_x8 = pcie::data_rate(Generation::gen3, Width::x8);
  CHECK(gen3_x8.bits_numerator() == 8ULL * 8'000'000'000ULL * 128);
  CHECK(gen3_x8.seconds_denominator() == 130);
  CHECK(pcie::data_rate(Generation::gen3, Width::x16).bps() == 2 * gen3_x8.bps());
  CHECK(pcie::lanes(Width::x16) == 16);
}

TEST_CASE("ib::pcie::parse_generation and parse_width read profile names and round-trip", "[pcie][quick]") {
  for (Generation g : {Generation::gen1, Generation::gen2, Generation::gen3, Generation::gen4, Generation::gen5})
    CHECK(pcie::parse_generation(pcie::to_string(g)) == g);
  for (Width w : {Width::x1, Width::x2, Width::x4, Width::x8, Width::x16})
    CHECK(pcie::parse_width(pcie::to_string(w)) == w);
  CHECK(pcie::parse_generation("gen3") == Generation::gen3);
  CHECK(pcie::parse_width("x16") == Width::x16);
  CHECK_FALSE(pcie::parse_generation("gen6").has_value());
  CHECK_FALSE(pcie::parse_generation("Gen3").has_value());
  CHECK_FALSE(pcie::parse_width("x32").has_value());
  CHECK_FALSE(pcie::parse_width("8x").has_value());
  CHECK_FALSE(pcie::parse_width("").has_value());
  CHECK(pcie::parse_completion_split("rcb") == CompletionSplit::rcb);
  CHECK(pcie::parse_completion_split("mps") == CompletionSplit::mps);
  CHECK_FALSE(pcie::parse_completion_split("MPS").has_value());
}

TEST_CASE("ib::pcie::wire_bytes: header sizes and per-TLP overheads match pcie-model", "[pcie][quick]") {
  // pcie_tlp_hdr_3dw 12, _4dw 16; completions always 3 DW.
  CHECK(pcie::header_bytes(TlpKind::mwr, false) == 12);
  CHECK(pcie::header_bytes(TlpKind::mwr, true) == 16);
  CHECK(pcie::header_bytes(TlpKind::mrd, true) == 16);
  CHECK(pcie::header_bytes(TlpKind::cpld, true) == 12);
  CHECK(pcie::header_bytes(TlpKind::cpl, false) == 12);
  // pcie_mwr64_overhead 24 (28 with ECRC, 20 with a 32-bit address).
  CHECK(pcie::wire_bytes(TlpKind::mwr, 0, true, false) == 24);
  CHECK(pcie::wire_bytes(TlpKind::mwr, 0, true, true) == 28);
  CHECK(pcie::wire_bytes(TlpKind::mwr, 0, false, false) == 20);
  // pcie_mrd64_size 24 (20 with a 32-bit address); pcie_cpld_overhead 20 (24 with ECRC).
  CHECK(pcie::wire_bytes(TlpKind::mrd, 0, true, false) == 24);
  CHECK(pcie::wire_bytes(TlpKind::mrd, 0, false, false) == 20);
  CHECK(pcie::wire_bytes(TlpKind::cpld, 0, false, false) == 20);
  CHECK(pcie::wire_bytes(TlpKind::cpld, 0, true, true) == 24);
  CHECK(pcie::wire_bytes(TlpKind::cpl, 0, false, false) == 20);
  // Reference E5: a 64 B BlueFlame MWr is 88 B, an 8 B doorbell 32 B; E6: a 64 B CplD is 84 B.
  CHECK(pcie::wire_bytes(TlpKind::mwr, 64, true, false) == 88);
  CHECK(pcie::wire_bytes(TlpKind::mwr, 8, true, false) == 32);
  CHECK(pcie::wire_bytes(TlpKind::cpld, 64, false, false) == 84);
  // pcie_dllp_size 8.
  CHECK(pcie::wire_bytes(pcie::DllpKind::ack) == 8);
  CHECK(pcie::wire_bytes(pcie::DllpKind::update_fc) == 8);
  // Payloads travel as whole DWs.
  CHECK(pcie::wire_bytes(TlpKind::mwr, 1, true, false) == 28);
  CHECK(pcie::wire_bytes(TlpKind::mwr, 5, true, false) == 32);
  CHECK(pcie::carries_payload(TlpKind::cpld));
  CHECK_FALSE(pcie::carries_payload(TlpKind::mrd));
}

TEST_CASE("ib::pcie::needs_4dw_header: addresses from 4 GiB up need the 64-bit header", "[pcie][quick]") {
  CHECK_FALSE(pcie::needs_4dw_header(0));
  CHECK_FALSE(pcie::needs_4dw_header(0xFFFF'FFFFULL));
  CHECK(pcie::needs_4dw_header(0x1'0000'0000ULL));
  CHECK(pcie::needs_4dw_header(0x7F12'3456'7000ULL));
}

TEST_CASE("ib::pcie::for_each_write_tlp: MPS-sized TLPs that never cross 4 KiB", "[pcie][quick]") {
  const auto writes = [](std::uint64_t address, std::uint64_t size, std::uint32_t mps) {
    return pieces([&](auto f) { pcie::for_each_write_tlp(address, size, mps, f); });
  };
  SECTION("aligned") {
    const auto ps = writes(0x10000, 4096, 256);
    REQUIRE(ps.size() == 16);
    for (std::size_t i = 0; i < ps.size(); ++i) {
      CHECK(ps[i].address == 0x10000 + 256 * i);
      CHECK(ps[i].size == 256);
    }
    CHECK(sizes_of(writes(0, 1000, 256)) == std::vector<std::uint32_t>{256, 256, 256, 232});
  }
  SECTION("an unaligned start stops at the 4 KiB boundary and is not realigned to MPS") {
    CHECK(sizes_of(writes(4000, 512, 256)) == std::vector<std::uint32_t>{96, 256, 160});
    CHECK(sizes_of(writes(0x30, 512, 256)) == std::vector<std::uint32_t>{256, 256});
    CHECK(sizes_of(writes(4095, 2, 4096)) == std::vector<std::uint32_t>{1, 1});
    CHECK(sizes_of(writes(100, 8192, 4096)) == std::vector<std::uint32_t>{3996, 4096, 100});
  }
  SECTION("nothing to write") {
    CHECK(writes(123, 0, 128).empty());
    CHECK(pcie::write_tlp_count(123, 0, 128) == 0);
  }
  CHECK(pcie::write_tlp_count(4000, 512, 256) == 3);
  CHECK(pcie::write_tlp_count(0, 1 << 20, 256) == 4096);
}

TEST_CASE("ib::pcie::for_each_read_request: MRRS-sized requests that never cross 4 KiB", "[pcie][quick]") {
  const auto reads = [](std::uint64_t address, std::uint64_t size, std::uint32_t mrrs) {
    return sizes_of(pieces([&](auto f) { pcie::for_each_read_request(address, size, mrrs, f); }));
  };
  // Reference E6: 4096 B at MRRS 512 takes 8 MRd.
  CHECK(reads(0, 4096, 512) == std::vector<std::uint32_t>(8, 512));
  CHECK(pcie::read_request_count(0, 4096, 512) == 8);
  CHECK(reads(0xFF00, 600, 512) == std::vector<std::uint32_t>{256, 344});
  CHECK(reads(0x1040, 64, 512) == std::vector<std::uint32_t>{64});
}

TEST_CASE("ib::pcie::for_each_completion: splits only at RCB-aligned addresses and at most MPS", "[pcie][quick]") {
  const auto cpls = [](std::uint64_t address, std::uint32_t size, std::uint32_t mps, std::uint32_t rcb,
                       CompletionSplit split) {
    return pieces([&](auto f) { pcie::for_each_completion(address, size, mps, rcb, split, f); });
  };
  SECTION("RCB 64, split at every RCB boundary") {
    // Reference E6: 4096 B in 64 B completions is 64 CplD (8 requests of 512 B, 8 each).
    CHECK(sizes_of(cpls(0, 512, 256, 64, CompletionSplit::rcb)) == std::vector<std::uint32_t>(8, 64));
    CHECK(sizes_of(cpls(0x30, 200, 256, 64, CompletionSplit::rcb)) == std::vector<std::uint32_t>{16, 64, 64, 56});
    CHECK(sizes_of(cpls(0x40, 8, 256, 64, CompletionSplit::rcb)) == std::vector<std::uint32_t>{8});
    CHECK(pcie::completion_count(0x30, 200, 256, 64, CompletionSplit::rcb) == 4);
  }
  SECTION("split at MPS: the fewest completions the spec allows") {
    // Reference E6: 512 B requests at MPS 256 come back as 2 CplD each.
    CHECK(sizes_of(cpls(0, 512, 256, 64, CompletionSplit::mps)) == std::vector<std::uint32_t>{256, 256});
    // Unaligned: the first CplD ends at the last RCB boundary within MPS of the start (0x100), the rest are MPS.
    const auto ps = cpls(0x30, 512, 256, 64, CompletionSplit::mps);
    CHECK(sizes_of(ps) == std::vector<std::uint32_t>{208, 256, 48});
    CHECK(ps[1].address == 0x100);
    // A start 64 B past an MPS boundary still gets a full-MPS first completion (it ends RCB-aligned at 0x140).
    CHECK(sizes_of(cpls(0x40, 512, 256, 64, CompletionSplit::mps)) == std::vector<std::uint32_t>{256, 256});
    // RCB 128: the cut moves to 128 B boundaries.
    CHECK(sizes_of(cpls(0x50, 512, 256, 128, CompletionSplit::mps)) == std::vector<std::uint32_t>{176, 256, 80});
    CHECK(sizes_of(cpls(0, 64, 256, 64, CompletionSplit::mps)) == std::vector<std::uint32_t>{64});
    // A request that fits in MPS needs no split, aligned or not.
    CHECK(sizes_of(cpls(0x30, 128, 128, 64, CompletionSplit::mps)) == std::vector<std::uint32_t>{128});
    CHECK(pcie::completion_count(0x30, 512, 256, 64, CompletionSplit::mps) == 3);
  }
  SECTION("completion_sizes fills a caller's array and reports the full count") {
    std::array<std::uint32_t, 64> all{};
    CHECK(pcie::completion_sizes(0x30, 512, 256, 64, CompletionSplit::mps, all) == 3);
    CHECK(all[0] == 208);
    CHECK(all[1] == 256);
    CHECK(all[2] == 48);
    std::array<std::uint32_t, 2> few{};
    CHECK(pcie::completion_sizes(0, 512, 128, 64, CompletionSplit::rcb, few) == 8);
    CHECK(few[0] == 64);
    CHECK(few[1] == 64);
    // The largest request (4096 B) at RCB 64 fills exactly 64 entries.
    CHECK(pcie::completion_sizes(0, 4096, 4096, 64, CompletionSplit::rcb, all) == 64);
  }
}

TEST_CASE("ib::pcie: splitting rules hold and the O(1) counts agree over random transfers", "[pcie][quick]") {
  sim::Rng rng(7, 0);
  for (int i = 0; i < 4000; ++i) {
    const std::uint64_t address = rng.uniform_below(std::uint64_t{1} << 40);
    const std::uint64_t size = 1 + rng.uniform_below(20000);
    const std::uint32_t max_size = 128u << rng.uniform_below(6);
    const std::uint32_t mps = 128u << rng.uniform_below(6);
    const std::uint32_t rcb = rng.uniform_below(2) ? 64 : 128;
    const CompletionSplit split = rng.uniform_below(2) ? CompletionSplit::rcb : CompletionSplit::mps;
    INFO("address " << address << " size " << size << " max " << max_size << " mps " << mps << " rcb " << rcb);
    std::uint64_t next = address;
    std::uint64_t tlps = 0;
    pcie::for_each_read_request(address, size, max_size, [&](std::uint64_t a, std::uint32_t s) {
      REQUIRE(a == next);
      REQUIRE(s >= 1);
      REQUIRE(s <= max_size);
      REQUIRE(a / 4096 == (a + s - 1) / 4096);
      next += s;
      ++tlps;
      // Each request's completions: contiguous, at most MPS, cut only at RCB boundaries.
      std::uint64_t cpl_next = a;
      std::uint32_t cpls = 0;
      pcie::for_each_completion(a, s, mps, rcb, split, [&](std::uint64_t ca, std::uint32_t cs) {
        REQUIRE(ca == cpl_next);
        REQUIRE(cs >= 1);
        REQUIRE(cs <= mps);
        cpl_next += cs;
        REQUIRE((cpl_next == a + s || cpl_next % rcb == 0));
        ++cpls;
      });
      REQUIRE(cpl_next == a + s);
      REQUIRE(cpls == pcie::completion_count(a, s, mps, rcb, split));
    });
    REQUIRE(next == address + size);
    REQUIRE(tlps == pcie::read_request_count(address, size, max_size));
    REQUIRE(tlps == pcie::write_tlp_count(address, size, max_size));
  }
}

TEST_CASE("ib::pcie::credit_cost: one header credit per TLP and a data credit per 16 B", "[pcie][quick]") {
  CHECK(pcie::data_credits(0) == 0);
  CHECK(pcie::data_credits(1) == 1);
  CHECK(pcie::data_credits(16) == 1);
  CHECK(pcie::data_credits(17) == 2);
  CHECK(pcie::data_credits(256) == 16);
  CHECK(pcie::data_credits(4096) == 256);
  const pcie::CreditCost mwr = pcie::credit_cost(TlpKind::mwr, 64);
  CHECK(mwr.header_type == pcie::CreditType::ph);
  CHECK(mwr.data_type == pcie::CreditType::pd);
  CHECK(mwr.header == 1);
  CHECK(mwr.data == 4);
  const pcie::CreditCost mrd = pcie::credit_cost(TlpKind::mrd, 0);
  CHECK(mrd.header_type == pcie::CreditType::nph);
  CHECK(mrd.data == 0);
  const pcie::CreditCost cpld = pcie::credit_cost(TlpKind::cpld, 256);
  CHECK(cpld.header_type == pcie::CreditType::cplh);
  CHECK(cpld.data_type == pcie::CreditType::cpld);
  CHECK(cpld.data == 16);
  CHECK(pcie::credit_cost(TlpKind::cpl, 0).header == 1);
  CHECK(pcie::field_bits(pcie::CreditType::nph) == 8);
  CHECK(pcie::field_bits(pcie::CreditType::cpld) == 12);
  CHECK(pcie::max_advertised_credits(pcie::CreditType::ph) == 127);
  CHECK(pcie::max_advertised_credits(pcie::CreditType::pd) == 2047);
  CHECK(pcie::to_string(pcie::CreditType::cplh) == "CplH");
}

TEST_CASE("ib::pcie::may_send: the spec's modular gate across counter wraparound", "[pcie][quick]") {
  // 8-bit header counters: limit 5 after a wrap, 250 consumed: (5 - 250) mod 256 = 11 credits left.
  CHECK(pcie::may_send(5, 250, 11, 8));
  CHECK_FALSE(pcie::may_send(5, 250, 12, 8));
  // 12-bit data counters: limit 16 after a wrap, 4090 consumed: 22 left.
  CHECK(pcie::may_send(16, 4090, 22, 12));
  CHECK_FALSE(pcie::may_send(16, 4090, 23, 12));
  // Exactly half the field is still "may send"; one more is not.
  CHECK(pcie::may_send(128, 0, 0, 8));
  CHECK(pcie::may_send(0, 0, 0, 8));
  CHECK_FALSE(pcie::may_send(0, 0, 1, 8));
}

TEST_CASE("ib::pcie::TxCredits and RxCredits: agree with unwrapped counters over many wraps", "[pcie][quick]") {
  for (const pcie::CreditType type : {pcie::CreditType::ph, pcie::CreditType::pd}) {
    INFO(pcie::to_string(type));
    const std::uint32_t advertised = pcie::max_advertised_credits(type);
    pcie::TxCredits tx(type, advertised);
    pcie::RxCredits rx(type, advertised);
    // The reference: 64-bit totals that never wrap. The sender knows the limit of the last UpdateFC only.
    std::uint64_t allocated = advertised;
    std::uint64_t received = 0;
    std::uint64_t freed = 0;
    std::uint64_t known_limit = advertised;
    std::uint64_t consumed = 0;
    sim::Rng rng(11, static_cast<std::uint64_t>(type));
    for (int step = 0; step < 200'000; ++step) {
      const std::uint32_t needed = pcie::is_header(type) ? 1 : 1 + static_cast<std::uint32_t>(rng.uniform_below(64));
      const bool fits = known_limit - consumed >= needed;
      REQUIRE(tx.may_send(needed) == fits);
      if (fits && rng.uniform_below(3) != 0) {
        tx.consume(needed);
        consumed += needed;
        REQUIRE(rx.receive(needed));
        received += needed;
      }
      if (received > freed && rng.uniform_below(2) == 0) {
        const std::uint64_t n = 1 + rng.uniform_below(received - freed);
        rx.release(static_cast<std::uint32_t>(n));
        freed += n;
        allocated += n;
      }
      if (rng.uniform_below(4) == 0) {
        tx.update(rx.credit_limit());
        known_limit = allocated;
      }
      REQUIRE(tx.available() == known_limit - consumed);
      REQUIRE(rx.outstanding() == allocated - received);
    }
    // Hundreds of wraps of the 8- and 12-bit fields.
    CHECK(consumed > 100 * (std::uint64_t{1} << pcie::field_bits(type)));
  }
}

TEST_CASE("ib::pcie::TxCredits: advertised 0 means infinite and ignores updates", "[pcie][quick]") {
  pcie::TxCredits tx(pcie::CreditType::cpld, 0);
  CHECK(tx.infinite());
  for (int i = 0; i < 10'000; ++i) {
    REQUIRE(tx.may_send(256));
    tx.consume(256);
  }
  tx.update(3);
  CHECK(tx.may_send(2047));
  pcie::RxCredits rx(pcie::CreditType::cplh, 0);
  CHECK(rx.infinite());
  for (int i = 0; i < 1000; ++i)
    REQUIRE(rx.receive(1));
}

TEST_CASE("ib::pcie::RxCredits: receiving more than was granted is an overflow", "[pcie][quick]") {
  pcie::RxCredits rx(pcie::CreditType::pd, 32);
  CHECK(rx.receive(16));
  CHECK(rx.receive(16));
  CHECK(rx.outstanding() == 0);
  CHECK_FALSE(rx.receive(1));
  pcie::RxCredits headers(pcie::CreditType::nph, 2);
  headers.release(0);
  CHECK(headers.credit_limit() == 2);
  CHECK(headers.receive(2));
  headers.release(2);
  CHECK(headers.credit_limit() == 4);
  CHECK(headers.receive(2));
  CHECK_FALSE(headers.receive(1));
}
