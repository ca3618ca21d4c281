// Per-thread nice values for the Studio's background work (Linux threads are scheduled on their own),
// and the hand-offs of its jobs and their results (one mutex of ours, which ThreadSanitizer sees).
#include "views/Background.h"

#include <QMetaObject>
#include <mutex>

#ifdef __linux__
#include <cerrno>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace loom::views {

void yieldToUiThread() {
#ifdef __linux__
  thread_local bool done = false;
  if (done) return;
  done = true;
  pid_t tid = pid_t(syscall(SYS_gettid));
  errno = 0;
  int current = getpriority(PRIO_PROCESS, id_t(tid));
  if (errno == 0 && current < 19) setpriority(PRIO_PROCESS, id_t(tid), current + 4 > 19 ? 19 : current + 4);
#endif
}

namespace {
std::mutex& handoffMutex() {
  static std::mutex m;
  return m;
}
}  // namespace

void startJob(QThreadPool& pool, std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(handoffMutex());
  pool.start([fn = std::move(fn)] {
    { std::lock_guard<std::mutex> order(handoffMutex()); }
    fn();
  });
}

void postToGui(QObject* receiver, std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(handoffMutex());
  QMetaObject::invokeMethod(receiver, [fn = std::move(fn)] {
    { std::lock_guard<std::mutex> order(handoffMutex()); }
    fn();
  }, Qt::QueuedConnection);
}

}  // namespace loom::views
