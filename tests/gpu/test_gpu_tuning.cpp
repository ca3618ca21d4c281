// Tuning an opencl matmul for a few trials: candidates from the GPU space measured in worker
// processes on the OpenCL device (PoCL), checked, timed, recorded; the baseline is the preset's
// default GPU schedule.
#include <QtTest>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include "GPUTestUtil.h"
#include "core/tune/Tuner.h"
#include "core/tune/database/JsonDatabase.h"
#include "core/tune/runner/ProcessRunner.h"

using namespace loom;
using namespace loom::tune;

class TestGPUTuning : public QObject {
  Q_OBJECT
  std::string m_unavailable;

private slots:
  void initTestCase() {
    gputest::usePluginsOfThisBuild();
    m_unavailable = gputest::openclUnavailable();
  }

  void tuneMatmulOnOpenCL() {
    if (!m_unavailable.empty()) QSKIP(("no OpenCL device: " + m_unavailable).c_str());
    std::string path = (std::filesystem::temp_directory_path() /
                        ("loom_test_gpu_tuning_" + std::to_string(::getpid()) + ".json")).string();
    std::remove(path.c_str());
    TuneTask task = TuneTask::fromWorkload("matmul:M=64,N=64,K=64", "opencl");
    ProcessRunner runner({LOOM_BINARY_DIR "/bin/loom", "tune-worker"}, false);
    TuneOptions o;
    o.trials = 8;
    o.batchSize = 4;
    o.strategy = "random";
    o.measure.repeat = 2;
    o.measure.minRepeatMs = 1;
    o.measure.timeoutS = 30;
    int ok = 0, failed = 0;
    TuneResult r;
    {
      JsonDatabase db(path);
      r = tuneTask(task, db, runner, o, [&](const TuneEvent& e) {
        if (e.kind != TuneEventKind::TrialDone) return;
        if (e.result.ok()) ++ok;
        else if (e.result.errorKind != "build_error") {  // over the thread limit: refused by the verifier
          ++failed;
          qWarning("%s: %s", e.result.errorKind.c_str(), e.result.errorMessage.c_str());
        }
      });
    }
    std::remove(path.c_str());
    QCOMPARE(failed, 0);
    QVERIFY2(ok >= 4, qPrintable(QString::number(ok)));
    QVERIFY(r.best.has_value());
    QVERIFY(r.best->meanMs() > 0);
    // The baseline: the default GPU schedule of the preset, measured on the device too.
    QVERIFY2(std::isfinite(r.baselineMs) && r.baselineMs > 0, qPrintable(QString::number(r.baselineMs)));
  }
};

QTEST_APPLESS_MAIN(TestGPUTuning)
#include "test_gpu_tuning.moc"
