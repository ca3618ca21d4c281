// Shared by the tune_mpi tests: mpirun's environment and arguments, record files read as JSON
// lines, a worker rank killed mid-run.
#pragma once
#include <QtTest>

#include <csignal>
#include <map>
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

/// `loom tune tuneArgs` on `ranks` ranks. In a sanitizer build (loom::test::testSlowdown() > 1) the
/// tuner's per-candidate --timeout (the one given, else the default 10 s) is scaled too: an ASan
/// build of a candidate took more than 10 s at load 8-10 (rel12).
inline QStringList mpirunArgs(int ranks, QStringList tuneArgs) {
  if (const int slow = loom::test::testSlowdown(); slow > 1) {
    const qsizetype at = tuneArgs.indexOf("--timeout");
    if (at >= 0 && at + 1 < tuneArgs.size())
      tuneArgs[at + 1] = QString::number(tuneArgs[at + 1].toDouble() * slow);
    else
      tuneArgs << "--timeout" << QString::number(10 * slow);
  }
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

/// What killRankAfter did: the record count when it killed, the victim and every process it took
/// for a match (pid and parent), for a failure's message.
struct KillReport {
  bool killed = false;
  int recordsAtKill = 0;
  pid_t victim = -1;
  QString matches; ///< "pid(parent pid) ..."
  QString describe() const {
    return QString("killed %1 at %2 records; processes of that rank: %3").arg(victim).arg(recordsAtKill).arg(matches);
  }
};

/// Waits until `out` has `records` lines (at most 120 s times testSlowdown()), then SIGKILLs the worker rank `rank` of
/// the mpirun writing it; `killed` false when either never happened. The rank is the process with
/// OMPI_COMM_WORLD_RANK=rank in its environment and `out` on its command line whose parent is not
/// such a process: a child the rank has just forked to run a candidate (`loom tune-worker`) has
/// the rank's environment, and its command line too until its exec. Up to session mpi8 the last
/// such process in /proc was killed, which could be that child (forks follow new records): the
/// candidate failed, the rank lived, the run finished and mpirun exited 0 -- test_mpi_evolutionary
/// "mpirun reported success after a rank died" in 1 of 7 runs (mpi7) and 1 of 15 (mpi8); a replica
/// of that choice killed the rank's child in 3 of 25 runs, each time mpirun exited 0 with the full
/// budget, and the rank itself in the other 22 (one match each), mpirun exiting 137.
inline KillReport killRankAfter(const QString& out, int records, int rank) {
  KillReport report;
  QElapsedTimer t;
  t.start();
  int lines = 0;
  while (t.elapsed() < 120000 * loom::test::testSlowdown() && lines < records) {
    QThread::msleep(100);
    QFile f(out);
    if (f.open(QIODevice::ReadOnly)) lines = f.readAll().count('\n');
  }
  if (lines < records) return report;
  const QByteArray want = "OMPI_COMM_WORLD_RANK=" + QByteArray::number(rank);
  std::map<pid_t, pid_t> matches; // pid -> parent pid
  for (const QString& pid : QDir("/proc").entryList(QDir::Dirs)) {
    QFile env("/proc/" + pid + "/environ"), cmd("/proc/" + pid + "/cmdline"), stat("/proc/" + pid + "/stat");
    if (!env.open(QIODevice::ReadOnly) || !cmd.open(QIODevice::ReadOnly) || !stat.open(QIODevice::ReadOnly)) continue;
    QByteArray e = env.readAll(), c = cmd.readAll(), s = stat.readAll();
    if (c.contains("tune-worker") || !c.contains(QFile::encodeName(out)) || !e.split('\0').contains(want)) continue;
    // "pid (comm) state ppid ...": the parent is the second field after the command's ')'.
    QList<QByteArray> fields = s.mid(s.lastIndexOf(')') + 2).split(' ');
    matches[pid.toInt()] = fields.size() > 1 ? fields[1].toInt() : 0;
  }
  for (auto [pid, parent] : matches) {
    report.matches += QString("%1(%2) ").arg(pid).arg(parent);
    if (!matches.count(parent)) {
      if (report.victim > 0) return report; // two ranks with that number: not the job we think
      report.victim = pid;
    }
  }
  if (report.victim <= 0) return report;
  QFile f(out);
  if (f.open(QIODevice::ReadOnly)) report.recordsAtKill = int(f.readAll().count('\n'));
  report.killed = ::kill(report.victim, SIGKILL) == 0;
  return report;
}

inline int trialsIn(const std::vector<nlohmann::json>& rs) {
  int n = 0;
  for (auto& r : rs)
    if (!r.value("retime", false) && r.value("workload", std::string()).find("#baseline") == std::string::npos) ++n;
  return n;
}

