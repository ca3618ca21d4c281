// libloom_runtime.so depends on nothing of the compiler: no LLVM, Qt, ONNX, protobuf or MPI in ldd, NEEDED or its symbols.
#include <QtTest>

#include <QProcess>
#include <QRegularExpression>

namespace {

QString run(const QString& program, const QStringList& args) {
  QProcess p;
  p.start(program, args);
  if (!p.waitForFinished(30000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
    return QString();
  return QString::fromLocal8Bit(p.readAllStandardOutput());
}

const QRegularExpression kForbidden("llvm|LLVM|libQt|Qt6|Qt5|onnx|protobuf|libclang|xgboost|libmpi|openmpi",
                                    QRegularExpression::CaseInsensitiveOption);

}  // namespace

class TestDeps : public QObject {
  Q_OBJECT
private slots:
  void lddIsClean() {
    QString out = run("ldd", {RUNTIME_SHARED_LIB});
    QVERIFY2(out.contains("libc.so"), qPrintable("ldd printed: " + out));  // ldd did run
    QVERIFY2(!out.contains(kForbidden), qPrintable(out));
    QVERIFY2(!out.contains("not found"), qPrintable(out));
  }

  void neededIsClean() {
    QString out = run("readelf", {"-d", RUNTIME_SHARED_LIB});
    QVERIFY2(out.contains("(NEEDED)"), qPrintable(out));
    QVERIFY2(out.contains("(SONAME)") && out.contains("libloom_runtime.so"), qPrintable(out));
    for (const QString& line : out.split('\n'))
      if (line.contains("(NEEDED)")) QVERIFY2(!line.contains(kForbidden), qPrintable(line));
  }

  void exportsTheCAbi() {
    QString out = run("nm", {"-D", "--defined-only", RUNTIME_SHARED_LIB});
    for (const char* sym :
         {"loom_get_last_error", "loom_set_last_error", "loom_backend_alloc_workspace",
          "loom_backend_free_workspace", "loom_backend_parallel_launch",
          "loom_backend_parallel_barrier", "loom_backend_num_threads", "loom_module_load",
          "loom_module_get_function", "loom_function_call", "loom_ndarray_empty",
          "loom_runtime_num_threads"})
      QVERIFY2(out.contains(QRegularExpression(QString(" T %1$").arg(sym),
                                               QRegularExpression::MultilineOption)),
               sym);
    QString undefined = run("nm", {"-D", "--undefined-only", RUNTIME_SHARED_LIB});
    QVERIFY2(!undefined.contains(kForbidden), qPrintable(undefined));
  }
};

QTEST_APPLESS_MAIN(TestDeps)
#include "test_deps.moc"
