// The IR after every lowering pass prints and parses back (what --print-after-all and the Studio show).
#include <QtTest>

#include <set>

#include "core/support/Error.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/Visitor.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "core/tir/StructuralEqual.h"
#include "core/topi/Workloads.h"
#include "core/transform/Pipeline.h"

using namespace loom;
using namespace loom::tir;

namespace {
/// True when every variable is bound once (loop, let, allocate, block axis).
bool isSSA(const PrimFunc& f) {
  std::set<const VarNode*> bound;
  bool ok = true;
  auto bind = [&](const Var& v) { ok &= !v.defined() || bound.insert(v.get()).second; };
  postOrderVisit(f->body, [&](const IRNode* n) {
    switch (n->nodeKind) {
    case NodeKind::For: bind(static_cast<const ForNode*>(n)->loopVar); break;
    case NodeKind::LetStmt: bind(static_cast<const LetStmtNode*>(n)->var); break;
    case NodeKind::Let: bind(static_cast<const LetNode*>(n)->var); break;
    case NodeKind::Allocate: bind(static_cast<const AllocateNode*>(n)->bufferVar); break;
    case NodeKind::Block:
      for (auto& iv : static_cast<const BlockNode*>(n)->iterVars) bind(iv.var);
      break;
    default: break;
    }
  });
  return ok;
}

/// Runs `f` and `g` on the same random inputs; "" when every array agrees, else a report.
std::string compareByInterpretation(const PrimFunc& f, const PrimFunc& g) {
  std::vector<runtime::NDArray> a = topi::makeParamArrays(f), b = topi::makeParamArrays(g);
  std::vector<Arg> argsA, argsB;
  for (size_t i = 0; i < a.size(); ++i) {
    fillRandom(a[i], 100 + i);
    fillRandom(b[i], 100 + i);
    argsA.push_back(a[i]);
    argsB.push_back(b[i]);
  }
  interpret(f, argsA);
  interpret(g, argsB);
  for (size_t i = 0; i < a.size(); ++i)
    if (!allClose(b[i], a[i], 0, 0)) return "argument " + std::to_string(i) + ": " + mismatchReport(b[i], a[i], 0, 0);
  return "";
}
}  // namespace

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
    int checked = 0, evaluated = 0;
    for (const auto& w : topi::allWorkloads()) {
      PrimFunc f = topi::buildWorkload(topi::makeWorkloadSpec(w.name));
      transform::PassContext ctx;
      bool evaluatedThis = false;
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
        if (isSSA(f)) {
          QVERIFY2(structuralEqual(f, g), (where + ": " + structuralDiff(f, g) + "\n" + text).c_str());
        } else if (!gpu && !evaluatedThis) {
          // A variable bound twice (partitioned loops reuse their loop var) parses back as two
          // variables: not structurally equal by definition, so compare what the code computes.
          std::string report = compareByInterpretation(f, g);
          QVERIFY2(report.empty(), (where + ": " + report + "\n" + text).c_str());
          ++evaluated;
          evaluatedThis = true;  // interpreting is slow: once per workload (CPU pipeline) is enough
        }
        ++checked;
      }
    }
    QVERIFY(checked > 20);
    qInfo("%d stages checked, %d non-SSA stages compared by interpretation", checked, evaluated);
  }
};

QTEST_APPLESS_MAIN(TestLowered)
#include "test_lowered.moc"
