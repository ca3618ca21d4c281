// The operator-level driver: schedule script -> lowering pipeline -> code generation.
#include "core/driver/BuildOperator.h"

#include "codegen/CodeGenC.h"
#include "codegen/CodeGenCUDA.h"
#include "codegen/CodeGenCUDANVRTC.h"
#include "codegen/CodeGenLLVM.h"
#include "codegen/JITModule.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Script.h"
#include "core/schedule/Trace.h"
#include "core/support/Error.h"
#include "core/tir/Visitor.h"
#include "core/transform/CrossThreadReduction.h"
#include "core/transform/GPUKernels.h"
#include "core/transform/GPUSchedules.h"
#include "core/transform/Pipeline.h"

namespace loom::driver {

namespace {
/// A schedule script's failure as an Error: located at the failing line, named after the
/// primitive's error class, detailed with the IR (the offending loop/block underlined).
class ScriptFailure : public Error {
public:
  explicit ScriptFailure(const tir::ScriptResult& r)
      : Error(r.error, r.span), m_kind(r.errorKind), m_detail(r.detail) {}
  const char* kind() const override { return m_kind.c_str(); }
  std::string detailedMessage() const override { return m_detail.empty() ? what() : m_detail; }

private:
  std::string m_kind, m_detail;
};
/// Keeps the function one named pass was given.
class BeforePass : public transform::PassInstrument {
public:
  explicit BeforePass(std::string name) : m_name(std::move(name)) {}
  void runBeforePass(const transform::Pass& pass, const tir::PrimFunc& before) override {
    if (pass.name == m_name) input = before;
  }
  tir::PrimFunc input;

private:
  std::string m_name;
};
}  // namespace

tir::Schedule applySchedule(const tir::PrimFunc& f, const std::string& script,
                            const std::string& scriptName) {
  tir::Schedule sch(f);
  tir::ScriptResult r = tir::runScript(sch, script, scriptName);
  if (!r.ok) throw ScriptFailure(r);
  return sch;
}

LoweredOperator lowerOperator(const tir::PrimFunc& f, const OperatorOptions& options,
                              transform::PassContext& ctx) {
  LoweredOperator op;
  op.input = f;
  op.target = codegen::Target::parse(options.target);
  op.scheduled = f;
  std::string script = options.schedule;
  // A program bound to blocks and threads already (a tuned or hand-scheduled one) is lowered as is.
  bool bound = false;
  tir::postOrderVisit(f->body, [&](const tir::IRNode* n) {
    if (n->nodeKind == tir::NodeKind::For) bound |= static_cast<const tir::ForNode*>(n)->kind == tir::ForKind::ThreadBinding;
  });
  if (script.empty() && op.target.isGPU() && options.defaultGPUSchedule && !bound)
    script = transform::defaultGPUSchedule(options.workload, f);
  if (!script.empty()) {
    tir::Schedule sch = applySchedule(f, script, options.schedule.empty() ? "<default GPU schedule>" : options.scheduleName);
    op.scheduled = sch.func();
    op.trace = sch.trace().str();
  }
  transform::LowerOptions lo;
  lo.gpu = op.target.kind != "llvm";
  lo.packedEntry = true;
  auto beforeEntry = std::make_shared<BeforePass>("make-packed-api");
  ctx.instruments.push_back(beforeEntry);
  // GPU: reductions bound to threadIdx become shared-memory trees while still in block form.
  tir::PrimFunc toLower = lo.gpu ? transform::lowerCrossThreadReduction(op.scheduled) : op.scheduled;
  op.entry = transform::lower(toLower, ctx, lo);
  ctx.instruments.pop_back();
  op.lowered = beforeEntry->input;
  LOOM_ICHECK(op.lowered.defined()) << "the pipeline has no make-packed-api step";
  return op;
}

std::string emitCode(const LoweredOperator& op, CodeKind kind) {
  const tir::PrimFunc& entry = op.entry;
  bool gpuKind = kind == CodeKind::CUDA || kind == CodeKind::PTX || kind == CodeKind::OpenCL;
  if (op.target.isGPU() && !gpuKind)
    LOOM_THROW(TargetError) << "target '" << op.target.str() << "' emits cuda, ptx or opencl code, not LLVM IR, assembly or C";
  switch (kind) {
  case CodeKind::LLVM: {
    codegen::CodeGenOptions cg;
    cg.debugInfo = false;
    return codegen::buildLLVM({entry}, op.target, cg).llvmIR();
  }
  case CodeKind::Asm: return codegen::buildLLVM({entry}, op.target).assembly();
  case CodeKind::C: return codegen::emitC({entry});
  case CodeKind::CUDA:
  case CodeKind::PTX:
  case CodeKind::OpenCL: {
    if (!op.target.isGPU())
      LOOM_THROW(TargetError) << "CUDA, PTX and OpenCL code need a GPU target (cuda or opencl), not '" << op.target.str() << "'";
    transform::DeviceProgram program = transform::splitHostDevice(op.lowered);
    if (kind == CodeKind::OpenCL) return codegen::emitGPUSource(program, codegen::GPUDialect::OpenCL);
    std::string cuda = codegen::emitGPUSource(program, codegen::GPUDialect::CUDA);
    if (kind == CodeKind::CUDA) return cuda;
    return codegen::compileCUDAToPTX(cuda, op.target.kind == "cuda" && !op.target.arch.empty() ? op.target.arch : "sm_90");
  }
  }
  LOOM_ICHECK(false) << "unhandled code kind";
  return {};
}

std::unique_ptr<codegen::JITModule> jitOperator(const LoweredOperator& op) {
  return std::make_unique<codegen::JITModule>(codegen::buildLLVM({op.entry}, op.target));
}

}  // namespace loom::driver
