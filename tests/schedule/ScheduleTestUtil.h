// Shared helpers of the schedule tests: workloads and the before/after equivalence check.
#pragma once
#include <QtTest>
#include <string>

#include "core/schedule/Primitives.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Script.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/Printer.h"
#include "core/tir/StructuralEqual.h"
#include "core/topi/Workloads.h"

namespace loom::tir::testing {

inline PrimFunc workload(const std::string& spec) { return topi::buildWorkload(topi::parseWorkloadSpec(spec)); }

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
  for (size_t i = 0; i < a.size(); ++i) err = std::max(err, maxRelError(b[i], a[i]));
  return err;
}

/// Applies `script` to a fresh schedule of `f`; fails the test with the script error otherwise.
inline Schedule scheduled(const PrimFunc& f, const std::string& script) {
  Schedule sch(f);
  ScriptResult r = runScript(sch, script, "test.py");
  if (!r.ok) qWarning("%s\n%s", r.message.c_str(), r.detail.c_str());
  return sch;
}

}  // namespace loom::tir::testing
