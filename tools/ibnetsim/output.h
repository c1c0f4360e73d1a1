// Writing results so that none is lost or left half-written: destinations are checked before a run starts (a run
// must not end in "cannot write"), files are written whole or not at all (a temporary beside them, flushed, checked,
// then renamed), and a failed write is bad input (exit 2) naming the file and why.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

namespace cli {

/// Throws InputError (exit 2) unless a file can be created or replaced at `path`: its directory exists and is
/// writable, and `path` is not a directory. `what` names the option for the message ("--out").
void check_writable_file(const std::string& path, const std::string& what);

/// Creates directory `path` (and its parents) unless it exists; InputError naming `what` if it cannot be, or if
/// `path` is a file.
void make_output_directory(const std::string& path, const std::string& what);

/// Holds a lock on directory `dir` (its file ".lock") for its lifetime, so two processes do not write the same
/// results at once: exclusive, or shared among processes that each write only their own part (Slurm array tasks).
/// Taken without waiting: a directory locked otherwise is an InputError naming `what` holds it.
class DirectoryLock {
public:
  DirectoryLock(const std::string& dir, bool exclusive, const std::string& what);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

private:
  int fd_ = -1;
};

/// Writes `text` to `path` whole: into `path`.partial, flushed and closed, then renamed over `path`. A failed
/// write (a full disk, a missing directory) removes the partial file and is an InputError naming `path`. A
/// destination that exists and is not a regular file (/dev/stdout, a FIFO) is written in place.
void write_file_atomically(const std::string& path, const std::string& text);
/// The same, with what `write` puts into the stream: a report of a million flows is streamed, not first made into
/// a string of hundreds of MB.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

} // namespace cli
