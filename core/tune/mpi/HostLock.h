// The per-host build / timing lock of distributed tuning: builds share it, a timing holds it alone.
#pragma once
#include <string>

namespace loom::tune::mpi {

/// A reader/writer lock on host-local files (flock): ranks on one host build (shared) in parallel,
/// but a timing (exclusive) runs only while no other rank of the host builds or times. A waiting
/// timer holds a turnstile that keeps new builders out, so timings are not starved. The kernel
/// drops the locks of a process that dies. Directory: $LOOM_TUNE_LOCK_DIR, else /dev/shm, else /tmp.
class HostLock {
public:
  HostLock();
  ~HostLock();
  HostLock(const HostLock&) = delete;
  HostLock& operator=(const HostLock&) = delete;

  void shared();    ///< building (no-op when already held so)
  void exclusive(); ///< timing
  void unlock();
  const std::string& path() const { return m_path; }

private:
  enum class Held { None, Shared, Exclusive };
  int m_main = -1, m_turnstile = -1;
  Held m_held = Held::None;
  std::string m_path;
};

} // namespace loom::tune::mpi
