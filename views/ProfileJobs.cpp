// The profile worker (`loom profile` in a process of its own), its JSON, and the machine's peaks.
#include "views/ProfileJobs.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>
#include <QTemporaryFile>
#include <QScopeGuard>
#include <QUuid>
#include <algorithm>

#include "views/TuningMonitor.h"

namespace loom::views {

double MachinePeaks::roof(double intensity) const { return std::min(peakGflops, bandwidthGBs * intensity); }

QString MachinePeaks::cpuName() {
  QFile f("/proc/cpuinfo");
  if (!f.open(QIODevice::ReadOnly)) return "unknown CPU";
  for (const QByteArray& line : f.readAll().split('\n'))
    if (line.startsWith("model name")) return QString::fromUtf8(line.mid(line.indexOf(':') + 1)).trimmed();
  return "unknown CPU";
}

QString MachinePeaks::cachePath() {
  return QDir(QStandardPaths::writableLocation(QStandardPaths::CacheLocation)).filePath("machine.json");
}

MachinePeaks MachinePeaks::loadCached(int threads) {
  MachinePeaks p;
  QFile f(cachePath());
  if (!f.open(QIODevice::ReadOnly)) return p;
  QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
  if (o["cpu"].toString() != cpuName()) return p;  // another machine's (a copied home folder)
  QString t = QString::number(threads) + "t";
  p.peakGflops = o["fma_peak_gflops_" + t].toDouble();
  p.bandwidthGBs = o["copy_bandwidth_gbs_" + t].toDouble();
  p.threads = threads;
  p.cpu = o["cpu"].toString();
  return p;
}

bool MachinePeaks::saveCache() const {
  if (!valid()) return false;
  QString path = cachePath();
  QDir().mkpath(QFileInfo(path).absolutePath());
  QJsonObject o;
  if (QFile f(path); f.open(QIODevice::ReadOnly)) o = QJsonDocument::fromJson(f.readAll()).object();
  if (o["cpu"].toString() != cpuName()) o = QJsonObject();
  QString t = QString::number(threads) + "t";
  o["cpu"] = cpuName();
  o["fma_peak_gflops_" + t] = peakGflops;
  o["copy_bandwidth_gbs_" + t] = bandwidthGBs;
  o["recorded_utc"] = QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
  o["note"] = "measured by Loom Studio's profile worker (loom profile --measure-machine)";
  QFile f(path);
  return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(QJsonDocument(o).toJson()) > 0;
}

double ProfileResult::nodeSumMs() const {
  double s = 0;
  for (const NodeProfile& n : nodes) s += n.medianMs;
  return s;
}

int ProfileResult::kernelIndex(const QString& name) const {
  for (int k = 0; k < kernels.size(); ++k)
    if (kernels[k].name == name) return k;
  return -1;
}

double ProfileResult::share(int kernel) const {
  double total = nodeSumMs();
  return kernel >= 0 && kernel < kernels.size() && total > 0 ? kernels[kernel].totalMs / total : 0;
}

QVector<double> ProfileResult::clusterMs(const QVector<QString>& clusterNodeNames) const {
  QHash<QString, double> byName;
  for (const NodeProfile& n : nodes) byName.insert(n.name, n.medianMs);
  QVector<double> out;
  for (const QString& name : clusterNodeNames) out << byName.value(name, 0);
  return out;
}

QJsonObject profileToJson(const ProfileResult& r) {
  QJsonObject o;
  o["id"] = r.id;
  o["when"] = r.when.toString(Qt::ISODate);
  o["model"] = r.model;
  o["target"] = r.target;
  o["layout"] = r.layout;
  o["records"] = r.records;
  o["inputs"] = r.inputs;
  o["inputShapes"] = r.inputShapes;
  o["label"] = r.label;
  o["repeat"] = r.repeat;
  o["warmup"] = r.warmup;
  o["threads"] = r.threads;
  o["compileMs"] = r.compileMs;
  o["medianMs"] = r.medianMs;
  QJsonArray runs;
  for (double v : r.runMs) runs.append(v);
  o["runMs"] = runs;
  QJsonArray kernels;
  for (const KernelProfile& k : r.kernels)
    kernels.append(QJsonObject{{"name", k.name}, {"schedule", k.schedule}, {"calls", k.calls}, {"totalMs", k.totalMs},
                               {"flops", k.flops}, {"bytes", k.bytes}});
  o["kernels"] = kernels;
  QJsonArray nodes;
  for (const NodeProfile& n : r.nodes) nodes.append(QJsonObject{{"name", n.name}, {"func", n.func}, {"medianMs", n.medianMs}});
  o["nodes"] = nodes;
  o["machine"] = QJsonObject{{"peakGflops", r.machine.peakGflops}, {"bandwidthGBs", r.machine.bandwidthGBs},
                             {"threads", r.machine.threads}, {"cpu", r.machine.cpu}};
  return o;
}

bool profileFromJson(const QJsonObject& o, ProfileResult& r) {
  if (!o.contains("kernels") || !o.contains("nodes")) return false;
  r.id = o["id"].toInt();
  r.when = QDateTime::fromString(o["when"].toString(), Qt::ISODate);
  r.model = o["model"].toString();
  r.target = o["target"].toString();
  r.layout = o["layout"].toString();
  r.records = o["records"].toString();
  r.inputs = o["inputs"].toString();
  r.inputShapes = o["inputShapes"].toString();
  r.label = o["label"].toString();
  r.repeat = o["repeat"].toInt();
  r.warmup = o["warmup"].toInt();
  r.threads = o["threads"].toInt();
  r.compileMs = o["compileMs"].toDouble();
  r.medianMs = o["medianMs"].toDouble();
  r.runMs.clear();
  for (const QJsonValue& v : o["runMs"].toArray()) r.runMs << v.toDouble();
  r.kernels.clear();
  for (const QJsonValue& v : o["kernels"].toArray())
    r.kernels << KernelProfile{v["name"].toString(), v["schedule"].toString(), v["calls"].toInt(), v["totalMs"].toDouble(),
                               v["flops"].toDouble(), v["bytes"].toDouble()};
  r.nodes.clear();
  for (const QJsonValue& v : o["nodes"].toArray()) r.nodes << NodeProfile{v["name"].toString(), v["func"].toString(), v["medianMs"].toDouble()};
  QJsonObject m = o["machine"].toObject();
  r.machine.peakGflops = m["peakGflops"].toDouble();
  r.machine.bandwidthGBs = m["bandwidthGBs"].toDouble();
  r.machine.threads = m["threads"].toInt();
  r.machine.cpu = m["cpu"].toString();
  return true;
}

bool parseProfileJson(const QByteArray& json, ProfileResult& out, QString* error) {
  QJsonParseError err;
  QJsonDocument doc = QJsonDocument::fromJson(json, &err);
  if (!doc.isObject() || !doc.object().contains("kernels") || !doc.object().contains("nodes")) {
    if (error) *error = "the profile worker's output is not a profile (" + err.errorString() + ")";
    return false;
  }
  QJsonObject o = doc.object();
  out.model = o["model"].toString();
  out.target = o["target"].toString();
  out.layout = o["layout"].toString();
  out.records = o["tuning_records"].toString();
  out.threads = o["threads"].toInt();
  out.compileMs = o["compile_ms"].toDouble();
  out.warmup = o["warmup"].toInt();
  out.repeat = o["repeat"].toInt();
  out.medianMs = o["median_ms"].toDouble();
  out.runMs.clear();
  for (const QJsonValue& v : o["run_ms"].toArray()) out.runMs << v.toDouble();
  QStringList shapes;
  for (const QJsonValue& v : o["inputs"].toArray()) {
    QStringList dims;
    for (const QJsonValue& d : v["shape"].toArray()) dims << QString::number(qint64(d.toDouble()));
    shapes << v["name"].toString() + ":[" + dims.join(',') + "]";
  }
  out.inputShapes = shapes.join(',');
  out.kernels.clear();
  for (const QJsonValue& v : o["kernels"].toArray()) {
    KernelProfile k;
    k.name = v["name"].toString();
    k.schedule = v["schedule"].toString();
    k.calls = v["calls"].toInt();
    k.totalMs = v["total_ms"].toDouble();
    k.flops = v["flops"].toDouble();
    k.bytes = v["bytes"].toDouble();
    out.kernels << k;
  }
  out.nodes.clear();
  for (const QJsonValue& v : o["nodes"].toArray()) out.nodes << NodeProfile{v["name"].toString(), v["func"].toString(), v["median_ms"].toDouble()};
  if (o.contains("machine")) {
    QJsonObject m = o["machine"].toObject();
    out.machine.peakGflops = m["fma_peak_gflops"].toDouble();
    out.machine.bandwidthGBs = m["copy_bandwidth_gbs"].toDouble();
    out.machine.threads = m["threads"].toInt();
    out.machine.cpu = MachinePeaks::cpuName();
  }
  return true;
}

Profiler::Profiler(QObject* parent) : QObject(parent) { qRegisterMetaType<ProfileResult>(); }

Profiler::~Profiler() {
  if (m_process) {
    m_process->disconnect(this);
    m_process->kill();
    m_process->waitForFinished(2000);
  }
}

bool Profiler::isRunning() const { return m_process && m_process->state() != QProcess::NotRunning; }

void Profiler::cancel() {
  if (!isRunning()) return;
  m_cancelled = true;
  m_process->kill();
}

void Profiler::start(const ProfileRequest& req) {
  if (isRunning()) cancel();
  if (m_process) {
    m_process->disconnect(this);
    m_process->waitForFinished(2000);
    m_process->deleteLater();
  }
  m_request = req;
  m_cancelled = false;
  m_stderrTail.clear();
  QString loom = TuningMonitor::findLoomBinary();
  if (loom.isEmpty()) {
    emit failed("cannot find the `loom` program (beside loom-studio, in LOOM_BINARY or on PATH) to run the profile");
    return;
  }
  m_jsonPath = QDir(QDir::tempPath()).filePath("loom-profile-" + QUuid::createUuid().toString(QUuid::WithoutBraces) + ".json");
  QStringList args{"profile", req.model, "--json", m_jsonPath, "--repeat", QString::number(req.repeat), "--warmup",
                   QString::number(req.warmup), "--desired-layout", req.layout, "--target", req.target};
  if (!req.inputShapes.isEmpty()) args << "--input-shapes" << req.inputShapes;
  if (!req.records.isEmpty()) args << "--tuning-records" << req.records;
  if (!req.inputsNpz.isEmpty()) args << "--inputs" << req.inputsNpz;
  if (req.measureMachine) args << "--measure-machine";
  m_scriptPath.clear();
  if (!req.scriptKernel.isEmpty()) {
    m_scriptPath = QDir(QDir::tempPath()).filePath("loom-profile-" + QUuid::createUuid().toString(QUuid::WithoutBraces) + ".py");
    QFile f(m_scriptPath);
    if (!f.open(QIODevice::WriteOnly) || f.write(req.scriptText.toUtf8()) < 0) {
      emit failed("cannot write " + m_scriptPath);
      return;
    }
    args << "--kernel-schedule" << req.scriptKernel + "=" + m_scriptPath;
  }
  m_command = QStringList{loom} + args;
  m_process = new QProcess(this);
  connect(m_process, &QProcess::readyReadStandardError, this, [this] {
    QString text = QString::fromUtf8(m_process->readAllStandardError());
    m_stderrTail = (m_stderrTail + text).right(4000);
    for (const QString& line : text.split('\n', Qt::SkipEmptyParts)) emit progress(line.trimmed());
  });
  connect(m_process, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
    QString json = m_jsonPath, script = m_scriptPath;
    auto cleanup = qScopeGuard([json, script] {
      QFile::remove(json);
      if (!script.isEmpty()) QFile::remove(script);
    });
    if (m_cancelled) {
      emit failed("profile cancelled");
      return;
    }
    if (status != QProcess::NormalExit || code != 0) {
      QString why = m_stderrTail.trimmed().section('\n', -3);
      emit failed(QString("the profile worker %1: %2").arg(status == QProcess::NormalExit ? QString("failed (exit code %1)").arg(code) : QString("crashed"),
                                                          why.isEmpty() ? QString("no message") : why));
      return;
    }
    QFile f(json);
    ProfileResult r;
    QString error;
    if (!f.open(QIODevice::ReadOnly) || !parseProfileJson(f.readAll(), r, &error)) {
      emit failed(error.isEmpty() ? "the profile worker wrote no result" : error);
      return;
    }
    r.when = QDateTime::currentDateTime();
    r.label = m_request.label;
    r.inputs = m_request.inputsNpz.isEmpty() ? QString("random") : QFileInfo(m_request.inputsNpz).fileName();
    emit finished(r);
  });
  connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) emit failed("cannot start " + m_command.value(0) + ": " + m_process->errorString());
  });
  m_process->start(loom, args);
}

}  // namespace loom::views
