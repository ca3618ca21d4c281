// Helpers of the model tests: small graphs, random inputs, comparison, running `loom`.
#pragma once
#include <QProcess>
#include <QString>
#include <QStringList>
#include <cmath>
#include <random>

#include "core/graph/Expr.h"
#include "runtime/NDArray.h"

namespace loom::test {

inline runtime::NDArray randomArray(const std::vector<int64_t>& shape, unsigned seed) {
  runtime::NDArray a = runtime::NDArray::empty(shape, runtime::DType::f32());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (int64_t i = 0; i < a.numel(); ++i) a.as<float>()[i] = u(rng);
  return a;
}

/// Max abs difference of two float32 arrays (infinity when shapes differ).
inline double maxDiff(const runtime::NDArray& a, const runtime::NDArray& b) {
  if (a.shape() != b.shape() || !(a.dtype() == b.dtype())) return INFINITY;
  double d = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.as<float>()[i], y = b.as<float>()[i];
    if (std::isnan(x) != std::isnan(y)) return INFINITY;
    d = std::max(d, std::fabs(x - y));
  }
  return d;
}

struct LoomResult {
  int exitCode = -1;
  QString out, err;
};

inline LoomResult runLoom(const QStringList& args) {
  QProcess p;
  p.start(QStringLiteral(LOOM_BINARY_DIR "/bin/loom"), args);
  LoomResult r;
  if (!p.waitForFinished(300000)) {
    p.kill();
    r.err = "timeout or failed to start";
    return r;
  }
  r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}

}  // namespace loom::test
