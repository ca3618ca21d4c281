// The Export dialog: compileModel + exportModel on a worker thread, progress, cancel, the written members.
#include "views/ExportDialog.h"

#include <onnx/onnx_pb.h>

#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableView>
#include <QThread>
#include <QVBoxLayout>
#include <exception>

#include "codegen/SharedLibrary.h"
#include "core/driver/CompileModel.h"
#include "core/driver/ExportLibrary.h"
#include "core/driver/SymbolBounds.h"
#include "core/support/Error.h"
#include "core/tune/ModelTasks.h"
#include "core/tune/database/JsonDatabase.h"
#include "runtime/Tar.h"
#include "views/Background.h"
#include "views/Session.h"

namespace loom::views {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

/// The names of the ONNX graph's outputs, in order (empty when the file does not parse), so the
/// package's outputs keep the model's names.
std::vector<std::string> onnxOutputNames(const QString& path) {
  std::vector<std::string> names;
  QFile f(path);
  onnx::ModelProto model;
  if (!f.open(QIODevice::ReadOnly)) return names;
  QByteArray bytes = f.readAll();
  if (!model.ParseFromArray(bytes.constData(), int(bytes.size()))) return names;
  for (const auto& out : model.graph().output()) names.push_back(out.name());
  return names;
}

/// Where the export writes before it is complete: a hidden name beside `path` with its suffix
/// (the suffix picks the format), renamed over `path` at the end.
QString partialPath(const QString& path) {
  QFileInfo fi(path);
  return fi.absoluteDir().filePath(QString(".%1.exporting-%2.%3").arg(fi.completeBaseName()).arg(QApplication::applicationPid()).arg(fi.suffix()));
}

/// The path with its ".so" replaced by ".o" (a cross target's object when no linker exists).
QString objectPath(const QString& path) { return path.left(path.size() - 3) + ".o"; }

ExportOutcome exportModelFile(const QString& modelPath, std::shared_ptr<const graph::Module> module, const QString& target,
                              int optLevel, const QString& layout, const QString& records, const QString& output,
                              const std::shared_ptr<std::atomic<bool>>& cancel,
                              const std::function<void(const QString&, int, int)>& progress,
                              const std::map<std::string, int64_t>& symbolBounds = {}) {
  ExportOutcome out;
  out.path = output;
  QString partial = partialPath(output);
  try {
    if (!output.endsWith(".tar") && !output.endsWith(".so"))
      LOOM_THROW(ValueError) << "output '" << output.toStdString() << "': name it NAME.tar (a package of files) or NAME.so (one shared library)";
    std::string t = target.toStdString();
    bool cTarget = driver::isCTarget(t);
    driver::canonicalTarget(t);  // throws TargetError for a malformed target before the long work
    const graph::Module& m = *module;
    driver::CompileModelOptions co;
    co.optLevel = optLevel;
    co.desiredLayout = optLevel >= 1 ? layout.toStdString() : std::string();
    co.outputNames = onnxOutputNames(modelPath);
    auto recordUse = std::make_shared<tune::RecordUse>();
    if (!records.isEmpty())
      co.scheduleFor = tune::scheduleProviderFromRecords(records.toStdString(), cTarget ? std::string("llvm") : t, recordUse);
    co.progress = [&](const std::string& what, int done, int total) {
      if (cancel->load()) LOOM_THROW(Error) << "cancelled";
      progress(q(what), done, total);
    };
    driver::CompiledModel cm = driver::compileModel(m, t, {}, co);
    driver::applySymbolBounds(cm, symbolBounds);  // a dynamic export's bounds (none for a static one)
    if (!records.isEmpty()) cm.tuningRecords.push_back(records.toStdString());
    out.kernels = int(cm.kernels.size());
    for (const std::string& s : cm.scheduleSources) out.kernelsTuned += s.rfind("tuned:", 0) == 0;
    if (cancel->load()) LOOM_THROW(Error) << "cancelled";
    driver::ExportOptions eo;
    eo.progress = [&](const std::string& what, int done, int total) { progress("code generation: " + q(what), done, total); };
    progress("generating code", 0, 1);
    driver::ExportResult r;
    try {
      r = driver::exportModel(cm, partial.toStdString(), eo);
    } catch (const LinkerNotFoundError&) {
      // The object was written beside the partial name: keep it under the name the user chose.
      if (QFile::exists(objectPath(partial))) {
        QFile::remove(objectPath(output));
        QFile::rename(objectPath(partial), objectPath(output));
      }
      throw;
    }
    if (cancel->load()) {
      QFile::remove(partial);
      LOOM_THROW(Error) << "cancelled";
    }
    QFile::remove(output);
    if (!QFile::rename(partial, output)) {
      QFile::remove(partial);
      LOOM_THROW(Error) << "cannot write " << output.toStdString();
    }
    for (const std::string& n : r.notes) out.notes << q(n);
    const int withRecord = out.kernels - recordUse->count[tune::RecordChoice::Why::NoRecord];
    if (!records.isEmpty() && withRecord > out.kernelsTuned)
      out.notes << QString("%1 of %2 kernels use a record (%3): a record is used only when it was measured faster "
                           "than the default schedule")
                       .arg(out.kernelsTuned).arg(out.kernels).arg(q(recordUse->summary()));
    if (!records.isEmpty() && withRecord == 0) {
      // Records are keyed by target and by the kernel's computation (its conv layout included).
      QStringList targets;
      tune::JsonDatabase file(records.toStdString());
      for (const tune::TuningRecord& rec : file.all())
        if (!targets.contains(q(rec.target))) targets << q(rec.target);
      out.notes << QString("no kernel had a record in %1 for target '%2' in this conv layout (the file holds records for: %3); "
                           "export with the target and layout the model was tuned in")
                       .arg(QFileInfo(records).fileName(), target, targets.isEmpty() ? QString("nothing") : targets.join(", "));
    }
    if (output.endsWith(".tar")) {
      for (const auto& [name, bytes] : runtime::readTar(output.toStdString())) out.members.push_back({q(name), qint64(bytes.size())});
    } else {
      out.members.push_back({QFileInfo(output).fileName(), QFileInfo(output).size()});
    }
    out.ok = true;
  } catch (const Error& e) {
    out.error = cancel->load() ? QString("cancelled") : QString("%1: %2").arg(e.kind(), q(e.what()));
  } catch (const std::exception& e) {
    out.error = cancel->load() ? QString("cancelled") : q(e.what());
  }
  if (!out.ok) QFile::remove(partial);
  return out;
}

}  // namespace

ExportDialog::ExportDialog(const QString& modelPath, std::shared_ptr<const graph::Module> module, QWidget* parent)
    : QDialog(parent), m_modelPath(modelPath), m_module(std::move(module)) {
  buildUi();
}

ExportDialog::ExportDialog(Session* session, QWidget* parent)
    : ExportDialog(session->modelPath(), session->model() ? session->model()->module : nullptr, parent) {
  const ModelData* model = session->model();
  if (!model) return;
  setLayout(model->layout);
  if (!model->hasSymbolicInputs() || !model->dynamicModule || !model->symbolicNote.isEmpty()) return;
  m_dynamicModule = model->dynamicModule;
  m_symbolBounds = model->symbolBounds;
  QStringList dynamicDims, staticDims;
  // The symbolic module's own dims (as Model > Input Shapes… may have named or bounded them).
  for (const graph::Var& p : m_dynamicModule->main()->params) {
    const auto* t = p->checkedType.get() ? graph::Type(p->checkedType).as<graph::TensorTypeNode>() : nullptr;
    if (!t) continue;
    QStringList dims;
    for (const graph::Dim& d : t->shape) dims << QString::fromStdString(d.str());
    dynamicDims << QString::fromStdString(p->name) + ":[" + dims.join(",") + "]";
  }
  for (const auto& [symbol, bound] : m_symbolBounds) dynamicDims << QString("%1 <= %2").arg(QString::fromStdString(symbol)).arg(bound);
  for (const ModelInput& in : model->inputs) {
    QStringList dims;
    for (qint64 d : in.shape) dims << QString::number(d);
    if (in.hasShape()) staticDims << in.name + ":[" + dims.join(",") + "]";
  }
  m_dynamicShapes = dynamicDims.join(", ");
  m_staticShapes = model->concrete() ? staticDims.join(", ") : QString();
  m_shapes->clear();
  m_shapes->addItem(QString("dynamic: symbolic dims kept (%1), runs at any input shape").arg(m_dynamicShapes), true);
  m_shapes->addItem(m_staticShapes.isEmpty() ? QString("static: set the input shapes first (Model > Input Shapes…)")
                                             : QString("static at %1").arg(m_staticShapes),
                    false);
  m_shapes->setCurrentIndex(model->concrete() ? 1 : 0);
  m_shapes->setEnabled(true);
  findChild<QLabel*>("shapesLabel")->show();
  m_shapes->show();
}

bool ExportDialog::setDynamic(bool dynamic) {
  if (!m_dynamicModule || (!dynamic && !m_module)) return false;
  m_shapes->setCurrentIndex(dynamic ? 0 : 1);
  return true;
}

bool ExportDialog::isDynamic() const { return m_dynamicModule && m_shapes->currentData().toBool(); }

ExportDialog::~ExportDialog() {
  // The worker finishes its step (lowering stops at the next kernel; code generation cannot be
  // interrupted), removes the partial file and finds the dialog gone.
  if (m_cancel) m_cancel->store(true);
  if (m_thread) m_thread->wait();
}

void ExportDialog::buildUi() {
  setObjectName("exportDialog");
  setWindowTitle("Export Model Package");
  auto* layout = new QVBoxLayout(this);
  auto* form = new QFormLayout;
  m_modelLabel = new QLabel(m_modelPath.isEmpty() ? QString("no model open (File > Open Model)") : m_modelPath);
  m_modelLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
  form->addRow("Model:", m_modelLabel);
  m_target = new QComboBox;
  m_target->setEditable(true);
  m_target->addItems({"llvm", "llvm -mcpu=native", "llvm -mtriple=aarch64-linux-gnu", "c"});
  m_target->setToolTip("llvm: this CPU · llvm -mtriple=...: another machine (cross-compiled, not runnable here) · "
                       "c: the kernels as C source (kernels.c, compiled with cc when one exists)");
  form->addRow("Target:", m_target);
  m_optLevel = new QSpinBox;
  m_optLevel->setRange(0, 3);
  m_optLevel->setValue(3);
  m_optLevel->setToolTip("0: every op its own kernel, no schedule · 1: fusion · 2-3: fusion and the default CPU schedule");
  form->addRow("Opt level:", m_optLevel);
  m_layout = new QComboBox;
  m_layout->addItem("default of the opt level (NCHWc at 3)", QString());
  m_layout->addItem("NCHW (as imported)", QString("NCHW"));
  m_layout->addItem("NCHWc (channel-blocked)", QString("NCHWc"));
  m_layout->setToolTip("Conv layout of the kernels; tuning records apply to kernels of the layout they were tuned in");
  form->addRow("Conv layout:", m_layout);
  m_shapes = new QComboBox;
  m_shapes->setObjectName("shapesBox");
  m_shapes->setToolTip("dynamic: the package takes any input shape (symbolic dims are bound when inputs are set) · "
                       "static: compiled for the concrete input shapes only");
  auto* shapesLabel = new QLabel("Input shapes:");
  shapesLabel->setObjectName("shapesLabel");
  form->addRow(shapesLabel, m_shapes);
  shapesLabel->hide();
  m_shapes->hide();  // shown for models with symbolic dims
  auto* recordsRow = new QHBoxLayout;
  m_records = new QLineEdit;
  m_records->setPlaceholderText("none: every kernel gets the default schedule");
  m_records->setToolTip("Tuning records (JSON lines): each kernel with a record for this target (and tuned in this conv "
                        "layout) gets its best schedule");
  auto* browseRecords = new QPushButton("…");
  browseRecords->setMaximumWidth(30);
  recordsRow->addWidget(m_records, 1);
  recordsRow->addWidget(browseRecords);
  form->addRow("Tuning records:", recordsRow);
  auto* outputRow = new QHBoxLayout;
  m_output = new QLineEdit(defaultOutputPath(m_modelPath));
  m_output->setToolTip("NAME.tar: a package of files (kernels.so, graph.json, params.bin, metadata.json) · "
                       "NAME.so: one shared library with the graph, params and metadata embedded");
  auto* browseOutput = new QPushButton("…");
  browseOutput->setMaximumWidth(30);
  outputRow->addWidget(m_output, 1);
  outputRow->addWidget(browseOutput);
  form->addRow("Output:", outputRow);
  layout->addLayout(form);

  m_progress = new QProgressBar;
  m_progress->setRange(0, 100);
  m_progress->setValue(0);
  m_status = new QLabel("ready");
  m_status->setWordWrap(true);
  layout->addWidget(m_progress);
  layout->addWidget(m_status);
  m_messages = new QPlainTextEdit;
  m_messages->setReadOnly(true);
  m_messages->setMaximumHeight(90);
  m_messages->setPlaceholderText("errors and notes of the export");
  layout->addWidget(m_messages);
  m_members = new QStandardItemModel(this);
  m_members->setHorizontalHeaderLabels({"member", "bytes"});
  m_membersView = new QTableView;
  m_membersView->setModel(m_members);
  m_membersView->verticalHeader()->hide();
  m_membersView->horizontalHeader()->setStretchLastSection(true);
  m_membersView->setEditTriggers(QAbstractItemView::NoEditTriggers);
  layout->addWidget(m_membersView, 1);

  auto* buttons = new QDialogButtonBox;
  m_export = buttons->addButton("Export", QDialogButtonBox::AcceptRole);
  m_export->setObjectName("exportButton");
  m_cancelButton = buttons->addButton("Cancel Export", QDialogButtonBox::ActionRole);
  m_close = buttons->addButton(QDialogButtonBox::Close);
  layout->addWidget(buttons);
  resize(620, 520);

  connect(browseRecords, &QPushButton::clicked, this, [this] {
    QString path = QFileDialog::getOpenFileName(this, "Tuning records", m_records->text(), "Tuning records (*.json *.jsonl);;All files (*)");
    if (!path.isEmpty()) m_records->setText(path);
  });
  connect(browseOutput, &QPushButton::clicked, this, [this] {
    QString path = QFileDialog::getSaveFileName(this, "Export to", m_output->text(), "Package (*.tar);;Shared library (*.so)");
    if (!path.isEmpty()) m_output->setText(path);
  });
  // The buttons are wired by hand: Export must not close the dialog.
  disconnect(buttons, &QDialogButtonBox::accepted, nullptr, nullptr);
  connect(m_export, &QPushButton::clicked, this, &ExportDialog::startExport);
  connect(m_cancelButton, &QPushButton::clicked, this, &ExportDialog::cancelExport);
  connect(m_close, &QPushButton::clicked, this, &ExportDialog::reject);
  updateButtons();
}

QString ExportDialog::defaultOutputPath(const QString& modelPath, const QString& sessionPath) {
  QDir folder = sessionPath.isEmpty() ? QDir::current() : QFileInfo(sessionPath).absoluteDir();
  if (modelPath.isEmpty()) return folder.filePath("model.tar");
  QFileInfo fi(modelPath);
  QString base = fi.completeBaseName() == "model" ? fi.absoluteDir().dirName() : fi.completeBaseName();
  return folder.filePath(base + ".tar");
}

void ExportDialog::setTarget(const QString& target) { m_target->setCurrentText(target); }
void ExportDialog::setOptLevel(int level) { m_optLevel->setValue(level); }
void ExportDialog::setLayout(const QString& layout) { m_layout->setCurrentIndex(std::max(0, m_layout->findData(layout))); }
void ExportDialog::setRecordsPath(const QString& path) { m_records->setText(path); }
void ExportDialog::setOutputPath(const QString& path) { m_output->setText(path); }
QString ExportDialog::outputPath() const { return m_output->text().trimmed(); }
QString ExportDialog::statusText() const { return m_status->text(); }

void ExportDialog::updateButtons() {
  m_export->setEnabled(!m_running);
  m_cancelButton->setEnabled(m_running);
  for (QWidget* w : std::initializer_list<QWidget*>{m_target, m_optLevel, m_layout, m_shapes, m_records, m_output}) w->setEnabled(!m_running);
}

bool ExportDialog::startExport() {
  if (m_running) return false;
  QString output = outputPath(), records = m_records->text().trimmed(), target = m_target->currentText().trimmed();
  QString why;
  if (m_modelPath.isEmpty()) why = "no model is open: open one with File > Open Model, then export it";
  else if (isDynamic() && !m_dynamicModule) why = "the model is still loading; export when it is shown";
  else if (!isDynamic() && !m_module)
    why = m_dynamicModule ? QString("a static export needs the model's input shapes: set them with Model > Input Shapes…, or export the dynamic module")
                          : QString("the model is still loading; export when it is shown");
  else if (output.isEmpty()) why = "choose an output file (NAME.tar or NAME.so)";
  else if (!output.endsWith(".tar") && !output.endsWith(".so")) why = QString("output '%1': name it NAME.tar (a package of files) or NAME.so (one shared library)").arg(output);
  else if (!records.isEmpty() && !QFileInfo(records).isFile()) why = QString("tuning records '%1': no such file").arg(records);
  else if (target.isEmpty()) why = "choose a target";
  if (!why.isEmpty()) {
    m_status->setText("cannot export: " + why);
    m_messages->setPlainText(why);
    return false;
  }
  m_members->removeRows(0, m_members->rowCount());
  m_messages->clear();
  m_outcome = ExportOutcome{};
  m_running = true;
  m_cancel = std::make_shared<std::atomic<bool>>(false);
  quint64 run = ++m_run;
  m_progress->setValue(0);
  m_status->setText("exporting…");
  updateButtons();

  QPointer<ExportDialog> self(this);
  auto cancel = m_cancel;
  auto post = [self](auto fn) {
    postToGui(qApp, [self, fn] {
      if (self) fn(self.data());
    });
  };
  QString modelPath = m_modelPath;
  auto module = isDynamic() ? m_dynamicModule : m_module;
  std::map<std::string, int64_t> bounds = isDynamic() ? m_symbolBounds : std::map<std::string, int64_t>{};
  int optLevel = m_optLevel->value();
  QString layout = m_layout->currentData().toString();
  QThread* thread = QThread::create([=] {
    auto progress = [&](const QString& what, int done, int total) {
      post([run, what, done, total](ExportDialog* d) { d->onProgress(run, what, done, total); });
    };
    ExportOutcome outcome = exportModelFile(modelPath, module, target, optLevel, layout, records, output, cancel, progress, bounds);
    post([run, outcome](ExportDialog* d) { d->onFinished(run, outcome); });
  });
  connect(thread, &QThread::finished, thread, &QObject::deleteLater);
  m_thread = thread;
  thread->start();
  return true;
}

void ExportDialog::cancelExport() {
  if (!m_running) return;
  m_cancel->store(true);
  m_status->setText("cancelling: the step in progress finishes, nothing is written…");
  m_cancelButton->setEnabled(false);
}

void ExportDialog::reject() {
  cancelExport();
  QDialog::reject();
}

void ExportDialog::onProgress(quint64 run, const QString& what, int done, int total) {
  if (run != m_run || !m_running) return;
  // Lowering the kernels fills the first 60%, code generation the rest.
  bool codegen = what.startsWith("generating code") || what.startsWith("code generation");
  double fraction = total > 0 ? double(done) / total : 0;
  int value = codegen ? 60 + int(40 * fraction) : int(60 * fraction);
  m_progress->setValue(std::max(m_progress->value(), std::min(value, 99)));
  m_status->setText(total > 1 && !codegen ? QString("[%1/%2] %3").arg(std::min(done + 1, total)).arg(total).arg(what) : what + "…");
}

void ExportDialog::onFinished(quint64 run, const ExportOutcome& outcome) {
  if (run != m_run) return;
  m_running = false;
  m_outcome = outcome;
  updateButtons();
  if (!outcome.ok) {
    m_progress->setValue(0);
    m_status->setText(outcome.error == "cancelled" ? QString("cancelled: nothing was written") : QString("export failed"));
    m_messages->setPlainText(outcome.error);
    emit exportFinished(false);
    return;
  }
  m_progress->setValue(100);
  qint64 total = 0;
  QLocale locale = QLocale::c();
  for (const ExportedMember& m : outcome.members) {
    auto* name = new QStandardItem(m.name);
    auto* bytes = new QStandardItem(locale.formattedDataSize(m.bytes, 1, QLocale::DataSizeTraditionalFormat) +
                                    QString(" (%1)").arg(m.bytes));
    bytes->setData(m.bytes, Qt::UserRole);
    bytes->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_members->appendRow({name, bytes});
    total += m.bytes;
  }
  m_membersView->resizeColumnsToContents();
  m_status->setText(QString("wrote %1 (%2): %3 kernels, %4 with a tuned schedule")
                        .arg(outcome.path, locale.formattedDataSize(QFileInfo(outcome.path).size(), 1, QLocale::DataSizeTraditionalFormat))
                        .arg(outcome.kernels).arg(outcome.kernelsTuned) +
                    (isDynamic() ? QString(" · dynamic: %1").arg(m_dynamicShapes) : QString()));
  m_messages->setPlainText(outcome.notes.isEmpty() ? QString() : "note: " + outcome.notes.join("\nnote: "));
  emit exportFinished(true);
}

}  // namespace loom::views
