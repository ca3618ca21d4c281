// A small parallel loop for the search: lowering candidates for the cost model is the search's
// main cost, and each candidate is lowered on its own (IR nodes are immutable, reference counts
// atomic), so they spread over threads. Internal to core/tune/strategy.
#pragma once
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace loom::tune {

/// Calls fn(i) for every i in [0, n) on up to `threads` threads (the calling thread is one of
/// them); returns when all are done and rethrows the first exception one of them threw. What
/// fn(i) computes must not depend on which thread runs it or in which order.
template <class F> void parallelFor(size_t n, int threads, F&& fn) {
  size_t t = std::min(n, size_t(std::max(1, threads)));
  if (t <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex errorMutex;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard lk(errorMutex);
        if (!error) error = std::current_exception();
        next.store(n); // the others stop at their next item
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t k = 1; k < t; ++k) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

} // namespace loom::tune
