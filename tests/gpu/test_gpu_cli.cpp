// The GPU paths of the `loom` binary: lower --emit cuda|ptx|opencl, bench-op --target opencl on
// PoCL, and the clear refusals (no OpenCL platform, no CUDA runtime, a CPU emit for a GPU target).
#include <QtTest>

#include <dlfcn.h>

#include <QFile>
#include <QProcessEnvironment>
#include <QTemporaryDir>

#include "GPUTestUtil.h"
#include "tests/common/ProcessRun.h"
#include "codegen/CodeGenCUDANVRTC.h"

namespace {
using Run = loom::test::ProcessResult;

Run runLoom(const QStringList& args, const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
  return loom::test::runLoomBinary(args, 120000, env);
}
}  // namespace

class TestGpuCli : public QObject {
  Q_OBJECT
  std::string m_noOpenCL;

private slots:
  void initTestCase() {
    loom::gputest::usePluginsOfThisBuild();
    m_noOpenCL = loom::gputest::openclUnavailable();
  }

  void emitKernelSource() {
    Run cu = runLoom({"lower", "-w", "matmul:M=32,N=32,K=32", "--emit", "cuda"});
    QVERIFY2(cu.exitCode == 0, qPrintable(cu.err));
    QVERIFY2(cu.out.contains("extern \"C\" __global__") && cu.out.contains("__syncthreads();") &&
                 cu.out.contains("__shared__ float"),
             qPrintable(cu.out));
    Run cl = runLoom({"lower", "-w", "softmax:M=16,N=32", "--emit", "opencl"});
    QVERIFY2(cl.exitCode == 0, qPrintable(cl.err));
    QVERIFY2(cl.out.contains("__kernel void main_kernel3") && cl.out.contains("get_group_id(0)"), qPrintable(cl.out));
  }

  void emitPtx() {
    std::string why;
    if (!loom::codegen::nvrtcAvailable(&why)) QSKIP(("CUDA toolkit not found: " + why).c_str());
    Run r = runLoom({"lower", "-w", "relu:M=16,N=16", "--emit", "ptx", "-t", "cuda -arch=sm_80"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(".target sm_80") && r.out.contains(".entry main_kernel0"), qPrintable(r.out.left(600)));
  }

  void benchOpOnOpenCL() {
    if (!m_noOpenCL.empty()) QSKIP(("no OpenCL device: " + m_noOpenCL).c_str());
    for (const char* w : {"matmul:M=64,N=64,K=64", "softmax:M=32,N=64", "reduce_sum:M=32,N=64"}) {
      Run r = runLoom({"bench-op", "-w", w, "--target", "opencl", "--repeat", "2"});
      QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
      QVERIFY2(r.out.contains("check: correct") && r.out.contains("target: opencl"), qPrintable(r.out));
      QVERIFY2(r.err.isEmpty(), qPrintable(r.err));  // no compiler warnings from the kernel build
    }
  }

  void modelsOnOpenCL() {
    // The example models compiled for opencl and run on the OpenCL device match their ONNX test
    // data; packaging GPU kernels is refused with a clear message.
    if (!m_noOpenCL.empty()) QSKIP(("no OpenCL device: " + m_noOpenCL).c_str());
    QString models = QStringLiteral(LOOM_SOURCE_DIR "/examples/models/");
    Run r = runLoom({"onnx-test", "--target", "opencl", "-v", models + "small_cnn", models + "fire_net",
                     models + "transformer_block"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("3 passed, 0 failed"), qPrintable(r.out));
    QTemporaryDir dir;
    Run c = runLoom({"compile", models + "fire_net/model.onnx", "--target", "opencl", "-o", dir.filePath("m.tar")});
    QCOMPARE(c.exitCode, 1);
    QVERIFY2(c.err.contains("'opencl' is not supported"), qPrintable(c.err));
  }

  void noOpenCLPlatformSaysSo() {
    QTemporaryDir empty;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("OCL_ICD_VENDORS", empty.path());  // the ICD loader finds no platform here
    Run r = runLoom({"bench-op", "-w", "relu:M=8,N=8", "--target", "opencl"}, env);
    if (r.exitCode == 0) {
      // On the H200 machine of session 18 (its NVIDIA driver, its own ICD loader) the run found a
      // platform despite OCL_ICD_VENDORS and succeeded. Without a CUDA driver (here, CI) the
      // platform must be hidden and the run refused.
      void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
      if (driver) {
        dlclose(driver);
        QSKIP("an OpenCL platform was found despite OCL_ICD_VENDORS (a machine with a CUDA driver)");
      }
    }
    QCOMPARE(r.exitCode, 1);
    // Where the OpenCL plugin or the ICD loader itself is missing (a GPU machine running packed
    // binaries), that is what the message says, and no platform can be hidden from a loader.
    if (r.err.contains("no plugin libloom_device_opencl") || r.err.contains("ICD loader libOpenCL.so.1 is not installed"))
      QSKIP(qPrintable("no OpenCL plugin or ICD loader here: " + r.err.trimmed()));
    QVERIFY2(r.err.contains("no OpenCL platform is installed"), qPrintable(r.err));
  }

  void cudaCannotRunHere() {
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (driver) {
      dlclose(driver);
      QSKIP("libcuda.so.1 is installed here: bench-op --target cuda may run");
    }
    Run r = runLoom({"bench-op", "-w", "relu:M=8,N=8", "--target", "cuda"});
    QCOMPARE(r.exitCode, 1);
#ifdef LOOM_HAVE_CUDA_PLUGIN
    QVERIFY2(r.err.contains("no CUDA driver/device (libcuda.so.1 not found)"), qPrintable(r.err));
#else
    QVERIFY2(r.err.contains("libloom_device_cuda.so"), qPrintable(r.err));
#endif
    QVERIFY2(r.err.contains("--emit ptx"), qPrintable(r.err));
  }

  void cudaDriverStubIsRefusedAtInit() {
    // The toolkit's stub driver exports every entry point the plugin loads (so the versioned
    // names resolve) but cuInit fails: the plugin gets that far and says so.
#ifndef LOOM_HAVE_CUDA_PLUGIN
    QSKIP("the CUDA device plugin is not built (no CUDA toolkit headers)");
#endif
    const char* stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
    if (!QFile::exists(stub)) QSKIP("no CUDA stub driver in /usr/local/cuda/lib64/stubs");
    QTemporaryDir dir;
    QVERIFY(QFile::link(stub, dir.filePath("libcuda.so.1")));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    // The stub first, ahead of (not instead of) the path loom itself may need for its libraries.
    QString path = env.value("LD_LIBRARY_PATH");
    env.insert("LD_LIBRARY_PATH", dir.path() + (path.isEmpty() ? "" : ":" + path));
    Run r = runLoom({"bench-op", "-w", "relu:M=8,N=8", "--target", "cuda"}, env);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("no CUDA driver/device (cuInit failed: CUDA_ERROR_STUB_LIBRARY)"), qPrintable(r.err));
  }

  void cpuEmitForGpuTargetIsRefused() {
    Run r = runLoom({"lower", "-w", "relu:M=8,N=8", "--emit", "llvm", "-t", "opencl"});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("emits cuda, ptx or opencl"), qPrintable(r.err));
  }

  void unboundScheduleIsRefused() {
    QTemporaryDir dir;
    QString script = dir.filePath("noop.py");
    QFile f(script);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("b = sch.get_block(\"T_relu\")\n");
    f.close();
    Run r = runLoom({"lower", "-w", "relu:M=8,N=8", "--emit", "opencl", "-s", script});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("runs outside any kernel"), qPrintable(r.err));
  }
};

QTEST_APPLESS_MAIN(TestGpuCli)
#include "test_gpu_cli.moc"
