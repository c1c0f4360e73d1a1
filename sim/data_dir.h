// The data directory: where a running ibnetsim finds its hardware profiles (topologies/hardware), schemas, example
// topologies and scenarios. Never the source tree it was built from: the first of
//   1. set_data_directory() (the CLI's --data-dir DIR),
//   2. the environment variable IBNETSIM_DATA_DIR (when set and not empty),
//   3. <directory of the running executable (/proc/self/exe)>/../share/ibnetsim,
// which is where `cmake --install` puts the data and where the build stages it (build/<dir>/share/ibnetsim), so an
// installed or moved prefix and the build tree work alike. The directory is only checked when data is needed: a
// missing one, or one without topologies/hardware, is a DataDirectoryError (bad input, exit 2).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sim/errors.h"

namespace sim {

/// The environment variable naming the data directory.
inline constexpr const char* data_dir_environment = "IBNETSIM_DATA_DIR";

/// Which of the three places the data directory came from.
enum class DataDirSource { option, environment, executable };

struct DataDirLocation {
  std::string path; ///< as given (option, environment) or <exe dir>/../share/ibnetsim, lexically normal
  DataDirSource source;
  std::string executable; ///< for DataDirSource::executable: the executable it was found next to
};

/// Sets the data directory, ahead of the environment (`--data-dir`); nullopt clears it.
void set_data_directory(std::optional<std::string> path);
/// What set_data_directory() last set.
const std::optional<std::string>& data_directory_option();

/// Where the data directory is, by the order above; not checked.
DataDirLocation locate_data_directory();
/// "--data-dir", "the environment variable IBNETSIM_DATA_DIR" or "next to the executable /x/bin/ibnetsim".
std::string describe(const DataDirLocation& location);

/// The data directory, checked: DataDirectoryError unless it exists and holds topologies/hardware.
std::string data_directory();
/// data_directory() when it is usable, else nullopt: for listings in messages that must not fail themselves.
std::optional<std::string> find_data_directory();

/// A data directory that cannot be used. Bad input (an InputError, exit 2) whose message says which directory,
/// where that came from, and how to set another.
class DataDirectoryError : public InputError {
public:
  DataDirectoryError(const DataDirLocation& location, std::string problem);
  const char* what() const noexcept override { return message_.c_str(); }

private:
  std::string message_;
};

} // namespace sim
