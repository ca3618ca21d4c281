// ThreadPool: persistent workers that run the tasks of parallel loops (loom_backend_parallel_launch).
#pragma once
#include <memory>

#include "loom/c_runtime_api.h"

namespace loom::runtime {

/// A fixed set of worker threads that spin, then yield (LOOM_THREAD_POOL_SPIN_US, default 2 ms),
/// then sleep, between launches. The launching thread takes part (it runs task 0), so a pool of
/// N threads starts N - 1 workers; once its own share is done it also runs the shares of workers
/// that have not started theirs (descheduled on a busy machine, or asleep) rather than wait for
/// them (LOOM_THREAD_POOL_NO_TAKEOVER=1 turns that off). A launch
/// from inside a task, or while another thread's launch holds the pool, runs serially on the
/// calling thread. Launches follow the C contract of loom_backend_parallel_launch.
class ThreadPool {
public:
  /// `numThreads` >= 1 counts the caller; values below 1 are taken as 1.
  explicit ThreadPool(int numThreads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int numThreads() const;
  /// Runs f(task, numTask, cdata) for every task; 0, or -1 with the last error set.
  int launch(FLambda f, void* cdata, int numTask);

  /// The process-wide pool, started on first use with defaultNumThreads() threads (and anew
  /// in a child process after fork).
  static ThreadPool& global();
  /// LOOM_NUM_THREADS when it is a positive integer (at most 1024), else the hardware threads.
  static int defaultNumThreads();
  /// loom_backend_parallel_barrier for the launch the calling thread is running a task of.
  static int barrier(int taskId, int numTask);

private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace loom::runtime
