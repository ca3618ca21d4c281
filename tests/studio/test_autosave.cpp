// Crash recovery of the Studio (offscreen): unsaved editor text is autosaved while the session is
// modified, offered back by the next window (a prompt), restored or deleted as answered; a save
// or a clean close removes it; a session save is all or nothing.
#include <QApplication>
#include <QFile>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "core/driver/SessionFile.h"
#include "views/MainWindow.h"
#include "views/Resources.h"
#include "views/ScheduleEditor.h"
#include "views/RunsModel.h"
#include "views/Session.h"

using namespace loom::views;

namespace {
const QString kUnsaved = "b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\n# typed, never saved\n";
}

class TestAutosave : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setOrganizationName("LoomTest");
    QApplication::setApplicationName("StudioAutosaveTest");
    initResources();
    QFile::remove(MainWindow::autosavePath());
  }

  void unsavedTextSurvivesACrash() {
    QTemporaryDir dir;
    QString session = dir.filePath("work.loomsession");
    {
      auto* w = new MainWindow;
      w->setAutosaveInterval(50);
      w->setPreset("matmul", {{"M", 24}, {"N", 16}, {"K", 8}});
      QVERIFY(w->saveSession(session, true));
      QVERIFY(!QFile::exists(MainWindow::autosavePath()));
      w->editor()->setText(kUnsaved);  // typed by the user, not saved
      QVERIFY(w->session()->isModified());
      QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(MainWindow::autosavePath()), 10000);
      QTRY_VERIFY_WITH_TIMEOUT(w->session()->isIdle(), 30000);
      delete w;  // no close event: what a crash leaves
    }
    QVERIFY(QFile::exists(MainWindow::autosavePath()));
    // The next start asks, and restores on yes: the text, the preset, the session's name, unsaved.
    MainWindow w2;
    QString asked;
    w2.setRestoreHandler([&](const QString& q) {
      asked = q;
      return true;
    });
    QVERIFY(w2.offerRestore());
    QVERIFY2(asked.contains("did not close normally") && asked.contains("work.loomsession"), qPrintable(asked));
    QCOMPARE(w2.editor()->text(), kUnsaved);
    QCOMPARE(w2.session()->request().params.value("M"), 24);
    QVERIFY(w2.session()->isModified());
    QVERIFY(w2.windowTitle().startsWith("work.loomsession*"));
    // Saving it writes the session file and removes the autosave.
    QVERIFY(w2.saveSession(session, true));
    QVERIFY(!QFile::exists(MainWindow::autosavePath()));
    MainWindow w3;
    QVERIFY(w3.loadSession(session, true));
    QCOMPARE(w3.editor()->text(), kUnsaved);
    QVERIFY(!w3.offerRestore());  // nothing left to offer
    QTRY_VERIFY_WITH_TIMEOUT(w2.session()->isIdle() && w3.session()->isIdle(), 30000);
  }

  void declinedRestoreIsDeleted() {
    {
      auto* w = new MainWindow;
      w->editor()->setText(kUnsaved);
      QVERIFY(w->writeAutosave());
      QTRY_VERIFY_WITH_TIMEOUT(w->session()->isIdle(), 30000);
      delete w;
    }
    MainWindow w2;
    QString before = w2.editor()->text();
    w2.setRestoreHandler([](const QString&) { return false; });
    QVERIFY(!w2.offerRestore());
    QVERIFY(!QFile::exists(MainWindow::autosavePath()));
    QCOMPARE(w2.editor()->text(), before);
    // A damaged autosave (cut short) is dropped without asking.
    QFile f(MainWindow::autosavePath());
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"loomSession\": 1, \"workspace\": {\"pre");
    f.close();
    bool asked = false;
    w2.setRestoreHandler([&](const QString&) { return asked = true; });
    QVERIFY(!w2.offerRestore());
    QVERIFY(!asked);
    QVERIFY(!QFile::exists(MainWindow::autosavePath()));
    QTRY_VERIFY_WITH_TIMEOUT(w2.session()->isIdle(), 30000);
  }

  void cleanCloseRemovesTheAutosave() {
    MainWindow w;
    w.editor()->setText(kUnsaved);
    QVERIFY(w.writeAutosave());
    w.session()->setModified(false);  // e.g. discarded in the "Save first?" prompt
    QVERIFY(w.close());
    QVERIFY(!QFile::exists(MainWindow::autosavePath()));
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle(), 30000);
  }

  void failedSaveKeepsThePreviousFile() {
    // A session path in a directory that cannot be created: the save fails, nothing changes.
    QTemporaryDir dir;
    QString session = dir.filePath("s.loomsession");
    MainWindow w;
    QVERIFY(w.saveSession(session, true));
    QFile f(session);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QByteArray before = f.readAll();
    f.close();
    w.editor()->setText(kUnsaved);
    QVERIFY(!w.saveSession(dir.filePath("missing/dir/s.loomsession"), true));
    QVERIFY(w.session()->isModified());
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), before);
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle(), 30000);
  }

  // A session file the Studio writes reads back through the Qt-free parser (core/driver/
  // SessionFile.h) field for field: preset, parameters, schedule, target, runs, input shapes and
  // symbolic dims, the docks' parts. LOOM_SESSION_SEEDS=DIR keeps the file there (the seeds of
  // fuzz_session: tests/fuzz/corpus/session/).
  void savedSessionReadsBackWithoutQt() {
    QTemporaryDir dir;
    QString path = dir.filePath("runs.loomsession");
    MainWindow w;
    w.setPreset("matmul", {{"M", 24}, {"N", 16}, {"K", 8}});
    w.editor()->setText("b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\nsch.parallel(i)\n");
    QSignalSpy finished(w.session(), &Session::runFinished);
    w.session()->run();
    QVERIFY(finished.wait(120000));
    w.session()->setInputShapes({{"x", {1, 3, 48, 0}}}, false, "x:[1,3,48,W<=2048]");
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle(), 30000);
    QVERIFY(w.saveSession(path, true));
    if (QByteArray seeds = qgetenv("LOOM_SESSION_SEEDS"); !seeds.isEmpty())
      QFile::copy(path, QString::fromLocal8Bit(seeds) + "/runs_shapes.loomsession");
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    loom::driver::SessionFile s = loom::driver::parseSessionFile(f.readAll().toStdString(), path.toStdString());
    const loom::driver::SessionWorkspace& ws = s.workspace;
    QCOMPARE(QString::fromStdString(ws.preset), QString("matmul"));
    QCOMPARE(ws.params.at("M"), int64_t(24));
    QCOMPARE(ws.params.at("K"), int64_t(8));
    QCOMPARE(QString::fromStdString(ws.schedule), w.editor()->text());
    QCOMPARE(QString::fromStdString(ws.target), w.session()->request().target);
    QCOMPARE(ws.inputShapes.at("x"), (std::vector<int64_t>{1, 3, 48, 0}));
    QCOMPARE(QString::fromStdString(ws.symbolicInputShapes), QString("x:[1,3,48,W<=2048]"));
    QCOMPARE(int(ws.runs.size()), 1);
    const RunRecord& r = w.session()->runs()->records().at(0);
    QCOMPARE(ws.runs[0].id, r.id);
    QCOMPARE(ws.runs[0].medianMs, r.medianMs);
    QCOMPARE(ws.runs[0].ok, r.ok);
    QCOMPARE(QString::fromStdString(ws.runs[0].schedule), r.schedule);
    QCOMPARE(QString::fromStdString(ws.runs[0].lowered), r.loweredTir);
    QVERIFY(!s.layout.empty());
    QVERIFY(s.dark.has_value());
    QVERIFY(!s.tuningForm.empty());
    // And back into a window: the run is in its Runs table, the shapes in its session.
    MainWindow w2;
    QVERIFY(w2.loadSession(path, true));
    QCOMPARE(w2.session()->runs()->rowCount(), 1);
    QCOMPARE(w2.session()->inputShapes().value("x"), (QVector<qint64>{1, 3, 48, 0}));
    QCOMPARE(w2.session()->symbolicInputShapes(), QString("x:[1,3,48,W<=2048]"));
    QTRY_VERIFY_WITH_TIMEOUT(w2.session()->isIdle(), 30000);
  }

  // A session file with a value of the wrong kind is refused whole, naming the key; the open
  // session stays as it was (before, the value read as 0 and the rest loaded).
  void damagedSessionIsRefusedNamingTheKey() {
    QTemporaryDir dir;
    QString path = dir.filePath("bad.loomsession");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"loomSession\": 1, \"workspace\": {\"preset\": \"softmax\", \"runs\": [{\"id\": 1, \"medianMs\": \"fast\"}]}}");
    f.close();
    try {
      (void)loom::driver::parseSessionFile(R"({"loomSession": 1, "workspace": {"runs": [{"id": 1, "medianMs": "fast"}]}})", "bad.loomsession");
      QFAIL("no SessionFileError");
    } catch (const loom::driver::SessionFileError& e) {
      QVERIFY2(QString(e.what()).contains("bad.loomsession: workspace.runs[0].medianMs: expected a number, got a string"), e.what());
    }
    MainWindow w;
    w.setPreset("matmul", {{"M", 24}, {"N", 16}, {"K", 8}});
    QVERIFY(!w.loadSession(path, true));
    QCOMPARE(w.session()->request().preset, QString("matmul"));
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle(), 30000);
  }
};

QTEST_MAIN(TestAutosave)
#include "test_autosave.moc"
