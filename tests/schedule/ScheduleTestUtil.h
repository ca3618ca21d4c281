// Shared helpers of the schedule tests: workloads and the before/after equivalence check.
#pragma once
#include <QtTest>
#include <string>

#include "core/schedule/Primitives.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Script.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "core/tir/StructuralEqual.h"
#include "core/topi/Workloads.h"

/// Compares two texts and prints both in full when they differ (QCOMPARE truncates).
#define LOOM_COMPARE_TEXT(got, want)                                                               \
  do {                                                                                             \
    const std::string g_ = (got), w_ = (want);                                                     \
    if (g_ != w_) qWarning("--- got:\n%s\n--- want:\n%s", g_.c_str(), w_.c_str());                 \
    QVERIFY(g_ == w_);                                                                             \
  } while (0)

namespace loom::tir::testing {

inline PrimFunc workload(const std::string& spec) {
  return topi::buildWorkload(topi::parseWorkloadSpec(spec));
}

/// Runs `before` and `after` on the same random inputs and returns the largest relative error
/// over all parameters (outputs differ when the schedule changed the meaning).
inline double maxErrorBetween(const PrimFunc& before, const PrimFunc& after, uint64_t seed = 7) {
  auto a = topi::makeParamArrays(before);
  auto b = topi::makeParamArrays(after);
  std::vector<Arg> argsA, argsB;
  for (size_t i = 0; i < a.size(); ++i) {
    fillRandom(a[i], seed + i);
    fillRandom(b[i], seed + i);
    argsA.push_back(a[i]);
    argsB.push_back(b[i]);
  }
  interpret(before, argsA);
  interpret(after, argsB);
  double err = 0;
  for (size_t i = 0; i < a.size(); ++i)
    err = std::max(err, maxRelError(b[i], a[i]));
  return err;
}

/// Applies `script` to a fresh schedule of `f`; fails the test with the script error otherwise.
inline Schedule scheduled(const PrimFunc& f, const std::string& script) {
  Schedule sch(f);
  ScriptResult r = runScript(sch, script, "test.py");
  if (!r.ok) qWarning("%s\n%s", r.message.c_str(), r.detail.c_str());
  return sch;
}

/// Parses `tvmscript`, runs `script` on it and returns the printed result (or the script error).
inline std::string applyAndPrint(const std::string& tvmscript, const std::string& script) {
  PrimFunc f = parseFunc(tvmscript, "input.py");
  Schedule sch(f);
  ScriptResult r = runScript(sch, script, "s.py");
  if (!r.ok) return r.message;
  return printFunc(sch.func());
}

/// Runs `script` on `f` and returns the error kind ("" on success) and message.
inline std::pair<std::string, std::string> scriptError(const PrimFunc& f,
                                                       const std::string& script) {
  Schedule sch(f);
  ScriptResult r = runScript(sch, script, "s.py");
  return {r.errorKind, r.message};
}

} // namespace loom::tir::testing
