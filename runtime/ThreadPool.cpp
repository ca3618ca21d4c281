// The thread pool: per-worker launch slots, spin-then-sleep waiting, task error capture, barriers.
#include "runtime/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <pthread.h>
#include <string>
#include <thread>
#include <vector>

#include "runtime/LastError.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace loom::runtime {
namespace {

constexpr int kSpinCount = 4096;  // pauses before a worker yields / a waiter yields

/// How long an idle worker keeps polling (pausing, then yielding the CPU) before it sleeps:
/// LOOM_THREAD_POOL_SPIN_US, default 2000 us. A model's kernels follow each other closely, and a
/// sleeping worker costs a futex wake-up (tens of microseconds, far more on a busy machine) at
/// the next parallel loop; yielding keeps the core available to other runnable threads.
std::chrono::microseconds idleSpinTime() {
  static const std::chrono::microseconds t = [] {
    if (const char* env = std::getenv("LOOM_THREAD_POOL_SPIN_US")) {
      char* end = nullptr;
      long us = std::strtol(env, &end, 10);
      if (end != env && *end == '\0' && us >= 0 && us <= 10'000'000) return std::chrono::microseconds(us);
    }
    return std::chrono::microseconds(2000);
  }();
  return t;
}

/// Whether the launching thread runs the shares of workers that have not started them once its
/// own share is done; LOOM_THREAD_POOL_NO_TAKEOVER=1 turns it off (for A/B measurements).
bool takeOverEnabled() {
  static const bool on = [] {
    const char* v = std::getenv("LOOM_THREAD_POOL_NO_TAKEOVER");
    return !(v && *v && std::string(v) != "0");
  }();
  return on;
}

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// One launch: the lambda, how its tasks are dealt out, and what went wrong.
struct Job {
  FLambda f = nullptr;
  void* cdata = nullptr;
  int numTask = 0;
  int participants = 1;     // threads taking part; task t runs on participant t % participants
  bool canBarrier = false;  // every task has its own thread
  std::atomic<int> pending{0};  // workers not yet done
  std::mutex errorMutex;
  int failedTask = -1;  // the lowest failed task id
  std::string error;
  std::atomic<int> barrierCount{0};
  std::atomic<int> barrierGeneration{0};
};

thread_local Job* t_job = nullptr;  // the launch whose task this thread is running

void runTask(Job& job, int task) {
  Job* outer = t_job;
  t_job = &job;
  clearLastError();
  std::string message;
  bool failed = false;
  try {
    int rc = job.f(task, job.numTask, job.cdata);
    if (rc != 0) {
      failed = true;
      message = lastError().empty() ? "returned " + std::to_string(rc) + " without a message"
                                    : lastError();
    }
  } catch (const std::exception& e) {
    failed = true;
    message = std::string("threw: ") + e.what();
  } catch (...) {
    failed = true;
    message = "threw an unknown exception";
  }
  t_job = outer;
  if (failed) {
    std::lock_guard lock(job.errorMutex);
    if (job.failedTask < 0 || task < job.failedTask) {
      job.failedTask = task;
      job.error = std::move(message);
    }
  }
}

void runParticipant(Job& job, int participant) {
  for (int t = participant; t < job.numTask; t += job.participants) runTask(job, t);
}

int finish(Job& job) {
  if (job.failedTask < 0) return 0;
  setLastError("parallel task " + std::to_string(job.failedTask) + " of " +
               std::to_string(job.numTask) + " failed: " + job.error);
  return -1;
}

}  // namespace

struct ThreadPool::Impl {
  struct Worker {
    std::thread thread;
    std::atomic<uint64_t> sequence{0};  // bumped once per launch handed to this worker
    /// The last launch whose share was claimed, by the worker or by the launching thread
    /// (which takes the share of a worker that has not started it once its own is done).
    std::atomic<uint64_t> claimed{0};
    Job* job = nullptr;                 // written before `sequence` is bumped
    std::atomic<bool> sleeping{false};
    std::mutex mutex;
    std::condition_variable wake;
  };

  int numThreads = 1;
  std::vector<std::unique_ptr<Worker>> workers;
  std::atomic<bool> stop{false};
  std::mutex launchMutex;  // one pooled launch at a time

  void workerLoop(Worker& me, int participant) {
    uint64_t seen = 0;
    for (;;) {
      uint64_t now;
      int spins = 0;
      std::chrono::steady_clock::time_point idleSince{};
      while ((now = me.sequence.load(std::memory_order_acquire)) == seen) {
        if (stop.load(std::memory_order_acquire)) return;
        if (++spins < kSpinCount) {
          cpuRelax();
          continue;
        }
        if (spins == kSpinCount) idleSince = std::chrono::steady_clock::now();
        if (std::chrono::steady_clock::now() - idleSince < idleSpinTime()) {
          std::this_thread::yield();
          continue;
        }
        std::unique_lock lock(me.mutex);
        me.sleeping.store(true);
        me.wake.wait(lock, [&] { return me.sequence.load() != seen || stop.load(); });
        me.sleeping.store(false);
        spins = 0;
      }
      seen = now;
      // The launching thread may have run this share already (this worker was descheduled or
      // asleep): then the job may be gone, and nothing of it is touched.
      uint64_t expected = now - 1;
      if (!me.claimed.compare_exchange_strong(expected, now, std::memory_order_acq_rel)) continue;
      Job* job = me.job;
      runParticipant(*job, participant);
      job->pending.fetch_sub(1, std::memory_order_acq_rel);  // `job` may be gone after this
    }
  }

  int runSerial(FLambda f, void* cdata, int numTask) {
    Job job;
    job.f = f;
    job.cdata = cdata;
    job.numTask = numTask;
    job.participants = 1;
    job.canBarrier = numTask == 1;
    runParticipant(job, 0);
    return finish(job);
  }
};

ThreadPool::ThreadPool(int numThreads) : m_impl(std::make_unique<Impl>()) {
  m_impl->numThreads = std::max(1, numThreads);
  for (int w = 0; w + 1 < m_impl->numThreads; ++w)
    m_impl->workers.push_back(std::make_unique<Impl::Worker>());
  for (int w = 0; w + 1 < m_impl->numThreads; ++w) {
    Impl::Worker* worker = m_impl->workers[w].get();
    worker->thread = std::thread([this, worker, w] { m_impl->workerLoop(*worker, w + 1); });
  }
}

ThreadPool::~ThreadPool() {
  m_impl->stop.store(true);
  for (auto& w : m_impl->workers) {
    {
      std::lock_guard lock(w->mutex);
    }
    w->wake.notify_one();
  }
  for (auto& w : m_impl->workers) w->thread.join();
}

int ThreadPool::numThreads() const { return m_impl->numThreads; }

int ThreadPool::launch(FLambda f, void* cdata, int numTask) {
  if (!f) {
    setLastError("loom_backend_parallel_launch: null task function");
    return -1;
  }
  Impl& impl = *m_impl;
  if (numTask <= 0) numTask = impl.numThreads;
  if (numTask == 1 || impl.numThreads == 1 || t_job != nullptr)
    return impl.runSerial(f, cdata, numTask);
  std::unique_lock launchLock(impl.launchMutex, std::try_to_lock);
  if (!launchLock.owns_lock()) return impl.runSerial(f, cdata, numTask);

  Job job;
  job.f = f;
  job.cdata = cdata;
  job.numTask = numTask;
  job.participants = std::min(numTask, impl.numThreads);
  job.canBarrier = numTask <= impl.numThreads;
  job.pending.store(job.participants - 1);
  std::vector<uint64_t> launched(size_t(job.participants), 0);
  for (int w = 0; w + 1 < job.participants; ++w) {
    Impl::Worker& worker = *impl.workers[w];
    worker.job = &job;
    launched[size_t(w)] = worker.sequence.fetch_add(1) + 1;
    if (worker.sleeping.load()) {
      { std::lock_guard lock(worker.mutex); }
      worker.wake.notify_one();
    }
  }
  runParticipant(job, 0);
  // The shares of workers that have not started yet (descheduled on a busy machine, or still
  // waking up) run here rather than being waited for. Not a launch with barriers: its tasks
  // need their own threads, and the caller only gets here once every task has reached its
  // barriers, so all were claimed by their workers.
  for (int w = 0; w + 1 < job.participants && takeOverEnabled(); ++w) {
    Impl::Worker& worker = *impl.workers[w];
    uint64_t expected = launched[size_t(w)] - 1;
    if (worker.claimed.compare_exchange_strong(expected, launched[size_t(w)], std::memory_order_acq_rel)) {
      runParticipant(job, w + 1);
      job.pending.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
  for (int spins = 0; job.pending.load(std::memory_order_acquire) != 0;) {
    if (++spins < kSpinCount) cpuRelax();
    else std::this_thread::yield();
  }
  return finish(job);
}

namespace {
std::atomic<ThreadPool*> g_pool{nullptr};
std::mutex g_poolMutex;
std::atomic<bool> g_forked{false};
void onForkChild() { g_forked.store(true); }
}  // namespace

ThreadPool& ThreadPool::global() {
  ThreadPool* pool = g_pool.load(std::memory_order_acquire);
  if (pool && !g_forked.load(std::memory_order_relaxed)) return *pool;
  if (g_forked.exchange(false)) {
    // A forked child has none of the parent's workers: start a new pool. The old one is
    // abandoned (its threads do not exist here, so it can neither be joined nor freed safely).
    pool = new ThreadPool(defaultNumThreads());
    g_pool.store(pool, std::memory_order_release);
    return *pool;
  }
  std::lock_guard lock(g_poolMutex);
  pool = g_pool.load(std::memory_order_acquire);
  if (!pool) {
    static const int registered = pthread_atfork(nullptr, nullptr, onForkChild);
    (void)registered;
    // Never destroyed: code may still launch from static destructors at exit.
    pool = new ThreadPool(defaultNumThreads());
    g_pool.store(pool, std::memory_order_release);
  }
  return *pool;
}

int ThreadPool::defaultNumThreads() {
  if (const char* env = std::getenv("LOOM_NUM_THREADS")) {
    char* end = nullptr;
    long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n >= 1 && n <= 1024) return int(n);
  }
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

int ThreadPool::barrier(int taskId, int numTask) {
  Job* job = t_job;
  if (!job) {
    setLastError("loom_backend_parallel_barrier: called outside a parallel task");
    return -1;
  }
  if (numTask != job->numTask || taskId < 0 || taskId >= numTask) {
    setLastError("loom_backend_parallel_barrier: task " + std::to_string(taskId) + " of " +
                 std::to_string(numTask) + " does not match the running launch of " +
                 std::to_string(job->numTask) + " tasks");
    return -1;
  }
  if (!job->canBarrier) {
    setLastError("loom_backend_parallel_barrier: the launch of " + std::to_string(numTask) +
                 " tasks does not give every task its own thread (pool threads or nesting)");
    return -1;
  }
  int generation = job->barrierGeneration.load(std::memory_order_acquire);
  if (job->barrierCount.fetch_add(1, std::memory_order_acq_rel) == numTask - 1) {
    job->barrierCount.store(0, std::memory_order_relaxed);
    job->barrierGeneration.fetch_add(1, std::memory_order_release);
    return 0;
  }
  for (int spins = 0; job->barrierGeneration.load(std::memory_order_acquire) == generation;) {
    if (++spins < kSpinCount) cpuRelax();
    else std::this_thread::yield();
  }
  return 0;
}

}  // namespace loom::runtime
