// The Runs dock's table: one row per measured run (time, GFLOP/s, % of peak, correctness, version).
#pragma once
#include <QAbstractTableModel>
#include <functional>

#include "views/StudioTypes.h"

namespace loom::views {

class RunsModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Id, Time, Gflops, Peak, Correct, Version, Preset, Target, NumColumns };
  /// Qt::UserRole gives the raw number (ms, GFLOP/s, fraction of peak, bool) of a cell.
  static constexpr int RawRole = Qt::UserRole;

  using QAbstractTableModel::QAbstractTableModel;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

  void addRun(const RunRecord& r);
  void clear();
  /// Removes the runs for which `drop` is true; returns how many.
  int removeIf(const std::function<bool(const RunRecord&)>& drop);
  const RunRecord& record(int row) const { return m_runs[row]; }
  const QVector<RunRecord>& records() const { return m_runs; }

private:
  QVector<RunRecord> m_runs;
};

}  // namespace loom::views
