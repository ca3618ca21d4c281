// The Problems table model.
#include "views/ProblemsModel.h"

#include <QBrush>
#include <QColor>

namespace loom::views {

int ProblemsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_problems.size()); }
int ProblemsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : NumColumns; }

QVariant ProblemsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= m_problems.size()) return {};
  const Problem& p = m_problems[index.row()];
  if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
    switch (index.column()) {
    case Severity: return p.kind.isEmpty() ? p.severity : p.severity + " (" + p.kind + ")";
    case Location: return p.line > 0 ? QString("schedule.py:%1:%2").arg(p.line).arg(p.column) : QString();
    case Message: return role == Qt::DisplayRole ? p.message.section('\n', 0, 0) : p.message;
    }
  } else if (role == Qt::ForegroundRole && index.column() == Severity) {
    return QBrush(p.severity == "error" ? QColor(0xd0, 0x30, 0x30) : QColor(0xc0, 0x80, 0x00));
  } else if (role == Qt::UserRole) {
    return p.line;
  }
  return {};
}

QVariant ProblemsModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[NumColumns] = {"Severity", "Location", "Message"};
  return section >= 0 && section < NumColumns ? QString(names[section]) : QVariant();
}

void ProblemsModel::setProblems(const QVector<Problem>& problems) {
  beginResetModel();
  m_problems = problems;
  endResetModel();
}

}  // namespace loom::views
