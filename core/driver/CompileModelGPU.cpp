// compileModel for GPU targets: default GPU schedules of any kernel, GPU lowering, kernel source and the device executor.
#include "core/driver/CompileModelGPU.h"

#include <algorithm>
#include <sstream>

#include "codegen/CodeGenCUDA.h"
#include "codegen/CodeGenOpenCL.h"
#include "codegen/Target.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/primitive/compute_inline.h"
#include "core/schedule/primitive/for_kind.h"
#include "core/schedule/primitive/get_block_loop.h"
#include "core/schedule/primitive/loop_transformation.h"
#include "core/support/Error.h"
#include "core/tir/Op.h"
#include "core/transform/CrossThreadReduction.h"
#include "core/transform/GPUKernels.h"
#include "core/transform/Pipeline.h"

namespace loom::driver {

namespace {

/// Binds the block's spatial loops (fused) to blockIdx.x x threadIdx.x, or runs a block without
/// any in one thread.
void bindBlock(tir::Schedule& sch, const tir::BlockRV& b, int threads) {
  const tir::BlockNode* blk = sch.get(b);
  std::vector<tir::LoopRV> loops = tir::getLoops(sch, b);
  const tir::BlockRealizeNode* realize = sch.realizeOf(blk);
  if (!realize || loops.size() != blk->iterVars.size())
    LOOM_THROW(UnsupportedError) << "no default GPU schedule for block '" << blk->name << "': it has " << loops.size()
                                 << " loops for " << blk->iterVars.size() << " iter vars";
  size_t spatial = 0;
  int64_t extent = 1;
  for (size_t k = 0; k < loops.size(); ++k) {
    const tir::ForNode* loop = sch.get(loops[k]);
    auto* v = realize->iterValues[k].as<tir::VarNode>();
    const int64_t* e = tir::asConstInt(loop->extent);
    if (!v || v != loop->loopVar.get() || !e)
      LOOM_THROW(UnsupportedError) << "no default GPU schedule for block '" << blk->name << "': loop '"
                                   << loop->loopVar->name << "' is not its iter var's loop with a constant extent";
    if (blk->iterVars[k].iterType != tir::IterType::DataPar || spatial != k) continue;
    ++spatial;
    extent *= *e;
  }
  if (spatial == 0) {
    // One thread: a unit loop around the whole nest, bound to blockIdx.x.
    tir::LoopRV unit = loops.empty() ? tir::addUnitLoop(sch, b) : tir::addUnitLoop(sch, loops.front());
    tir::bind(sch, unit, "blockIdx.x");
    return;
  }
  tir::LoopRV fused = spatial == 1 ? loops[0]
                                   : tir::fuse(sch, std::vector<tir::LoopRV>(loops.begin(), loops.begin() + long(spatial)));
  int64_t t = std::min<int64_t>(threads, extent);
  std::vector<tir::LoopRV> parts = tir::split(sch, fused, {tir::Value(), tir::Value(t)});
  tir::bind(sch, parts[0], "blockIdx.x");
  tir::bind(sch, parts[1], "threadIdx.x");
}

}  // namespace

bool isGPUTarget(const std::string& target) {
  std::istringstream is(target);
  std::string kind;
  is >> kind;
  return kind == "cuda" || kind == "opencl";
}

tir::PrimFunc defaultGPUScheduleFunc(const tir::PrimFunc& f, int threads) {
  tir::Schedule sch(f);
  auto children = [&]() { return tir::getChildBlocks(sch, tir::getBlock(sch, "root")); };
  // Inline every block that can be (the primitive refuses reductions and outputs): on a GPU a
  // padded input or an epilogue computed in place costs less than a kernel and a round trip
  // through device memory.
  for (bool changed = true; changed;) {
    changed = false;
    for (const tir::BlockRV& b : children()) {
      try {
        tir::computeInline(sch, b);
        changed = true;
        break;
      } catch (const Error&) {
      }
    }
  }
  for (const tir::BlockRV& b : children()) bindBlock(sch, b, threads);
  return sch.func();
}

CompiledModel compileModelGPU(CompiledModel model, const std::vector<ModelGroup>& groups,
                              const CompileModelOptions& options) {
  const int total = int(groups.size());
  for (int k = 0; k < total; ++k) {
    const ModelGroup& g = groups[size_t(k)];
    if (options.progress) options.progress("lowering " + g.name + " for " + model.target, k, total);
    if (g.prescheduled)
      LOOM_THROW(UnsupportedError) << g.name << " (" << (g.ops.empty() ? "" : g.ops[0])
                                   << "): loop kernels run on the CPU only; compile for llvm";
    std::optional<GroupSchedule> given;
    if (options.optLevel >= 1 && options.scheduleFor) given = options.scheduleFor(g);
    tir::PrimFunc scheduled = given ? given->scheduled : defaultGPUScheduleFunc(g.func);
    transform::PassContext ctx;
    transform::LowerOptions lo;
    lo.gpu = true;
    tir::PrimFunc lowered = transform::lower(transform::lowerCrossThreadReduction(scheduled), ctx, lo);
    // Refuse here what could not run: code outside kernels, launches over the limits.
    transform::verifyGPULimits(transform::splitHostDevice(lowered));
    model.kernels.push_back(lowered);
    model.scheduleSources.push_back(given ? given->source : "default-gpu");
  }
  if (options.progress) options.progress("lowered", total, total);
  return model;
}

std::string modelKernelSource(const CompiledModel& model) {
  codegen::Target t = codegen::Target::parse(model.target);
  if (!t.isGPU()) LOOM_THROW(TargetError) << "model compiled for '" << model.target << "' has no GPU kernels";
  std::vector<transform::DeviceProgram> programs;
  for (const tir::PrimFunc& k : model.kernels) programs.push_back(transform::splitHostDevice(k));
  return codegen::emitGPUSource(programs, t.kind == "cuda" ? codegen::GPUDialect::CUDA : codegen::GPUDialect::OpenCL);
}

std::unique_ptr<runtime::GraphExecutor> createGPUExecutor(const CompiledModel& model) {
  codegen::Target t = codegen::Target::parse(model.target);
  runtime::Module kernels = codegen::buildGPUKernelModule(model.kernels, t);
  runtime::Device dev{t.kind == "cuda" ? runtime::DeviceType::CUDA : runtime::DeviceType::OpenCL, 0};
  auto ex = std::make_unique<runtime::GraphExecutor>(model.graphJson, kernels, dev);
  ex->setParams(model.params);
  return ex;
}

}  // namespace loom::driver
