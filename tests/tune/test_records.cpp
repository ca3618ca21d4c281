// Tuning records: JSON round trip, JSON-lines database append/load, best-per-workload, resume
// bookkeeping, and malformed files.
#include <QtTest>
#include <csignal>
#include <cstdio>
#include <sys/resource.h>
#include <filesystem>
#include <fstream>

#include "core/schedule/Primitives.h"
#include "core/support/Error.h"
#include "core/topi/Workloads.h"
#include "core/schedule/Script.h"
#include "core/tir/StructuralEqual.h"
#include "core/tune/ApplyHistoryBest.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/database/JsonDatabase.h"

using namespace loom;
using namespace loom::tune;

namespace {

std::string tempPath(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string("loom_test_") + name + "_" +
                                                    std::to_string(::getpid()) + ".json"))
      .string();
}

TuningRecord record(const std::string& wl, std::vector<double> times, int tile, const std::string& err = "") {
  tir::Schedule sch(topi::buildWorkload(topi::parseWorkloadSpec(wl)));
  auto loops = tir::getLoops(sch, tir::getBlock(sch, "C"));
  tir::split(sch, loops[0], {nullptr, int64_t(tile)});
  TuningRecord r;
  r.workload = topi::parseWorkloadSpec(wl).str();
  r.target = "llvm";
  r.trace = sch.trace().toJson();
  r.timesMs = std::move(times);
  r.errorKind = err;
  r.errorMessage = err.empty() ? "" : "boom";
  r.version = loomVersion();
  r.timestamp = utcTimestamp();
  return r;
}

} // namespace

class TestRecords : public QObject {
  Q_OBJECT
private slots:
  void roundTrip() {
    TuningRecord r = record("matmul:M=8,N=8,K=8", {1.5, 2.5}, 4);
    TuningRecord back = TuningRecord::fromJson(nlohmann::json::parse(r.toJson().dump()));
    QCOMPARE(back.workload, r.workload);
    QCOMPARE(back.target, r.target);
    QCOMPARE(back.traceKey(), r.traceKey());
    QCOMPARE(back.timesMs, r.timesMs);
    QCOMPARE(back.version, r.version);
    QCOMPARE(back.timestamp, r.timestamp);
    QCOMPARE(back.meanMs(), 2.0);
    QVERIFY(back.ok());
    // The stored trace replays to the same schedule.
    tir::Schedule a(topi::buildWorkload(topi::parseWorkloadSpec("matmul:M=8,N=8,K=8")));
    tir::Trace::fromJson(back.trace).apply(a);
    QCOMPARE(a.trace().toJson().dump(), r.trace.dump());
    TuningRecord bad = record("matmul:M=8,N=8,K=8", {}, 2, error_kind::kCrash);
    QVERIFY(!bad.ok());
    QVERIFY(std::isinf(bad.meanMs()));
  }

  void databaseAppendLoadBest() {
    std::string path = tempPath("db");
    {
      JsonDatabase db(path, /*truncate=*/true);
      db.commit(record("matmul:M=8,N=8,K=8", {3.0}, 2));
      db.commit(record("matmul:M=8,N=8,K=8", {1.0, 1.2}, 4));
      db.commit(record("matmul:M=8,N=8,K=8", {}, 8, error_kind::kTimeout));
      db.commit(record("matmul:M=16,N=8,K=8", {0.5}, 2));
    }
    JsonDatabase db(path);
    QCOMPARE(db.all().size(), size_t(4));
    std::string wl = topi::parseWorkloadSpec("matmul:M=8,N=8,K=8").str();
    QCOMPARE(db.trialCount(wl, "llvm"), size_t(3));
    QCOMPARE(db.trialCount(wl, "llvm -mcpu=x"), size_t(0));
    auto best = db.best(wl, "llvm");
    QVERIFY(best.has_value());
    QCOMPARE(best->meanMs(), 1.1);
    QCOMPARE(best->traceKey(), record("matmul:M=8,N=8,K=8", {}, 4).traceKey());
    QVERIFY(db.hasTrace(wl, "llvm", record("matmul:M=8,N=8,K=8", {}, 8).traceKey()));
    QVERIFY(!db.hasTrace(wl, "llvm", record("matmul:M=8,N=8,K=8", {}, 1).traceKey()));
    QCOMPARE(db.topK(wl, "llvm", 5).size(), size_t(2)); // the timeout is not a candidate
    // Appending to a loaded database keeps what was there (resume).
    db.commit(record("matmul:M=8,N=8,K=8", {0.1}, 1));
    JsonDatabase again(path);
    QCOMPARE(again.all().size(), size_t(5));
    QCOMPARE(again.best(wl, "llvm")->meanMs(), 0.1);
    std::remove(path.c_str());
  }

  void retimingReplacesEarlierTimes() {
    // The flags travel in the JSON line (and are absent when unset, as in older files).
    TuningRecord r = record("matmul:M=8,N=8,K=8", {1.0}, 4);
    QVERIFY(!r.toJson().contains("retime") && !r.toJson().contains("cache_flush"));
    r.retime = r.cacheFlush = true;
    TuningRecord back = TuningRecord::fromJson(nlohmann::json::parse(r.toJson().dump()));
    QVERIFY(back.retime && back.cacheFlush);
    nlohmann::json j = r.toJson();
    j["retime"] = "yes";
    QVERIFY_THROWS_EXCEPTION(ParseError, TuningRecord::fromJson(j));
    // The latest record of a schedule is the one that counts; re-timings are not trials.
    JsonDatabase db;
    std::string wl = topi::parseWorkloadSpec("matmul:M=8,N=8,K=8").str();
    db.commit(record("matmul:M=8,N=8,K=8", {1.0}, 2)); // a lucky timing
    db.commit(record("matmul:M=8,N=8,K=8", {1.5}, 4));
    db.commit(record("matmul:M=8,N=8,K=8", {1.6}, 8));
    QCOMPARE(db.best(wl, "llvm")->traceKey(), record("matmul:M=8,N=8,K=8", {}, 2).traceKey());
    TuningRecord again = record("matmul:M=8,N=8,K=8", {2.0}, 2);
    again.retime = true;
    db.commit(again);
    QCOMPARE(db.trialCount(wl, "llvm"), size_t(3));
    // Only the re-timed schedule competes now, with its new time.
    std::vector<TuningRecord> top = db.topK(wl, "llvm", 5);
    QCOMPARE(top.size(), size_t(1));
    QCOMPARE(top[0].meanMs(), 2.0);
    QCOMPARE(top[0].traceKey(), record("matmul:M=8,N=8,K=8", {}, 2).traceKey());
    // A re-timing that failed takes the schedule out of the candidates.
    TuningRecord failed = record("matmul:M=8,N=8,K=8", {}, 4, error_kind::kTimeout);
    failed.retime = true;
    db.commit(failed);
    QCOMPARE(db.topK(wl, "llvm", 5).size(), size_t(1));
    QCOMPARE(db.best(wl, "llvm")->meanMs(), 2.0);
  }

  void onlyRetimedSchedulesCompeteAfterARetiming() {
    // Schedule 8 was not re-timed: its old, lucky 0.5 ms does not beat the re-timed ones, while
    // a schedule first measured after the re-timing (tile 1) competes again.
    JsonDatabase db;
    std::string wl = topi::parseWorkloadSpec("matmul:M=8,N=8,K=8").str();
    db.commit(record("matmul:M=8,N=8,K=8", {0.5}, 8));
    db.commit(record("matmul:M=8,N=8,K=8", {0.4}, 2));
    db.commit(record("matmul:M=8,N=8,K=8", {0.45}, 4));
    for (int tile : {2, 4}) {
      TuningRecord r = record("matmul:M=8,N=8,K=8", {tile == 2 ? 0.9 : 0.8}, tile);
      r.retime = true;
      db.commit(r);
    }
    QCOMPARE(db.best(wl, "llvm")->traceKey(), record("matmul:M=8,N=8,K=8", {}, 4).traceKey());
    QCOMPARE(db.topK(wl, "llvm", 5).size(), size_t(2));
    db.commit(record("matmul:M=8,N=8,K=8", {0.85}, 1));
    QCOMPARE(db.topK(wl, "llvm", 5).size(), size_t(3));
    QCOMPARE(db.best(wl, "llvm")->meanMs(), 0.8);
    db.commit(record("matmul:M=8,N=8,K=8", {0.7}, 16));
    QCOMPARE(db.best(wl, "llvm")->meanMs(), 0.7);
  }

  void bestScheduleAsScript() {
    // A sampled candidate (with sampling instructions and decisions) stored as the best record
    // comes back as a script that reproduces it.
    std::string spec = "matmul:M=32,N=16,K=8";
    tir::PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec(spec));
    auto p = SpaceGenerator::defaultCpu().sample(f, 11);
    QVERIFY(p.has_value());
    JsonDatabase db;
    TuningRecord slow = record(spec, {5.0}, 4), fast = slow;
    fast.trace = p->finalJson();
    fast.timesMs = {1.0};
    db.commit(slow);
    db.commit(fast);
    std::string key = topi::parseWorkloadSpec(spec).str();
    std::string script = bestScheduleScript(db, key, "llvm", "R.json");
    QVERIFY(script.find("sample_perfect_tile") != std::string::npos);
    tir::Schedule sch(f);
    tir::ScriptResult r = tir::runScript(sch, script, "best.py");
    QVERIFY2(r.ok, r.message.c_str());
    QVERIFY(tir::structuralEqual(sch.func(), p->final.func()));
    try {
      bestScheduleScript(db, key, "llvm -mcpu=other", "R.json");
      QFAIL("expected an error");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("R.json: no successful tuning record of workload 'matmul:K=8,M=32,N=16'") !=
                   std::string::npos,
               e.what());
    }
    try {
      bestScheduleScript("/nonexistent/R.json", key, "llvm");
      QFAIL("expected an error");
    } catch (const RecordFileError& e) {
      QVERIFY(std::string(e.what()).find("/nonexistent/R.json") != std::string::npos);
    }
  }

  void interruptedLastLineIsDropped() {
    std::string path = tempPath("cut");
    {
      JsonDatabase db(path, true);
      db.commit(record("matmul:M=8,N=8,K=8", {3.0}, 2));
    }
    {
      std::ofstream out(path, std::ios::app);
      out << "{\"workload\": \"matmul:K=8";
    }
    JsonDatabase db(path);
    QCOMPARE(db.all().size(), size_t(1));
    std::remove(path.c_str());
  }

  void fullDiskKeepsEarlierRecords() {
    // A file size limit (RLIMIT_FSIZE, SIGXFSZ ignored: write() fails with EFBIG as on a full
    // disk with ENOSPC) that cuts the third record's line short: a RecordFileError saying why,
    // the half line taken back off, the two records intact; appends work again with room.
    std::string path = tempPath("full");
    {
      JsonDatabase db(path, true);
      db.commit(record("matmul:M=8,N=8,K=8", {3.0}, 2));
      db.commit(record("matmul:M=8,N=8,K=8", {2.0}, 4));
    }
    std::string before;
    {
      std::ifstream in(path, std::ios::binary);
      before.assign(std::istreambuf_iterator<char>(in), {});
    }
    {
      rlimit old{};
      getrlimit(RLIMIT_FSIZE, &old);
      auto handler = std::signal(SIGXFSZ, SIG_IGN);
      rlimit r = old;
      r.rlim_cur = before.size() + 40;  // room for 40 bytes of the next line
      setrlimit(RLIMIT_FSIZE, &r);
      JsonDatabase db(path);
      try {
        db.commit(record("matmul:M=8,N=8,K=8", {1.0}, 8));
        setrlimit(RLIMIT_FSIZE, &old);
        QFAIL("no error");
      } catch (const RecordFileError& e) {
        QString m = e.what();
        QVERIFY2(m.contains(QString::fromStdString(path)) && m.contains("File too large") && m.contains("intact"), e.what());
      }
      setrlimit(RLIMIT_FSIZE, &old);
      std::signal(SIGXFSZ, handler);
    }
    std::string after;
    {
      std::ifstream in(path, std::ios::binary);
      after.assign(std::istreambuf_iterator<char>(in), {});
    }
    QCOMPARE(after, before);
    JsonDatabase db(path);
    QCOMPARE(db.all().size(), size_t(2));
    db.commit(record("matmul:M=8,N=8,K=8", {1.0}, 8));
    QCOMPARE(JsonDatabase(path).all().size(), size_t(3));
    std::remove(path.c_str());
  }

  void malformedLineIsLocated() {
    std::string path = tempPath("bad");
    {
      std::ofstream out(path);
      out << record("matmul:M=8,N=8,K=8", {3.0}, 2).toJson().dump() << "\n";
      out << "{\"workload\": 3, \"target\": \"llvm\", \"trace\": {}}\n";
    }
    try {
      JsonDatabase db(path);
      QFAIL("expected a ParseError");
    } catch (const ParseError& e) {
      QVERIFY2(std::string(e.what()).find(":2: ") != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).find("'workload'") != std::string::npos, e.what());
    }
    std::remove(path.c_str());
  }
};

QTEST_APPLESS_MAIN(TestRecords)
#include "test_records.moc"
