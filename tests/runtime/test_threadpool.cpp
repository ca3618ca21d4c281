// The thread pool: every task runs once, errors and exceptions reach the launcher, nesting, barriers, LOOM_NUM_THREADS.
#include <QtTest>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "loom/c_runtime_api.h"
#include "runtime/ThreadPool.h"

using loom::runtime::ThreadPool;

namespace {

constexpr int kMaxTasks = 64;

struct Counts {
  std::atomic<int> perTask[kMaxTasks];
  std::atomic<int> seenNumTask{-1};
  std::atomic<bool> wrongNumTask{false};
  Counts() {
    for (auto& c : perTask) c = 0;
  }
};

int countTask(int task, int numTask, void* cdata) {
  auto* c = static_cast<Counts*>(cdata);
  c->perTask[task].fetch_add(1);
  int prev = c->seenNumTask.exchange(numTask);
  if (prev != -1 && prev != numTask) c->wrongNumTask = true;
  return 0;
}

struct Threads {
  std::mutex mutex;
  std::set<std::thread::id> ids;
  std::vector<std::thread::id> byTask = std::vector<std::thread::id>(kMaxTasks);
};

int recordThread(int task, int numTask, void* cdata) {
  auto* t = static_cast<Threads*>(cdata);
  if (loom_backend_parallel_barrier(task, numTask) != 0) return -1;  // all tasks are live at once
  std::lock_guard lock(t->mutex);
  t->ids.insert(std::this_thread::get_id());
  t->byTask[task] = std::this_thread::get_id();
  return 0;
}

std::atomic<int> g_ran{0};

int failTaskTwo(int task, int, void*) {
  g_ran.fetch_add(1);
  if (task == 2) {
    loom_set_last_error("boom in two");
    return -1;
  }
  return 0;
}
int throwTaskOne(int task, int, void*) {
  g_ran.fetch_add(1);
  if (task == 1) throw std::runtime_error("kaboom");
  return 0;
}
int throwUnknown(int task, int, void*) {
  if (task == 0) throw 42;
  return 0;
}
int silentFailure(int task, int, void*) { return task == 1 ? 7 : 0; }

struct Nested {
  Counts inner;
  std::atomic<int> sameThread{0};
  std::atomic<int> innerFailures{0};
};
Nested* g_nested = nullptr;
thread_local std::thread::id t_outerThread;

int innerTask(int task, int numTask, void* cdata) {
  if (std::this_thread::get_id() == t_outerThread) g_nested->sameThread.fetch_add(1);
  return countTask(task, numTask, cdata);
}
int outerTask(int task, int numTask, void* cdata) {
  auto* n = static_cast<Nested*>(cdata);
  t_outerThread = std::this_thread::get_id();
  // Each outer task launches 4 inner tasks; they run serially on this thread. Inner task ids
  // are shared by all outer tasks, so each inner id should run once per outer task.
  if (loom_backend_parallel_launch(innerTask, &n->inner, 4) != 0) return -1;
  if (loom_backend_parallel_launch(failTaskTwo, nullptr, 3) == 0) n->innerFailures.fetch_add(100);
  else if (QString(loom_get_last_error()).contains("boom in two")) n->innerFailures.fetch_add(1);
  return 0;
}

struct Phased {
  std::atomic<int> stage[kMaxTasks];
  std::atomic<int> mismatches{0};
};
int barrierPhases(int task, int numTask, void* cdata) {
  auto* p = static_cast<Phased*>(cdata);
  for (int round = 1; round <= 50; ++round) {
    p->stage[task].store(round);
    if (loom_backend_parallel_barrier(task, numTask) != 0) return -1;
    for (int t = 0; t < numTask; ++t)
      if (p->stage[t].load() < round) p->mismatches.fetch_add(1);
    if (loom_backend_parallel_barrier(task, numTask) != 0) return -1;
  }
  return 0;
}
int barrierMustFail(int task, int numTask, void*) {
  if (loom_backend_parallel_barrier(task, numTask) == 0) return -1;
  return 0;
}

}  // namespace

class TestThreadPool : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    // Before anything starts the global pool: it must pick this up.
    qputenv("LOOM_NUM_THREADS", "3");
  }

  void honoursLoomNumThreads() {
    QCOMPARE(loom_backend_num_threads(), 3);
    QCOMPARE(ThreadPool::global().numThreads(), 3);
    Counts c;
    QCOMPARE(loom_backend_parallel_launch(countTask, &c, 0), 0);  // 0: one task per thread
    QCOMPARE(c.seenNumTask.load(), 3);
    for (int t = 0; t < 3; ++t) QCOMPARE(c.perTask[t].load(), 1);
    QCOMPARE(c.perTask[3].load(), 0);
    // Three tasks that wait for each other at a barrier can only finish on three threads.
    Threads th;
    QCOMPARE(loom_backend_parallel_launch(recordThread, &th, 3), 0);
    QCOMPARE(int(th.ids.size()), 3);
    QCOMPARE(th.byTask[0], std::this_thread::get_id());  // the caller runs task 0
  }

  void defaultNumThreadsParsing() {
    QByteArray saved = qgetenv("LOOM_NUM_THREADS");
    int hw = int(std::max(1u, std::thread::hardware_concurrency()));
    qputenv("LOOM_NUM_THREADS", "5");
    QCOMPARE(ThreadPool::defaultNumThreads(), 5);
    for (const char* bad : {"abc", "0", "-2", "", "4x", "100000"}) {
      qputenv("LOOM_NUM_THREADS", bad);
      QCOMPARE(ThreadPool::defaultNumThreads(), hw);
    }
    qunsetenv("LOOM_NUM_THREADS");
    QCOMPARE(ThreadPool::defaultNumThreads(), hw);
    qputenv("LOOM_NUM_THREADS", saved);
  }

  void tenThousandTinyLaunches() {
    for (int i = 0; i < 10000; ++i) {
      int numTask = i % 7 + 1;  // fewer, as many and more tasks than threads
      Counts c;
      if (loom_backend_parallel_launch(countTask, &c, numTask) != 0)
        QFAIL(loom_get_last_error());
      for (int t = 0; t < numTask; ++t)
        if (c.perTask[t].load() != 1)
          QFAIL(qPrintable(QString("launch %1: task %2 of %3 ran %4 times")
                               .arg(i).arg(t).arg(numTask).arg(c.perTask[t].load())));
      if (c.perTask[numTask].load() != 0) QFAIL("a task beyond num_task ran");
      if (c.wrongNumTask || c.seenNumTask.load() != numTask) QFAIL("tasks saw a wrong num_task");
    }
  }

  void errorReturnPropagates() {
    g_ran = 0;
    QCOMPARE(loom_backend_parallel_launch(failTaskTwo, nullptr, 5), -1);
    QCOMPARE(QString(loom_get_last_error()),
             QString("parallel task 2 of 5 failed: boom in two"));
    QCOMPARE(g_ran.load(), 5);  // the other tasks still ran
    Counts c;
    QCOMPARE(loom_backend_parallel_launch(countTask, &c, 3), 0);
    for (int t = 0; t < 3; ++t) QCOMPARE(c.perTask[t].load(), 1);
  }

  void exceptionsPropagate() {
    g_ran = 0;
    QCOMPARE(loom_backend_parallel_launch(throwTaskOne, nullptr, 3), -1);
    QCOMPARE(QString(loom_get_last_error()), QString("parallel task 1 of 3 failed: threw: kaboom"));
    QCOMPARE(g_ran.load(), 3);
    QCOMPARE(loom_backend_parallel_launch(throwUnknown, nullptr, 2), -1);
    QVERIFY(QString(loom_get_last_error()).contains("task 0 of 2 failed: threw an unknown exception"));
    QCOMPARE(loom_backend_parallel_launch(silentFailure, nullptr, 2), -1);
    QVERIFY(QString(loom_get_last_error()).contains("task 1 of 2 failed: returned 7 without a message"));
    // Still usable, and a success leaves no error behind in the tasks.
    for (int i = 0; i < 100; ++i) {
      Counts c;
      QCOMPARE(loom_backend_parallel_launch(countTask, &c, 3), 0);
      QCOMPARE(c.perTask[0].load() + c.perTask[1].load() + c.perTask[2].load(), 3);
    }
    QCOMPARE(loom_backend_parallel_launch(nullptr, nullptr, 3), -1);
    QVERIFY(QString(loom_get_last_error()).contains("null task function"));
  }

  void nestedLaunchesRunSerially() {
    Nested n;
    g_nested = &n;
    QCOMPARE(loom_backend_parallel_launch(outerTask, &n, 3), 0);
    for (int t = 0; t < 4; ++t) QCOMPARE(n.inner.perTask[t].load(), 3);
    QCOMPARE(n.sameThread.load(), 12);  // every inner task ran on its outer task's thread
    QCOMPARE(n.innerFailures.load(), 3);  // a failing inner launch reports to its outer task
    g_nested = nullptr;
  }

  void barriers() {
    Phased p;
    for (auto& s : p.stage) s = 0;
    QCOMPARE(loom_backend_parallel_launch(barrierPhases, &p, 3), 0);
    QCOMPARE(p.mismatches.load(), 0);
    // More tasks than threads: a barrier would deadlock, so it refuses.
    QCOMPARE(loom_backend_parallel_launch(barrierMustFail, nullptr, 5), 0);
    QCOMPARE(loom_backend_parallel_barrier(0, 1), -1);  // outside any launch
    QVERIFY(QString(loom_get_last_error()).contains("outside a parallel task"));
  }

  void privatePools() {
    {
      ThreadPool serial(1);
      Threads th;
      QCOMPARE(serial.numThreads(), 1);
      Counts c;
      QCOMPARE(serial.launch(countTask, &c, 6), 0);
      for (int t = 0; t < 6; ++t) QCOMPARE(c.perTask[t].load(), 1);
    }
    for (int round = 0; round < 20; ++round) {  // start and stop pools, busy or idle
      ThreadPool pool(4);
      Counts c;
      QCOMPARE(pool.launch(countTask, &c, 9), 0);
      for (int t = 0; t < 9; ++t) QCOMPARE(c.perTask[t].load(), 1);
    }
  }

  // The launching thread runs the shares of workers that have not started them when its own is
  // done (a worker descheduled on a busy machine, or asleep): each task still runs exactly once.
  // Workers idle for 20 ms are asleep (they spin 2 ms), and a futex wake-up takes far longer than
  // the caller's tiny share, so the caller takes shares over in these launches.
  void callerTakesOverSharesNotStarted() {
    ThreadPool pool(8);
    int takenOver = 0;
    for (int round = 0; round < 20; ++round) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      struct Ran {
        std::atomic<int> count[8];
        std::thread::id on[8];
      } ran;
      for (auto& c : ran.count) c = 0;
      auto task = [](int t, int, void* cdata) {
        auto* r = static_cast<Ran*>(cdata);
        r->count[t].fetch_add(1);
        r->on[t] = std::this_thread::get_id();
        return 0;
      };
      QCOMPARE(pool.launch(task, &ran, 8), 0);
      for (int t = 0; t < 8; ++t) QCOMPARE(ran.count[t].load(), 1);
      for (int t = 1; t < 8; ++t) takenOver += ran.on[t] == std::this_thread::get_id();
    }
    QVERIFY2(takenOver > 0, "the launching thread never ran a sleeping worker's share");
    // Interleaved with launches that keep the workers spinning: still exactly once each.
    for (int i = 0; i < 5000; ++i) {
      Counts c;
      QCOMPARE(pool.launch(countTask, &c, 8), 0);
      for (int t = 0; t < 8; ++t)
        if (c.perTask[t].load() != 1) QFAIL(qPrintable(QString("launch %1: task %2 ran %3 times").arg(i).arg(t).arg(c.perTask[t].load())));
    }
  }

  void launchesFromManyThreads() {
    std::atomic<int> bad{0};
    auto body = [&] {
      for (int i = 0; i < 500; ++i) {
        Counts c;
        if (loom_backend_parallel_launch(countTask, &c, 4) != 0) bad.fetch_add(1);
        for (int t = 0; t < 4; ++t)
          if (c.perTask[t].load() != 1) bad.fetch_add(1);
      }
    };
    std::thread a(body), b(body);
    body();
    a.join();
    b.join();
    QCOMPARE(bad.load(), 0);
  }

  void forkedChildGetsAFreshPool() {
    Counts warm;
    QCOMPARE(loom_backend_parallel_launch(countTask, &warm, 3), 0);  // the parent's pool is up
    pid_t pid = fork();
    QVERIFY(pid >= 0);
    if (pid == 0) {
      alarm(20);  // a hang would otherwise block the test run
      int bad = 0;
      for (int i = 0; i < 100; ++i) {
        Counts c;
        if (loom_backend_parallel_launch(countTask, &c, 3) != 0) ++bad;
        for (int t = 0; t < 3; ++t) bad += c.perTask[t].load() != 1;
      }
      Threads th;  // the child's three tasks still run on three threads
      if (loom_backend_parallel_launch(recordThread, &th, 3) != 0 || th.ids.size() != 3) ++bad;
      _exit(bad == 0 ? 0 : 1);
    }
    int status = 0;
    QCOMPARE(waitpid(pid, &status, 0), pid);
    QVERIFY2(WIFEXITED(status), "the child did not exit normally (hung or crashed)");
    QCOMPARE(WEXITSTATUS(status), 0);
    Counts after;
    QCOMPARE(loom_backend_parallel_launch(countTask, &after, 3), 0);
  }

  void workspaces() {
    std::vector<void*> blocks;
    for (uint64_t n : {1ull, 7ull, 64ull, 1000ull, 1ull << 20}) {
      void* p = loom_backend_alloc_workspace(kLoomCPU, 0, n, kLoomDTypeFloat, 32);
      QVERIFY(p);
      QCOMPARE(reinterpret_cast<uintptr_t>(p) % 64, uintptr_t(0));
      std::memset(p, 0xab, n);
      blocks.push_back(p);
    }
    for (auto it = blocks.rbegin(); it != blocks.rend(); ++it)
      QCOMPARE(loom_backend_free_workspace(kLoomCPU, 0, *it), 0);
    QVERIFY(loom_backend_alloc_workspace(kLoomCUDA, 0, 16, 2, 32) == nullptr);
    QVERIFY(QString(loom_get_last_error()).contains("no device API for cuda"));
  }
};

QTEST_APPLESS_MAIN(TestThreadPool)
#include "test_threadpool.moc"
