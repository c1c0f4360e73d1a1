#include "tools/ibnetsim/experiment.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "sim/errors.h"
#include "sim/program_engine.h"
#include "tools/ibnetsim/commands.h"
#include "tools/ibnetsim/options.h"

namespace cli {

namespace {

/// The first line of the file at `path` that says what went wrong ("ibnetsim: error: ..."), else its first line.
std::string first_error_line(const std::string& path) {
  std::ifstream file(path);
  std::string line, first;
  while (std::getline(file, line)) {
    if (first.empty() && !line.empty())
      first = line;
    if (line.starts_with("ibnetsim"))
      return line;
  }
  return first;
}

/// Opens `path` as file descriptor `fd` (in a child, before it runs); false if it cannot be.
bool open_as(int fd, const char* path, int flags) {
  const int opened = ::open(path, flags, 0644);
  if (opened < 0)
    return false;
  if (opened != fd) {
    if (::dup2(opened, fd) < 0)
      return false;
    ::close(opened);
  }
  return true;
}

/// Starts `ibnetsim run scenario --set ... --quiet --out report.partial` as a child process: a fork of this one,
/// which runs the command line as a new process would, then exits with its status. Forked rather than executed, a
/// point starts with what this process has loaded: SimGrid and the ns-3 libraries it pulls in, whose loading and
/// initialisers (about 100 M instructions, half of a short run's) it would otherwise pay on its own.
pid_t fork_run(const std::string& exe, const std::string& scenario, std::optional<std::uint64_t> seed,
               const PointJob& job) {
  std::vector<std::string> args = {exe, "run", scenario};
  for (const std::string& o : job.overrides) {
    args.push_back("--set");
    args.push_back(o);
  }
  if (seed) {
    args.push_back("--seed");
    args.push_back(std::to_string(*seed));
  }
  // The limit the sweep checked every point against, rather than what memory is free when each run starts (less,
  // with the other points running).
  args.insert(args.end(), {"--max-memory", std::to_string(memory_limit().bytes)});
  args.insert(args.end(), {"--quiet", "--out", job.report_path + ".partial"});
  std::vector<const char*> argv;
  for (const std::string& a : args)
    argv.push_back(a.c_str());
  argv.push_back(nullptr);

  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr); // nothing buffered here is written twice
  // SIGINT and SIGTERM stay blocked across the fork: one that reaches the child before it has the default
  // dispositions back waits, and then ends it, instead of running the sweep's handler there.
  sigset_t stop_signals, previous;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &stop_signals, &previous);
  const pid_t pid = ::fork();
  if (pid != 0) {
    const int fork_error = errno;
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    if (pid < 0)
      throw sim::InputError(exe, "", "a child process for the point", std::strerror(fork_error));
    return pid;
  }
  // The child: the signal dispositions and standard streams a new process would have.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  if (!open_as(STDIN_FILENO, "/dev/null", O_RDONLY) || !open_as(STDOUT_FILENO, "/dev/null", O_WRONLY) ||
      !open_as(STDERR_FILENO, job.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC))
    ::_exit(2);
  // Nothing else of the sweep's: its lock on the output directory, for one, stays the sweep's alone.
  ::close_range(3, ~0u, 0);
  int status = 70; // EX_SOFTWARE: run_command_line reports every error itself
  try {
    status = run_command_line(static_cast<int>(args.size()), argv.data(), std::cout, std::cerr);
  } catch (...) {
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::_exit(status); // not exit(): this process's static objects and atexit handlers are the parent's
}

/// The signal (SIGINT or SIGTERM) that asked a running sweep to stop; 0 while none has.
volatile std::sig_atomic_t stop_signal = 0;

extern "C" void on_stop_signal(int signal) {
  stop_signal = signal;
}

/// While points run, SIGINT and SIGTERM only set stop_signal (interrupting waitpid), so the sweep can stop its
/// children before it goes; the previous handlers come back afterwards.
class StopSignals {
public:
  StopSignals() {
    stop_signal = 0;
    struct sigaction action {};
    action.sa_handler = &on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0; // no SA_RESTART: waitpid returns EINTR
    sigaction(SIGINT, &action, &previous_int_);
    sigaction(SIGTERM, &action, &previous_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &previous_int_, nullptr);
    sigaction(SIGTERM, &previous_term_, nullptr);
  }

private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

/// Whether the report at `path` is a whole run's: it parses and is not marked "partial" (an interrupted run's).
bool complete_report(const std::string& path) {
  std::ifstream file(path);
  try {
    const nlohmann::json report = nlohmann::json::parse(file);
    return report.is_object() && report.contains("results") && !report.contains("partial");
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

/// Stops every running child with SIGTERM, waits for them, removes their partial reports (keeping the report of a
/// run that had finished before the signal came), then ends this process by the same signal it received (exit
/// status 128 + signal, as shells report it).
[[noreturn]] void stop_children(const std::map<pid_t, PointJob*>& running, int signal) {
  for (const auto& [pid, job] : running)
    ::kill(pid, SIGTERM);
  for (const auto& [pid, job] : running) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::error_code ignored;
    const std::string written = job->report_path + ".partial"; // the child's --out
    if (complete_report(written))
      std::filesystem::rename(written, job->report_path, ignored);
    std::filesystem::remove(written, ignored);
    std::filesystem::remove(written + ".partial", ignored); // the child's own temporary, if it died writing
  }
  std::signal(signal, SIG_DFL);
  std::raise(signal);
  std::_Exit(128 + signal); // if the signal is blocked
}

} // namespace

void blame_override(const sim::InputError& error, const std::string& scenario_file,
                    const std::vector<std::string>& overrides, const std::vector<Origin>& origins,
                    const std::string& what) {
  // The error is about the scenario document (or the override's own path, "--set"); the last override whose pointer
  // is the error's, or lies above or below it, set what it is about.
  const std::string& at = error.json_pointer();
  if (error.file() == scenario_file || error.file() == "--set")
    for (std::size_t k = overrides.size(); k-- > 0 && k < origins.size();) {
      const std::string pointer = overrides[k].substr(0, overrides[k].find('='));
      const bool related =
          !at.empty() && (at == pointer || at.starts_with(pointer + "/") || pointer.starts_with(at + "/"));
      if (related)
        throw sim::InputError(origins[k].file, origins[k].pointer, error.expected(),
                              error.got() + " (" + what + ": " + scenario_file + ":" + (at.empty() ? "/" : at) + ")");
    }
  throw error;
}

std::string self_executable() {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error)
    throw sim::InputError("/proc/self/exe", "", "the path of the running ibnetsim", error.message());
  return exe.string();
}

unsigned default_parallelism() {
  return std::max(1u, std::thread::hardware_concurrency());
}

std::size_t run_points(const std::string& scenario, std::optional<std::uint64_t> seed, std::vector<PointJob*>& jobs,
                       unsigned parallel, const std::function<void(const PointJob&)>& done) {
  const std::string exe = self_executable();
  sim::preload_program_engine();
  std::map<pid_t, PointJob*> running;
  std::size_t next = 0, peak = 0;
  const StopSignals signals;
  while (next < jobs.size() || !running.empty()) {
    if (stop_signal != 0)
      stop_children(running, stop_signal);
    while (running.size() < std::max(parallel, 1u) && next < jobs.size()) {
      PointJob* job = jobs[next++];
      running[fork_run(exe, scenario, seed, *job)] = job;
    }
    peak = std::max(peak, running.size());
    if (running.empty())
      break;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR)
        continue; // a stop signal is handled at the top of the loop
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
    const auto found = running.find(pid);
    if (found == running.end())
      continue; // not one of ours
    PointJob& job = *found->second;
    running.erase(found);
    job.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::error_code ignored;
    if (job.exit_code == 0) {
      std::filesystem::rename(job.report_path + ".partial", job.report_path);
      std::filesystem::remove(job.log_path, ignored);
      job.error.clear();
    } else {
      std::filesystem::remove(job.report_path + ".partial", ignored);
      job.error = first_error_line(job.log_path);
      if (job.error.empty())
        job.error = WIFSIGNALED(status) ? std::string("killed by signal ") + strsignal(WTERMSIG(status))
                                        : "exit " + std::to_string(job.exit_code);
    }
    done(job);
  }
  return peak;
}

} // namespace cli
