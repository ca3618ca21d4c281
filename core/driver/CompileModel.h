// The model-level driver: a graph::Module to kernels + an executor plan + params, and packages.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/graph/Expr.h"
#include "core/tir/Function.h"
#include "runtime/GraphExecutor.h"
#include "runtime/NDArray.h"

namespace loom::driver {

/// One kernel of a model: a fused group's computation as an unscheduled PrimFunc. Groups that
/// compute the same thing (equal apart from their names) share one kernel.
struct ModelGroup {
  std::string name;        ///< the kernel's name, e.g. "fused_nn_conv2d_add_nn_relu_1"
  tir::PrimFunc func;      ///< unscheduled, named `name`; its first `numInputs` params are inputs
  int numInputs = 0;
  int occurrences = 1;     ///< how many nodes of the model call this kernel
  std::vector<std::string> ops; ///< the graph ops of the group, in order ("nn.conv2d", "add", ...)
  /// A loop kernel (topi/nn/Recurrent.h): `func` is already scheduled; no default schedule,
  /// tuning or GPU mapping applies.
  bool prescheduled = false;
  /// The graph symbols the kernel's shapes use (dynamic models): `func`'s last params, int32
  /// scalars in this order, after the tensors; the executor passes their values.
  std::vector<std::string> symbols = {};
};

/// How a group got its schedule, for the package metadata and `loom compile`'s summary.
struct GroupSchedule {
  tir::PrimFunc scheduled;  ///< the group's func after the schedule
  std::string source;       ///< e.g. "tuned:R.json" or "script:S.py"
};

/// Gives a group a schedule instead of the default one (e.g. the best tuning record of its
/// workload); std::nullopt keeps the default. May throw loom::Error, which compileModel passes on.
using ScheduleProvider = std::function<std::optional<GroupSchedule>(const ModelGroup& group)>;

/// Progress of a long step: `what` is being done, `done` of `total` units so far.
using ProgressCallback = std::function<void(const std::string& what, int done, int total)>;

struct CompileModelOptions {
  /// 0: every op its own kernel, no graph optimization, no schedule; 1: graph optimization and
  /// fusion; 2-3: also the default CPU schedule (inline, parallel, vectorize). Also the LLVM
  /// optimization level.
  int optLevel = 3;
  /// Names of main's results (default "output0", "output1", ...).
  std::vector<std::string> outputNames;
  /// Data layout of conv2d chains: "NCHW" (as imported) or "NCHWc" (channel-blocked NCHW16c by
  /// ConvertLayout). Empty picks the default: NCHWc at opt level 3 (compileModel keeps NCHW for
  /// GPU targets), NCHW below. Other values throw ValueError.
  std::string desiredLayout;
  /// Graph passes to leave out of the pipeline by name (tvmc's --disabled-pass), e.g.
  /// "winograd-conv" keeps 3x3 convs direct; ValueError for a name that is not a graph pass.
  std::vector<std::string> disabledPasses;
  /// Consulted for every kernel at opt level >= 1, before the default schedule.
  ScheduleProvider scheduleFor;
  /// Told about each kernel lowered and about code generation.
  ProgressCallback progress;
};
/// Name, shape and element type of a model input or output.
struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;  ///< 0 where a dim is symbolic
  runtime::DType dtype;
  std::vector<std::string> dims = {};  ///< every dim as text when some is symbolic ("N", "3", ...), else empty
};

/// A compiled model: one lowered PrimFunc per fused group (a packed function each), the
/// executor's graph JSON (storage plan included), the bound parameters, and what the model takes
/// and gives.
struct CompiledModel {
  std::string target;
  std::vector<tir::PrimFunc> kernels;
  /// The same kernels scheduled, before lowering (for `loom compile --dump-code tir`).
  std::vector<tir::PrimFunc> scheduledKernels;
  std::string graphJson;
  std::map<std::string, runtime::NDArray> params;
  std::vector<TensorInfo> inputs, outputs;
  int optLevel = 3;
  std::string layout = "NCHW";  ///< the conv layout used ("NCHW" or "NCHWc")
  /// Per kernel (same order as `kernels`): "none", "default" or the provider's source.
  std::vector<std::string> scheduleSources;
  /// Tuning record files the caller applied (listed in metadata.json).
  std::vector<std::string> tuningRecords;
};

/// Compiles `m`'s main for `target` ("llvm" or an llvm target string). `params` bind main's
/// parameters of those names as constants. Throws UnsupportedError naming the op (and node) that
/// has no compute, TypeError for symbolic shapes.
CompiledModel compileModel(const graph::Module& m, const std::string& target = "llvm",
                           const std::map<std::string, runtime::NDArray>& params = {},
                           const CompileModelOptions& options = {});

/// The kernels `compileModel(m, ..., options)` would build, unscheduled, in the order it builds
/// them (graph passes and fusion as for `options.optLevel` and `options.desiredLayout`).
std::vector<ModelGroup> extractGroups(const graph::Module& m,
                                      const std::map<std::string, runtime::NDArray>& params = {},
                                      const CompileModelOptions& options = {});

/// The executor of `model` with its kernels JIT-compiled into this process and params bound.
std::unique_ptr<runtime::GraphExecutor> createExecutor(const CompiledModel& model);

/// The metadata.json text: format version (runtime::kPackageFormatVersion), target, opt level,
/// layout, inputs and outputs (name, shape, dtype), Loom version, each kernel's schedule source and
/// the tuning record files used.
std::string packageMetadata(const CompiledModel& model);
/// Writes the .tar package (kernels.so, graph.json, params.bin, metadata.json); exportPackage
/// (core/driver/ExportLibrary.h) with default options. exportLibrary writes one shared library.
void writePackage(const CompiledModel& model, const std::string& path);

}  // namespace loom::driver
