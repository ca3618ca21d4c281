// Measurement in worker processes: a good candidate is timed; a crash, a hang, a wrong result, a
// schedule error and a build error are each recorded and fail only their candidate; a tuning run
// whose workers are killed at random finishes with whole records.
#include <QtTest>
#include <csignal>
#include <cstdlib>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "core/driver/Measure.h"
#include "core/schedule/Primitives.h"
#include "core/tune/Record.h"
#include "core/tune/TaskScheduler.h"
#include "core/tune/database/JsonDatabase.h"
#include "core/tune/runner/ProcessRunner.h"

using namespace loom;
using namespace loom::tune;

namespace {

std::vector<std::string> workerCommand() { return {LOOM_BINARY_DIR "/bin/loom", "tune-worker"}; }

MeasureCandidate candidate(const TuneTask& task, int tile, const std::string& fault = "") {
  tir::Schedule sch(task.func);
  auto loops = tir::getLoops(sch, tir::getBlock(sch, "C"));
  tir::split(sch, loops[1], {nullptr, int64_t(tile)});
  return {task, sch.trace().toJson(), fault};
}

MeasureOptions quick() {
  MeasureOptions o;
  o.repeat = 2;
  o.minRepeatMs = 1;
  o.timeoutS = 8;
  return o;
}

/// The `loom tune-worker` children of this process that are alive (not zombies), by pid.
std::vector<pid_t> liveWorkers() {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    char state = 0;
    long ppid = 0;
    if (!(rest >> state >> ppid) || ppid != long(::getpid()) || state == 'Z') continue;
    std::ifstream cmd(e.path() / "cmdline");
    std::string args((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
    if (args.find("tune-worker") != std::string::npos) out.push_back(pid_t(std::stol(name)));
  }
  return out;
}

/// From another thread, as a `kill -9`, the OOM killer or a dying node would: after each seeded
/// random gap, SIGKILL one of the live workers (chosen by the same generator), until `maxKills`.
class WorkerKiller {
public:
  WorkerKiller(uint64_t seed, int maxKills, int minGapMs, int maxGapMs) {
    m_thread = std::thread([=, this] {
      std::mt19937_64 rng(seed);
      std::uniform_int_distribution<int> gap(minGapMs, maxGapMs);
      while (!m_stop && m_kills < maxKills) {
        auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(gap(rng));
        while (!m_stop && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        std::vector<pid_t> live = liveWorkers();
        if (m_stop || live.empty()) continue;
        pid_t pid = live[std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng)];
        if (::kill(pid, SIGKILL) == 0) ++m_kills;
      }
    });
  }
  ~WorkerKiller() { stop(); }
  void stop() {
    m_stop = true;
    if (m_thread.joinable()) m_thread.join();
  }
  int kills() const { return m_kills; }

private:
  std::atomic<bool> m_stop{false};
  std::atomic<int> m_kills{0};
  std::thread m_thread;
};

} // namespace

class TestRunner : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() { ::setenv("LOOM_TUNE_TEST_FAULTS", "1", 1); }

  void faultsAreIsolated_data() {
    QTest::addColumn<bool>("overlap");
    QTest::newRow("sequential") << false;
    QTest::newRow("overlapped builds") << true;
  }
  void faultsAreIsolated() {
    QFETCH(bool, overlap);
    TuneTask task = TuneTask::fromWorkload("matmul:M=16,N=16,K=16");
    std::vector<MeasureCandidate> cs = {candidate(task, 4), candidate(task, 4, "crash"),
                                        candidate(task, 8, "hang"), candidate(task, 2, "wrong"),
                                        candidate(task, 16)};
    // A trace that does not apply to this task: a split of a loop of a different extent.
    TuneTask other = TuneTask::fromWorkload("matmul:M=16,N=12,K=16");
    tir::Schedule sch(other.func);
    auto loops = tir::getLoops(sch, tir::getBlock(sch, "C"));
    tir::samplePerfectTile(sch, loops[1], 2, 16, std::vector<int64_t>{3, 4});
    cs.push_back({task, sch.trace().toJson(), ""});
    MeasureOptions o = quick();
    o.timeoutS = 4;
    ProcessRunner runner(workerCommand(), overlap);
    std::vector<size_t> order;
    auto rs = runner.run(cs, o, [&](size_t i, const MeasureResult&) { order.push_back(i); });
    QCOMPARE(rs.size(), cs.size());
    QCOMPARE(order, (std::vector<size_t>{0, 1, 2, 3, 4, 5}));
    QVERIFY2(rs[0].ok(), rs[0].errorMessage.c_str());
    QCOMPARE(rs[0].timesMs.size(), size_t(2));
    QVERIFY(rs[0].timesMs[0] > 0);
    QCOMPARE(rs[1].errorKind, std::string(error_kind::kCrash));
    QVERIFY2(rs[1].errorMessage.find("signal 11") != std::string::npos, rs[1].errorMessage.c_str());
    QCOMPARE(rs[2].errorKind, std::string(error_kind::kTimeout));
    QCOMPARE(rs[3].errorKind, std::string(error_kind::kWrongResult));
    QVERIFY2(rs[3].errorMessage.find("'C'") != std::string::npos, rs[3].errorMessage.c_str());
    QVERIFY2(rs[4].ok(), rs[4].errorMessage.c_str());
    QCOMPARE(rs[5].errorKind, std::string(error_kind::kScheduleError));
  }

  void faultsNeedTheTestSwitch() {
    // Without LOOM_TUNE_TEST_FAULTS=1 a candidate's fault field is ignored.
    ::setenv("LOOM_TUNE_TEST_FAULTS", "0", 1);
    TuneTask task = TuneTask::fromWorkload("matmul:M=8,N=8,K=8");
    ProcessRunner runner(workerCommand(), false);
    auto rs = runner.run({candidate(task, 4, "crash")}, quick());
    ::setenv("LOOM_TUNE_TEST_FAULTS", "1", 1);
    QVERIFY2(rs[0].ok(), rs[0].errorMessage.c_str());
  }

  void nonPresetTaskAndBuildError() {
    // A task given as a PrimFunc travels as TVMScript; its reference is the unscheduled program.
    TuneTask task = TuneTask::fromFunc(TuneTask::fromWorkload("matmul:M=8,N=8,K=8").func, 2);
    ProcessRunner runner(workerCommand(), false);
    auto rs = runner.run({candidate(task, 4)}, quick());
    QVERIFY2(rs[0].ok(), rs[0].errorMessage.c_str());
    // A target that does not run here is a build error of that candidate only.
    TuneTask cross = TuneTask::fromWorkload("matmul:M=8,N=8,K=8", "llvm -mtriple=aarch64-linux-gnu");
    rs = runner.run({candidate(cross, 4), candidate(task, 2)}, quick());
    QCOMPARE(rs[0].errorKind, std::string(error_kind::kBuildError));
    QVERIFY(rs[1].ok());
  }

  void timeCallsRunsTheHookBeforeEachCall() {
    // The hook runs once before the warm-up call and once before every timed call; the samples
    // count only the calls.
    int calls = 0, hooks = 0;
    std::vector<int> order;
    driver::TimingStats t = driver::timeCalls([&] { ++calls; order.push_back(1); }, 3, 0.0,
                                              [&] { ++hooks; order.push_back(0); });
    QCOMPARE(t.repeat, 3);
    QVERIFY(t.number >= 1);
    QCOMPARE(calls, 1 + t.repeat * t.number);
    QCOMPARE(hooks, calls);
    for (size_t i = 0; i < order.size(); ++i) QCOMPARE(order[i], int(i % 2));
    QCOMPARE(t.samplesMs.size(), size_t(3));
    // An expensive hook is not timed: a 20 ms hook before a trivial call.
    t = driver::timeCalls([] {}, 2, 0.0, [] {
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
      while (std::chrono::steady_clock::now() < until) {
      }
    });
    for (double ms : t.samplesMs) QVERIFY2(ms < 10, std::to_string(ms).c_str());
  }

  void flushingKeepsTheData() {
    std::vector<float> v(100000);
    for (size_t i = 0; i < v.size(); ++i) v[i] = float(i) * 0.5f;
    driver::flushFromCaches(v.data(), v.size() * sizeof(float));
    driver::flushFromCaches(v.data() + 3, 5); // unaligned start and a partial line
    driver::flushFromCaches(nullptr, 0);
    for (size_t i = 0; i < v.size(); ++i) QCOMPARE(v[i], float(i) * 0.5f);
  }

  void cacheFlushIsRecordedWithTheResult() {
    TuneTask task = TuneTask::fromWorkload("matmul:M=32,N=32,K=32");
    ProcessRunner runner(workerCommand(), false);
    MeasureOptions o = quick();
    auto warm = runner.run({candidate(task, 4)}, o);
    QVERIFY2(warm[0].ok(), warm[0].errorMessage.c_str());
    QVERIFY(!warm[0].cacheFlushed);
    o.flushCache = true;
    auto flushed = runner.run({candidate(task, 4)}, o);
    QVERIFY2(flushed[0].ok(), flushed[0].errorMessage.c_str());
    QVERIFY(flushed[0].cacheFlushed);
    QCOMPARE(flushed[0].timesMs.size(), size_t(2));
  }

  void theReferenceHasItsOwnTimeout() {
    // The first candidate of a task computes the reference: its build+check phase may take
    // timeoutS + referenceTimeoutS. Once the reference is cached, a candidate gets timeoutS.
    TuneTask task = TuneTask::fromWorkload("matmul:M=24,N=24,K=24");
    ProcessRunner runner(workerCommand(), false);
    MeasureOptions o = quick();
    o.timeoutS = 1;
    o.referenceTimeoutS = 2;
    auto first = runner.run({candidate(task, 4, "hang")}, o);
    QCOMPARE(first[0].errorKind, std::string(error_kind::kTimeout));
    QVERIFY2(first[0].errorMessage.find("3.000 s") != std::string::npos, first[0].errorMessage.c_str());
    auto later = runner.run({candidate(task, 4), candidate(task, 8, "hang")}, o);
    QVERIFY2(later[0].ok(), later[0].errorMessage.c_str());
    QCOMPARE(later[1].errorKind, std::string(error_kind::kTimeout));
    QVERIFY2(later[1].errorMessage.find("1.000 s") != std::string::npos, later[1].errorMessage.c_str());
  }

  void tuningSurvivesWorkersKilledAtRandom_data() {
    QTest::addColumn<bool>("overlap");
    QTest::addColumn<int>("seed");
    QTest::newRow("sequential") << false << 1;
    QTest::newRow("overlapped builds") << true << 2;
  }
  void tuningSurvivesWorkersKilledAtRandom() {
    // Three tasks tuned together (24 trials) while another thread SIGKILLs workers at seeded
    // random moments (building, checking, computing the reference, waiting for the go-ahead,
    // timing): the run finishes, each killed trial is a failure (a crash by signal 9) recorded
    // like any other, every other trial is measured, and the records file holds 24 whole lines.
    QFETCH(bool, overlap);
    QFETCH(int, seed);
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("loom_test_kills_" + std::to_string(::getpid()) + "_" + std::to_string(seed) + ".json"))
                                 .string();
    std::remove(path.c_str());
    std::vector<TuneTask> tasks = {TuneTask::fromWorkload("matmul:M=16,N=16,K=16"),
                                   TuneTask::fromWorkload("matmul:M=32,N=16,K=8"),
                                   TuneTask::fromWorkload("batch_matmul:B=2,M=8,N=16,K=8")};
    TuneOptions per;
    per.trials = 8;
    per.batchSize = 4;
    per.strategy = "random";
    per.measureBaseline = false;
    per.measure = quick();
    TaskSchedulerOptions so;
    so.totalTrials = 24;
    std::mutex mu;
    int killed = 0, measured = 0, other = 0;
    std::string others;
    int kills = 0;
    {
      JsonDatabase db(path);
      ProcessRunner runner(workerCommand(), overlap);
      TaskScheduler s(tasks, db, runner, per, so, [&](const TuneEvent& e) {
        if (e.kind != TuneEventKind::TrialDone) return;
        std::lock_guard<std::mutex> lock(mu);
        if (e.result.ok()) ++measured;
        else if (e.result.errorKind == error_kind::kCrash && e.result.errorMessage.find("signal 9") != std::string::npos) ++killed;
        else ++other, others += e.result.errorKind + ": " + e.result.errorMessage + "\n";
      });
      WorkerKiller killer(uint64_t(seed), 6, 20, 400);
      std::vector<TuneResult> rs = s.run();
      killer.stop();
      kills = killer.kills();
      QCOMPARE(rs.size(), size_t(3));
      for (const TuneResult& r : rs) QCOMPARE(r.trialsThisRun, 8);
      // No worker outlives its trial.
      QVERIFY(liveWorkers().empty());
    }
    qInfo("%d kills sent: %d trials killed, %d measured", kills, killed, measured);
    QVERIFY2(other == 0, others.c_str());
    QCOMPARE(killed + measured, 24);
    // A kill can find its worker exiting (reaped a moment later, with its result), never more.
    QVERIFY(killed >= 1);
    QVERIFY(killed <= kills);
    // The records file: 24 whole JSON lines, the killed trials among them as crashes.
    std::ifstream in(path);
    std::string line;
    int lines = 0, crashes = 0;
    while (std::getline(in, line)) {
      ++lines;
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      QVERIFY2(!j.is_discarded(), line.c_str());
      TuningRecord rec = TuningRecord::fromJson(j);
      crashes += rec.errorKind == error_kind::kCrash;
      QVERIFY2(rec.errorKind.empty() || rec.errorKind == error_kind::kCrash, line.c_str());
    }
    QCOMPARE(lines, 24);
    QCOMPARE(crashes, killed);
    QCOMPARE(JsonDatabase(path).all().size(), size_t(24));
    std::remove(path.c_str());
  }
};

QTEST_APPLESS_MAIN(TestRunner)
#include "test_runner.moc"
