// Node names for test fabrics.
#pragma once

#include <cstdint>
#include <string>

namespace ib::testing {

/// "h7" from ("h", 7). Appends, because GCC 12 warns falsely (-Wrestrict, bug 105329) on "h" + std::string.
inline std::string numbered(const char* prefix, std::uint64_t n) {
  std::string name = prefix;
  name += std::to_string(n);
  return name;
}

} // namespace ib::testing
