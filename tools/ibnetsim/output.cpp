#include "tools/ibnetsim/output.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <sys/file.h>
#include <system_error>
#include <unistd.h>

#include "sim/errors.h"

namespace cli {

namespace fs = std::filesystem;

void check_writable_file(const std::string& path, const std::string& what) {
  const std::string expected = "a file that can be written (" + what + ")";
  std::error_code error;
  if (fs::is_directory(path, error))
    throw sim::InputError(path, "", expected, "a directory");
  const fs::path parent = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  if (!fs::is_directory(parent, error))
    throw sim::InputError(path, "", expected, "no directory " + parent.string());
  if (::access(parent.c_str(), W_OK) != 0)
    throw sim::InputError(path, "", expected, "directory " + parent.string() + ": " + std::strerror(errno));
  if (fs::exists(path, error) && ::access(path.c_str(), W_OK) != 0)
    throw sim::InputError(path, "", expected, std::strerror(errno));
}

void make_output_directory(const std::string& path, const std::string& what) {
  const std::string expected = "a directory that can be created or written (" + what + ")";
  std::error_code error;
  if (fs::exists(path, error) && !fs::is_directory(path, error))
    throw sim::InputError(path, "", expected, "a file");
  fs::create_directories(path, error);
  if (error)
    throw sim::InputError(path, "", expected, error.message());
  if (::access(path.c_str(), W_OK) != 0)
    throw sim::InputError(path, "", expected, std::strerror(errno));
}

namespace {

/// Writes into `path` as it is: for destinations that are not regular files (a device such as /dev/stdout, a FIFO),
/// which a rename would replace instead of writing to.
void write_in_place(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::ofstream file(path, std::ios::binary);
  if (file)
    write(file);
  file.close();
  if (!file)
    throw sim::InputError(path, "", "a file that can be written",
                          errno != 0 ? std::strerror(errno) : "the write failed");
}

} // namespace

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::error_code status_error;
  const fs::file_status status = fs::status(path, status_error);
  if (fs::exists(status) && !fs::is_regular_file(status))
    return write_in_place(path, write);
  const std::string partial = path + ".partial";
  const auto fail = [&](const std::string& why) {
    std::error_code ignored;
    fs::remove(partial, ignored);
    throw sim::InputError(path, "", "a file that can be written", why);
  };
  {
    std::ofstream file(partial, std::ios::binary | std::ios::trunc);
    if (!file)
      fail(std::strerror(errno));
    write(file);
    file.close(); // the last buffer is written here: a full disk shows now, not in a destructor
    if (!file)
      fail(errno != 0 ? std::strerror(errno) : "the write failed");
  }
  std::error_code error;
  fs::rename(partial, path, error);
  if (error)
    fail(error.message());
}

void write_file_atomically(const std::string& path, const std::string& text) {
  write_file_atomically(path, [&text](std::ostream& out) { out << text; });
}

DirectoryLock::DirectoryLock(const std::string& dir, bool exclusive, const std::string& what) {
  const std::string path = dir + "/.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw sim::InputError(dir, "", "a directory that can be locked (" + what + ")", std::strerror(errno));
  if (::flock(fd_, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    throw sim::InputError(dir, "", "a directory no other " + what + " is using",
                          error == EWOULDBLOCK ? "one in use by another running " + what : std::strerror(error));
  }
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0)
    ::close(fd_); // releases the lock
}

} // namespace cli
