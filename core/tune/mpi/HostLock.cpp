// HostLock: flock on two host-local files (the lock and its turnstile).
#include "core/tune/mpi/HostLock.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/file.h>
#include <unistd.h>

#include "core/support/Error.h"
#include "core/tune/mpi/TraceLog.h"

namespace loom::tune::mpi {

namespace {

std::string lockDir() {
  if (const char* d = std::getenv("LOOM_TUNE_LOCK_DIR"); d && *d) return d;
  if (std::filesystem::is_directory("/dev/shm")) return "/dev/shm";
  return std::filesystem::temp_directory_path().string();
}

int openLock(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) LOOM_THROW(RuntimeError) << "tune: cannot open the host lock " << path << ": " << std::strerror(errno);
  return fd;
}

void lockFd(int fd, int op, const std::string& path) {
  while (::flock(fd, op) != 0)
    if (errno != EINTR) LOOM_THROW(RuntimeError) << "tune: cannot lock " << path << ": " << std::strerror(errno);
}

} // namespace

HostLock::HostLock() {
  std::string dir = lockDir();
  m_path = dir + "/loom-tune-" + std::to_string(::getuid()) + ".lock";
  m_main = openLock(m_path);
  m_turnstile = openLock(m_path + ".turnstile");
}

HostLock::~HostLock() {
  unlock();
  if (m_main >= 0) ::close(m_main);
  if (m_turnstile >= 0) ::close(m_turnstile);
}

void HostLock::shared() {
  if (m_held == Held::Shared) return;
  unlock();
  lockFd(m_turnstile, LOCK_EX, m_path); // waits while a timer is queued
  lockFd(m_main, LOCK_SH, m_path);
  ::flock(m_turnstile, LOCK_UN);
  m_held = Held::Shared;
  trace::event("hostlock_shared"); // held from here (LOOM_TUNE_MPI_TRACE)
}

void HostLock::exclusive() {
  if (m_held == Held::Exclusive) return;
  unlock();
  lockFd(m_turnstile, LOCK_EX, m_path); // new builders wait from now on
  lockFd(m_main, LOCK_EX, m_path);      // until the running builds and timings end
  ::flock(m_turnstile, LOCK_UN);
  m_held = Held::Exclusive;
  trace::event("hostlock_exclusive");
}

void HostLock::unlock() {
  if (m_held == Held::None) return;
  trace::event("hostlock_release"); // held until here: a trace shows no timing beside another hold
  ::flock(m_main, LOCK_UN);
  m_held = Held::None;
}

} // namespace loom::tune::mpi
