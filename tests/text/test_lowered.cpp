// The IR after every lowering pass prints and parses back (what --print-after-all and the Studio show).
#include <QtTest>

#include "core/support/Error.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "core/tir/StructuralEqual.h"
#include "core/topi/Workloads.h"
#include "core/transform/Pipeline.h"

using namespace loom;
using namespace loom::tir;

class TestLowered : public QObject {
  Q_OBJECT
private slots:
  void afterEveryPass_data() {
    QTest::addColumn<bool>("gpu");
    QTest::newRow("cpu") << false;
    QTest::newRow("gpu") << true;
  }

  void afterEveryPass() {
    QFETCH(bool, gpu);
    transform::LowerOptions opts;
    opts.gpu = gpu;
    int checked = 0;
    for (const auto& w : topi::allWorkloads()) {
      PrimFunc f = topi::buildWorkload(topi::makeWorkloadSpec(w.name));
      transform::PassContext ctx;
      for (const auto& pass : transform::loweringPipeline(opts)) {
        f = ctx.run(pass, f);
        std::string where = w.name + " after " + pass.name;
        std::string text = printFunc(f);
        PrimFunc g;
        try {
          g = parseFunc(text, where);
        } catch (const Error& e) {
          QFAIL((where + ": " + e.formatted() + "\n" + text).c_str());
        }
        QVERIFY2(printFunc(g) == text, (where + " is not a fixed point:\n" + text + "\n---\n" + printFunc(g)).c_str());
        QVERIFY2(structuralEqual(f, g), (where + ": " + structuralDiff(f, g) + "\n" + text).c_str());
        ++checked;
      }
    }
    QVERIFY(checked > 20);
  }
};

QTEST_APPLESS_MAIN(TestLowered)
#include "test_lowered.moc"
