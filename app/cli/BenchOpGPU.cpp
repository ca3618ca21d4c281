// `loom bench-op` on a GPU target: runs the kernels on the OpenCL device and checks them.
#include "app/cli/BenchOpGPU.h"

#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "codegen/CodeGenOpenCL.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/topi/Workloads.h"
#include "runtime/RuntimeFailure.h"

namespace loom::cli {

namespace {
/// Device plugins are looked for next to the binary's build tree (../lib) unless the user set
/// LOOM_DEVICE_PATH.
void defaultDevicePath() {
  if (std::getenv("LOOM_DEVICE_PATH")) return;
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return;
  std::string exe(buf, size_t(n));
  std::string dir = exe.substr(0, exe.rfind('/'));
  std::string path = dir + "/../lib:" + dir + "/../lib/loom:" + dir;
  setenv("LOOM_DEVICE_PATH", path.c_str(), 1);
}
}  // namespace

int benchOperatorOnGPU(const ProgramInput& in, const driver::LoweredOperator& op, uint64_t seed, int repeat, bool noCheck) {
  if (op.target.kind == "cuda")
    LOOM_THROW(Error) << "bench-op: target '" << op.target.str()
                      << "' cannot run here: Loom has no CUDA device runtime (and this machine no GPU); "
                         "`loom lower --emit cuda` or `--emit ptx` prints the kernels, `--target opencl` runs them";
  defaultDevicePath();
  std::unique_ptr<codegen::OpenCLModule> mod;
  try {
    mod = std::make_unique<codegen::OpenCLModule>(op.lowered);
  } catch (const runtime::RuntimeFailure& e) {
    LOOM_THROW(Error) << "bench-op: cannot run on OpenCL: " << e.what();
  }
  std::vector<runtime::NDArray> arrays = topi::makeParamArrays(in.func);
  size_t numInputs = in.workload ? size_t(in.workload->workload->numInputs) : arrays.size();
  for (size_t i = 0; i < numInputs; ++i) tir::fillRandom(arrays[i], seed + i);
  mod->run(arrays);
  if (!noCheck) {
    std::vector<runtime::NDArray> want;
    for (size_t i = 0; i < arrays.size(); ++i) want.push_back(i < numInputs ? arrays[i] : arrays[i].copy());
    std::string refName;
    if (in.workload && topi::workloadFlops(*in.workload) <= 2e8) {
      topi::runReference(*in.workload, want);
      refName = "the C++ reference";
    } else {
      std::vector<tir::Arg> args(want.begin(), want.end());
      tir::interpret(in.func, args);
      refName = "the reference interpreter";
    }
    double tolerance = in.workload ? topi::checkTolerance(*in.workload) : 1e-4;
    double worst = 0;
    for (size_t i = numInputs; i < arrays.size(); ++i) {
      double err = tir::maxRelError(arrays[i], want[i]);
      worst = err > worst || err != err ? err : worst;
    }
    bool ok = worst <= tolerance;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2e", worst);
    std::cout << "check: " << (ok ? "correct" : "WRONG") << " (max rel err " << buf << " vs " << refName << ")\n";
    if (!ok) {
      std::cerr << "error: " << in.origin << ": result differs from " << refName << "\n";
      return 1;
    }
  }
  double seconds = mod->run(arrays, std::max(1, repeat));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", seconds * 1e3);
  std::cout << "operator: " << in.origin << "\ntarget: " << op.target.str() << " (" << mod->deviceDescription() << ", "
            << mod->program().kernels.size() << " kernel(s))\n";
  std::cout << "time: mean " << buf << " ms over " << std::max(1, repeat) << " runs (copies excluded)\n";
  if (in.workload) {
    std::snprintf(buf, sizeof buf, "%.2f", topi::workloadFlops(*in.workload) / seconds / 1e9);
    std::cout << "throughput: " << buf << " GFLOP/s\n";
  }
  return 0;
}

}  // namespace loom::cli
