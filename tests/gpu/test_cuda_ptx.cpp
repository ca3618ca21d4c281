// The GPU schedules of every preset, and every kernel of the example models compiled for cuda,
// emitted as CUDA C, compile to PTX through NVRTC for sm_80 and sm_90, and ptxas accepts that PTX
// (skipped, with the reason, when the CUDA toolkit is absent).
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include "GPUTestUtil.h"
#include "codegen/CodeGenCUDA.h"
#include "codegen/CodeGenCUDANVRTC.h"
#include "core/driver/CompileModel.h"
#include "core/driver/CompileModelGPU.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/transform/GPUSchedules.h"

using namespace loom;

namespace {

std::string smallSpec(const std::string& name) {
  if (name == "matmul") return "matmul:M=32,N=24,K=40";
  if (name == "reduce_sum") return "reduce_sum:M=20,N=48";
  if (name == "softmax") return "softmax:M=12,N=40";
  if (name == "conv2d") return "conv2d:N=1,C=4,H=8,W=8,K=8,R=3,S=3";
  return name;
}

QString findPtxas() {
  QString p = QStandardPaths::findExecutable("ptxas");
  if (p.isEmpty()) p = QStandardPaths::findExecutable("ptxas", {"/usr/local/cuda/bin"});
  return p;
}

}  // namespace

class TestCudaPtx : public QObject {
  Q_OBJECT

  std::string m_noNvrtc;
  QString m_ptxas;
  QTemporaryDir m_dir;
  int m_count = 0;

  /// NVRTC for both archs, then ptxas on each PTX (which must define kernel `entry`).
  void compile(const std::string& what, const std::string& source, const std::string& entry = "main_kernel0") {
    for (const char* arch : {"sm_80", "sm_90"}) {
      std::string ptx;
      try {
        ptx = codegen::compileCUDAToPTX(source, arch);
      } catch (const Error& e) {
        QFAIL((what + " for " + arch + ": " + e.what() + "\n" + source).c_str());
      }
      QVERIFY2(ptx.find(std::string(".target ") + arch) != std::string::npos, ptx.substr(0, 400).c_str());
      QVERIFY2(ptx.find(".entry " + entry) != std::string::npos, ptx.substr(0, 2000).c_str());
      if (m_ptxas.isEmpty()) continue;
      QString file = m_dir.filePath(QString("k%1.ptx").arg(m_count++));
      QFile f(file);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(ptx.data(), qint64(ptx.size()));
      f.close();
      QProcess p;
      p.start(m_ptxas, {QString("-arch=") + arch, file, "-o", file + ".cubin"});
      QVERIFY(p.waitForFinished(60000));
      QVERIFY2(p.exitCode() == 0, (what + " for " + arch + ": ptxas refused the PTX:\n" +
                                   p.readAllStandardError().toStdString() + "\n" + ptx).c_str());
    }
  }

private slots:
  void initTestCase() {
    if (!codegen::nvrtcAvailable(&m_noNvrtc)) qWarning("CUDA toolkit missing: %s", m_noNvrtc.c_str());
    m_ptxas = findPtxas();
    if (m_ptxas.isEmpty()) qWarning("ptxas not found (neither on PATH nor in /usr/local/cuda/bin): PTX is not assembled");
  }

  void presets_data() {
    QTest::addColumn<QString>("spec");
    for (auto& w : topi::allWorkloads()) QTest::newRow(w.name.c_str()) << QString::fromStdString(smallSpec(w.name));
  }
  void presets() {
    if (!m_noNvrtc.empty()) QSKIP(("CUDA toolkit not found: " + m_noNvrtc).c_str());
    QFETCH(QString, spec);
    topi::WorkloadSpec s = topi::parseWorkloadSpec(spec.toStdString());
    tir::PrimFunc f = topi::buildWorkload(s);
    std::vector<std::pair<std::string, std::string>> schedules = {
        {"flat 64", transform::gpuScheduleFlat(f, 64)}, {"2-D 4x8", transform::gpuSchedule2D(f, 4, 8)}};
    if (s.workload->name == "matmul") {
      schedules.push_back({"shared 8x8", transform::gpuScheduleMatmulShared(8)});
      schedules.push_back({"vthread 2x2", transform::gpuScheduleMatmulVThread(4, 2, 8)});
    }
    if (s.workload->name == "reduce_sum") {
      schedules.push_back({"rfactor 8", transform::gpuScheduleReduceRfactor(8)});
      schedules.push_back({"cross-thread 16", transform::gpuScheduleReduceCrossThread(16)});
    }
    for (auto& [name, script] : schedules) {
      gputest::GPUCase c = gputest::lowerForGPU(spec.toStdString(), script);
      std::string src = codegen::emitGPUSource(transform::splitHostDevice(c.lowered), codegen::GPUDialect::CUDA);
      compile(spec.toStdString() + " (" + name + ")", src);
    }
  }

  void modelKernels_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("shapes");
    QTest::newRow("small_cnn") << "small_cnn" << "data:[1,3,16,16]";
    QTest::newRow("fire_net") << "fire_net" << "";
  }
  void modelKernels() {
    // Every kernel of a model compiled for cuda (the default GPU schedule of each fused group),
    // in one translation unit.
    if (!m_noNvrtc.empty()) QSKIP(("CUDA toolkit not found: " + m_noNvrtc).c_str());
    QFETCH(QString, model);
    QFETCH(QString, shapes);
    frontend::ImportOptions io;
    if (!shapes.isEmpty()) io.inputShapes = frontend::parseInputShapes(shapes.toStdString());
    graph::Module m = frontend::importOnnx(LOOM_SOURCE_DIR "/examples/models/" + model.toStdString() + "/model.onnx", io);
    driver::CompiledModel cm = driver::compileModel(m, "cuda -arch=sm_80");
    QVERIFY(!cm.kernels.empty());
    std::string src = driver::modelKernelSource(cm);
    QVERIFY2(src.find("extern \"C\" __global__") != std::string::npos, src.c_str());
    compile(model.toStdString(), src, cm.kernels.back()->name + "_kernel0");
  }

  void badSourceReportsTheLog() {
    if (!m_noNvrtc.empty()) QSKIP(("CUDA toolkit not found: " + m_noNvrtc).c_str());
    try {
      codegen::compileCUDAToPTX("extern \"C\" __global__ void k(float* a) { a[0] = undefined_name; }", "sm_90");
      QFAIL("bad CUDA source compiled");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("undefined_name") != std::string::npos, e.what());
    }
  }
};

QTEST_APPLESS_MAIN(TestCudaPtx)
#include "test_cuda_ptx.moc"
