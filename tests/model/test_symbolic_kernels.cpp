// Kernels with symbolic extents (issue #18): a model's fused groups lowered with its symbolic
// dims, scheduled by the default schedule, compiled once and run at several shapes, against the
// same group compiled for each static shape.
#include <QtTest>

#include "ModelTestUtil.h"
#include "codegen/JITModule.h"
#include "core/driver/BuildOperator.h"
#include "core/driver/CompileModel.h"
#include "core/driver/DefaultSchedule.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/tir/Op.h"
#include "core/tir/Printer.h"
#include "core/transform/Pass.h"

using namespace loom;

namespace {

std::string smallCnn() { return std::string(LOOM_SOURCE_DIR) + "/examples/models/small_cnn/model.onnx"; }

driver::CompileModelOptions options(const std::string& layout) {
  driver::CompileModelOptions o;
  o.optLevel = 3;
  o.desiredLayout = layout;
  return o;
}

/// Arguments for `f` with the symbols given: random inputs, zero outputs.
std::vector<runtime::NDArray> argsFor(const tir::PrimFunc& staticF, unsigned seed) {
  std::vector<runtime::NDArray> args;
  for (const auto& [p, b] : staticF->bufferMap) {
    std::vector<int64_t> shape;
    for (const tir::Expr& e : b->shape) shape.push_back(*tir::asConstInt(e));
    args.push_back(test::randomArray(shape, seed++));
  }
  return args;
}

}  // namespace

class TestSymbolicKernels : public QObject {
  Q_OBJECT

private slots:
  void groupsRunAtEveryBatch_data() {
    QTest::addColumn<QString>("layout");
    QTest::newRow("NCHW") << "NCHW";

  }
  void groupsRunAtEveryBatch() {
    QFETCH(QString, layout);
    graph::Module dyn = frontend::importOnnx(smallCnn());
    std::vector<driver::ModelGroup> groups = driver::extractGroups(dyn, {}, options(layout.toStdString()));
    QVERIFY(!groups.empty());
    for (int64_t n : {1, 3}) {
      frontend::ImportOptions io;
      io.inputShapes["data"] = {n, 3, 16, 16};
      std::vector<driver::ModelGroup> fixed =
          driver::extractGroups(frontend::importOnnx(smallCnn(), io), {}, options(layout.toStdString()));
      QCOMPARE(fixed.size(), groups.size());
      for (size_t k = 0; k < groups.size(); ++k) {
        transform::PassContext ctx;
        driver::OperatorOptions oo;
        tir::PrimFunc sd = driver::defaultSchedule(groups[k].func, true);
        tir::PrimFunc sf = driver::defaultSchedule(fixed[k].func, true);
        auto dj = driver::jitOperator(driver::lowerOperator(sd, oo, ctx));
        auto fj = driver::jitOperator(driver::lowerOperator(sf, oo, ctx));
        std::vector<runtime::NDArray> a = argsFor(fixed[k].func, 5), b = argsFor(fixed[k].func, 5);
        // Different garbage in the two output buffers: equal results mean both kernels wrote them.
        a.back() = test::randomArray(a.back().shape(), 1000);
        b.back() = test::randomArray(b.back().shape(), 2000);
        runtime::PackedFunc df = dj->getFunction(groups[k].func->name), ff = fj->getFunction(fixed[k].func->name);
        std::vector<runtime::PackedArg> pa(a.begin(), a.end()), pb(b.begin(), b.end());
        ff.call(pb);
        df.call(pa);
        // The output (the last argument) is the same, computed by the same schedule shape.
        double d = test::maxDiff(a.back(), b.back());
        QVERIFY2(d < 1e-4, qPrintable(QString("%1 at batch %2: max diff %3").arg(groups[k].name.c_str()).arg(n).arg(d)));
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestSymbolicKernels)
#include "test_symbolic_kernels.moc"
