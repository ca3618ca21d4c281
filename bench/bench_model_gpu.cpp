// Benchmark: one ONNX model (a test directory: model.onnx + test_data_set_0/) compiled for a GPU
// target (cuda by default) and for the CPU (llvm) in one run: each build's output against the
// test data's, the GPU output against the CPU build's, and the median time of one run of each.
//
// A GPU run is timed from the host: setInput (host to device copy), run, device sync; the
// output copy back is outside. The CPU build runs on LOOM_NUM_THREADS threads (default: all).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fstream>
#include <onnx/onnx_pb.h>
#include <set>

#include "core/driver/CompileModel.h"
#include "core/driver/CompileModelGPU.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/tir/HostArrays.h"
#include "runtime/DeviceAPI.h"
#include "runtime/GraphExecutor.h"

using namespace loom;
namespace fs = std::filesystem;

namespace {

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Timed {
  double compileS = 0, medianMs = 0, minMs = 0;
  std::vector<runtime::NDArray> outputs;
};

Timed runBuild(const graph::Module& m, const std::string& target, const std::vector<runtime::NDArray>& inputs,
               int warmup, int repeat) {
  Timed t;
  double t0 = seconds();
  driver::CompiledModel cm = driver::compileModel(m, target);
  auto ex = driver::createExecutor(cm);
  t.compileS = seconds() - t0;
  bool gpu = driver::isGPUTarget(target);
  runtime::DeviceType devType =
      target.rfind("cuda", 0) == 0 ? runtime::DeviceType::CUDA : runtime::DeviceType::OpenCL;
  auto once = [&]() {
    for (size_t i = 0; i < inputs.size() && i < ex->numInputs(); ++i) ex->setInput(i, inputs[i]);
    ex->run();
    if (gpu) runtime::DeviceAPI::get(devType)->sync({devType, 0});
  };
  for (int k = 0; k < warmup; ++k) once();
  std::vector<double> ms;
  for (int k = 0; k < repeat; ++k) {
    double s = seconds();
    once();
    ms.push_back((seconds() - s) * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  t.medianMs = ms[ms.size() / 2];
  t.minMs = ms.front();
  for (size_t i = 0; i < ex->numOutputs(); ++i) t.outputs.push_back(ex->getOutput(i));
  return t;
}

/// The graph inputs of the model that are not initializers, in order.
std::vector<std::string> inputNames(const std::string& path) {
  onnx::ModelProto m;
  std::ifstream in(path, std::ios::binary);
  if (!in || !m.ParseFromIstream(&in)) throw std::runtime_error(path + ": not an ONNX model");
  std::set<std::string> inits;
  for (const auto& t : m.graph().initializer()) inits.insert(t.name());
  std::vector<std::string> names;
  for (const auto& v : m.graph().input())
    if (!inits.count(v.name())) names.push_back(v.name());
  return names;
}

double worstError(const std::vector<runtime::NDArray>& got, const std::vector<runtime::NDArray>& want) {
  double worst = 0;
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    double e = tir::maxRelError(got[i], want[i]);
    if (!(e <= worst)) worst = e;
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir, target = "cuda", shapes;
  int repeat = 50, warmup = 5;
  bool noCpu = false;
  double tol = 5e-3;
  CLI::App app{"One ONNX model on a GPU target against its CPU build and its test data", "bench_model_gpu"};
  app.add_option("dir", dir, "A test directory: model.onnx and test_data_set_0/")->required()->check(CLI::ExistingDirectory);
  app.add_option("--target", target, "GPU target: cuda [-arch=sm_XX] or opencl")->capture_default_str();
  app.add_option("--input-shapes", shapes, "Static input shapes, e.g. \"input:[1,3,224,224]\"");
  app.add_option("--repeat", repeat, "Timed runs (median reported)")->capture_default_str()->check(CLI::Range(1, 100000));
  app.add_option("--warmup", warmup, "Untimed runs first")->capture_default_str()->check(CLI::Range(0, 100000));
  app.add_flag("--no-cpu", noCpu, "Skip the CPU (llvm) build");
  app.add_option("--tol", tol, "Largest error allowed, relative to the output's largest magnitude (tir::maxRelError)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    runtime::useDevicePluginsBesideProgram();
    fs::path set = fs::path(dir) / "test_data_set_0";
    std::vector<runtime::NDArray> inputs, expected;
    for (size_t i = 0; fs::exists(set / ("input_" + std::to_string(i) + ".pb")); ++i)
      inputs.push_back(frontend::loadTensorProto((set / ("input_" + std::to_string(i) + ".pb")).string()));
    for (size_t i = 0; fs::exists(set / ("output_" + std::to_string(i) + ".pb")); ++i)
      expected.push_back(frontend::loadTensorProto((set / ("output_" + std::to_string(i) + ".pb")).string()));
    frontend::ImportOptions io;
    std::string modelPath = (fs::path(dir) / "model.onnx").string();
    if (!shapes.empty()) io.inputShapes = frontend::parseInputShapes(shapes);
    else {  // the test data's shapes (models may leave the batch symbolic)
      std::vector<std::string> names = inputNames(modelPath);
      for (size_t i = 0; i < names.size() && i < inputs.size(); ++i) io.inputShapes[names[i]] = inputs[i].shape();
    }
    graph::Module m = frontend::importOnnx(modelPath, io);

    Timed gpu = runBuild(m, target, inputs, warmup, repeat);
    double gpuErr = worstError(gpu.outputs, expected);
    std::printf("model: %s\n", dir.c_str());
    std::printf("%-8s compile %.1f s  run median %.3f ms  min %.3f ms  (%d runs)  max rel err vs test data %.2e\n",
                "gpu", gpu.compileS, gpu.medianMs, gpu.minMs, repeat, gpuErr);
    bool ok = gpuErr <= tol;
    if (!noCpu) {
      Timed cpu = runBuild(m, "llvm", inputs, std::min(warmup, 2), std::max(1, repeat / 5));
      double cpuErr = worstError(cpu.outputs, expected), vsCpu = worstError(gpu.outputs, cpu.outputs);
      std::printf("%-8s compile %.1f s  run median %.3f ms  min %.3f ms  (%d runs)  max rel err vs test data %.2e\n",
                  "cpu", cpu.compileS, cpu.medianMs, cpu.minMs, std::max(1, repeat / 5), cpuErr);
      std::printf("gpu vs cpu build: max rel err %.2e; cpu/gpu time ratio %.1f\n", vsCpu, cpu.medianMs / gpu.medianMs);
      ok = ok && vsCpu <= tol;
    }
    std::printf("check: %s\n", ok ? "correct" : "WRONG");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
