// What every libFuzzer harness in tests/fuzz shares (docs/testing.md, "Fuzzing"): the data directory the loaders
// read hardware profiles from, file labels inside it (so that relative paths in an input resolve as they do for the
// shipped files), and the rule of what a harness may see. Bad input must end as one of the exceptions a loader
// documents for it (sim::InputError and its subclasses, and what a harness names besides); any other exception, a
// failed assert or a sanitizer report is a finding, and the harness aborts so that libFuzzer saves the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <typeinfo>

#include "sim/errors.h"

namespace fuzz {

/// Once per process: makes the build tree's staged data (<build>/share/ibnetsim) the data directory, as the unit
/// tests do, and points stdin at /dev/null so that an input naming /dev/stdin as a file cannot block.
void init();

/// The staged data directory, without a trailing slash.
const std::string& data_dir();
/// The source tree (for shipped files that are not staged data, such as tools/opensm/netfiles).
const std::string& source_dir();

/// A file of this process's own under the temporary directory ($TMPDIR or /tmp), removed at exit: for loaders that
/// read only from a path. `suffix` ends its name (".json").
std::string temp_file(const std::string& suffix);
/// Writes `content` to `path` whole, or aborts.
void write_file(const std::string& path, std::string_view content);

/// The fuzz input as text.
inline std::string_view text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Reports an exception no loader documents for bad input, with its type, and aborts.
[[noreturn]] void unexpected(const char* what, const char* type);

/// A property of the harness (a round trip) does not hold: reports `what` and aborts.
[[noreturn]] void broken(const std::string& what);

/// Runs `body`. sim::InputError (bad input, exit 2) and each of `Expected...` are the documented outcome of bad input
/// and return; anything else aborts through unexpected().
template <class... Expected, class Body>
void expect_input_errors(Body&& body) {
  try {
    try {
      body();
    } catch (const sim::InputError&) {
      // The loader rejected the input as it should.
    }
  } catch (const std::exception& e) {
    // A documented exception of this harness, or a finding.
    const bool documented = (false || ... || (dynamic_cast<const Expected*>(&e) != nullptr));
    if (!documented)
      unexpected(e.what(), typeid(e).name());
  } catch (...) {
    unexpected("(not a std::exception)", "unknown");
  }
}

} // namespace fuzz
