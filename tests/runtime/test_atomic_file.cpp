// writeFileAtomically and writeTar (package export) when writing fails: a full disk (a file size
// limit, RLIMIT_FSIZE, with SIGXFSZ ignored: write() then fails with EFBIG as on ENOSPC) leaves
// the previous file whole and says why; a process killed in the middle of a write (the same
// limit with SIGXFSZ at its default action) never leaves a half-written file under the name.
#include <QtTest>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/AtomicFile.h"
#include "runtime/RuntimeFailure.h"
#include "runtime/Tar.h"

using namespace loom::runtime;
namespace fs = std::filesystem;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

/// Files in `dir` other than `keep` (temporary files left behind).
QStringList othersIn(const QString& dir, const QString& keep) {
  QStringList out;
  for (auto& e : fs::directory_iterator(dir.toStdString()))
    if (QString::fromStdString(e.path().filename().string()) != keep)
      out << QString::fromStdString(e.path().filename().string());
  return out;
}

/// Lowers the file size limit to `bytes` for its lifetime, with SIGXFSZ ignored (writes past the
/// limit fail with EFBIG, as writes to a full disk fail with ENOSPC).
class FileSizeLimit {
public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &m_old);
    m_oldHandler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit r = m_old;
    r.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &r);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &m_old);
    std::signal(SIGXFSZ, m_oldHandler);
  }

private:
  rlimit m_old{};
  void (*m_oldHandler)(int) = nullptr;
};

}  // namespace

class TestAtomicFile : public QObject {
  Q_OBJECT
private slots:
  void writesAndReplaces() {
    QTemporaryDir dir;
    std::string path = (dir.path() + "/a.bin").toStdString();
    writeFileAtomically(path, "first");
    QCOMPARE(slurp(path), std::string("first"));
    struct stat st {};
    QVERIFY(::stat(path.c_str(), &st) == 0);
    QVERIFY((st.st_mode & 0600) == 0600);  // readable and writable by its owner, not 0600-only temp
    ::chmod(path.c_str(), 0640);
    std::string big(100000, 'x');
    writeFileAtomically(path, big);
    QCOMPARE(slurp(path), big);
    QVERIFY(::stat(path.c_str(), &st) == 0);
    QCOMPARE(int(st.st_mode & 07777), 0640);  // a replaced file keeps its mode
    QVERIFY(othersIn(dir.path(), "a.bin").isEmpty());
    // A file in a directory that does not exist: a clear error, nothing written.
    try {
      writeFileAtomically((dir.path() + "/no/such/dir/x.tar").toStdString(), "x");
      QFAIL("no error");
    } catch (const RuntimeFailure& e) {
      QVERIFY2(QString(e.what()).contains("no/such/dir/x.tar") && QString(e.what()).contains("No such file or directory"), e.what());
    }
  }

  void fullDiskKeepsThePreviousFile() {
    QTemporaryDir dir;
    std::string path = (dir.path() + "/m.tar").toStdString();
    writeFileAtomically(path, "the previous package");
    std::string big(64 * 1024, 'p');
    {
      FileSizeLimit limit(4096);
      try {
        writeFileAtomically(path, big);
        QFAIL("no error");
      } catch (const RuntimeFailure& e) {
        QString m = e.what();
        QVERIFY2(m.contains("cannot write '" + QString::fromStdString(path) + "'") && m.contains("File too large") &&
                     m.contains("the previous file is unchanged"),
                 e.what());
      }
      // Package export through the tar writer: the same.
      QVERIFY_THROWS_EXCEPTION(RuntimeFailure, writeTar(path, {{"graph.json", big}, {"params.bin", big}}));
      // A new file: nothing under the name.
      try {
        writeFileAtomically((dir.path() + "/new.tar").toStdString(), big);
        QFAIL("no error");
      } catch (const RuntimeFailure& e) {
        QVERIFY2(QString(e.what()).contains("no file was written"), e.what());
      }
    }
    QCOMPARE(slurp(path), std::string("the previous package"));
    QCOMPARE(othersIn(dir.path(), "m.tar"), QStringList());  // no temporary file left behind
    // With room again the write goes through.
    writeTar(path, {{"graph.json", big}});
    QCOMPARE(readTar(path).at("graph.json"), big);
  }

  void interruptedWriteLeavesNoHalfFile() {
    // The child is killed by SIGXFSZ in the middle of writing 1 MiB (the limit is 8 KiB): an
    // export cut off by a signal. The name holds the previous package, or nothing for a new one.
    QTemporaryDir dir;
    std::string path = (dir.path() + "/m.tar").toStdString();
    std::string fresh = (dir.path() + "/fresh.tar").toStdString();
    writeTar(path, {{"graph.json", "old"}});
    std::string before = slurp(path);
    for (const std::string& target : {path, fresh}) {
      pid_t pid = fork();
      QVERIFY(pid >= 0);
      if (pid == 0) {
        std::signal(SIGXFSZ, SIG_DFL);
        rlimit r{};
        getrlimit(RLIMIT_FSIZE, &r);
        r.rlim_cur = 8192;
        setrlimit(RLIMIT_FSIZE, &r);
        try {
          writeTar(target, {{"graph.json", std::string(1 << 20, 'n')}});
        } catch (...) {
        }
        _exit(0);  // not reached: SIGXFSZ ends the process inside write()
      }
      int status = 0;
      QCOMPARE(waitpid(pid, &status, 0), pid);
      QVERIFY2(WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ, "the child was not cut off by SIGXFSZ");
    }
    QCOMPARE(slurp(path), before);
    QVERIFY(!fs::exists(fresh));
    QCOMPARE(readTar(path).at("graph.json"), std::string("old"));
    // What the killed writers leave is their hidden temporary files, never a tar under the name.
    for (const QString& f : othersIn(dir.path(), "m.tar"))
      QVERIFY2(f.startsWith(".") && f.endsWith(".tmp"), qPrintable(f));
  }
};

QTEST_GUILESS_MAIN(TestAtomicFile)
#include "test_atomic_file.moc"
