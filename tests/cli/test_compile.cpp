// `loom compile`'s tvmc-style flags: --tuning-records (kernels use their record, metadata and inspect
// list it, outputs unchanged), --desired-layout, --dump-code files, progress on stderr, exit codes.
#include <QtTest>

#include <nlohmann/json.hpp>
#include <set>

#include "CliRunner.h"
#include "runtime/Tar.h"

namespace {

const char* kModel = LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx";
const char* kShapes = "data:[1,3,16,16]";
/// The layout is fixed where kernel counts matter (the default follows the opt level).
const QStringList kNCHW = {"--desired-layout", "NCHW"};

/// The "[i] value" lines of `loom run --print-top`, by class index.
std::map<int, double> topValues(const QString& out) {
  std::map<int, double> r;
  static const QRegularExpression line(R"(^\s*\[(\d+)\] (\S+)$)", QRegularExpression::MultilineOption);
  for (auto it = line.globalMatch(out); it.hasNext();) {
    auto m = it.next();
    r[m.captured(1).toInt()] = m.captured(2).toDouble();
  }
  return r;
}

QString readText(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(f.readAll());
}

}  // namespace

class TestCompile : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  QString path(const QString& name) const { return m_dir.path() + "/" + name; }

  /// Runs the package on ones and returns its 10 scores.
  std::map<int, double> scores(const QString& pkg) {
    CliResult r = runLoom({"run", pkg, "--fill-mode", "ones", "--print-top", "10"});
    if (r.exitCode != 0) qWarning("%s", qPrintable(r.out + r.err));
    return topValues(r.out);
  }

  static bool close(const std::map<int, double>& a, const std::map<int, double>& b) {
    if (a.size() != 10 || a.size() != b.size()) return false;
    for (const auto& [k, v] : a)
      if (!b.count(k) || std::fabs(v - b.at(k)) > 1e-5) return false;
    return true;
  }

private slots:
  void dumpCodeAndProgress() {
    QString out = path("dumped.so");
    CliResult r = runLoom(QStringList{"compile", kModel, "--input-shapes", kShapes, "--dump-code", "relay,tir,ll,asm", "-o", out} + kNCHW);
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    // Progress: each kernel lowered, then code generation and linking.
    for (const char* want : {"[1/7] lowering fused_nn_conv2d", "[7/7] lowering fused_nn_softmax",
                             "[codegen] generating code (7 kernels)", "[codegen] linking"})
      QVERIFY2(r.err.contains(want), qPrintable(QString(want) + " not in:\n" + r.err));
    QString relay = readText(path("dumped.relay")), tir = readText(path("dumped.tir")),
            ll = readText(path("dumped.ll")), s = readText(path("dumped.s"));
    QVERIFY2(relay.contains("def @main(%data: Tensor[(1, 3, 16, 16), float32])") && relay.contains("nn.conv2d"),
             qPrintable(relay.left(500)));
    QCOMPARE(tir.count("# scheduled\n"), 7);
    QCOMPARE(tir.count("# lowered\n"), 7);
    QVERIFY(tir.contains("# kernel fused_nn_softmax (schedule: default)"));
    QVERIFY(ll.contains("define") && ll.contains("@fused_nn_softmax("));
    QVERIFY(s.contains("fused_nn_softmax:"));
    // The embedded params are not in the dumped IR.
    QVERIFY(!ll.contains("__loom_params"));
    // Quiet: nothing on stderr.
    r = runLoom(QStringList{"compile", kModel, "--input-shapes", kShapes, "-q", "-o", path("quiet.tar")} + kNCHW);
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    QVERIFY(r.out.contains("wrote " + path("quiet.tar") + " (tar package, target llvm): 7 kernels"));
  }

  void fullDiskWhileDumpingFails() {
    // A dump written to a full disk (/dev/full: every write fails with ENOSPC) must fail the
    // command with the file's name and the cause. The relay text of a one-op model (153 bytes)
    // is shorter than what the stream writes through at once (1 KiB), so it reaches the disk
    // only when the file is closed: the error of that last flush went unseen (exit 0, "dumped",
    // an empty file on a real full disk).
    const QString tiny = QStringLiteral(LOOM_SOURCE_DIR "/tests/fuzz/corpus/onnx/add_bcast.onnx");
    QString out = path("full.tar");
    QFile::remove(path("full.relay"));
    QVERIFY(QFile::link("/dev/full", path("full.relay")));
    CliResult r = runLoom({"compile", tiny, "--dump-code", "relay", "-q", "-o", out});
    QFile::remove(path("full.relay"));
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("cannot write '" + path("full.relay") + "'") && r.err.contains("No space left on device"),
             qPrintable(r.err));
    // The same model and dump to a real file: 153 bytes, so the case above is the buffered one.
    r = runLoom({"compile", tiny, "--dump-code", "relay", "-q", "-o", out});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(QFileInfo(path("full.relay")).size() < 1024);
  }

  void desiredLayout() {
    CliResult r = runLoom({"compile", kModel, "--input-shapes", kShapes, "--desired-layout", "NCHWc", "-q", "-o",
                           path("nchwc.tar")});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    auto files = loom::runtime::readTar(path("nchwc.tar").toStdString());
    QCOMPARE(nlohmann::json::parse(files["metadata.json"])["layout"].get<std::string>(), std::string("NCHWc"));
    r = runLoom(QStringList{"compile", kModel, "--input-shapes", kShapes, "-q", "-o", path("nchw.tar")} + kNCHW);
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(nlohmann::json::parse(loom::runtime::readTar(path("nchw.tar").toStdString())["metadata.json"])["layout"]
                 .get<std::string>(),
             std::string("NCHW"));
    QVERIFY(close(scores(path("nchwc.tar")), scores(path("nchw.tar"))));
    r = runLoom({"compile", kModel, "--input-shapes", kShapes, "--desired-layout", "NHWC", "-o", path("nhwc.so")});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("--desired-layout NHWC is not supported"), qPrintable(r.err));
    QVERIFY(!QFile::exists(path("nhwc.so")));
  }

  void tuningRecords() {
    QString records = path("r.json");
    CliResult t = runLoom({"tune", kModel, "--input-shapes", kShapes, "--trials", "3", "--batch", "3", "--repeat", "1",
                           "--min-repeat-ms", "1", "--no-baseline", "--output", records});
    QVERIFY2(t.exitCode == 0, qPrintable(t.out + t.err));
    static const QRegularExpression used(R"(tuning records .*r\.json: (\d+) of (\d+) kernels use a record)");
    // Tuned without measuring the default schedule: no record is known to beat it, none is used.
    CliResult r = runLoom({"compile", kModel, "--input-shapes", kShapes, "--tuning-records", records, "-o", path("tuned.so")});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    auto m = used.match(r.out);
    QVERIFY2(m.hasMatch() && m.captured(1) == "0", qPrintable(r.out));
    QVERIFY2(r.out.contains("no default measurement"), qPrintable(r.out));
    // The default schedule of every tuned kernel, recorded as measured far slower: now the records apply.
    {
      std::set<std::string> seen;
      std::vector<nlohmann::json> baselines;
      QFile in(records);
      QVERIFY(in.open(QIODevice::ReadOnly));
      for (const QByteArray& line : in.readAll().split('\n')) {
        if (line.trimmed().isEmpty()) continue;
        nlohmann::json rec = nlohmann::json::parse(line.toStdString());
        if (!seen.insert(rec.at("workload").get<std::string>()).second) continue;
        nlohmann::json b = rec; // same target, host and cache flush: measured under the same conditions
        b["workload"] = rec.at("workload").get<std::string>() + "#baseline";
        b["trace"] = {{"insts", nlohmann::json::array()}, {"decisions", nlohmann::json::array()}};
        b["times_ms"] = {1e9};
        b["error_kind"] = "";
        b["error_message"] = "";
        b.erase("retime");
        baselines.push_back(b);
      }
      in.close();
      QFile out(records);
      QVERIFY(out.open(QIODevice::Append));
      for (const nlohmann::json& b : baselines) out.write(QByteArray::fromStdString(b.dump() + "\n"));
    }
    r = runLoom({"compile", kModel, "--input-shapes", kShapes, "--tuning-records", records, "-o", path("tuned.so")});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    m = used.match(r.out);
    QVERIFY2(m.hasMatch(), qPrintable(r.out));
    int n = m.captured(1).toInt(), total = m.captured(2).toInt();
    QVERIFY(total >= 7);
    QVERIFY(n >= 1);
    QVERIFY2(r.out.contains(QString("%1 tuned:r.json").arg(n)), qPrintable(r.out));
    // inspect lists the records file and, per kernel, where its schedule came from.
    CliResult i = runLoom({"inspect", path("tuned.so")});
    QVERIFY2(i.exitCode == 0, qPrintable(i.out + i.err));
    QVERIFY2(i.out.contains("tuning records  " + records), qPrintable(i.out));
    QCOMPARE(i.out.count("schedule: tuned:r.json"), n);
    QCOMPARE(i.out.count("schedule: default"), total - n);
    // The tuned package computes what the default one does.
    r = runLoom({"compile", kModel, "--input-shapes", kShapes, "-q", "-o", path("untuned.so")});
    QCOMPARE(r.exitCode, 0);
    CliResult iu = runLoom({"inspect", path("untuned.so")});
    QVERIFY(iu.out.contains("tuning records  none"));
    QVERIFY(close(scores(path("tuned.so")), scores(path("untuned.so"))));
    // A records file that is not there, or not records.
    r = runLoom({"compile", kModel, "--input-shapes", kShapes, "--tuning-records", path("none.json"), "-o", path("x.so")});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("none.json"), qPrintable(r.err));
    writeText(path("bad.json"), "not json\n");
    r = runLoom({"compile", kModel, "--input-shapes", kShapes, "--tuning-records", path("bad.json"), "-o", path("x.so")});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("bad.json"), qPrintable(r.err));
  }

  void dynamicBatch() {
    // Without --input-shapes the model's symbolic batch N is kept: one package runs any batch.
    QString so = path("dyn.so");
    CliResult r = runLoom({"compile", kModel, "-q", "-o", so});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    r = runLoom({"inspect", so});
    QVERIFY2(r.out.contains("data  float32[N, 3, 16, 16]"), qPrintable(r.out));
    QVERIFY2(r.out.contains("[N, 10]"), qPrintable(r.out));
    // Filled at batch 1 and 3: the scores of batch 3 on ones repeat those of batch 1.
    CliResult one = runLoom({"run", so, "--fill-mode", "ones", "--input-shapes", "data:[1,3,16,16]", "--print-top", "10"});
    CliResult three = runLoom({"run", so, "--fill-mode", "ones", "--input-shapes", "data:[3,3,16,16]", "--print-top", "30"});
    QVERIFY2(one.exitCode == 0 && three.exitCode == 0, qPrintable(one.err + three.err));
    std::map<int, double> a = topValues(one.out), b = topValues(three.out);
    QCOMPARE(a.size(), size_t(10));
    QCOMPARE(b.size(), size_t(30));
    for (const auto& [k, v] : a)
      for (int n = 0; n < 3; ++n) QVERIFY(std::fabs(b.at(k + 10 * n) - v) < 1e-5);
    // The same scores as a package compiled for batch 1 (NCHW, as the dynamic one is).
    QString fixed = path("fixed.so");
    QVERIFY(runLoom(QStringList{"compile", kModel, "--input-shapes", kShapes, "-q", "-o", fixed} + kNCHW).exitCode == 0);
    QVERIFY(close(scores(fixed), a));
    // A filled input needs its shape; a wrong static dim is refused with what it must be.
    CliResult none = runLoom({"run", so});
    QCOMPARE(none.exitCode, 1);
    QVERIFY2(none.err.contains("input 'data' has symbolic dims (N, 3, 16, 16)"), qPrintable(none.err));
    CliResult bad = runLoom({"run", so, "--input-shapes", "data:[2,3,16,15]"});
    QCOMPARE(bad.exitCode, 1);
    QVERIFY2(bad.err.contains("dimension 3 (16) must be 16"), qPrintable(bad.err));
    // Timed and profiled by the process's CPU time (dynamic against static on a loaded machine).
    CliResult cpu = runLoom({"run", so, "--input-shapes", "data:[2,3,16,16]", "--print-time", "--profile", "--clock", "cpu", "--repeat", "3"});
    QVERIFY2(cpu.exitCode == 0, qPrintable(cpu.err));
    QVERIFY2(cpu.out.contains("over 3 measurements") && cpu.out.contains("total"), qPrintable(cpu.out));
    QVERIFY(runLoom({"run", so, "--input-shapes", "data:[2,3,16,16]", "--clock", "tsc"}).exitCode != 0);
    // LOOM_TIME_PASSES=1: every kernel's lowering passes timed on stderr (where a compile's time goes).
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("LOOM_TIME_PASSES", "1");
    loom::test::ProcessResult timed = loom::test::runLoomBinary(
        {"compile", QString(kModel), "-q", "-o", path("timed.tar")}, 300000, env);
    QVERIFY2(timed.exitCode == 0, qPrintable(timed.err));
    QCOMPARE(timed.err.count("lowering passes of fused_"), 7);  // small_cnn's 7 kernels (its image read by the first conv)
    QVERIFY2(timed.err.contains(" simplify\n") && timed.err.contains("100.0  total"), qPrintable(timed.err));
    QVERIFY(runLoom({"compile", QString(kModel), "-q", "-o", path("untimed.tar")}).err.isEmpty());
  }

  void exitCodes_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    QStringList base = {"compile", kModel, "--input-shapes", kShapes};
    QTest::newRow("ok") << (base + QStringList{"-q", "-o", "@ok.so"}) << 0 << "";
    QTest::newRow("help") << QStringList{"compile", "--help"} << 0 << "";
    QTest::newRow("unknown flag") << (base + QStringList{"-o", "@x.so", "--bogus"}) << 1 << "--bogus";
    QTest::newRow("opt level out of range") << (base + QStringList{"-o", "@x.so", "--opt-level", "7"}) << 1 << "opt-level";
    QTest::newRow("no output") << base << 1 << "--output";
    QTest::newRow("bad extension") << (base + QStringList{"-o", "@x.zip"}) << 1 << "name it NAME.so";
    QTest::newRow("missing model") << QStringList{"compile", "@none.onnx", "-o", "@x.so"} << 1 << "none.onnx";
    QTest::newRow("bad target") << (base + QStringList{"-o", "@x.so", "--target", "llvm -mcpu=nosuchcpu"}) << 1 << "nosuchcpu";
    QTest::newRow("c target options") << (base + QStringList{"-o", "@x.so", "--target", "c -O3"}) << 1 << "takes no options";
    QTest::newRow("bad dump kind") << (base + QStringList{"-o", "@x.so", "--dump-code", "tir,bytecode"}) << 1 << "bytecode";
    QTest::newRow("asm of c") << (base + QStringList{"-o", "@x.so", "--target", "c", "--dump-code", "asm"}) << 1 << "needs an llvm target";
    QTest::newRow("bad layout") << (base + QStringList{"-o", "@x.so", "--desired-layout", "NCWH"}) << 1 << "NCWH";
    QTest::newRow("unwritable") << (base + QStringList{"-q", "-o", "@no/such/dir/x.tar"}) << 1 << "no/such/dir";
  }

  void exitCodes() {
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, message);
    for (QString& a : args)
      if (a.startsWith('@')) a = path(a.mid(1));
    CliResult r = runLoom(args);
    QVERIFY2(r.exitCode == code, qPrintable(QString("exit %1: ").arg(r.exitCode) + r.out + r.err));
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    if (code == 1) QVERIFY2(!r.err.contains("internal error"), qPrintable(r.err));
  }
};

QTEST_APPLESS_MAIN(TestCompile)
#include "test_compile.moc"
