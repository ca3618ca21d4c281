// GUI tests of the Studio's export dialog (offscreen): packages written and listed, records, cancel, errors.
#include <QApplication>
#include <QFile>
#include <QFileInfo>
#include <QProgressBar>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QDir>
#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "core/schedule/Trace.h"
#include "core/tune/ModelTasks.h"
#include "core/tune/Record.h"
#include "core/driver/CompileModel.h"
#include "core/tir/HostArrays.h"
#include "runtime/Package.h"
#include "runtime/Tar.h"
#include "Waits.h"
#include "views/ExportDialog.h"
#include "views/MainWindow.h"
#include "views/Resources.h"
#include "views/Session.h"

using namespace loom;
using namespace loom::views;

namespace {

const QString kSmallCnn = LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx";

/// The dialog's member table as name -> bytes.
QMap<QString, qint64> listedMembers(const ExportDialog& d) {
  QMap<QString, qint64> out;
  for (int r = 0; r < d.membersModel()->rowCount(); ++r)
    out[d.membersModel()->item(r, 0)->text()] = d.membersModel()->item(r, 1)->data(Qt::UserRole).toLongLong();
  return out;
}

/// Waits for the export started last (the spy's next signal) and says whether it succeeded.
bool finishedOk(ExportDialog& d, QSignalSpy& spy) {
  int before = d.isRunning() ? int(spy.count()) : int(spy.count()) - 1;
  if (!QTest::qWaitFor([&] { return spy.count() > before; }, studiotest::kWorkerWaitMs)) return false;
  return spy.last()[0].toBool() && !d.isRunning();
}

}  // namespace

class TestExportDialog : public QObject {
  Q_OBJECT
  std::shared_ptr<const graph::Module> m_module;

private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setOrganizationName("LoomTest");
    QApplication::setApplicationName("StudioExportTest");
    initResources();
    // The model as the Studio's session imports it (static shapes for symbolic inputs).
    Session s;
    QSignalSpy loaded(&s, &Session::modelLoaded);
    s.loadModel(kSmallCnn);
    QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, studiotest::kWorkerWaitMs);
    m_module = s.model()->module;
    QVERIFY(m_module);
  }

  void exportsSmallCnnAndListsTheMembers() {
    QTemporaryDir dir;
    ExportDialog d(kSmallCnn, m_module);
    // Not beside the model: in the session's folder, or the current one before the session is saved.
    QCOMPARE(ExportDialog::defaultOutputPath(kSmallCnn), QDir::current().filePath("small_cnn.tar"));
    QCOMPARE(ExportDialog::defaultOutputPath(kSmallCnn, "/tmp/work/s.loomsession"), QString("/tmp/work/small_cnn.tar"));
    QString out = dir.filePath("small_cnn.tar");
    d.setOutputPath(out);
    QSignalSpy spy(&d, &ExportDialog::exportFinished);
    QVERIFY(d.startExport());
    QVERIFY(d.isRunning());
    QVERIFY2(finishedOk(d, spy), qPrintable(d.outcome().error));
    QVERIFY(QFileInfo::exists(out));
    QCOMPARE(d.progressBar()->value(), 100);
    // The table lists the tar's members with their real sizes.
    std::map<std::string, std::string> tar = runtime::readTar(out.toStdString());
    QMap<QString, qint64> listed = listedMembers(d);
    QCOMPARE(listed.keys(), (QStringList{"graph.json", "kernels.so", "metadata.json", "params.bin"}));
    for (const auto& [name, bytes] : tar) QCOMPARE(listed.value(QString::fromStdString(name)), qint64(bytes.size()));
    QVERIFY(d.outcome().kernels > 0);
    QCOMPARE(d.outcome().kernelsTuned, 0);
    QVERIFY(d.statusText().contains("wrote"));
    // The package loads with the runtime alone, says what it is, and computes what the model
    // compiled in this process computes, on random inputs.
    runtime::Package p = runtime::loadPackage(out.toStdString());
    nlohmann::json meta = nlohmann::json::parse(p.metadata);
    QCOMPARE(int(meta["kernels"]), d.outcome().kernels);
    auto reference = driver::createExecutor(driver::compileModel(*m_module, "llvm"));
    QCOMPARE(p.executor->numInputs(), reference->numInputs());
    for (size_t i = 0; i < reference->numInputs(); ++i) {
      runtime::NDArray x = runtime::NDArray::empty(reference->inputShape(i), reference->inputDType(i));
      tir::fillRandom(x, 7 + i);
      p.executor->setInput(i, x);
      reference->setInput(i, x);
    }
    p.executor->run();
    reference->run();
    QCOMPARE(p.executor->numOutputs(), reference->numOutputs());
    for (size_t i = 0; i < reference->numOutputs(); ++i)
      QVERIFY(tir::maxRelError(p.executor->getOutput(i), reference->getOutput(i)) < 1e-5);
    QCOMPARE(QString::fromStdString(meta["outputs"][0]["name"]), QString("prob"));  // the ONNX output's name
    // No partial file is left beside it.
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"small_cnn.tar"});
  }

  void tuningRecordsReachTheKernels() {
    QTemporaryDir dir;
    // A record (the empty trace: the unscheduled kernel) for the first kernel of the model.
    std::vector<tune::TuneTask> tasks = tune::extractTasks(*m_module, {}, driver::CompileModelOptions{}, "llvm");
    QVERIFY(!tasks.empty());
    tune::TuningRecord r;
    r.workload = tasks[0].key;
    r.target = "llvm";
    r.trace = tir::Trace().toJson();
    r.timesMs = {0.001};
    QString records = dir.filePath("r.json");
    QFile f(records);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray::fromStdString(r.toJson().dump() + "\n"));
    // Its default schedule measured slower (a record is used only when it beat the default).
    r.workload = tune::baselineKey(tasks[0].key);
    r.timesMs = {1.0};
    f.write(QByteArray::fromStdString(r.toJson().dump() + "\n"));
    f.close();

    ExportDialog d(kSmallCnn, m_module);
    d.setRecordsPath(records);
    QString out = dir.filePath("tuned.tar");
    d.setOutputPath(out);
    QSignalSpy spy(&d, &ExportDialog::exportFinished);
    QVERIFY(d.startExport());
    QVERIFY2(finishedOk(d, spy), qPrintable(d.outcome().error));
    QCOMPARE(d.outcome().kernelsTuned, int(tasks[0].kernels.size()));
    nlohmann::json meta = nlohmann::json::parse(runtime::readTar(out.toStdString()).at("metadata.json"));
    QCOMPARE(meta["tuning_records"].size(), size_t(1));
    int tuned = 0;
    for (const auto& [kernel, source] : meta["schedules"].items()) tuned += std::string(source).rfind("tuned:", 0) == 0;
    QCOMPARE(tuned, d.outcome().kernelsTuned);
    // Records of another target match nothing: the export says so.
    d.setTarget("llvm -mcpu=x86-64-v2");
    QVERIFY(d.startExport());
    QVERIFY2(finishedOk(d, spy), qPrintable(d.outcome().error));
    QCOMPARE(d.outcome().kernelsTuned, 0);
    QVERIFY(!d.outcome().notes.isEmpty() && d.outcome().notes.last().contains("records for: llvm"));
  }

  void fileMenuOpensTheDialogOnTheSessionsModel() {
    MainWindow w;
    QSignalSpy loaded(w.session(), &Session::modelLoaded);
    w.openModel(kSmallCnn);
    QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, studiotest::kWorkerWaitMs);
    QAction* action = nullptr;
    for (QAction* a : w.findChildren<QAction*>())
      if (a->text().contains("Export Model Package")) action = a;
    QVERIFY(action);
    action->trigger();
    auto* d = w.findChild<ExportDialog*>();
    QVERIFY(d && d->isVisible());
    QCOMPARE(d->outputPath(), ExportDialog::defaultOutputPath(kSmallCnn));
    QTemporaryDir dir;
    d->setOutputPath(dir.filePath("from-menu.so"));
    QSignalSpy spy(d, &ExportDialog::exportFinished);
    QVERIFY(d->startExport());
    QVERIFY2(finishedOk(*d, spy), qPrintable(d->outcome().error));
    QVERIFY(QFileInfo::exists(dir.filePath("from-menu.so")));
    d->close();
  }

  void errorsAreShownInTheDialog() {
    QTemporaryDir dir;
    ExportDialog d(kSmallCnn, m_module);
    QSignalSpy spy(&d, &ExportDialog::exportFinished);
    // A wrong extension, a missing records file: refused before any work.
    d.setOutputPath(dir.filePath("model.zip"));
    QVERIFY(!d.startExport());
    QVERIFY(d.statusText().contains("NAME.tar"));
    d.setOutputPath(dir.filePath("model.tar"));
    d.setRecordsPath(dir.filePath("missing.json"));
    QVERIFY(!d.startExport());
    QVERIFY(d.statusText().contains("missing.json"));
    // A malformed records file: the export fails with the reader's message, nothing is written.
    QString bad = dir.filePath("bad.json");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{not json\n");
    f.close();
    d.setRecordsPath(bad);
    QVERIFY(d.startExport());
    QTRY_VERIFY_WITH_TIMEOUT(spy.count() == 1, studiotest::kWorkerWaitMs);
    QVERIFY(!spy.last()[0].toBool());
    QVERIFY2(d.outcome().error.contains("RecordFileError") && d.outcome().error.contains("bad.json"), qPrintable(d.outcome().error));
    QVERIFY(!QFileInfo::exists(dir.filePath("model.tar")));
    // A malformed target.
    d.setRecordsPath({});
    d.setTarget("llvm -mtriple=nonsense-arch");
    QVERIFY(d.startExport());
    QTRY_VERIFY_WITH_TIMEOUT(spy.count() == 2, studiotest::kWorkerWaitMs);
    QVERIFY(!spy.last()[0].toBool());
    QVERIFY(d.outcome().error.contains("nonsense"));
    QCOMPARE(d.membersModel()->rowCount(), 0);
    // No model at all, or one still loading.
    ExportDialog none(QString(), nullptr);
    QVERIFY(!none.startExport());
    QVERIFY(none.statusText().contains("no model"));
    ExportDialog loading(kSmallCnn, nullptr);
    QVERIFY(!loading.startExport());
    QVERIFY(loading.statusText().contains("loading"));
  }

  void cancelWritesNothing() {
    QTemporaryDir dir;
    ExportDialog d(kSmallCnn, m_module);
    QString out = dir.filePath("cancelled.tar");
    d.setOutputPath(out);
    QSignalSpy spy(&d, &ExportDialog::exportFinished);
    QVERIFY(d.startExport());
    d.cancelExport();
    QTRY_VERIFY_WITH_TIMEOUT(spy.count() == 1, studiotest::kWorkerWaitMs);
    QVERIFY(!spy.last()[0].toBool());
    QCOMPARE(d.outcome().error, QString("cancelled"));
    QVERIFY(d.statusText().contains("cancelled"));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{});
    // The dialog can export again afterwards.
    QVERIFY(d.startExport());
    QVERIFY2(finishedOk(d, spy), qPrintable(d.outcome().error));
    QVERIFY(QFileInfo::exists(out));
  }

  void exportsASharedLibraryAndACrossPackage() {
    QTemporaryDir dir;
    ExportDialog d(kSmallCnn, m_module);
    QSignalSpy spy(&d, &ExportDialog::exportFinished);
    QString so = dir.filePath("small_cnn.so");
    d.setOutputPath(so);
    QVERIFY(d.startExport());
    QVERIFY2(finishedOk(d, spy), qPrintable(d.outcome().error));
    QCOMPARE(listedMembers(d).value("small_cnn.so"), QFileInfo(so).size());
    runtime::Package p = runtime::loadPackage(so.toStdString());
    QVERIFY(p.executor);

    // aarch64: written, not run; kernels.so (linked by ld.lld) or kernels.o with a note.
    d.setTarget("llvm -mtriple=aarch64-linux-gnu");
    QString arm = dir.filePath("small_cnn-aarch64.tar");
    d.setOutputPath(arm);
    QVERIFY(d.startExport());
    QVERIFY2(finishedOk(d, spy), qPrintable(d.outcome().error));
    QMap<QString, qint64> listed = listedMembers(d);
    QVERIFY(listed.contains("kernels.so") || (listed.contains("kernels.o") && !d.outcome().notes.isEmpty()));
    nlohmann::json meta = nlohmann::json::parse(runtime::readTar(arm.toStdString()).at("metadata.json"));
    QVERIFY(QString::fromStdString(meta["target"]).contains("aarch64"));

    // C source: kernels.c in the package.
    d.setTarget("c");
    QString c = dir.filePath("small_cnn-c.tar");
    d.setOutputPath(c);
    QVERIFY(d.startExport());
    QVERIFY2(finishedOk(d, spy), qPrintable(d.outcome().error));
    QVERIFY(listedMembers(d).value("kernels.c") > 0);
    QCOMPARE(QString::fromStdString(nlohmann::json::parse(runtime::readTar(c.toStdString()).at("metadata.json"))["target"]), QString("c"));
  }
};

QTEST_MAIN(TestExportDialog)
#include "test_export_dialog.moc"
