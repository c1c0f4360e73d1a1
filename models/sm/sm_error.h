// The subnet manager's refusals: a routing engine that cannot route this fabric (ftree on a non-fat-tree, dor
// without a grid), options it cannot honour, or a fabric out of LIDs. Callers turn them into input errors at the
// option or scenario key that asked for the engine.
#pragma once

#include <stdexcept>
#include <string>

namespace ib::sm {

class SmError : public std::runtime_error {
public:
  explicit SmError(const std::string& what) : std::runtime_error(what) {}
};

} // namespace ib::sm
