// HostLock, the per-host build / timing lock of distributed tuning: builds share it, a timing waits
// for them and then holds it alone, and a waiting timing keeps new builds out (no starvation).
// Two HostLock objects open the files separately, so they contend as two processes would.
#include <QtTest>

#include <atomic>
#include <thread>

#include "core/tune/mpi/HostLock.h"

using loom::tune::mpi::HostLock;

namespace {

/// Runs `f` on a thread; acquired() says whether it has returned.
struct Attempt {
  std::atomic<bool> done{false};
  std::thread t;
  explicit Attempt(std::function<void()> f) : t([this, f] { f(); done = true; }) {}
  ~Attempt() { t.join(); }
  bool acquiredWithin(int ms) {
    for (int i = 0; i < ms / 10 && !done; ++i) QThread::msleep(10);
    return done;
  }
};

} // namespace

class TestHostLock : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
private slots:
  void initTestCase() { qputenv("LOOM_TUNE_LOCK_DIR", m_dir.path().toUtf8()); }

  void buildsShareTimingIsAlone() {
    HostLock a, b;
    QVERIFY(QString::fromStdString(a.path()).startsWith(m_dir.path()));
    a.shared();
    {
      Attempt other([&] { b.shared(); });
      QVERIFY2(other.acquiredWithin(2000), "a second build waited for the first");
    }
    b.unlock();
    {
      Attempt timing([&] { b.exclusive(); });
      QVERIFY2(!timing.acquiredWithin(300), "a timing started while a build held the lock");
      a.unlock();
      QVERIFY2(timing.acquiredWithin(3000), "the timing did not start after the build ended");
    }
    {
      Attempt build([&] { a.shared(); });
      QVERIFY2(!build.acquiredWithin(300), "a build started during a timing");
      b.unlock();
      QVERIFY(build.acquiredWithin(3000));
    }
    a.unlock();
  }

  void waitingTimingKeepsNewBuildsOut() {
    HostLock a, b, c;
    a.shared();
    Attempt timing([&] { b.exclusive(); });
    QVERIFY(!timing.acquiredWithin(200));
    Attempt late([&] { c.shared(); });
    QVERIFY2(!late.acquiredWithin(300), "a new build overtook the waiting timing");
    a.unlock();
    QVERIFY(timing.acquiredWithin(3000));
    QVERIFY(!late.acquiredWithin(200));
    b.unlock();
    QVERIFY(late.acquiredWithin(3000));
    c.unlock();
  }
};

QTEST_GUILESS_MAIN(TestHostLock)
#include "test_host_lock.moc"
