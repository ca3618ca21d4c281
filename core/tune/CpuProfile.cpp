// Thread-CPU accounting by phase (CpuProfile.h).
#include "core/tune/CpuProfile.h"

#include <atomic>
#include <ctime>

namespace loom::tune::cpu {

namespace {
/// Nanoseconds per phase; atomics, since the search's threads and the trainer count at once.
std::array<std::atomic<int64_t>, size_t(Phase::Count)> g_ns{};
thread_local Scope* t_current = nullptr;

void add(Phase p, double seconds) {
  if (seconds > 0) g_ns[size_t(p)].fetch_add(int64_t(seconds * 1e9), std::memory_order_relaxed);
}
} // namespace

const char* name(Phase p) {
  switch (p) {
  case Phase::Search: return "search";
  case Phase::Points: return "points";
  case Phase::Lowering: return "lowering";
  case Phase::Scoring: return "scoring";
  case Phase::Training: return "training";
  case Phase::Results: return "results";
  case Phase::Dispatch: return "dispatch";
  case Phase::Count: break;
  }
  return "?";
}

double threadSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

Scope::Scope(Phase phase) : m_phase(phase), m_start(threadSeconds()), m_parent(t_current) {
  if (m_parent) { // the parent pauses while this scope runs
    add(m_parent->m_phase, m_start - m_parent->m_start);
  }
  t_current = this;
}

Scope::~Scope() {
  double now = threadSeconds();
  add(m_phase, now - m_start);
  t_current = m_parent;
  if (m_parent) m_parent->m_start = now; // and resumes
}

std::array<double, size_t(Phase::Count)> totals() {
  std::array<double, size_t(Phase::Count)> out{};
  for (size_t i = 0; i < out.size(); ++i) out[i] = double(g_ns[i].load(std::memory_order_relaxed)) * 1e-9;
  return out;
}

void reset() {
  for (auto& n : g_ns) n.store(0, std::memory_order_relaxed);
}

} // namespace loom::tune::cpu
