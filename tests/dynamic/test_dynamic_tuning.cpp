// Tuning a dynamic model at a representative shape (issue #18): `loom tune` on the small CNN with
// its symbolic batch at N=2 re-keys the records to the symbolic kernels; the symbolic model
// compiled with those schedules matches the graph evaluator at other batch sizes, and `loom
// compile --tuning-records` on the symbolic model finds them.
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include "core/driver/CompileModel.h"
#include "core/driver/LoadModel.h"
#include "core/graph/Evaluator.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Trace.h"
#include "core/tune/ModelTasks.h"
#include "core/tune/database/JsonDatabase.h"
#include "runtime/GraphExecutor.h"
#include "tests/common/ProcessRun.h"

using namespace loom;

namespace {

QString smallCnn() { return QStringLiteral(LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx"); }

}  // namespace

class TestDynamicTuning : public QObject {
  Q_OBJECT

private slots:
  void recordsOfTheRepresentativeShapeApply() {
    QTemporaryDir dir;
    QString rec = dir.filePath("r.json");
    test::ProcessResult r = test::runLoomBinary({"tune", smallCnn(), "--input-shapes", "data:[N=2,3,16,16]", "--trials-per-task", "2",
                                                 "--batch", "2", "--repeat", "1", "--output", rec},
                                                600000);
    QVERIFY2(r.exitCode == 0 || r.exitCode == 1, qPrintable(r.err));  // 1: no candidate beat the default
    QRegularExpressionMatch m =
        QRegularExpression("dynamic model: tuned at data:\\[2,3,16,16\\]; (\\d+) of (\\d+) kernels of the symbolic model "
                           "\\(data:\\[N,3,16,16\\]\\) take these records")
            .match(r.out);
    QVERIFY2(m.hasMatch(), qPrintable(r.out + r.err));
    int aliased = m.captured(1).toInt(), kernels = m.captured(2).toInt();
    QVERIFY2(aliased > 0, qPrintable(r.out));
    QVERIFY(r.out.contains("use them: loom compile " + smallCnn() + " --input-shapes \"data:[N,3,16,16]\""));

    // The symbolic kernels' own keys have records now.
    graph::Module dyn = driver::loadModel(smallCnn().toStdString()).module;
    tune::JsonDatabase db(rec.toStdString());
    driver::CompileModelOptions co;
    std::vector<driver::ModelGroup> groups = driver::extractGroups(dyn, {}, co);
    QCOMPARE(int(groups.size()), kernels);
    int withRecord = 0;
    for (const driver::ModelGroup& g : groups) withRecord += db.best(tune::groupKey(g.func), "llvm").has_value();
    QCOMPARE(withRecord, aliased);

    // Every record's schedule on the symbolic kernels (taken whether or not it beat the default):
    // the compiled model matches the evaluator at batch sizes other than the tuned one.
    int forced = 0;
    co.scheduleFor = [&](const driver::ModelGroup& g) -> std::optional<driver::GroupSchedule> {
      std::optional<tune::TuningRecord> best = db.best(tune::groupKey(g.func), "llvm");
      if (!best) return std::nullopt;
      tir::Schedule sch(g.func);
      tir::Trace::fromJson(best->trace).apply(sch);
      ++forced;
      return driver::GroupSchedule{sch.func(), "record"};
    };
    driver::CompiledModel cm = driver::compileModel(dyn, "llvm", {}, co);
    QCOMPARE(forced, aliased);
    auto ex = driver::createExecutor(cm);
    for (int64_t n : {1, 3}) {
      runtime::NDArray x = runtime::NDArray::empty({n, 3, 16, 16}, runtime::DType::f32());
      for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = float((i * 37) % 101) / 50.0f - 1.0f;
      ex->setInput(0, x);
      ex->run();
      runtime::NDArray want = graph::evaluate(dyn.main(), {x})[0], got = ex->getOutput(0);
      QCOMPARE(got.shape(), want.shape());
      for (int64_t i = 0; i < got.numel(); ++i)
        QVERIFY2(std::fabs(got.as<float>()[i] - want.as<float>()[i]) < 1e-3f * (1 + std::fabs(want.as<float>()[i])),
                 qPrintable(QString("N = %1, element %2").arg(n).arg(i)));
    }

    // loom compile on the symbolic model finds a record for each of those kernels.
    r = test::runLoomBinary({"compile", smallCnn(), "--tuning-records", rec, "-q", "-o", dir.filePath("m.so")}, 300000);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QRegularExpressionMatch u = QRegularExpression("(\\d+) no record").match(r.out);
    int noRecord = u.hasMatch() ? u.captured(1).toInt() : 0;
    QVERIFY2(noRecord == kernels - aliased, qPrintable(r.out));
  }

  void aSymbolNeedsAValueOrABound() {
    QTemporaryDir dir;
    test::ProcessResult r = test::runLoomBinary({"tune", smallCnn(), "--input-shapes", "data:[N,3,16,16]", "--output", dir.filePath("r.json")}, 60000);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("loom tune tunes a dynamic model at a representative shape: give the dim a value (N=320) or a bound"),
             qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(TestDynamicTuning)
#include "test_dynamic_tuning.moc"
