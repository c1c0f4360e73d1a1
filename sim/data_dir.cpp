#include "sim/data_dir.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <utility>

namespace sim {

namespace {

std::optional<std::string>& option_slot() {
  static std::optional<std::string> path;
  return path;
}

/// "" when the directory at `location` is usable, else what is wrong with it.
std::string problem_with(const DataDirLocation& location) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (location.path.empty())
    return "cannot be found: the running executable's path is unknown";
  if (!fs::exists(location.path, error))
    return "does not exist";
  if (!fs::is_directory(location.path, error))
    return "is not a directory";
  if (!fs::is_directory(fs::path(location.path) / "topologies" / "hardware", error))
    return "has no topologies/hardware (the hardware profiles)";
  return "";
}

} // namespace

void set_data_directory(std::optional<std::string> path) {
  option_slot() = std::move(path);
}

const std::optional<std::string>& data_directory_option() {
  return option_slot();
}

DataDirLocation locate_data_directory() {
  if (option_slot())
    return {*option_slot(), DataDirSource::option, ""};
  if (const char* environment = std::getenv(data_dir_environment); environment != nullptr && *environment != '\0')
    return {environment, DataDirSource::environment, ""};
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error)
    return {"", DataDirSource::executable, "/proc/self/exe"};
  // /proc/self/exe has its symbolic links resolved, so <dir>/.. is the directory's parent.
  return {(exe.parent_path().parent_path() / "share" / "ibnetsim").lexically_normal().string(),
          DataDirSource::executable, exe.string()};
}

std::string describe(const DataDirLocation& location) {
  switch (location.source) {
  case DataDirSource::option:
    return "--data-dir";
  case DataDirSource::environment:
    return std::string("the environment variable ") + data_dir_environment;
  case DataDirSource::executable:
    break;
  }
  return "next to the executable " + location.executable + ", as <its directory>/../share/ibnetsim";
}

std::string data_directory() {
  const DataDirLocation location = locate_data_directory();
  if (std::string problem = problem_with(location); !problem.empty())
    throw DataDirectoryError(location, std::move(problem));
  return location.path;
}

std::optional<std::string> find_data_directory() {
  const DataDirLocation location = locate_data_directory();
  if (!problem_with(location).empty())
    return std::nullopt;
  return location.path;
}

DataDirectoryError::DataDirectoryError(const DataDirLocation& location, std::string problem)
    : InputError(location.path, "", "a data directory holding topologies/hardware", problem),
      message_("data directory '" + location.path + "' (from " + describe(location) + ") " + problem +
               "; it must hold the installed share/ibnetsim tree (topologies/hardware, topologies/schema, "
               "scenarios). Name one with --data-dir DIR or the environment variable " +
               data_dir_environment +
               "; without either, ibnetsim looks in <directory of its executable>/../share/ibnetsim") {}

} // namespace sim
