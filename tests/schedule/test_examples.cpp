// Every script in examples/schedules/: it applies, keeps the meaning (interpreter on random
// inputs), and its trace round-trips (printed script, JSON, replay) to a structurally equal function.
#include <QDir>
#include <fstream>
#include <sstream>

#include "TraceRoundTrip.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

namespace {

/// A small workload each example is meant for (the sizes its comments ask for, scaled down so the
/// interpreter is quick). A new example must be added here: the test refuses unknown files.
const std::map<QString, const char*> kWorkloadOf = {
    {"conv2d_cache_compute_at.py", "conv2d:N=1,C=4,H=12,W=14,K=8,R=3,S=3"},
    {"conv2d_x86.py", "conv2d:N=1,C=4,H=8,W=8,K=64,R=3,S=3,pad=1"},
    {"matmul_tensorize_avx512.py", "matmul:M=16,N=64,K=32"},
    {"matmul_tiled.py", "matmul:M=64,N=128,K=16"},
    {"matmul_x86.py", "matmul:M=8,N=128,K=16"},
    {"rfactor_reduce.py", "reduce_sum:M=4,N=256"},
    {"softmax_inline.py", "softmax:M=8,N=32"},
};

std::string readText(const QString& path) {
  std::ifstream in(path.toStdString());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

class TestExamples : public QObject {
  Q_OBJECT
private slots:
  void everyExample_data() {
    QTest::addColumn<QString>("file");
    QDir dir(QStringLiteral(LOOM_SOURCE_DIR "/examples/schedules"));
    QStringList files = dir.entryList({"*.py"}, QDir::Files, QDir::Name);
    QVERIFY(files.size() >= 4);
    for (const QString& f : files) QTest::newRow(qPrintable(f)) << f;
  }
  void everyExample() {
    QFETCH(QString, file);
    auto it = kWorkloadOf.find(file);
    QVERIFY2(it != kWorkloadOf.end(), qPrintable("add a workload for examples/schedules/" + file));
    std::string script = readText(QStringLiteral(LOOM_SOURCE_DIR "/examples/schedules/") + file);
    QVERIFY(!script.empty());
    PrimFunc f = workload(it->second);
    Schedule sch(f);
    ScriptResult r = runScript(sch, script, file.toStdString());
    QVERIFY2(r.ok, (r.message + "\n" + r.detail).c_str());
    QVERIFY(!sch.trace().insts.empty());
    double err = maxErrorBetween(f, sch.func());
    QVERIFY2(err < 1e-4, qPrintable(QString("max relative error %1").arg(err)));
    std::string rt = traceRoundTripError(f, script);
    QVERIFY2(rt.empty(), rt.c_str());
  }
};

QTEST_APPLESS_MAIN(TestExamples)
#include "test_examples.moc"
