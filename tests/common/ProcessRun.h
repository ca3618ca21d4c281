// Running a program (usually this build's `loom`) from a test and capturing its exit code and
// output: the one process runner the CLI, graph, model, deploy and GPU tests share.
#pragma once
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <optional>

#include "tests/common/Slowdown.h"

namespace loom::test {

struct ProcessResult {
  int exitCode = -1;  ///< -2 when the program crashed, -1 when it did not finish (err says so)
  QString out, err;
};

/// Runs `program args` (in `env` when given) and waits up to `timeoutMs` times testSlowdown(); a
/// program still running then is killed.
inline ProcessResult runProcess(const QString& program, const QStringList& args, int timeoutMs,
                                const std::optional<QProcessEnvironment>& env = std::nullopt) {
  QProcess p;
  if (env) p.setProcessEnvironment(*env);
  p.start(program, args);
  ProcessResult r;
  if (!p.waitForFinished(timeoutMs < 0 ? timeoutMs : scaledMs(timeoutMs))) {
    p.kill();
    r.err = "timeout or failed to start";
    return r;
  }
  r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}

#ifdef LOOM_BINARY_DIR
/// This build's `loom` with `args`.
inline ProcessResult runLoomBinary(const QStringList& args, int timeoutMs,
                                   const std::optional<QProcessEnvironment>& env = std::nullopt) {
  return runProcess(QStringLiteral(LOOM_BINARY_DIR "/bin/loom"), args, timeoutMs, env);
}
#endif

}  // namespace loom::test
