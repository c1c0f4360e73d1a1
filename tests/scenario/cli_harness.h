// Runs the ibnetsim command line for scenario tests: in-process through cli::run_command_line, or as the real
// executable when the exit status of the process itself is under test.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "tools/ibnetsim/commands.h"

namespace testing {

struct CliResult {
  int exit_code;
  std::string out;
  std::string err;
};

inline CliResult run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "ibnetsim");
  std::vector<const char*> argv;
  for (const auto& arg : args)
    argv.push_back(arg.c_str());
  std::ostringstream out;
  std::ostringstream err;
  const int code = cli::run_command_line(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

/// Runs the real executable through the shell, with `environment` (NAME=VALUE ...) set; `args` and `environment`
/// must be shell-safe.
inline CliResult run_executable(const std::string& args, const std::string& scratch,
                                const std::string& environment = "") {
  const std::string out_path = scratch + ".out";
  const std::string err_path = scratch + ".err";
  const std::string command =
      environment + " " + std::string(IBNETSIM_EXECUTABLE) + " " + args + " >" + out_path + " 2>" + err_path;
  const int status = std::system(command.c_str());
  const auto slurp = [](const std::string& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  };
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out_path), slurp(err_path)};
}

inline std::string source_path(const std::string& relative) {
  return std::string(IBNETSIM_SOURCE_DIR) + "/" + relative;
}

/// This test process's scratch directory, under the system's temp directory (never the source tree or the
/// current directory): made on first use, removed with everything in it when the process exits.
inline const std::filesystem::path& scratch_dir() {
  struct Dir {
    std::filesystem::path path;
    Dir() : path(std::filesystem::temp_directory_path() / ("ibnetsim-test-" + std::to_string(::getpid()))) {
      std::filesystem::create_directories(path);
    }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Dir dir;
  return dir.path;
}

/// `name` inside scratch_dir().
inline std::string scratch_path(const std::string& name) {
  return (scratch_dir() / name).string();
}

/// Writes `text` to a fresh file in the scratch directory and returns its path.
inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = scratch_path(name);
  std::ofstream(path) << text;
  return path;
}

} // namespace testing
