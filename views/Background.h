// Worker threads of the Studio: they yield to the UI thread (their scheduling priority is lowered),
// and their jobs go out and their results come back through hand-offs that ThreadSanitizer sees.
#pragma once

#include <QObject>
#include <QThreadPool>
#include <functional>

namespace loom::views {

/// Lowers the calling thread's priority (Linux: its nice value +4, once per thread) so that the
/// UI thread of this process wins the CPU over layouts, imports and compiles on a busy machine.
/// Not for threads that time kernels. Does nothing where threads have no priority of their own.
void yieldToUiThread();

/// Hand-offs between the UI thread and the job threads, ordered by a std::mutex of ours. Qt orders
/// a queued call or a pool job by its own QMutex, a futex inside libQt6Core, which is not built
/// with ThreadSanitizer: TSan saw the captures a job thread wrote and the UI thread read, and the
/// list of posted events two job threads appended to, as races (studio.test_export_dialog,
/// test_tuning_monitor; tests/sanitizers/README.md). Here the sender holds the mutex while it
/// builds and posts the call, and the call takes it before anything else, so everything the
/// sender did happens before the call for TSan too. The mutex is held for the post only, never
/// while the call runs; in every build (a lock per job or result, nothing next to the work).

/// QThreadPool::start(fn) on `pool`, fn's captures ordered before its run.
void startJob(QThreadPool& pool, std::function<void()> fn);

/// fn() on `receiver`'s thread (the UI thread) by a queued call, as
/// QMetaObject::invokeMethod(receiver, fn, Qt::QueuedConnection): dropped when `receiver` is
/// gone first.
void postToGui(QObject* receiver, std::function<void()> fn);

}  // namespace loom::views
