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
  for (const ModelInput& in : inputs) {
    QStringList dims;
    for (qint64 d : in.shape) dims << QString::number(d);
    auto* edit = new QLineEdit(dims.join(", "));
    edit->setObjectName(in.name);
    edit->setPlaceholderText(in.declared.join(", "));
    edit->setToolTip(QString("%1 declares (%2): %3 dims, comma-separated").arg(in.name, in.declared.join(", ")).arg(in.declared.size()));
    m_edits << edit;
    QString note = !in.isSymbolic()                      ? QString(" · static")
                   : in.shapeSource == "test_data_set_0" ? QString(" · now from test_data_set_0")
                   : !in.hasShape()                      ? QString(" · no values yet")
                                                         : QString();
    auto* label = new QLabel(QString("%1 (%2)%3").arg(in.name, in.declared.join(", "), note));
    form->addRow(label, edit);
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

void InputShapesDialog::accept() {
  QMap<QString, QVector<qint64>> shapes;
  for (int i = 0; i < m_inputs.size(); ++i) {
    QVector<qint64> dims;
    QString error;
    if (!parseDims(m_edits[i]->text(), int(m_inputs[i].declared.size()), dims, &error)) {
      m_error->setText(m_inputs[i].name + ": " + error);
      m_error->show();
      m_edits[i]->setFocus();
      return;
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
