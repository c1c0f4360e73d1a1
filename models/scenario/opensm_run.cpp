// The run follows tools/opensm/run_opensm.sh (see tools/opensm/README.md for why each setting is there), in C++ so
// that an installed ibnetsim needs no script beside it: ibsim and OpenSM are spawned with posix_spawn in a private
// temporary directory, with a unique ibsim socket name, and stopped (TERM, then KILL) on every exit path.
#include "models/scenario/opensm_run.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <signal.h>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "models/topology/ibnetdiscover.h"

extern char** environ;

namespace ib::scenario {

namespace fs = std::filesystem;

std::span<const std::string_view> opensm_engines() {
  static constexpr std::string_view names[] = {"minhop", "updn",       "dnup", "ftree",  "lash",
                                               "dor",    "torus-2QoS", "nue",  "dfsssp", "sssp"};
  return names;
}

namespace {

constexpr const char* install_hint = "apt-get install opensm ibsim-utils";

/// `name` on PATH, or in /usr/sbin and /sbin (OpenSM lives there and PATH often lacks them); "" when absent.
std::string find_program(const std::string& name) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream list(path);
    for (std::string dir; std::getline(list, dir, ':');)
      if (!dir.empty())
        dirs.push_back(dir);
  }
  dirs.insert(dirs.end(), {"/usr/sbin", "/sbin", "/usr/local/sbin"});
  for (const std::string& dir : dirs) {
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return "";
}

/// ibsim's client library, which OpenSM loads with LD_PRELOAD to talk to ibsim instead of a kernel's umad devices;
/// $UMAD2SIM overrides the search.
std::string find_umad2sim() {
  if (const char* given = std::getenv("UMAD2SIM"); given != nullptr && *given != '\0')
    return fs::exists(given) ? given : "";
  std::vector<fs::path> candidates;
  std::error_code ec;
  for (const char* lib : {"/usr/lib", "/usr/lib64", "/usr/local/lib"}) {
    candidates.push_back(fs::path(lib) / "umad2sim/libumad2sim.so");
    for (const fs::directory_entry& multiarch : fs::directory_iterator(lib, ec)) // /usr/lib/x86_64-linux-gnu, ...
      candidates.push_back(multiarch.path() / "umad2sim/libumad2sim.so");
  }
  for (const fs::path& c : candidates)
    if (fs::exists(c, ec))
      return c.string();
  return "";
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string last_lines(const fs::path& path, std::size_t count) {
  std::vector<std::string> lines;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  std::string out;
  for (std::size_t i = lines.size() > count ? lines.size() - count : 0; i < lines.size(); ++i)
    out += (out.empty() ? "" : " | ") + lines[i];
  return out;
}

/// A child process that is stopped (TERM, then KILL after a grace period) when this goes out of scope.
class Child {
public:
  Child() = default;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() { stop(); }

  void spawn(const std::vector<std::string>& args, const std::vector<std::string>& env, const fs::path& cwd,
             const fs::path& log) {
    std::vector<char*> argv;
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (const std::string& e : env)
      envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    // umad2sim writes its fake sysfs tree into the current directory: keep it in ours.
    posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
    const int error = posix_spawn(&pid_, args[0].c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) {
      pid_ = -1;
      throw OpenSmError("cannot start " + args[0] + ": " + std::strerror(error));
    }
  }

  /// False once the process has exited (it is then reaped).
  bool running() {
    if (pid_ <= 0)
      return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }

  void stop() {
    if (!running())
      return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 100 && running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }

private:
  pid_t pid_ = -1;
};

/// Polls `ready` every 50 ms until it holds, `child` exits or `timeout_s` pass; true when it held.
template <typename Ready>
bool wait_for(Child& child, double timeout_s, Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready())
      return true;
    if (!child.running())
      return ready();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return ready();
}

/// The environment of both children: ours with a private ibsim socket name and OpenSM cache, over the local
/// (abstract UNIX socket) transport, never a remote ibsim.
std::vector<std::string> child_environment(const std::string& socket_name, const fs::path& dir,
                                           const std::string& sim_host) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    if (name == "IBSIM_SOCKNAME" || name == "IBSIM_SERVER_NAME" || name == "IBSIM_SERVER_PORT" ||
        name == "SIM_SET_ISSM" || name == "SIM_HOST" || name == "OSM_CACHE_DIR" || name == "OSM_TMP_DIR" ||
        name == "LD_PRELOAD")
      continue;
    env.push_back(entry);
  }
  env.push_back("IBSIM_SOCKNAME=" + socket_name);
  env.push_back("OSM_CACHE_DIR=" + (dir / "cache").string());
  env.push_back("OSM_TMP_DIR=" + dir.string());
  if (!sim_host.empty())
    env.push_back("SIM_HOST=" + sim_host);
  return env;
}

/// OpenSM's options: only these keys (with -F, /etc/opensm/opensm.conf is not read and the rest keep OpenSM's
/// built-in defaults). One sweep, fresh LIDs, dumps into `dir` (the ROUTING log bit 0x40 makes OpenSM write
/// opensm-lfts.dump), QoS on for the engines whose SLs need it, every optional policy file absent.
std::string opensm_config(const OpenSmRequest& request, const fs::path& dir) {
  const bool qos = request.engine == "lash" || request.engine == "dfsssp" || request.engine == "sssp" ||
                   request.engine == "nue" || request.engine == "torus-2QoS";
  std::ostringstream conf;
  conf << "routing_engine " << request.engine << "\n"
       << "lmc " << request.lmc << "\n"
       << "log_file " << (dir / "opensm.log").string() << "\n"
       << "log_flags 0x43\n"
       << "force_log_flush TRUE\n"
       << "accum_log_file FALSE\n"
       << "dump_files_dir " << dir.string() << "\n"
       << "sweep_interval 0\n"
       << "reassign_lids FALSE\n"
       << "honor_guid2lid_file FALSE\n"
       << "qos " << (qos ? "TRUE" : "FALSE") << "\n"
       << "qos_policy_file (null)\n"
       << "partition_config_file " << (dir / "partitions.conf").string() << "\n"
       << "prefix_routes_file " << (dir / "prefix-routes.conf").string() << "\n"
       << "per_module_logging_file " << (dir / "per-module-logging.conf").string() << "\n"
       << "torus_config " << (dir / "torus-2QoS.conf").string() << "\n"
       << "daemon FALSE\n"
       << "console off\n";
  return conf.str();
}

std::string hex_guid(std::uint64_t guid) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(guid));
  return text;
}

} // namespace

OpenSmRun::OpenSmRun(OpenSmRun&& other) noexcept
    : directory(std::move(other.directory)), lft_file(std::move(other.lft_file)),
      guid2lid_file(std::move(other.guid2lid_file)), engine_used(std::move(other.engine_used)) {
  other.directory.clear();
}

OpenSmRun& OpenSmRun::operator=(OpenSmRun&& other) noexcept {
  if (this != &other) {
    std::error_code ec;
    if (!directory.empty())
      fs::remove_all(directory, ec);
    directory = std::move(other.directory);
    lft_file = std::move(other.lft_file);
    guid2lid_file = std::move(other.guid2lid_file);
    engine_used = std::move(other.engine_used);
    other.directory.clear();
  }
  return *this;
}

OpenSmRun::~OpenSmRun() {
  if (!directory.empty()) {
    std::error_code ec;
    fs::remove_all(directory, ec);
    directory.clear();
  }
}

OpenSmRun run_opensm(const topo::Topology& topology, const OpenSmRequest& request) {
  const std::string ibsim = find_program("ibsim");
  const std::string opensm = find_program("opensm");
  const std::string umad2sim = find_umad2sim();
  if (opensm.empty())
    throw OpenSmError("'opensm' not found (Debian package opensm)", install_hint);
  if (ibsim.empty())
    throw OpenSmError("'ibsim' not found (Debian package ibsim-utils)", install_hint);
  if (umad2sim.empty())
    throw OpenSmError("libumad2sim.so not found (Debian package ibsim-utils)", install_hint);

  // OpenSM sees the GUIDs ibsim derives (switch port 0 = node GUID, HCA port p = node GUID + p); other port GUIDs
  // would not match its guid2lid.
  for (const topo::Node& node : topology.nodes())
    if (node.port_guids != topo::default_port_guids(node.kind, node.node_guid, node.port_count))
      throw OpenSmError(node.name + " has port GUIDs ibsim cannot reproduce (HCA port p must be node GUID + p)");

  OpenSmRun run;
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/ibnetsim-opensm.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    throw OpenSmError("cannot create a temporary directory from " + pattern + ": " + std::strerror(errno));
  run.directory = pattern;
  const fs::path dir = run.directory;
  fs::create_directory(dir / "cache");

  std::size_t switches = 0, ports = 0;
  for (const topo::Node& node : topology.nodes()) {
    switches += node.kind == topo::NodeKind::switch_node;
    ports += node.port_count + 1u;
  }
  {
    std::ofstream net(dir / "fabric.net");
    net << topo::export_ibsim_net(topology);
    std::ofstream conf(dir / "opensm.conf");
    conf << opensm_config(request, dir);
    if (!net || !conf)
      throw OpenSmError("cannot write into " + dir.string());
  }

  // A socket name no other run uses: ibsim and its clients meet in the abstract UNIX namespace under it.
  std::random_device entropy;
  const std::string socket_name =
      "ibnetsim-" + std::to_string(::getpid()) + "-" + std::to_string(entropy() % 1'000'000'000u);
  std::string sim_host;
  std::vector<std::string> opensm_args{opensm, "-F", (dir / "opensm.conf").string()};
  if (request.sm_port.node != topo::no_node) {
    const topo::Node& node = topology.node(request.sm_port.node);
    sim_host = node.name;
    const std::uint64_t guid =
        node.kind == topo::NodeKind::switch_node ? node.node_guid : node.port_guids.at(request.sm_port.port - 1u);
    opensm_args.insert(opensm_args.end(), {"-g", hex_guid(guid)});
  }
  const std::vector<std::string> env = child_environment(socket_name, dir, sim_host);

  Child sim;
  // ibsim's default limits (2048 nodes, 256 switches, 13312 ports) raised to the fabric's size.
  sim.spawn({ibsim, "-s", "-n", "-N", std::to_string(topology.node_count() + 1), "-S", std::to_string(switches + 1),
             "-P", std::to_string(ports + 1), (dir / "fabric.net").string()},
            env, dir, dir / "ibsim.log");
  const std::string control = "@" + socket_name + ":ctl";
  const bool sim_ready = wait_for(sim, 30, [&] {
    std::istringstream sockets(read_file("/proc/net/unix"));
    for (std::string line; std::getline(sockets, line);)
      if (line.size() >= control.size() && line.compare(line.size() - control.size(), control.size(), control) == 0)
        return true;
    return read_file(dir / "ibsim.log").find("Network simulator ready") != std::string::npos;
  });
  if (!sim_ready)
    throw OpenSmError("ibsim did not start on the fabric: " + last_lines(dir / "ibsim.log", 3));

  std::vector<std::string> osm_env = env;
  osm_env.push_back("LD_PRELOAD=" + umad2sim);
  Child sm;
  sm.spawn(opensm_args, osm_env, dir, dir / "opensm.stdout");
  const fs::path log = dir / "opensm.log";
  const bool up =
      wait_for(sm, request.timeout_s, [&] { return read_file(log).find("SUBNET UP") != std::string::npos; });
  sm.stop();
  sim.stop();
  if (!up)
    throw OpenSmError("OpenSM (engine " + request.engine + ") did not bring the subnet up within " +
                      std::to_string(static_cast<int>(request.timeout_s)) +
                      " s: " + last_lines(dir / "opensm.stdout", 2) + " | " + last_lines(log, 3));

  run.lft_file = (dir / "opensm-lfts.dump").string();
  run.guid2lid_file = (dir / "cache" / "guid2lid").string();
  for (const std::string& file : {run.lft_file, run.guid2lid_file})
    if (!fs::exists(file))
      throw OpenSmError("OpenSM did not write " + file);
  // "<engine> tables configured on all switches": the engine that routed (OpenSM falls back to minhop when the
  // one asked for refuses the fabric).
  const std::string text = read_file(log);
  const std::size_t at = text.find(" tables configured on all switches");
  if (at != std::string::npos) {
    const std::size_t start = text.find_last_of(" \t\n]", at - 1);
    run.engine_used = text.substr(start + 1, at - start - 1);
  }
  return run;
}

} // namespace ib::scenario
