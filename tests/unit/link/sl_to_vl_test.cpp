// The one default SL -> VL mapping that switches, the SM's route check and HCAs share (models/link/sl_to_vl.h).
#include <catch2/catch.hpp>

#include "models/link/sl_to_vl.h"

using ib::link::default_sl_to_vl;
using ib::link::default_vl;
using ib::link::SlToVl;

TEST_CASE("ib::link::default_vl: OpenSM's default SL2VL, SL 15 on VL 7, reduced to the port's VLs", "[link][quick]") {
  for (std::uint8_t sl = 0; sl < 8; ++sl)
    CHECK(default_vl(sl, 8) == sl);
  for (std::uint8_t sl = 8; sl < 15; ++sl)
    CHECK(default_vl(sl, 8) == sl - 8);
  // Every VL count a port can run (1, 2, 4, 8, 15): SL 15 travels as SL 7 would, including on 15 VLs, where plain
  // "SL mod VLs" would put it on VL 0.
  for (const unsigned vls : {1u, 2u, 4u, 8u, 15u}) {
    CHECK(default_vl(15, vls) == default_vl(7, vls));
    for (std::uint8_t sl = 0; sl < 15; ++sl)
      CHECK(default_vl(sl, vls) == sl % vls);
  }
  CHECK(default_vl(15, 15) == 7);
  CHECK(default_vl(14, 15) == 14);
  CHECK(default_vl(3, 0) == 0); // a port reporting no VLs runs one
}

TEST_CASE("ib::link::default_sl_to_vl: the table holds default_vl() for every SL", "[link][quick]") {
  for (const unsigned vls : {1u, 2u, 4u, 8u, 15u}) {
    const SlToVl table = default_sl_to_vl(vls);
    for (std::uint8_t sl = 0; sl < 16; ++sl)
      CHECK(table[sl] == default_vl(sl, vls));
  }
  static_assert(default_sl_to_vl(8)[15] == 7);
}
