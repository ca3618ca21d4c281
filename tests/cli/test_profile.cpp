// `loom profile`: per-kernel times of a compiled model (the Studio's profile worker). The node
// names and kernel call counts match `loom run --profile` of the compiled package, the JSON adds
// up, kernel schedules and bad options are reported with exit code 1.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "CliRunner.h"

namespace {

const char* kModel = LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx";
const char* kShapes = "data:[1,3,16,16]";

nlohmann::json readJson(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return nlohmann::json::parse(f.readAll().toStdString(), nullptr, false);
}

}  // namespace

class TestProfileCommand : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString path(const QString& name) const { return m_dir.path() + "/" + name; }

private slots:
  void profileMatchesRunProfile() {
    QString json = path("p.json");
    CliResult r = runLoom({"profile", kModel, "--input-shapes", kShapes, "--repeat", "3", "--warmup", "1", "--json", json,
                           "--desired-layout", "NCHW"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY(r.out.contains("kernel") && r.out.contains("GFLOP/s") && r.out.contains("median of 3 runs"));
    nlohmann::json p = readJson(json);
    QVERIFY(p.is_object());
    QCOMPARE(p["run_ms"].size(), size_t(3));
    QCOMPARE(p["inputs"][0]["shape"], nlohmann::json({1, 3, 16, 16}));
    // Kernel totals are the sums of their nodes' medians; calls are their nodes.
    std::map<std::string, int> calls;
    std::map<std::string, double> sums;
    for (const auto& n : p["nodes"]) {
      QCOMPARE(n["ms"].size(), size_t(3));
      calls[n["func"]]++;
      sums[n["func"]] += n["median_ms"].get<double>();
    }
    for (const auto& k : p["kernels"]) {
      QCOMPARE(k["calls"].get<int>(), calls[k["name"]]);
      QVERIFY(std::abs(k["total_ms"].get<double>() - sums[k["name"]]) < 1e-9);
      QVERIFY(k["bytes"].get<double>() > 0);
      QCOMPARE(k["schedule"].get<std::string>(), std::string("default"));
    }
    // The same nodes, in the same order, as the executor's own profile of the compiled package.
    QString pkg = path("m.so");
    CliResult c = runLoom({"compile", kModel, "--input-shapes", kShapes, "--desired-layout", "NCHW", "-o", pkg, "-q"});
    QVERIFY2(c.exitCode == 0, qPrintable(c.out + c.err));
    CliResult run = runLoom({"run", pkg, "--profile"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
    QStringList names;
    for (const QString& line : run.out.split('\n').mid(1))
      if (!line.isEmpty() && !line.startsWith("total")) names << line.section(' ', 0, 0);
    QCOMPARE(names.size(), int(p["nodes"].size()));
    for (int i = 0; i < names.size(); ++i) QCOMPARE(names[i].toStdString(), p["nodes"][size_t(i)]["name"].get<std::string>());
  }

  void kernelScheduleAndErrors() {
    QString json = path("k.json");
    CliResult first = runLoom({"profile", kModel, "--input-shapes", kShapes, "--repeat", "1", "--warmup", "0", "--json", json, "-q"});
    QVERIFY2(first.exitCode == 0, qPrintable(first.out + first.err));
    std::string kernel = readJson(json)["kernels"][0]["name"];
    QString script = path("s.py");
    QVERIFY(writeText(script, "# unscheduled\n"));
    CliResult r = runLoom({"profile", kModel, "--input-shapes", kShapes, "--repeat", "1", "--warmup", "0", "--json", json, "-q",
                           "--kernel-schedule", QString::fromStdString(kernel) + "=" + script});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QCOMPARE(readJson(json)["kernels"][0]["schedule"].get<std::string>(), "script:" + script.toStdString());
    CliResult bad = runLoom({"profile", kModel, "--input-shapes", kShapes, "--kernel-schedule", "nosuch=" + script, "-q"});
    QCOMPARE(bad.exitCode, 1);
    QVERIFY2(bad.err.contains("no kernel 'nosuch'"), qPrintable(bad.err));
    CliResult cross = runLoom({"profile", kModel, "--target", "llvm -mtriple=aarch64-linux-gnu"});
    QCOMPARE(cross.exitCode, 1);
    CliResult missing = runLoom({"profile", path("none.onnx")});
    QCOMPARE(missing.exitCode, 1);
  }
};

QTEST_MAIN(TestProfileCommand)
#include "test_profile.moc"
