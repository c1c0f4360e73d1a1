// Unit tests for sim/stable_vector.h: elements keep their addresses as the vector grows across chunks, come back in
// order by index and by iteration, and each is constructed once and destroyed once (clear, destruction).
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/stable_vector.h"

namespace {

/// Counts constructions and destructions, and is too big for std::deque's nodes to hold two (as an HCA's QP is).
struct Tracked {
  static inline int alive = 0;
  std::uint32_t id;
  std::string name;
  std::uint8_t padding[600] = {};
  Tracked(std::uint32_t i, std::string n) : id(i), name(std::move(n)) { ++alive; }
  Tracked(Tracked&& other) noexcept : id(other.id), name(std::move(other.name)) { ++alive; }
  Tracked(const Tracked&) = delete;
  ~Tracked() { --alive; }
};

} // namespace

TEST_CASE("sim::StableVector: elements never move, in order by index and iteration, each destroyed once",
          "[sim][quick]") {
  Tracked::alive = 0;
  {
    sim::StableVector<Tracked, 4> v; // small chunks: 50 elements cross 12 chunk boundaries
    CHECK(v.empty());
    std::vector<const Tracked*> addresses;
    for (std::uint32_t i = 0; i < 50; ++i) {
      Tracked& t =
          i % 2 == 0 ? v.emplace_back(i, "qp" + std::to_string(i)) : (v.push_back(Tracked(i, "odd")), v.back());
      addresses.push_back(&t);
      CHECK(&v.back() == &t);
    }
    CHECK(v.size() == 50);
    CHECK(Tracked::alive == 50);
    for (std::uint32_t i = 0; i < 50; ++i) {
      CHECK(&v[i] == addresses[i]); // still where it was built, 49 growths later
      CHECK(v[i].id == i);
    }
    CHECK(v[10].name == "qp10");
    CHECK(v[11].name == "odd");
    std::uint32_t expected = 0;
    const sim::StableVector<Tracked, 4>& read_only = v;
    for (const Tracked& t : read_only)
      CHECK(t.id == expected++);
    CHECK(expected == 50);
    for (Tracked& t : v)
      t.id += 100;
    CHECK(v[49].id == 149);
    v.clear();
    CHECK(v.empty());
    CHECK(Tracked::alive == 0);
    v.emplace_back(7u, "again"); // usable after clear()
    CHECK(v[0].id == 7);
    CHECK(Tracked::alive == 1);
  }
  CHECK(Tracked::alive == 0); // the destructor destroys what is left
}
