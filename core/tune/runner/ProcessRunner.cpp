// ProcessRunner: spawn, hand-shake ("ready" / go), timeouts, and mapping exits to error kinds.
#include "core/tune/runner/ProcessRunner.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "core/support/Error.h"
#include "core/tune/Record.h"

namespace loom::tune {

namespace {

using Clock = std::chrono::steady_clock;

/// One running worker.
struct Child {
  pid_t pid = -1;
  int toChild = -1;   ///< its stdin (the go-ahead)
  int fromChild = -1; ///< its stdout ("ready")
  std::string inPath, outPath, errPath;
  Clock::time_point started;
  Clock::time_point readyBy; ///< deadline of the build+check phase
  bool exited = false;
  int status = 0;
  std::string outText;
};

void closeFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

Child spawn(const std::vector<std::string>& command, const std::string& inPath,
            const std::string& outPath, const std::string& errPath) {
  Child c;
  c.inPath = inPath;
  c.outPath = outPath;
  c.errPath = errPath;
  int in[2], out[2];
  if (::pipe(in) != 0 || ::pipe(out) != 0)
    LOOM_THROW(RuntimeError) << "tune: cannot create pipes for a worker: " << std::strerror(errno);
  std::vector<std::string> args = command;
  args.push_back(inPath);
  args.push_back(outPath);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int errFd = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  pid_t pid = ::fork();
  if (pid < 0) LOOM_THROW(RuntimeError) << "tune: cannot fork a worker: " << std::strerror(errno);
  if (pid == 0) {
    // Its own process group: a Ctrl-C at the terminal goes to `loom tune` (which stops after the
    // batch), not to the worker being measured.
    ::setpgid(0, 0);
    // And it dies with the runner: a worker must not outlive a killed `loom tune` (or MPI rank).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    if (errFd >= 0) ::dup2(errFd, 2);
    ::close(in[0]);
    ::close(in[1]);
    ::close(out[0]);
    ::close(out[1]);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  if (errFd >= 0) ::close(errFd);
  ::close(in[0]);
  ::close(out[1]);
  ::fcntl(in[1], F_SETFD, FD_CLOEXEC);
  ::fcntl(out[0], F_SETFD, FD_CLOEXEC);
  c.pid = pid;
  c.toChild = in[1];
  c.fromChild = out[0];
  c.started = Clock::now();
  return c;
}

bool aborted(const std::atomic<bool>* abort) { return abort && abort->load(); }

/// Waits until the child prints "ready" (true) or closes its stdout / the deadline passes / the
/// run is aborted (false).
bool waitReady(Child& c, Clock::time_point deadline, const std::atomic<bool>* abort) {
  for (;;) {
    auto pos = c.outText.find("ready\n");
    if (pos != std::string::npos) return true;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 || aborted(abort)) return false;
    pollfd p{c.fromChild, POLLIN, 0};
    int n = ::poll(&p, 1, int(std::min<long long>(left, abort ? 5 : 200)));
    if (n < 0 && errno != EINTR) return false;
    if (n > 0) {
      char buf[512];
      ssize_t k = ::read(c.fromChild, buf, sizeof buf);
      if (k <= 0) return false; // closed: the worker finished (failed) or died
      c.outText.append(buf, size_t(k));
    }
  }
}

/// Waits for the child to exit; kills it at the deadline or when the run is aborted. True when it
/// exited by itself.
bool waitExit(Child& c, Clock::time_point deadline, const std::atomic<bool>* abort) {
  while (!c.exited) {
    pid_t r = ::waitpid(c.pid, &c.status, WNOHANG);
    if (r == c.pid) {
      c.exited = true;
      break;
    }
    if (Clock::now() >= deadline || aborted(abort)) {
      ::kill(c.pid, SIGKILL);
      ::waitpid(c.pid, &c.status, 0);
      c.exited = true;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

std::string tailOf(const std::string& path, size_t n = 400) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (s.size() > n) s = "..." + s.substr(s.size() - n);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

MeasureResult finish(Child& c, bool exitedInTime, double timeoutS) {
  closeFd(c.toChild);
  closeFd(c.fromChild);
  MeasureResult r;
  if (!exitedInTime) {
    r.errorKind = error_kind::kTimeout;
    r.errorMessage = "worker killed after the " + std::to_string(timeoutS).substr(0, 5) + " s timeout";
  } else if (WIFSIGNALED(c.status)) {
    int sig = WTERMSIG(c.status);
    r.errorKind = error_kind::kCrash;
    r.errorMessage = std::string("worker died by signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")";
    std::string err = tailOf(c.errPath);
    if (!err.empty()) r.errorMessage += ": " + err;
  } else {
    std::ifstream in(c.outPath);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (!in || j.is_discarded()) {
      r.errorKind = error_kind::kRuntimeError;
      r.errorMessage = "worker exited with code " + std::to_string(WEXITSTATUS(c.status)) + " without a result";
      std::string err = tailOf(c.errPath);
      if (!err.empty()) r.errorMessage += ": " + err;
    } else {
      r = MeasureResult::fromJson(j);
    }
  }
  std::remove(c.inPath.c_str());
  std::remove(c.outPath.c_str());
  std::remove(c.errPath.c_str());
  return r;
}

} // namespace

ProcessRunner::ProcessRunner(std::vector<std::string> workerCommand, bool overlapBuilds)
    : m_command(std::move(workerCommand)), m_overlap(overlapBuilds) {
  LOOM_ICHECK(!m_command.empty()) << "ProcessRunner needs a worker command";
  std::string tmpl = (std::filesystem::temp_directory_path() / "loom-tune-XXXXXX").string();
  if (!::mkdtemp(tmpl.data()))
    LOOM_THROW(RuntimeError) << "tune: cannot create a temporary directory: " << std::strerror(errno);
  m_dir = tmpl;
  std::signal(SIGPIPE, SIG_IGN);
}

ProcessRunner::~ProcessRunner() {
  std::error_code ec;
  std::filesystem::remove_all(m_dir, ec);
}

std::vector<std::string> ProcessRunner::selfWorkerCommand() { return {"/proc/self/exe", "tune-worker"}; }

bool ProcessRunner::defaultOverlap() { return std::thread::hardware_concurrency() >= 4; }

void ProcessRunner::setPhaseHooks(PhaseHooks hooks) {
  m_hooks = std::move(hooks);
  m_overlap = false;
}

std::string ProcessRunner::hostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

std::vector<MeasureResult> ProcessRunner::run(const std::vector<MeasureCandidate>& candidates,
                                              const MeasureOptions& options,
                                              const std::function<void(size_t, const MeasureResult&)>& onResult) {
  std::vector<MeasureResult> results(candidates.size());
  auto timeout = std::chrono::milliseconds(int64_t(options.timeoutS * 1000));
  auto referenceTimeout = std::chrono::milliseconds(int64_t(std::max(0.0, options.referenceTimeoutS) * 1000));
  auto start = [&](size_t i) {
    int id = m_counter++;
    std::string base = m_dir + "/c" + std::to_string(id);
    nlohmann::json j;
    j["task"] = candidates[i].task.toJson();
    j["trace"] = candidates[i].trace;
    j["options"] = {{"repeat", options.repeat}, {"min_repeat_ms", options.minRepeatMs},
                    {"check", options.check}, {"seed", options.seed},
                    {"flush_cache", options.flushCache}};
    const std::string referenceCache = m_dir + "/ref-" + std::to_string(std::hash<std::string>()(candidates[i].task.key)) +
                                       "-" + std::to_string(options.seed) + ".bin";
    j["reference_cache"] = referenceCache;
    if (!candidates[i].testFault.empty()) j["test_fault"] = candidates[i].testFault;
    {
      std::ofstream out(base + ".in.json");
      out << j.dump();
      if (!out) LOOM_THROW(RuntimeError) << "tune: cannot write " << base << ".in.json";
    }
    Child c = spawn(m_command, base + ".in.json", base + ".out.json", base + ".err.txt");
    // Without a cached reference this worker computes it (unless checking is off) before "ready".
    bool computesReference = options.check && !std::filesystem::exists(referenceCache);
    c.readyBy = c.started + timeout + (computesReference ? referenceTimeout : Clock::duration::zero());
    return c;
  };
  std::optional<Child> next;
  const std::string host = hostName();
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (aborted(options.abort) && !next) {  // nothing more is started
      results[i].errorKind = "Cancelled";
      results[i].errorMessage = "the run was cancelled before this candidate";
      if (onResult) onResult(i, results[i]);
      continue;
    }
    if (!next && m_hooks.beforeBuild) m_hooks.beforeBuild();
    Child c = next ? std::move(*next) : start(i);
    next.reset();
    bool ready = waitReady(c, c.readyBy, options.abort);
    MeasureResult r;
    if (!ready) {
      // Failed while building / checking (a result file), died, hung, or the run was aborted.
      double allowedS = std::chrono::duration<double>(c.readyBy - c.started).count();
      r = finish(c, waitExit(c, c.readyBy, options.abort), allowedS);
    } else {
      if (m_overlap && i + 1 < candidates.size() && !aborted(options.abort)) next = start(i + 1);
      if (m_hooks.beforeTiming) m_hooks.beforeTiming();
      auto goAt = Clock::now();
      const char go[] = "go\n";
      if (::write(c.toChild, go, sizeof go - 1) < 0) { /* the worker died; waitExit tells how */ }
      r = finish(c, waitExit(c, goAt + timeout, options.abort), options.timeoutS);
    }
    if (aborted(options.abort)) {
      r = MeasureResult();
      r.errorKind = "Cancelled";
      r.errorMessage = "the run was cancelled while this candidate was being measured";
      if (next) {  // the overlapped worker of the next candidate goes too
        waitExit(*next, Clock::now(), options.abort);
        finish(*next, false, 0);
        next.reset();
      }
    }
    if (m_hooks.afterCandidate) m_hooks.afterCandidate();
    r.host = host;
    results[i] = r;
    if (onResult) onResult(i, r);
  }
  return results;
}

} // namespace loom::tune
