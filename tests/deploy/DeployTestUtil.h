// Shared pieces of the deploy tests: running `loom` and the deploy program, comparing outputs.
#pragma once
#include <QString>
#include <QStringList>

#include <algorithm>
#include <cmath>

#include "runtime/NDArray.h"
#include "tests/common/ProcessRun.h"

namespace loom::test {

using Proc = ProcessResult;

/// Runs `program` (up to 5 minutes); with `path` set, PATH is only that directory (no linker, no cc).
inline Proc runProgram(const QString& program, const QStringList& args, const QString& path = {}) {
  std::optional<QProcessEnvironment> env;
  if (!path.isEmpty()) {
    env = QProcessEnvironment::systemEnvironment();
    env->insert("PATH", path);
  }
  return runProcess(program, args, 300000, env);
}

/// The `loom` binary of this build (LOOM_CLI, set by tests/deploy/CMakeLists.txt).
inline Proc runLoom(const QStringList& args, const QString& path = {}) { return runProgram(LOOM_CLI, args, path); }

/// Largest |a - b| of two float32 arrays; infinite when shapes or dtypes differ or either has a NaN.
inline double maxDiff(const runtime::NDArray& a, const runtime::NDArray& b) {
  if (a.shape() != b.shape() || !(a.dtype() == b.dtype())) return INFINITY;
  double d = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.as<float>()[i], y = b.as<float>()[i];
    if (std::isnan(x) || std::isnan(y)) return INFINITY;
    d = std::max(d, std::fabs(x - y));
  }
  return d;
}

}  // namespace loom::test
