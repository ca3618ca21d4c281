// The operator-level driver: schedule a tensor program, lower it, and generate code for a target.
// The CLI (`loom lower`, `loom bench-op`, `loom verify`) and the Studio both call this.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "codegen/Target.h"
#include "core/schedule/Schedule.h"
#include "core/tir/Function.h"
#include "core/transform/Pass.h"

namespace loom::codegen {
class JITModule;
}

namespace loom::driver {

/// How to build one operator.
struct OperatorOptions {
  std::string target = "llvm";
  /// A schedule script (the tvm.tir.Schedule Python subset); empty means "as written".
  std::string schedule;
  /// The script's file name, for `FILE:LINE:COL: error:` messages.
  std::string scheduleName = "<schedule>";
  /// GPU targets only, when `schedule` is empty and no loop of the program is bound to a thread
  /// yet: the preset's name, which picks its default GPU schedule (transform::defaultGPUSchedule;
  /// every block's loops bound to blocks and threads).
  std::string workload = {};
  /// GPU targets only: false lowers an empty `schedule` as written (for a program scheduled
  /// already), which fails for loops not bound to blocks and threads.
  bool defaultGPUSchedule = true;
};

/// Each stage of one operator's build, kept so a caller can show any of them.
struct LoweredOperator {
  tir::PrimFunc input;      ///< as given
  tir::PrimFunc scheduled;  ///< after the schedule script
  std::string trace;        ///< the applied schedule, printed as a script
  tir::PrimFunc lowered;    ///< after the lowering pipeline, before its make-packed-api step
  tir::PrimFunc entry;      ///< the packed-call entry that codegen compiles
  codegen::Target target;
};

/// Runs a schedule script on `f`. At the first failing line throws loom::Error located at that
/// line of `scriptName`, whose detailed message shows the IR as it was just before that line
/// with the offending loop or block marked.
tir::Schedule applySchedule(const tir::PrimFunc& f, const std::string& script,
                            const std::string& scriptName);

/// Applies the schedule and runs the lowering pipeline under `ctx` (whose instruments see every
/// pass). A failing script line throws loom::Error located at that line of `scheduleName`.
LoweredOperator lowerOperator(const tir::PrimFunc& f, const OperatorOptions& options,
                              transform::PassContext& ctx);

/// What `emitCode` prints.
enum class CodeKind { LLVM, Asm, C, CUDA, PTX, OpenCL };
/// LLVM IR, assembly (for any LLVM target, cross ones included) or C source of a lowered operator;
/// for an operator lowered for a GPU target (cuda, opencl), the CUDA C or OpenCL C of its
/// kernels, or the PTX NVRTC makes of the CUDA C for the target's -arch (default sm_90).
std::string emitCode(const LoweredOperator& op, CodeKind kind);

/// JIT-compiles a lowered operator for the host; the function is named after the PrimFunc.
std::unique_ptr<codegen::JITModule> jitOperator(const LoweredOperator& op);

}  // namespace loom::driver
