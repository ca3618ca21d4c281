// Shared by the tune_mpi tests: mpirun's environment and arguments, record files read as JSON
// lines, a worker rank killed mid-run.
#pragma once
#include <QtTest>

#include <csignal>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/common/ProcessRun.h"

using loom::test::ProcessResult;


inline const QString kLoom = QStringLiteral(LOOM_BINARY_DIR "/bin/loom");

inline QProcessEnvironment mpiEnv() {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("OMPI_ALLOW_RUN_AS_ROOT", "1");
  env.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  env.insert("OMPI_MCA_mpi_yield_when_idle", "1");
  return env;
}

inline QStringList mpirunArgs(int ranks, const QStringList& tuneArgs) {
  return QStringList{"--oversubscribe", "--bind-to", "none", "-np", QString::number(ranks), kLoom, "tune"} + tuneArgs;
}

inline ProcessResult mpirun(int ranks, const QStringList& tuneArgs, QProcessEnvironment env = mpiEnv()) {
  return loom::test::runProcess(LOOM_MPIRUN, mpirunArgs(ranks, tuneArgs), 300000, env);
}

/// Every line of a record file as JSON; a line that does not parse fails the test (empty result).
inline std::vector<nlohmann::json> readRecords(const QString& path, bool* ok) {
  *ok = false;
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  std::vector<nlohmann::json> out;
  QByteArray all = f.readAll();
  if (!all.isEmpty() && !all.endsWith('\n')) return {}; // a line cut short
  for (const QByteArray& line : all.split('\n')) {
    if (line.trimmed().isEmpty()) continue;
    nlohmann::json j = nlohmann::json::parse(line.toStdString(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) return {};
    out.push_back(j);
  }
  *ok = true;
  return out;
}

inline std::set<std::string> keysOf(const nlohmann::json& j) {
  std::set<std::string> k;
  for (auto& [key, v] : j.items()) k.insert(key);
  return k;
}

/// Waits until `out` has `records` lines (at most 120 s), then SIGKILLs the worker rank `rank` of
/// the mpirun writing it (found by its OMPI_COMM_WORLD_RANK); false when either never happened.
inline bool killRankAfter(const QString& out, int records, int rank) {
  QElapsedTimer t;
  t.start();
  int lines = 0;
  while (t.elapsed() < 120000 && lines < records) {
    QThread::msleep(100);
    QFile f(out);
    if (f.open(QIODevice::ReadOnly)) lines = f.readAll().count('\n');
  }
  if (lines < records) return false;
  pid_t victim = -1;
  const QByteArray want = "OMPI_COMM_WORLD_RANK=" + QByteArray::number(rank);
  for (const QString& pid : QDir("/proc").entryList(QDir::Dirs)) {
    QFile env("/proc/" + pid + "/environ"), cmd("/proc/" + pid + "/cmdline");
    if (!env.open(QIODevice::ReadOnly) || !cmd.open(QIODevice::ReadOnly)) continue;
    QByteArray e = env.readAll(), c = cmd.readAll();
    if (c.contains("tune-worker") || !c.contains(QFile::encodeName(out))) continue;
    if (e.split('\0').contains(want)) victim = pid.toInt();
  }
  if (victim <= 0) return false;
  ::kill(victim, SIGKILL);
  return true;
}

inline int trialsIn(const std::vector<nlohmann::json>& rs) {
  int n = 0;
  for (auto& r : rs)
    if (!r.value("retime", false) && r.value("workload", std::string()).find("#baseline") == std::string::npos) ++n;
  return n;
}

