// Runs the `loom` binary for the CLI tests and captures its exit code and output.
#pragma once
#include <QProcess>
#include <QString>
#include <QStringList>

struct CliResult {
  int exitCode = -1;
  QString out, err;
};

inline CliResult runLoom(const QStringList& args) {
  QProcess p;
  p.start(QStringLiteral(LOOM_BINARY_DIR "/bin/loom"), args);
  CliResult r;
  if (!p.waitForFinished(120000)) {
    p.kill();
    r.err = "timeout or failed to start";
    return r;
  }
  r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}

inline bool writeText(const QString& path, const QString& text) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return false;
  return f.write(text.toUtf8()) >= 0;
}
