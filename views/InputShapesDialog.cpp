// The input shapes dialog: each row is parsed by the CLI's --input-shapes grammar.
#include "views/InputShapesDialog.h"

#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>
#include <algorithm>

#include "core/driver/InputShapes.h"
#include "core/support/Error.h"

namespace loom::views {

namespace {

/// Row `text` ("1, 3, 48, W<=2048=320" or "[1,3,48,?]") of input `name` as one --input-shapes
/// entry, parsed by driver::parseInputShapes; false with its error (column and caret) or a rank
/// error.
bool parseRow(const QString& name, const QString& text, int rank, driver::InputShape* out, QString* error) {
  QString t = text.trimmed();
  if (t.startsWith('[') && t.endsWith(']')) t = t.mid(1, t.size() - 2);
  try {
    driver::InputShapes parsed = driver::parseInputShapes((name + ":[" + t + "]").toStdString());
    *out = parsed.inputs.at(0);
  } catch (const Error& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  if (int(out->dims.size()) != rank) {
    if (error) *error = QString("%1: %2 dims given, the input has %3").arg(name).arg(out->dims.size()).arg(rank);
    return false;
  }
  return true;
}

/// The dim's number: a static extent or a symbol's value (`W=320`); -1 when it has none.
qint64 valueOf(const driver::InputDim& d) { return d.isStatic() ? d.value : d.example > 0 ? d.example : -1; }

bool isSymbolName(const QString& declared) { return !declared.isEmpty() && !declared[0].isDigit(); }

}  // namespace

InputShapesDialog::InputShapesDialog(const QVector<ModelInput>& inputs, QWidget* parent, const QString& symbolic)
    : QDialog(parent), m_inputs(inputs) {
  setWindowTitle("Input shapes");
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel("The shapes of the model's inputs, as `loom compile --input-shapes` takes them. Numbers are "
                           "the concrete shapes the kernels opened in the editor, runs, profiles, tuning and a static "
                           "export use; a symbol keeps a dim symbolic in the graph and a dynamic export: W, ? (the "
                           "model's own), W<=2048 (bounded), W=320 or W<=2048=320 (with a value for the kernels).");
  intro->setWordWrap(true);
  layout->addWidget(intro);
  // The rows set to stay symbolic start as set, with the values in use.
  std::map<std::string, driver::InputShape> symbolicRows;
  try {
    for (const driver::InputShape& s : driver::parseInputShapes(symbolic.toStdString()).inputs) symbolicRows[s.name] = s;
  } catch (const Error&) {
  }
  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
  for (const ModelInput& in : inputs) {
    QStringList dims;
    auto row = symbolicRows.find(in.name.toStdString());
    if (row != symbolicRows.end() && int(row->second.dims.size()) == in.declared.size()) {
      for (int d = 0; d < in.declared.size(); ++d) {
        driver::InputDim dim = row->second.dims[size_t(d)];
        if (!dim.isStatic() && in.hasShape() && d < in.shape.size()) dim.example = in.shape[d];
        dims << QString::fromStdString(dim.str());
      }
    } else {
      for (qint64 d : in.shape) dims << QString::number(d);
    }
    auto* edit = new QLineEdit(dims.join(", "));
    edit->setObjectName(in.name);
    edit->setMinimumWidth(280);
    edit->setPlaceholderText(in.declared.join(", "));
    edit->setToolTip(QString("%1 declares (%2): %3 dims, comma-separated; a number, a symbol (W), ?, a bound (W<=2048), "
                             "a value (W=320)")
                         .arg(in.name, in.declared.join(", "))
                         .arg(in.declared.size()));
    m_edits << edit;
    // Under the edit: the values its symbolic dims take, as typed, and where the shown ones came from.
    auto* note = new QLabel;
    note->setObjectName(in.name + "_note");
    note->setStyleSheet("color: palette(placeholder-text)");
    m_notes << note;
    const int r = int(m_edits.size()) - 1;
    const QString source = !in.isSymbolic()                      ? QString("static")
                           : in.shapeSource == "test_data_set_0" ? QString("from the model's test_data_set_0")
                           : in.shapeSource == "set"             ? QString("as set")
                                                                 : QString("no values yet");
    auto update = [this, r, source] {
      QString values = symbolValues(r);
      bool unchanged = m_edits[r]->text() == m_initial.value(r);
      m_notes[r]->setText(values.isEmpty() ? source : unchanged ? values + " · " + source : values);
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
  m_error->setObjectName("inputShapesError");
  m_error->setStyleSheet("color: #c02020");
  m_error->setTextFormat(Qt::PlainText);  // "W<=]" is not markup
  m_error->setWordWrap(true);
  m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_error->hide();
  layout->addWidget(m_error);
  m_errorCaret = new QLabel;
  m_errorCaret->setObjectName("inputShapesErrorCaret");
  m_errorCaret->setStyleSheet("color: #c02020");
  m_errorCaret->setTextFormat(Qt::PlainText);
  m_errorCaret->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_errorCaret->hide();
  layout->addWidget(m_errorCaret);
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

QString InputShapesDialog::errorText() const {
  if (m_error->isHidden()) return QString();
  return m_errorCaret->isHidden() ? m_error->text() : m_error->text() + "\n" + m_errorCaret->text();
}

void InputShapesDialog::showError(int row, const QString& text) {
  // The grammar's errors end with the text and a caret under the column: the message wraps, the
  // text and caret stay aligned in a fixed-width font.
  const qsizetype nl = text.indexOf('\n');
  m_error->setText(nl < 0 ? text : text.left(nl));
  m_error->show();
  m_errorCaret->setText(nl < 0 ? QString() : text.mid(nl + 1));
  m_errorCaret->setVisible(nl >= 0);
  if (row >= 0) m_edits[row]->setFocus();
}

QString InputShapesDialog::symbolValues(int i) const {
  const ModelInput& in = m_inputs[i];
  driver::InputShape typed;
  bool ok = parseRow(in.name, m_edits[i]->text(), int(in.declared.size()), &typed, nullptr);
  QStringList parts;
  for (int d = 0; d < in.declared.size(); ++d) {
    const QString& name = in.declared[d];
    const driver::InputDim* t = ok ? &typed.dims[size_t(d)] : nullptr;
    if (!isSymbolName(name) && !(t && !t->isStatic())) continue;  // static in the file and typed as a number
    QString label = name == "?" || !isSymbolName(name) ? QString("dim %1").arg(d) : name;
    if (!t) {
      parts << label + " = ?";
      continue;
    }
    if (!t->symbol.empty() && QString::fromStdString(t->symbol) != label) label += " as " + QString::fromStdString(t->symbol);
    QString part = label;
    if (t->bound >= 0) part += QString(" <= %1").arg(t->bound);
    qint64 v = valueOf(*t);
    part += v > 0 ? QString(t->bound >= 0 ? ", = %1" : " = %1").arg(v) : QString(" (no value)");
    parts << part;
  }
  return parts.join(", ");
}

void InputShapesDialog::accept() {
  QMap<QString, QVector<qint64>> shapes;
  QStringList symbolicParts;
  QMap<QString, QPair<qint64, QString>> symbols;  // a named dim's value and the input that gave it
  for (int i = 0; i < m_inputs.size(); ++i) {
    driver::InputShape typed;
    QString error;
    if (!parseRow(m_inputs[i].name, m_edits[i]->text(), int(m_inputs[i].declared.size()), &typed, &error)) {
      showError(i, error);
      return;
    }
    QVector<qint64> values;
    QStringList dims;
    bool anySymbolic = false;
    for (int d = 0; d < int(typed.dims.size()); ++d) {
      const driver::InputDim& t = typed.dims[size_t(d)];
      const qint64 v = valueOf(t);
      values << std::max<qint64>(v, 0);  // 0: no value (test_data_set_0's, else none)
      anySymbolic |= !t.isStatic();
      driver::InputDim noValue = t;
      noValue.example = -1;
      dims << QString::fromStdString(noValue.str());
      // A dim named in several inputs (batch, seq) takes one value.
      const QString& name = m_inputs[i].declared[d];
      if (!isSymbolName(name) || name == "?" || v <= 0) continue;
      if (auto it = symbols.find(name); it != symbols.end() && it->first != v) {
        showError(i, QString("%1 is %2 in %3 but %4 in %5: one value for both").arg(name).arg(it->first).arg(it->second).arg(v).arg(m_inputs[i].name));
        return;
      }
      symbols.insert(name, {v, m_inputs[i].name});
    }
    if (anySymbolic) symbolicParts << m_inputs[i].name + ":[" + dims.join(',') + "]";
    // Only what differs from the file's static dims is an override.
    bool same = true;
    for (int d = 0; d < values.size(); ++d) same &= m_inputs[i].declared[d] == QString::number(values[d]);
    if (!same) shapes[m_inputs[i].name] = values;
  }
  // Across inputs: a symbol bounded twice takes one bound (the grammar checks it).
  QString symbolic = symbolicParts.join(',');
  try {
    if (!symbolic.isEmpty()) driver::parseInputShapes(symbolic.toStdString());
  } catch (const Error& e) {
    showError(-1, QString::fromStdString(e.what()));
    return;
  }
  m_shapes = shapes;
  m_symbolic = symbolic;
  QDialog::accept();
}

}  // namespace loom::views
