// The TIR lowering pipeline: THE single ordered list of passes, read it top to bottom.
#include "core/transform/Pipeline.h"

#include "core/transform/CompactBuffers.h"
#include "core/transform/FlattenBuffers.h"
#include "core/transform/GPUKernels.h"
#include "core/transform/HoistDivisions.h"
#include "core/transform/HoistSymbolicTerms.h"
#include "core/transform/HoistWorkspaces.h"
#include "core/transform/LoopPartition.h"
#include "core/transform/LowerBlocks.h"
#include "core/transform/LowerIntrinsics.h"
#include "core/transform/LowerThreadBinding.h"
#include "core/transform/MakePackedAPI.h"
#include "core/transform/RemoveNoOp.h"
#include "core/transform/ShareLoads.h"
#include "core/transform/Simplify.h"
#include "core/transform/StorageRewrite.h"
#include "core/transform/Unroll.h"
#include "core/transform/Vectorize.h"

namespace loom::transform {

using tir::PrimFunc;

namespace {
/// A pass that does not need the context.
Pass pass(std::string name, PrimFunc (*fn)(const PrimFunc&)) {
  return Pass{std::move(name), [fn](const PrimFunc& f, PassContext&) { return fn(f); }};
}
/// A pass that leaves notes in the context.
Pass passWithContext(std::string name, PrimFunc (*fn)(const PrimFunc&, PassContext&)) {
  return Pass{std::move(name), fn};
}
}  // namespace

std::vector<Pass> loweringPipeline(const LowerOptions& options) {
  std::vector<Pass> p;
  // 1. Leave block form: iter vars bound, init and predicates as ifs, alloc_buffers as
  //    Allocate, pragma annotations as attrs.
  p.push_back(pass("lower-blocks", lowerBlocks));
  // 2. GPU only: thread_binding loops become thread_extent regions (the kernel's launch shape).
  if (options.gpu) p.push_back(pass("lower-thread-binding", lowerThreadBinding));
  // 3. Intermediate buffers move into the innermost loop around their uses (per thread under a
  //    parallel loop) and shrink to the region one iteration uses (a packed cache_read tile).
  p.push_back(pass("compact-buffers", compactBuffers));
  // 3b. Every buffer 1-D; parameters seen through flat views over the same data.
  p.push_back(pass("flatten-buffers", flattenBuffers));
  // 4. Fold the index arithmetic flattening wrote, before looking for split tails.
  p.push_back(pass("simplify", simplifyFunc));
  // 5. Peel heads and tails (split predicates, padding) so middle loops run without conditions.
  p.push_back(pass("loop-partition", partitionLoops));
  // 6. Fold split points and drop dead parts of the peeled pieces, so vector loops see constants.
  p.push_back(pass("simplify", simplifyFunc));
  // 7. Vector loops to Ramp/Broadcast code (or serial with a note).
  p.push_back(passWithContext("vectorize", vectorizeLoops));
  // 8. Explicit unroll loops, and auto-unroll under pragma_auto_unroll_max_step.
  p.push_back(passWithContext("unroll", unrollLoops));
  // 8b. CPU only, kernels with symbolic shapes: the unrolled copies of a (padded) load, loaded
  //     once into a let before they are simplified, so the simplifier folds each bounds test
  //     once instead of once per copy (an unrolled Winograd transform over a symbolic image reads
  //     each tile position in several sums: 484 copies of 36 padded loads).
  if (!options.gpu) p.push_back(pass("share-loads", shareLoadsOfSymbolicKernels));
  // 9. Clean up what vectorize and unroll substituted.
  p.push_back(pass("simplify", simplifyFunc));
  // 10. Intermediates with disjoint lifetimes share memory.
  p.push_back(pass("storage-rewrite", rewriteStorage));
  // 11. Rewrite intrinsics with cheap exact forms (the set codegen sees is in LowerIntrinsics.h).
  p.push_back(pass("lower-intrinsics", lowerIntrinsics));
  // 12. Drop statements that do nothing.
  p.push_back(pass("remove-no-op", removeNoOps));
  // 12a. CPU only, kernels with symbolic shapes: a load (or padded load) that several stores of
  //      an unrolled block read, loaded once into a let (an unrolled Winograd transform reads each
  //      tile position in several sums).
  if (!options.gpu) p.push_back(pass("share-loads", shareLoadsOfSymbolicKernels));
  // 12b. CPU only: divisions by run-time values (a dynamic model's symbolic strides) once per
  //      loop iteration, out of the branches of guarded loads (LLVM cannot merge or hoist them).
  if (!options.gpu) p.push_back(pass("hoist-divisions", hoistDivisions));
  // 12c. CPU only, kernels with shape symbols: arithmetic over the symbols alone (strides such
  //      as `((H + 1) // 2 + 1) // 2 * 64`, split bounds) once, in lets at the top; sums of
  //      products regrouped by their loop-variable factors first. Codegen emitted every
  //      occurrence (tens of thousands of lines of LLVM IR per symbolic conv).
  if (!options.gpu) p.push_back(pass("hoist-symbolic-terms", hoistSymbolicTerms));
  // 12d. CPU only: a buffer of run-time size (a row of a softmax over a symbolic sequence) is
  //      allocated once around the serial loops it sits in, not in every iteration (each
  //      allocation is a runtime workspace call).
  if (!options.gpu) p.push_back(pass("hoist-workspaces", hoistWorkspaces));
  // 12e. GPU only: barriers around shared-memory hand-offs, then the launch-limit check.
  if (options.gpu) {
    p.push_back(pass("thread-sync", insertThreadSync));
    p.push_back(pass("verify-gpu", verifyGPUPass));
  }
  // 13. The packed-call entry that codegen compiles: unpacks arguments, checks their count, type,
  //     shape, dtype and alignment with clear run-time errors, and binds the buffers' data vars.
  //     (Left out when the result goes to the reference interpreter instead of codegen.)
  if (options.packedEntry) p.push_back(makePackedAPIPass());
  return p;
}

std::vector<std::string> loweringPassNames(const LowerOptions& options) {
  std::vector<std::string> names;
  for (auto& p : loweringPipeline(options)) names.push_back(p.name);
  return names;
}

PrimFunc lower(const PrimFunc& f, PassContext& ctx, const LowerOptions& options) {
  return ctx.run(loweringPipeline(options), f);
}

}  // namespace loom::transform
