// Every TE workload preset round-trips through the text form (fixed point and structural equality).
#include <QtTest>

#include "core/support/Error.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "core/tir/StructuralEqual.h"
#include "core/topi/Workloads.h"

using namespace loom;
using namespace loom::tir;

class TestWorkloads : public QObject {
  Q_OBJECT
private slots:
  void everyPresetRoundTrips() {
    const auto& all = topi::allWorkloads();
    QVERIFY(!all.empty());
    for (const auto& w : all) {
      topi::WorkloadSpec spec = topi::makeWorkloadSpec(w.name);
      PrimFunc f = topi::buildWorkload(spec);
      std::string text = printFunc(f);
      PrimFunc g;
      try {
        g = parseFunc(text, w.name + ".py");
      } catch (const Error& e) {
        QFAIL((spec.str() + ": " + e.formatted() + "\n" + text).c_str());
      }
      QVERIFY2(printFunc(g) == text, (spec.str() + " is not a fixed point:\n" + text + "\n" + printFunc(g)).c_str());
      QVERIFY2(structuralEqual(f, g), (spec.str() + ": " + structuralDiff(f, g)).c_str());
      QVERIFY2(text.find("T.block") != std::string::npos, spec.str().c_str());
    }
  }

  void lineMapCoversEveryBlock() {
    for (const auto& w : topi::allWorkloads()) {
      PrimFunc f = topi::buildWorkload(topi::makeWorkloadSpec(w.name));
      PrintResult r = printWithMap(f);
      int lines = static_cast<int>(std::count(r.text.begin(), r.text.end(), '\n'));
      for (auto& [s, range] : r.stmtLines) {
        QVERIFY(range.first >= 1 && range.first <= range.last && range.last <= lines);
        if (auto* br = s.as<BlockRealizeNode>()) {
          // The first line of a block is its `with T.block("name"):` line.
          std::string first;
          size_t at = 0;
          for (int l = 1; l < range.first; ++l) at = r.text.find('\n', at) + 1;
          first = r.text.substr(at, r.text.find('\n', at) - at);
          if (br->block->name != "root")
            QVERIFY2(first.find("T.block(\"" + br->block->name + "\")") != std::string::npos, first.c_str());
        }
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestWorkloads)
#include "test_workloads.moc"
