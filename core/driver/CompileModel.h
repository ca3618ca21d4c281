// The model-level driver: a graph::Module to kernels + an executor plan + params, and packages.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/graph/Expr.h"
#include "core/tir/Function.h"
#include "runtime/GraphExecutor.h"
#include "runtime/NDArray.h"

namespace loom::driver {

struct CompileModelOptions {
  /// 0: every op its own kernel, no graph optimization, no schedule; 1: graph optimization and
  /// fusion; 2-3: also the default CPU schedule (inline, parallel, vectorize). Also the LLVM
  /// optimization level.
  int optLevel = 3;
  /// Names of main's results (default "output0", "output1", ...).
  std::vector<std::string> outputNames;
};

/// Name, shape and element type of a model input or output.
struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  runtime::DType dtype;
};

/// A compiled model: one lowered PrimFunc per fused group (a packed function each), the
/// executor's graph JSON (storage plan included), the bound parameters, and what the model takes
/// and gives.
struct CompiledModel {
  std::string target;
  std::vector<tir::PrimFunc> kernels;
  std::string graphJson;
  std::map<std::string, runtime::NDArray> params;
  std::vector<TensorInfo> inputs, outputs;
  int optLevel = 3;
};

/// Compiles `m`'s main for `target` ("llvm" or an llvm target string). `params` bind main's
/// parameters of those names as constants. Throws UnsupportedError naming the op (and node) that
/// has no compute, TypeError for symbolic shapes.
CompiledModel compileModel(const graph::Module& m, const std::string& target = "llvm",
                           const std::map<std::string, runtime::NDArray>& params = {},
                           const CompileModelOptions& options = {});

/// The executor of `model` with its kernels JIT-compiled into this process and params bound.
std::unique_ptr<runtime::GraphExecutor> createExecutor(const CompiledModel& model);

/// The metadata.json text: format version (runtime::kPackageFormatVersion), target, opt level,
/// inputs and outputs (name, shape, dtype), Loom version.
std::string packageMetadata(const CompiledModel& model);
/// Writes the .tar package (kernels.so, graph.json, params.bin, metadata.json).
void writePackage(const CompiledModel& model, const std::string& path);

}  // namespace loom::driver
