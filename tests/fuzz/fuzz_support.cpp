#include "tests/fuzz/fuzz_support.h"

#include <cstdio>
#include <cstdlib>
#include <cxxabi.h>
#include <memory>
#include <unistd.h>
#include <vector>

#include "sim/data_dir.h"

namespace fuzz {

void init() {
  sim::set_data_directory(data_dir());
  if (std::freopen("/dev/null", "r", stdin) == nullptr) {
    std::perror("fuzz: cannot point stdin at /dev/null");
    std::abort();
  }
}

const std::string& data_dir() {
  static const std::string dir = IBNETSIM_FUZZ_DATA_DIR;
  return dir;
}

const std::string& source_dir() {
  static const std::string dir = IBNETSIM_SOURCE_DIR;
  return dir;
}

namespace {
std::vector<std::string>& temp_files() {
  static std::vector<std::string> files;
  return files;
}
void remove_temp_files() {
  for (const std::string& path : temp_files())
    std::remove(path.c_str());
}
} // namespace

std::string temp_file(const std::string& suffix) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/ibnetsim-fuzz-XXXXXX" + suffix;
  const int fd = mkstemps(path.data(), static_cast<int>(suffix.size()));
  if (fd < 0) {
    std::perror("fuzz: cannot make a temporary file");
    std::abort();
  }
  close(fd);
  if (temp_files().empty())
    std::atexit(remove_temp_files);
  temp_files().push_back(path);
  return path;
}

void write_file(const std::string& path, std::string_view content) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr || std::fwrite(content.data(), 1, content.size(), file) != content.size() ||
      std::fclose(file) != 0) {
    std::perror(("fuzz: cannot write " + path).c_str());
    std::abort();
  }
}

void unexpected(const char* what, const char* type) {
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(type, nullptr, nullptr, &status), std::free);
  std::fprintf(stderr, "fuzz: FINDING: unexpected exception %s: %s\n", status == 0 ? name.get() : type, what);
  std::abort();
}

void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz: FINDING: %s\n", what.c_str());
  std::abort();
}

} // namespace fuzz
