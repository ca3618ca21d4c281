// `loom profile`: per-kernel times of a compiled model (the Studio's profile worker). The node
// names and kernel call counts match `loom run --profile` of the compiled package, the JSON adds
// up, kernel schedules and bad options are reported with exit code 1. A symbolic --input-shapes
// profiles the dynamic module (the one `loom compile` builds from the same text) at the symbols'
// values or at the --inputs' shapes, its FLOPs counted at that shape.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "CliRunner.h"
#include "core/driver/Npz.h"
#include "runtime/NDArray.h"

namespace {

const char* kModel = LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx";
const char* kShapes = "data:[1,3,16,16]";

/// The node names of `loom run --profile`'s table, in order.
QStringList runProfileNodes(const QString& out) {
  QStringList names;
  for (const QString& line : out.split('\n').mid(1))
    if (!line.isEmpty() && !line.startsWith("total")) names << line.section(' ', 0, 0);
  return names;
}

double totalFlops(const nlohmann::json& p) {
  double sum = 0;
  for (const auto& k : p["kernels"]) sum += k["flops"].get<double>() * k["calls"].get<int>();
  return sum;
}

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
    QStringList names = runProfileNodes(run.out);
    QCOMPARE(names.size(), int(p["nodes"].size()));
    for (int i = 0; i < names.size(); ++i) QCOMPARE(names[i].toStdString(), p["nodes"][size_t(i)]["name"].get<std::string>());
  }

  /// A symbolic dim with a value (`N=3`): the dynamic module, run at N = 3; its kernels, node
  /// names and FLOPs those of the package `loom compile` builds from "data:[N,3,16,16]" and of
  /// the static module at 3x3x16x16.
  void dynamicModuleAtTheSymbolsValues() {
    QString json = path("dyn.json"), stat = path("static.json");
    CliResult r = runLoom({"profile", kModel, "--input-shapes", "data:[N=3,3,16,16]", "--repeat", "2", "--warmup", "1",
                           "--json", json, "--desired-layout", "NCHW", "-q"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("dynamic module, run at N = 3"), qPrintable(r.out));
    nlohmann::json p = readJson(json);
    QVERIFY(p.is_object());
    QCOMPARE(p["dynamic"].get<bool>(), true);
    QCOMPARE(p["symbols"], nlohmann::json({{"N", 3}}));
    QCOMPARE(p["inputs"][0]["shape"], nlohmann::json({3, 3, 16, 16}));
    for (const auto& k : p["kernels"]) QVERIFY2(k["bytes"].get<double>() > 0, k["name"].get<std::string>().c_str());
    CliResult s = runLoom({"profile", kModel, "--input-shapes", "data:[3,3,16,16]", "--repeat", "1", "--warmup", "0",
                           "--json", stat, "--desired-layout", "NCHW", "-q"});
    QVERIFY2(s.exitCode == 0, qPrintable(s.out + s.err));
    QVERIFY(!s.out.contains("dynamic module"));
    nlohmann::json ps = readJson(stat);
    QCOMPARE(ps["dynamic"].get<bool>(), false);
    // Counted at N = 3, without the rows of partial tiles that do not exist there.
    QVERIFY(totalFlops(ps) > 0);
    QVERIFY2(std::abs(totalFlops(p) - totalFlops(ps)) <= 1e-6 * totalFlops(ps),
             qPrintable(QString("dynamic %1, static %2 FLOPs").arg(totalFlops(p)).arg(totalFlops(ps))));
    QString pkg = path("dyn.so");
    CliResult c = runLoom({"compile", kModel, "--input-shapes", "data:[N,3,16,16]", "--desired-layout", "NCHW", "-o", pkg, "-q"});
    QVERIFY2(c.exitCode == 0, qPrintable(c.out + c.err));
    CliResult run = runLoom({"run", pkg, "--input-shapes", "data:[3,3,16,16]", "--profile"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
    QStringList names = runProfileNodes(run.out);
    QCOMPARE(names.size(), int(p["nodes"].size()));
    for (int i = 0; i < names.size(); ++i) QCOMPARE(names[i].toStdString(), p["nodes"][size_t(i)]["name"].get<std::string>());
  }

  /// A symbol without a value runs at the shape of the --inputs array; with neither, exit 1
  /// naming the input, the dim and how to give it.
  void dynamicModuleAtTheInputsShape() {
    QString npz = path("in.npz"), json = path("in.json");
    loom::runtime::NDArray x = loom::runtime::NDArray::empty({2, 3, 16, 16}, loom::runtime::DType::f32());
    for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = float(i % 7) * 0.25f;
    loom::driver::writeNpz(npz.toStdString(), {{"data", x}});
    CliResult r = runLoom({"profile", kModel, "--input-shapes", "data:[N,3,16,16]", "--inputs", npz, "--repeat", "1",
                           "--warmup", "0", "--json", json, "-q"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("dynamic module, run at N = 2"), qPrintable(r.out));
    QCOMPARE(readJson(json)["inputs"][0]["shape"], nlohmann::json({2, 3, 16, 16}));
    // The model's own symbolic batch, no --input-shapes: the same.
    CliResult own = runLoom({"profile", kModel, "--inputs", npz, "--repeat", "1", "--warmup", "0", "-q"});
    QVERIFY2(own.exitCode == 0 && own.out.contains("run at N = 2"), qPrintable(own.out + own.err));
    CliResult none = runLoom({"profile", kModel, "--input-shapes", "data:[N,3,16,16]", "--repeat", "1", "-q"});
    QCOMPARE(none.exitCode, 1);
    QVERIFY2(none.err.contains("dimension 0 (N) of input 'data' is symbolic and has no value") &&
                 none.err.contains("data:[N=VALUE,3,16,16]"),
             qPrintable(none.err));
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
