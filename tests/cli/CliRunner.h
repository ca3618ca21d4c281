// Runs the `loom` binary for the CLI tests and captures its exit code and output.
#pragma once
#include <QFile>
#include <QString>
#include <QStringList>

#include "tests/common/ProcessRun.h"

using CliResult = loom::test::ProcessResult;

inline CliResult runLoom(const QStringList& args) { return loom::test::runLoomBinary(args, 120000); }

inline bool writeText(const QString& path, const QString& text) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return false;
  return f.write(text.toUtf8()) >= 0;
}
