// TraceLog: see TraceLog.h.
#include "core/tune/mpi/TraceLog.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <mutex>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace loom::tune::mpi::trace {

namespace {
struct Event {
  int64_t t, cpu, runq;
  int tid;
  const char* what;
  int64_t a, b;
};
bool g_on = false;
int g_rank = 0;
std::string g_dir;
std::mutex g_mutex;
std::vector<Event> g_events;

int64_t nowNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/// The calling thread's run-queue wait (ns), from its schedstat ("run_ns wait_ns slices").
int64_t runQueueNs() {
  thread_local int fd = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[128];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return -1;
  buf[n] = 0;
  unsigned long long run = 0, wait = 0;
  if (std::sscanf(buf, "%llu %llu", &run, &wait) != 2) return -1;
  return int64_t(wait);
}
} // namespace

void open(int rank) {
  const char* dir = std::getenv("LOOM_TUNE_MPI_TRACE");
  if (!dir || !*dir) return;
  g_dir = dir;
  g_rank = rank;
  g_events.reserve(1 << 20);
  g_on = true;
}

bool on() { return g_on; }

void event(const char* what, int64_t a, int64_t b) {
  if (!g_on) return;
  Event e{nowNs(CLOCK_MONOTONIC), nowNs(CLOCK_THREAD_CPUTIME_ID), runQueueNs(), int(syscall(SYS_gettid)), what, a, b};
  std::lock_guard lk(g_mutex);
  g_events.push_back(e);
}

void flush() {
  if (!g_on) return;
  std::lock_guard lk(g_mutex);
  std::string path = g_dir + "/rank-" + std::to_string(g_rank) + ".log";
  if (FILE* f = std::fopen(path.c_str(), "w")) {
    for (const Event& e : g_events)
      std::fprintf(f, "%lld %d %lld %lld %s %lld %lld\n", (long long)e.t, e.tid, (long long)e.cpu, (long long)e.runq, e.what,
                   (long long)e.a, (long long)e.b);
    std::fclose(f);
  }
  g_events.clear();
}

} // namespace loom::tune::mpi::trace
