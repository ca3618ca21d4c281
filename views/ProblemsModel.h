// The Problems dock's list: schedule script errors and build failures, with their locations.
#pragma once
#include <QAbstractTableModel>

namespace loom::views {

class ProblemsModel : public QAbstractTableModel {
  Q_OBJECT
public:
  struct Problem {
    QString severity;  ///< "error" or "warning"
    QString kind;      ///< error class ("ScheduleError", "ParseError", ...)
    QString message;
    int line = 0, column = 0;  ///< 1-based in the schedule script (0: none)
  };
  enum Column { Severity, Location, Message, NumColumns };

  using QAbstractTableModel::QAbstractTableModel;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

  void setProblems(const QVector<Problem>& problems);
  const QVector<Problem>& problems() const { return m_problems; }

private:
  QVector<Problem> m_problems;
};

}  // namespace loom::views
