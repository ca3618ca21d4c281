// The Runs table model.
#include "views/RunsModel.h"

#include <algorithm>

#include <QBrush>
#include <QColor>

namespace loom::views {

int RunsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_runs.size()); }
int RunsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : NumColumns; }

QVariant RunsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= m_runs.size()) return {};
  const RunRecord& r = m_runs[index.row()];
  double peak = r.peakGflops > 0 && r.ok && r.flopsKnown && r.device.isEmpty() ? r.gflops / r.peakGflops : -1;
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
    case Id: return QString("#%1").arg(r.id);
    case Time:
      if (!r.ok) return QString("failed");
      if (r.defaultMs > 0) return QString("%1 ms (default %2)").arg(r.medianMs, 0, 'f', 4).arg(r.defaultMs, 0, 'f', 4);
      if (r.repeats > 0 && r.medianMs > 0)
        return QString("%1 ms ±%2% (median of %3)").arg(r.medianMs, 0, 'f', 4)
            .arg(100 * std::max(r.maxMs - r.medianMs, r.medianMs - r.minMs) / r.medianMs, 0, 'f', 1).arg(r.repeats);
      return QString::number(r.medianMs, 'f', 4) + " ms";
    case Gflops: return !r.ok ? QString() : r.flopsKnown ? QString::number(r.gflops, 'f', 1) + " GFLOP/s" : QString("GFLOP/s unknown");
    case Peak:
      if (peak >= 0) return QString::number(100 * peak, 'f', 1) + "% of peak";
      return QString(!r.ok ? "" : r.flopsKnown && r.device.isEmpty() ? "…" : "—");
    case Correct:
      if (!r.ok) return "✗ " + r.error.section('\n', 0, 0);
      return r.correct ? QString("✓ correct") : QString("✗ wrong (err %1)").arg(r.maxRelError, 0, 'e', 2);
    case Version: return QString("schedule v%1").arg(r.scheduleVersion);
    case Preset: return r.preset;
    case Target: return r.device.isEmpty() ? r.target : r.target + " (" + r.device + ")";
    }
  } else if (role == RawRole) {
    switch (index.column()) {
    case Id: return r.id;
    case Time: return r.medianMs;
    case Gflops: return r.gflops;
    case Peak: return peak;
    case Correct: return r.ok && r.correct;
    case Version: return r.scheduleVersion;
    case Preset: return r.preset;
    case Target: return r.target;
    }
  } else if (role == Qt::ForegroundRole && index.column() == Correct) {
    return QBrush(r.ok && r.correct ? QColor(0x2e, 0x9d, 0x4a) : QColor(0xd0, 0x30, 0x30));
  } else if (role == Qt::ToolTipRole) {
    if (!r.ok) return r.error;
    return QString("compared with the %1, max relative error %2").arg(r.reference).arg(r.maxRelError, 0, 'e', 2) +
           (r.repeats > 0 ? QString("\ntime: median %1 ms, min %2, max %3 over %4 samples of %5 call(s), after a ~20 ms warm-up")
                                .arg(r.medianMs, 0, 'f', 4).arg(r.minMs, 0, 'f', 4).arg(r.maxMs, 0, 'f', 4).arg(r.repeats).arg(r.callsPerRepeat)
                          : QString());
  } else if (role == Qt::TextAlignmentRole && (index.column() == Time || index.column() == Gflops || index.column() == Peak)) {
    return int(Qt::AlignRight | Qt::AlignVCenter);
  }
  return {};
}

QVariant RunsModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[NumColumns] = {"Run", "Time", "Throughput", "Peak", "Check", "Schedule", "Preset", "Target"};
  return section >= 0 && section < NumColumns ? QString(names[section]) : QVariant();
}

void RunsModel::addRun(const RunRecord& r) {
  beginInsertRows({}, int(m_runs.size()), int(m_runs.size()));
  m_runs.push_back(r);
  endInsertRows();
}

void RunsModel::clear() {
  beginResetModel();
  m_runs.clear();
  endResetModel();
}

int RunsModel::removeIf(const std::function<bool(const RunRecord&)>& drop) {
  int removed = 0;
  for (int i = int(m_runs.size()) - 1; i >= 0; --i)
    if (drop(m_runs[i])) {
      beginRemoveRows({}, i, i);
      m_runs.remove(i);
      endRemoveRows();
      ++removed;
    }
  return removed;
}

}  // namespace loom::views
