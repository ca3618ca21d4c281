// `mpirun --oversubscribe -np 3 loom tune`: a workload and a small model tuned by two worker ranks
// (record count = budget, records of the same form as a local run), a worker rank killed mid-run
// (every record left is whole JSON; --resume finishes the budget), and a rank with another CPU refused; the per-rank trace logs (LOOM_TUNE_MPI_TRACE).
// The `-np 5` evolutionary run (slow) is in test_mpi_evolutionary.cpp.
#include <map>

#include "tests/tune_mpi/MpiTestSupport.h"

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
    KillReport kill = killRankAfter(out, 3, 2);
    QVERIFY2(kill.killed, qPrintable("no records appeared, or rank 2 not found: " + kill.describe()));
    qInfo("%s", qPrintable(kill.describe()));
    QVERIFY(p.waitForFinished(60000 * loom::test::testSlowdown()));
    const QString said = QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
    QVERIFY2(p.exitCode() != 0 || p.exitStatus() != QProcess::NormalExit,
             qPrintable("mpirun reported success after a rank died: " + kill.describe() + "\n" + said));
    bool ok = false;
    auto rs = readRecords(out, &ok);
    QVERIFY2(ok, "the record file is not whole JSON lines");
    QVERIFY2(rs.size() >= 3 && rs.size() < 16, qPrintable(QString("%1 records after the kill; ").arg(rs.size()) + kill.describe()));
    ProcessResult r = mpirun(3, args + QStringList{"--resume"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("16 in total"), qPrintable(r.out));
    rs = readRecords(out, &ok);
    QVERIFY(ok);
    QCOMPARE(int(rs.size()), 16);
  }

  // A candidate that crashes, hangs or computes a wrong result on a worker rank costs one failed
  // record, never the rank: the budget is still spent and the run ends with exit 0, and rank 0's
  // worker events (what the Studio's monitor reads) show the rank that measured it as failed.
  void failingCandidatesCostOneRecordEach() {
    QTemporaryDir dir;
    const QString out = dir.filePath("f.json");
    QProcessEnvironment env = mpiEnv();
    env.insert("LOOM_TUNE_TEST_FAULTS", "1");
    // The first job of each rank is clean: it leaves the rank its reference outputs, and a hang
    // then costs --timeout (a rank's first candidate gets 120 s more to compute the reference).
    env.insert("LOOM_TUNE_TEST_JOB_FAULTS", ",,crash,hang,wrong");
    ProcessResult r = mpirun(3, {"--workload", "matmul:M=16,N=16,K=16", "--strategy", "random", "--batch", "2", "--trials", "8",
                                 "--no-baseline", "--repeat", "2", "--min-repeat-ms", "1", "--timeout", "3", "--worker-events",
                                 "--output", out},
                             env);
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("8 trials this run, 8 in total, 3 failed"), qPrintable(r.out));
    bool ok = false;
    auto rs = readRecords(out, &ok);
    QVERIFY(ok);
    QCOMPARE(int(rs.size()), 8);
    std::map<std::string, int> kinds;
    for (auto& rec : rs) ++kinds[rec["error_kind"].get<std::string>()];
    QCOMPARE(kinds["crash"], 1);
    QCOMPARE(kinds["timeout"], 1);
    QCOMPARE(kinds["wrong_result"], 1);
    QCOMPARE(kinds[""], 5);
    // Three failures over the two ranks, each seen as it happened; both ranks measured on.
    int failedEvents = 0;
    for (const QString& line : r.err.split('\n'))
      if (line.startsWith("loom-worker ") && line.contains(" state=failed ")) ++failedEvents;
    QVERIFY2(failedEvents == 3, qPrintable(r.err));
  }

  // Bench mode (bench/bench_tune_mpi.sh): the worker ranks sleep for the build and the measurement
  // but lower points for rank 0 for real; that work is reported and charged by its CPU time (or its
  // wall time), at real-time priority too where the system allows it (else a warning, same run).
  void simulatedWorkersReportTheirLowering() {
    QTemporaryDir dir;
    for (QString mode : {"charged", "wall"}) {
      const QString out = dir.filePath(mode + ".json");
      QStringList args = {"--workload", "matmul:M=16,N=32,K=16", "--no-baseline", "--trials", "12", "--simulate-build-ms", "20",
                          "--simulate-measure-ms", "20", "--simulate-lowering", mode, "--output", out};
      if (mode == "charged") args << "--rt-priority" << "10";
      ProcessResult r = mpirun(3, args);
      QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
      QVERIFY2(r.out.contains("distributed: 12 candidates"), qPrintable(r.out));
      QRegularExpressionMatch m = QRegularExpression("real work \\(jobs read, points lowered\\) per trial: ([0-9.]+) ms CPU, "
                                                     "([0-9.]+) ms wall, charged by its (CPU|wall) time")
                                      .match(r.out);
      QVERIFY2(m.hasMatch(), qPrintable(r.out));
      QVERIFY2(m.captured(1).toDouble() > 0, qPrintable(r.out)); // random samples go out unlowered: the workers lower them
      QVERIFY2(m.captured(2).toDouble() + 0.1 >= m.captured(1).toDouble(), qPrintable(r.out));
      QCOMPARE(m.captured(3), mode == "charged" ? QString("CPU") : QString("wall"));
      bool ok = false;
      auto rs = readRecords(out, &ok);
      QVERIFY(ok);
      QCOMPARE(int(rs.size()), 12);
      for (auto& rec : rs) QVERIFY2(rec["host"].get<std::string>().rfind("sim-", 0) == 0, rec.dump().c_str());
    }
  }

  // Four simulated workers, the evolutionary search: rank 0 sends each worker the points the search
  // knows (candidates handed out, mutants made), so the workers draw again instead of making and
  // lowering a known mutant. Before, 16-22% of the mutants made in this run repeated a known point
  // (session mpi7; 41% at 32 workers on matmul 64^3); now a few, from two workers making the same
  // mutant at once. The budget is still spent exactly, no schedule twice.
  void workersSkipKnownMutants() {
    QTemporaryDir dir;
    const QString out = dir.filePath("d.json");
    ProcessResult r = mpirun(5, {"--workload", "matmul:M=32,N=32,K=32", "--no-baseline", "--trials", "60", "--simulate-build-ms", "5",
                                 "--simulate-measure-ms", "5", "--output", out});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QRegularExpressionMatch m =
        QRegularExpression("([0-9]+) mutants made by the workers \\(evolutionary search\\): ([0-9]+) came back, ([0-9]+) repeated a "
                           "known point .*the workers drew ([0-9]+) known points again")
            .match(r.out);
    QVERIFY2(m.hasMatch(), qPrintable(r.out));
    const int requested = m.captured(1).toInt(), made = m.captured(2).toInt(), repeated = m.captured(3).toInt();
    qInfo("%d mutation requests, %d made, %d repeated a known point, %d draws known and drawn again", requested, made, repeated,
          m.captured(4).toInt());
    QVERIFY2(made > 20 && made <= requested, qPrintable(r.out));
    QVERIFY2(m.captured(4).toInt() > 0, qPrintable(r.out)); // the workers did find known points
    QVERIFY2(10 * repeated <= made, qPrintable(r.out));
    bool ok = false;
    auto rs = readRecords(out, &ok);
    QVERIFY(ok);
    QCOMPARE(int(rs.size()), 60);
    std::set<std::string> traces;
    for (auto& rec : rs) traces.insert(rec["trace"].dump());
    QCOMPARE(int(traces.size()), 60);
  }

  // LOOM_TUNE_MPI_TRACE: every rank writes its events; each job rank 0 sent shows up on the rank it
  // went to, and each result sent comes back to rank 0 (the logs agree with the record count).
  void traceLogsEveryRanksTraffic() {
    QTemporaryDir dir;
    const QString out = dir.filePath("t.json"), logs = dir.filePath("trace");
    QVERIFY(QDir().mkpath(logs));
    QProcessEnvironment env = mpiEnv();
    env.insert("LOOM_TUNE_MPI_TRACE", logs);
    ProcessResult r = mpirun(3, {"--workload", "matmul:M=16,N=32,K=16", "--no-baseline", "--trials", "10", "--simulate-build-ms", "10",
                                 "--simulate-measure-ms", "10", "--output", out},
                             env);
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    std::map<std::string, int> rank0;
    std::map<int, int> sentTo, jobsOn, resultsFrom;
    for (int rank = 0; rank < 3; ++rank) {
      QFile f(logs + "/rank-" + QString::number(rank) + ".log");
      QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(f.fileName()));
      std::map<long long, long long> lastT; // per thread: times never go back
      for (const QByteArray& line : f.readAll().split('\n')) {
        if (line.isEmpty()) continue;
        QList<QByteArray> p = line.split(' ');
        QCOMPARE(p.size(), 7); // t_ns tid cpu_ns runq_ns what a b
        long long t = p[0].toLongLong(), tid = p[1].toLongLong();
        QVERIFY(t >= lastT[tid]);
        lastT[tid] = t;
        QVERIFY(p[2].toLongLong() > 0); // the thread's CPU time
        const std::string what = p[4].toStdString();
        if (rank == 0) {
          ++rank0[what];
          if (what == "job_isend") ++sentTo[p[5].toInt()];
          if (what == "recv_done" && p[5].toInt() > 0) ++resultsFrom[p[5].toInt()];
        } else {
          if (what == "job") ++jobsOn[rank];
          if (what == "result_isend") QCOMPARE(jobsOn[rank], ++resultsFrom[-rank]);
        }
      }
    }
    QCOMPARE(rank0["job_isend"], 10);
    QVERIFY(rank0["search_begin"] > 0 && rank0["search_begin"] == rank0["search_end"]);
    for (int rank : {1, 2}) {
      QCOMPARE(jobsOn[rank], sentTo[rank]);
      QCOMPARE(resultsFrom[rank], sentTo[rank]); // rank 0 received every result the worker sent
      QCOMPARE(resultsFrom[-rank], sentTo[rank]);
    }
  }

  // Honest timings on a shared host, end to end: two real worker ranks and rank 0 on this machine,
  // traced (LOOM_TUNE_MPI_TRACE logs each rank's host-lock holds). No rank's timing (the lock held
  // exclusive) overlaps any other rank's hold: another's build, lowering, timing or rank 0's search.
  void timingsOnOneHostTakeTurns() {
    QTemporaryDir dir;
    const QString out = dir.filePath("h.json"), logs = dir.filePath("trace"), locks = dir.filePath("locks");
    QVERIFY(QDir().mkpath(logs) && QDir().mkpath(locks));
    QProcessEnvironment env = mpiEnv();
    env.insert("LOOM_TUNE_MPI_TRACE", logs);
    env.insert("LOOM_TUNE_LOCK_DIR", locks); // this job's lock only (another job's would just add turns)
    ProcessResult r = mpirun(3, {"--workload", "matmul:M=32,N=32,K=32", "--strategy", "random", "--batch", "2", "--trials", "8",
                                 "--no-baseline", "--repeat", "3", "--min-repeat-ms", "5", "--output", out},
                             env);
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("take turns to time"), qPrintable(r.out));
    struct Hold {
      int rank;
      bool exclusive;
      long long from, to;
    };
    std::vector<Hold> holds;
    for (int rank = 0; rank < 3; ++rank) {
      QFile f(logs + "/rank-" + QString::number(rank) + ".log");
      QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(f.fileName()));
      std::map<long long, Hold> open; // by thread
      for (const QByteArray& line : f.readAll().split('\n')) {
        QList<QByteArray> p = line.split(' ');
        if (p.size() != 7 || !p[4].startsWith("hostlock_")) continue;
        const long long t = p[0].toLongLong(), tid = p[1].toLongLong();
        if (p[4] == "hostlock_release") {
          QVERIFY2(open.count(tid), "a release without a hold");
          open[tid].to = t;
          holds.push_back(open[tid]);
          open.erase(tid);
        } else {
          QVERIFY2(!open.count(tid), "a hold taken twice");
          open[tid] = {rank, p[4] == "hostlock_exclusive", t, -1};
        }
      }
      QVERIFY2(open.empty(), "a hold never let go");
    }
    int shared[3] = {}, timings[3] = {}; // by rank
    for (const Hold& h : holds) ++(h.exclusive ? timings : shared)[h.rank];
    QVERIFY2(shared[0] > 0 && timings[0] == 0, "rank 0's search took no hold, or rank 0 timed");
    QVERIFY2(shared[1] > 0 && shared[2] > 0, "a worker rank built nothing");
    bool ok = false;
    int measured = 0; // each candidate that built and checked was timed once
    for (auto& rec : readRecords(out, &ok)) measured += rec["error_kind"] == "" ? 1 : 0;
    QVERIFY(ok && measured > 0);
    QCOMPARE(timings[1] + timings[2], measured);
    int checked = 0;
    for (const Hold& e : holds) {
      if (!e.exclusive) continue;
      for (const Hold& o : holds) {
        if (o.rank == e.rank) continue;
        QVERIFY2(o.to <= e.from || e.to <= o.from,
                 qPrintable(QString("rank %1 timed from %2 to %3 ns while rank %4 held the lock (%5) from %6 to %7")
                                .arg(e.rank).arg(e.from).arg(e.to).arg(o.rank).arg(o.exclusive ? "timing" : "shared")
                                .arg(o.from).arg(o.to)));
        ++checked;
      }
    }
    qInfo("%zu host-lock holds, %d timing / other-rank pairs apart", holds.size(), checked);
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

  // The same CPU name with other ISA extensions (a virtual machine that hides some, another
  // stepping): refused too, naming the extensions that differ.
  void otherIsaExtensionsRefused() {
    QTemporaryDir dir;
    QProcessEnvironment env = mpiEnv();
    env.insert("LOOM_TUNE_TEST_FAULTS", "1");
    env.insert("LOOM_TUNE_TEST_FAKE_FEATURES", "1:-sse2,+loomfake");
    ProcessResult r = mpirun(3, {"--workload", "matmul:M=16,N=16,K=16", "--trials", "2", "--output", dir.filePath("c.json")}, env);
    QVERIFY2(r.exitCode == 1, qPrintable(r.out + r.err));
    QVERIFY2(r.err.contains("rank 1 on host") && r.err.contains("(ISA extensions +loomfake -sse2)") &&
                 r.err.contains("rank 0 tunes for"),
             qPrintable(r.err));
    QVERIFY(!QFile::exists(dir.filePath("c.json")) || QFileInfo(dir.filePath("c.json")).size() == 0);
  }
};

QTEST_GUILESS_MAIN(TestMpiTune)
#include "test_mpi_tune.moc"
