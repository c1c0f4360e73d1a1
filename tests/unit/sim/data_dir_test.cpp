#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "sim/data_dir.h"
#include "sim/profile.h"

namespace {

namespace fs = std::filesystem;

/// Sets the data directory option and IBNETSIM_DATA_DIR for one test, restoring both after it.
struct DataDirState {
  std::optional<std::string> option = sim::data_directory_option();
  std::optional<std::string> environment;
  DataDirState() {
    if (const char* e = std::getenv(sim::data_dir_environment))
      environment = e;
  }
  ~DataDirState() {
    sim::set_data_directory(option);
    if (environment)
      ::setenv(sim::data_dir_environment, environment->c_str(), 1);
    else
      ::unsetenv(sim::data_dir_environment);
  }
};

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("ibnetsim-data-dir-test-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

} // namespace

TEST_CASE("sim::data_dir: --data-dir, then IBNETSIM_DATA_DIR, then <exe dir>/../share/ibnetsim", "[sim][quick]") {
  const DataDirState restore;
  sim::set_data_directory(std::nullopt);
  ::unsetenv(sim::data_dir_environment);
  const sim::DataDirLocation beside = sim::locate_data_directory();
  CHECK(beside.source == sim::DataDirSource::executable);
  const fs::path exe = fs::read_symlink("/proc/self/exe");
  CHECK(beside.executable == exe.string());
  CHECK(beside.path == (exe.parent_path().parent_path() / "share" / "ibnetsim").string());

  ::setenv(sim::data_dir_environment, "", 1); // empty counts as unset
  CHECK(sim::locate_data_directory().source == sim::DataDirSource::executable);
  ::setenv(sim::data_dir_environment, "/from/environment", 1);
  CHECK(sim::locate_data_directory().path == "/from/environment");
  CHECK(sim::locate_data_directory().source == sim::DataDirSource::environment);

  sim::set_data_directory("/from/option");
  CHECK(sim::locate_data_directory().path == "/from/option");
  CHECK(sim::locate_data_directory().source == sim::DataDirSource::option);
}

TEST_CASE("sim::data_dir: an unusable data directory is bad input naming it, its source and how to set one",
          "[sim][quick]") {
  const DataDirState restore;
  const fs::path empty = fresh_dir("empty");
  sim::set_data_directory(std::nullopt);
  ::setenv(sim::data_dir_environment, empty.c_str(), 1);
  CHECK_FALSE(sim::find_data_directory());
  CHECK_FALSE(sim::find_profile_directory());
  try {
    (void)sim::profile_path("quantum-hdr");
    FAIL("no error");
  } catch (const sim::InputError& e) {
    const std::string message = e.what();
    CHECK(message.find("'" + empty.string() + "'") != std::string::npos);
    CHECK(message.find("from the environment variable IBNETSIM_DATA_DIR") != std::string::npos);
    CHECK(message.find("has no topologies/hardware") != std::string::npos);
    CHECK(message.find("--data-dir DIR") != std::string::npos);
  }

  sim::set_data_directory((empty / "missing").string());
  try {
    (void)sim::data_directory();
    FAIL("no error");
  } catch (const sim::DataDirectoryError& e) {
    CHECK(std::string(e.what()).find("(from --data-dir) does not exist") != std::string::npos);
  }
  // Paths never need the data directory.
  CHECK(sim::profile_path("my/switch.json") == "my/switch.json");

  fs::create_directories(empty / "topologies" / "hardware");
  sim::set_data_directory(empty.string());
  CHECK(sim::data_directory() == empty.string());
  CHECK(sim::profile_path("quantum-hdr") == (empty / "topologies" / "hardware" / "quantum-hdr.json").string());
  fs::remove_all(empty.parent_path());
}
