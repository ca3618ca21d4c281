// The input shapes dialog.
#include "views/InputShapesDialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

namespace loom::views {

InputShapesDialog::InputShapesDialog(const QVector<ModelInput>& inputs, QWidget* parent) : QDialog(parent), m_inputs(inputs) {
  setWindowTitle("Input shapes");
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel("The concrete shapes of the model's inputs: the kernels opened in the editor, runs, "
                           "profiles, tuning and a static export use them. The graph keeps the model's symbolic "
                           "dims (batch, W, ...).");
  intro->setWordWrap(true);
  layout->addWidget(intro);
  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
  for (const ModelInput& in : inputs) {
    QStringList dims;
    for (qint64 d : in.shape) dims << QString::number(d);
    auto* edit = new QLineEdit(dims.join(", "));
    edit->setObjectName(in.name);
    edit->setMinimumWidth(240);
    edit->setPlaceholderText(in.declared.join(", "));
    edit->setToolTip(QString("%1 declares (%2): %3 dims, comma-separated").arg(in.name, in.declared.join(", ")).arg(in.declared.size()));
    m_edits << edit;
    // Under the edit: the values its symbolic dims take, as typed, and where the shown ones came from.
    auto* note = new QLabel;
    note->setObjectName(in.name + "_note");
    note->setStyleSheet("color: palette(placeholder-text)");
    m_notes << note;
    const int row = int(m_edits.size()) - 1;
    const QString source = !in.isSymbolic()                      ? QString("static")
                           : in.shapeSource == "test_data_set_0" ? QString("from the model's test_data_set_0")
                           : in.shapeSource == "set"             ? QString("as set")
                                                                 : QString("no values yet");
    auto update = [this, row, source] {
      QString values = symbolValues(row);
      bool unchanged = m_edits[row]->text() == m_initial.value(row);
      m_notes[row]->setText(values.isEmpty() ? source : unchanged ? values + " · " + source : values);
    };
    m_initial << edit->text();
    connect(edit, &QLineEdit::textChanged, this, update);
    update();
    auto* field = new QVBoxLayout;
    field->setSpacing(2);
    field->addWidget(edit);
    field->addWidget(note);
    form->addRow(new QLabel(QString("%1 (%2)").arg(in.name, in.declared.join(", "))), field);
  }
  layout->addLayout(form);
  m_error = new QLabel;
  m_error->setStyleSheet("color: #c02020");
  m_error->setWordWrap(true);
  m_error->hide();
  layout->addWidget(m_error);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  connect(buttons, &QDialogButtonBox::accepted, this, &InputShapesDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
}

QLineEdit* InputShapesDialog::editFor(const QString& name) const {
  for (QLineEdit* e : m_edits)
    if (e->objectName() == name) return e;
  return nullptr;
}

bool InputShapesDialog::parseDims(const QString& text, int rank, QVector<qint64>& out, QString* error) {
  out.clear();
  QString t = text.trimmed();
  if (t.startsWith('[') && t.endsWith(']')) t = t.mid(1, t.size() - 2);
  for (const QString& part : t.split(',', Qt::SkipEmptyParts)) {
    bool ok = false;
    qint64 v = part.trimmed().toLongLong(&ok);
    if (!ok || v <= 0) {
      if (error) *error = QString("'%1' is not a positive whole number").arg(part.trimmed());
      return false;
    }
    out << v;
  }
  if (out.size() != rank) {
    if (error) *error = QString("%1 dims given, the input has %2").arg(out.size()).arg(rank);
    return false;
  }
  return true;
}

QString InputShapesDialog::symbolValues(int i) const {
  QVector<qint64> dims;
  const ModelInput& in = m_inputs[i];
  if (!in.isSymbolic()) return QString();
  bool ok = parseDims(m_edits[i]->text(), int(in.declared.size()), dims, nullptr);
  QStringList parts;
  for (int d = 0; d < in.declared.size(); ++d) {
    const QString& name = in.declared[d];
    if (!name.isEmpty() && name[0].isDigit()) continue;
    parts << QString("%1 = %2").arg(name == "?" ? QString("dim %1").arg(d) : name, ok ? QString::number(dims[d]) : QString("?"));
  }
  return parts.join(", ");
}

void InputShapesDialog::accept() {
  QMap<QString, QVector<qint64>> shapes;
  QMap<QString, QPair<qint64, QString>> symbols;  // a named dim's value and the input that gave it
  for (int i = 0; i < m_inputs.size(); ++i) {
    QVector<qint64> dims;
    QString error;
    if (!parseDims(m_edits[i]->text(), int(m_inputs[i].declared.size()), dims, &error)) {
      m_error->setText(m_inputs[i].name + ": " + error);
      m_error->show();
      m_edits[i]->setFocus();
      return;
    }
    // A dim named in several inputs (batch, seq) takes one value.
    for (int d = 0; d < dims.size(); ++d) {
      const QString& name = m_inputs[i].declared[d];
      if (name.isEmpty() || name[0].isDigit() || name == "?") continue;
      if (auto it = symbols.find(name); it != symbols.end() && it->first != dims[d]) {
        m_error->setText(QString("%1 is %2 in %3 but %4 in %5: one value for both")
                             .arg(name).arg(it->first).arg(it->second).arg(dims[d]).arg(m_inputs[i].name));
        m_error->show();
        m_edits[i]->setFocus();
        return;
      }
      symbols.insert(name, {dims[d], m_inputs[i].name});
    }
    // Only what differs from the file's static dims is an override.
    bool same = true;
    for (int d = 0; d < dims.size(); ++d) same &= m_inputs[i].declared[d] == QString::number(dims[d]);
    if (!same) shapes[m_inputs[i].name] = dims;
  }
  m_shapes = shapes;
  QDialog::accept();
}

}  // namespace loom::views
