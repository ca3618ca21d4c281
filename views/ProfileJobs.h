// Model > Profile: the profile of a compiled model (per kernel and per node), the machine's peaks
// it is measured against, and the worker process (`loom profile`) that makes it.
#pragma once
#include <QDateTime>
#include <QJsonObject>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QVector>

#include "views/StudioTypes.h"

namespace loom::views {

struct ModelGroups;

/// The machine's fp32 FMA peak and copy bandwidth on the threads the kernels use, measured once
/// (by the profile worker, as bench_peak does) and cached in the user's cache folder
/// (machine.json, the fields of bench/machine.json) for this CPU and thread count.
struct MachinePeaks {
  double peakGflops = 0, bandwidthGBs = 0;
  int threads = 0;
  QString cpu;
  bool valid() const { return peakGflops > 0 && bandwidthGBs > 0; }
  /// The intensity (FLOP/byte) where the bandwidth roof meets the compute roof.
  double ridge() const { return bandwidthGBs > 0 ? peakGflops / bandwidthGBs : 0; }
  /// min(peak, bandwidth * intensity): the best GFLOP/s a kernel of this intensity can reach.
  double roof(double intensity) const;

  /// This machine's CPU name (/proc/cpuinfo "model name").
  static QString cpuName();
  /// The cache file (QStandardPaths::CacheLocation/machine.json).
  static QString cachePath();
  /// The cached peaks for this CPU on `threads` threads (invalid when none are cached).
  static MachinePeaks loadCached(int threads);
  bool saveCache() const;
};

/// One kernel of a profile: its time over all calls in one run (median of the runs).
struct KernelProfile {
  QString name;       ///< the kernel's name (a fused group's kernel)
  QString schedule;   ///< "default", "tuned:R.json", ...
  int calls = 0;
  double totalMs = 0;
  double flops = 0;   ///< one call (0: unknown)
  double bytes = 0;   ///< one call's arguments, read / written once (0: unknown)
  double perCallMs() const { return calls ? totalMs / calls : 0; }
  double gflops() const { return totalMs > 0 ? flops * calls / totalMs / 1e6 : 0; }
  double gbs() const { return totalMs > 0 ? bytes * calls / totalMs / 1e6 : 0; }
  double intensity() const { return bytes > 0 ? flops / bytes : 0; }
};

/// One node of the compiled model's graph (a fused group's call, or an output copy).
struct NodeProfile {
  QString name, func;
  double medianMs = 0;
};

/// A profile of the whole model: one row of the model-level Runs history.
struct ProfileResult {
  int id = 0;
  QDateTime when;
  QString model, target, layout, records, inputs;  ///< records: the tuning records applied ("" none)
  QString inputShapes;   ///< "data:[1,3,224,224]"
  QString label;         ///< what was profiled: "default schedules", "tuned: R.json", "edited: group"
  int repeat = 0, warmup = 0, threads = 0;
  double compileMs = 0, medianMs = 0;
  QVector<double> runMs;  ///< each timed run's total
  QVector<KernelProfile> kernels;
  QVector<NodeProfile> nodes;
  MachinePeaks machine;   ///< measured by this profile's worker (invalid when it used the cache)
  /// The sum of the nodes' medians: what shares are fractions of.
  double nodeSumMs() const;
  /// Kernel index by name, or -1.
  int kernelIndex(const QString& name) const;
  /// Share of the model's time spent in `kernel` (0..1).
  double share(int kernel) const;
  /// Per cluster of the fused view (clusterNodeNames of the model's groups): its node's time (0 when absent).
  QVector<double> clusterMs(const QVector<QString>& clusterNodeNames) const;
};

/// A profile as JSON for the session file, and back (false when `o` is not one).
QJsonObject profileToJson(const ProfileResult& r);
bool profileFromJson(const QJsonObject& o, ProfileResult& r);

/// Parses the JSON `loom profile --json` writes. False with `error` set when it is not one.
bool parseProfileJson(const QByteArray& json, ProfileResult& out, QString* error);

/// What to profile and how.
struct ProfileRequest {
  QString model, layout = "NCHWc", inputShapes, records, inputsNpz, target = "llvm";
  QString label;
  /// A kernel scheduled by a script instead (the editor's text for the open fused group).
  QString scriptKernel, scriptText;
  int repeat = 20, warmup = 3;
  bool measureMachine = false;
};

/// Runs `loom profile` in a worker process (the UI thread only reads its output), parses its
/// result and reports. One profile at a time; cancel() kills the worker.
class Profiler : public QObject {
  Q_OBJECT
public:
  explicit Profiler(QObject* parent = nullptr);
  ~Profiler() override;
  void start(const ProfileRequest& request);
  void cancel();
  bool isRunning() const;
  /// The worker's command line of the last start (for the log).
  QStringList lastCommand() const { return m_command; }

signals:
  void progress(const QString& line);
  void finished(const loom::views::ProfileResult& result);
  void failed(const QString& message);

private:
  QProcess* m_process = nullptr;
  QString m_jsonPath, m_scriptPath, m_stderrTail;
  QStringList m_command;
  ProfileRequest m_request;
  bool m_cancelled = false;
};

}  // namespace loom::views

Q_DECLARE_METATYPE(loom::views::ProfileResult)
