// `mpirun --oversubscribe -np 3 loom tune`: a workload and a small model tuned by two worker ranks
// (record count = budget, records of the same form as a local run), a worker rank killed mid-run
// (every record left is whole JSON; --resume finishes the budget), and a rank with another CPU refused.
// `-np 5`: four workers with the default evolutionary search, so fill-ins, samples lowered by the
// workers and the throttled retraining all run for real; killed mid-run and resumed too.
#include <QtTest>

#include <csignal>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/common/ProcessRun.h"

using loom::test::ProcessResult;

namespace {

const QString kLoom = QStringLiteral(LOOM_BINARY_DIR "/bin/loom");

QProcessEnvironment mpiEnv() {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("OMPI_ALLOW_RUN_AS_ROOT", "1");
  env.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  env.insert("OMPI_MCA_mpi_yield_when_idle", "1");
  return env;
}

QStringList mpirunArgs(int ranks, const QStringList& tuneArgs) {
  return QStringList{"--oversubscribe", "--bind-to", "none", "-np", QString::number(ranks), kLoom, "tune"} + tuneArgs;
}

ProcessResult mpirun(int ranks, const QStringList& tuneArgs, QProcessEnvironment env = mpiEnv()) {
  return loom::test::runProcess(LOOM_MPIRUN, mpirunArgs(ranks, tuneArgs), 300000, env);
}

/// Every line of a record file as JSON; a line that does not parse fails the test (empty result).
std::vector<nlohmann::json> readRecords(const QString& path, bool* ok) {
  *ok = false;
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  std::vector<nlohmann::json> out;
  QByteArray all = f.readAll();
  if (!all.isEmpty() && !all.endsWith('\n')) return {}; // a line cut short
  for (const QByteArray& line : all.split('\n')) {
    if (line.trimmed().isEmpty()) continue;
    nlohmann::json j = nlohmann::json::parse(line.toStdString(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) return {};
    out.push_back(j);
  }
  *ok = true;
  return out;
}

std::set<std::string> keysOf(const nlohmann::json& j) {
  std::set<std::string> k;
  for (auto& [key, v] : j.items()) k.insert(key);
  return k;
}

/// Waits until `out` has `records` lines (at most 120 s), then SIGKILLs the worker rank `rank` of
/// the mpirun writing it (found by its OMPI_COMM_WORLD_RANK); false when either never happened.
bool killRankAfter(const QString& out, int records, int rank) {
  QElapsedTimer t;
  t.start();
  int lines = 0;
  while (t.elapsed() < 120000 && lines < records) {
    QThread::msleep(100);
    QFile f(out);
    if (f.open(QIODevice::ReadOnly)) lines = f.readAll().count('\n');
  }
  if (lines < records) return false;
  pid_t victim = -1;
  const QByteArray want = "OMPI_COMM_WORLD_RANK=" + QByteArray::number(rank);
  for (const QString& pid : QDir("/proc").entryList(QDir::Dirs)) {
    QFile env("/proc/" + pid + "/environ"), cmd("/proc/" + pid + "/cmdline");
    if (!env.open(QIODevice::ReadOnly) || !cmd.open(QIODevice::ReadOnly)) continue;
    QByteArray e = env.readAll(), c = cmd.readAll();
    if (c.contains("tune-worker") || !c.contains(QFile::encodeName(out))) continue;
    if (e.split('\0').contains(want)) victim = pid.toInt();
  }
  if (victim <= 0) return false;
  ::kill(victim, SIGKILL);
  return true;
}

int trialsIn(const std::vector<nlohmann::json>& rs) {
  int n = 0;
  for (auto& r : rs)
    if (!r.value("retime", false) && r.value("workload", std::string()).find("#baseline") == std::string::npos) ++n;
  return n;
}

} // namespace

class TestMpiTune : public QObject {
  Q_OBJECT
private slots:
  void workloadRecordsLikeALocalRun() {
    QTemporaryDir dir;
    const QStringList common = {"--workload", "matmul:M=32,N=32,K=32", "--strategy", "random", "--batch", "2",
                                "--repeat", "2", "--min-repeat-ms", "1"};
    ProcessResult r = mpirun(3, common + QStringList{"--trials", "8", "--output", dir.filePath("mpi.json")});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("distributed: 2 worker ranks on 1 host"), qPrintable(r.out));
    QVERIFY2(r.out.contains("8 trials this run, 8 in total"), qPrintable(r.out));
    QVERIFY2(r.out.contains("distributed: 9 candidates"), qPrintable(r.out)); // 8 trials and the baseline
    bool ok = false;
    auto mpi = readRecords(dir.filePath("mpi.json"), &ok);
    QVERIFY(ok);
    QCOMPARE(int(mpi.size()), 8);
    ProcessResult local = loom::test::runProcess(kLoom, QStringList{"tune"} + common + QStringList{"--trials", "2", "--output", dir.filePath("local.json")}, 120000);
    QVERIFY2(local.exitCode == 0, qPrintable(local.out + local.err));
    auto one = readRecords(dir.filePath("local.json"), &ok);
    QVERIFY(ok && !one.empty());
    for (auto& rec : mpi) {
      QCOMPARE(keysOf(rec), keysOf(one[0]));
      QCOMPARE(rec["host"], one[0]["host"]); // the same machine
      QVERIFY2(rec["error_kind"] == "", rec.dump().c_str());
    }
  }

  void smallModel() {
    QTemporaryDir dir;
    ProcessResult r = mpirun(3, {LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx", "--input-shapes", "data:[1,3,16,16]",
                                 "--trials", "6", "--batch", "2", "--repeat", "2", "--min-repeat-ms", "1", "--retime", "0",
                                 "--output", dir.filePath("m.json")});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("6 trials this run"), qPrintable(r.out));
    bool ok = false;
    auto rs = readRecords(dir.filePath("m.json"), &ok);
    QVERIFY(ok);
    QCOMPARE(trialsIn(rs), 6);
    for (auto& rec : rs) QVERIFY2(rec.contains("host") && rec.value("cache_flush", false), rec.dump().c_str());
  }

  void killedWorkerThenResume() {
    QTemporaryDir dir;
    const QString out = dir.filePath("k.json");
    const QStringList args = {"--workload", "matmul:M=32,N=32,K=32", "--strategy", "random", "--batch", "2", "--repeat", "2",
                              "--min-repeat-ms", "1", "--trials", "16", "--no-baseline", "--output", out};
    QProcess p;
    p.setProcessEnvironment(mpiEnv());
    p.start(LOOM_MPIRUN, mpirunArgs(3, args));
    QVERIFY(p.waitForStarted());
    // Three records, then worker rank 2 killed.
    QVERIFY2(killRankAfter(out, 3, 2), "no records appeared, or rank 2 not found");
    QVERIFY(p.waitForFinished(60000));
    QVERIFY2(p.exitCode() != 0 || p.exitStatus() != QProcess::NormalExit, "mpirun reported success after a rank died");
    bool ok = false;
    auto rs = readRecords(out, &ok);
    QVERIFY2(ok, "the record file is not whole JSON lines");
    QVERIFY(rs.size() >= 3 && rs.size() < 16);
    ProcessResult r = mpirun(3, args + QStringList{"--resume"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("16 in total"), qPrintable(r.out));
    rs = readRecords(out, &ok);
    QVERIFY(ok);
    QCOMPARE(int(rs.size()), 16);
  }

  // Four workers (-np 5), the default evolutionary search: the budget is spent exactly, every
  // record ok and of a local run's form, the summary names the fill-ins and rank 0's CPU by phase;
  // a worker rank killed mid-run leaves whole records and --resume finishes the budget.
  void fourWorkersEvolutionaryKilledAndResumed() {
    QTemporaryDir dir;
    const QStringList common = {"--workload", "matmul:M=16,N=32,K=16", "--repeat", "2", "--min-repeat-ms", "1", "--no-baseline"};
    ProcessResult r = mpirun(5, common + QStringList{"--trials", "20", "--output", dir.filePath("full.json")});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("distributed: 4 worker ranks on 1 host"), qPrintable(r.out));
    QVERIFY2(r.out.contains("distributed: 20 candidates"), qPrintable(r.out));
    QVERIFY2(r.out.contains(" fill-ins ") && r.out.contains("by phase (ms): search "), qPrintable(r.out));
    bool ok = false;
    auto full = readRecords(dir.filePath("full.json"), &ok);
    QVERIFY(ok);
    QCOMPARE(int(full.size()), 20);
    ProcessResult local = loom::test::runProcess(kLoom, QStringList{"tune"} + common + QStringList{"--trials", "2", "--output", dir.filePath("local.json")}, 120000);
    QVERIFY2(local.exitCode == 0, qPrintable(local.out + local.err));
    auto one = readRecords(dir.filePath("local.json"), &ok);
    QVERIFY(ok && !one.empty());
    std::set<std::string> traces;
    for (auto& rec : full) {
      QCOMPARE(keysOf(rec), keysOf(one[0]));
      QVERIFY2(rec["error_kind"] == "", rec.dump().c_str());
      traces.insert(rec["trace"].dump());
    }
    QCOMPARE(int(traces.size()), 20); // no schedule measured twice

    const QString out = dir.filePath("k.json");
    const QStringList args = common + QStringList{"--trials", "20", "--output", out};
    QProcess p;
    p.setProcessEnvironment(mpiEnv());
    p.start(LOOM_MPIRUN, mpirunArgs(5, args));
    QVERIFY(p.waitForStarted());
    QVERIFY2(killRankAfter(out, 4, 3), "no records appeared, or rank 3 not found");
    QVERIFY(p.waitForFinished(60000));
    QVERIFY2(p.exitCode() != 0 || p.exitStatus() != QProcess::NormalExit, "mpirun reported success after a rank died");
    auto rs = readRecords(out, &ok);
    QVERIFY2(ok, "the record file is not whole JSON lines");
    QVERIFY(rs.size() >= 4 && rs.size() < 20);
    r = mpirun(5, args + QStringList{"--resume"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("20 in total"), qPrintable(r.out));
    rs = readRecords(out, &ok);
    QVERIFY(ok);
    QCOMPARE(int(rs.size()), 20);
    traces.clear();
    for (auto& rec : rs) traces.insert(rec["trace"].dump());
    QCOMPARE(int(traces.size()), 20);
  }

  void otherCpuRefused() {
    QTemporaryDir dir;
    QProcessEnvironment env = mpiEnv();
    env.insert("LOOM_TUNE_TEST_FAULTS", "1");
    env.insert("LOOM_TUNE_TEST_FAKE_CPU", "2:pentium4");
    ProcessResult r = mpirun(3, {"--workload", "matmul:M=16,N=16,K=16", "--trials", "2", "--output", dir.filePath("c.json")}, env);
    QVERIFY2(r.exitCode == 1, qPrintable(r.out + r.err));
    QVERIFY2(r.err.contains("rank 2 on host") && r.err.contains("has CPU pentium4") && r.err.contains("rank 0 tunes for"),
             qPrintable(r.err));
    QVERIFY(!QFile::exists(dir.filePath("c.json")) || QFileInfo(dir.filePath("c.json")).size() == 0);
  }
};

QTEST_GUILESS_MAIN(TestMpiTune)
#include "test_mpi_tune.moc"
