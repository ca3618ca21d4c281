// The TIR lowering pipeline: one ordered list of passes from scheduled block form to codegen input.
#pragma once
#include <string>
#include <vector>

#include "core/transform/Pass.h"

namespace loom::transform {

/// What the pipeline needs to know of the target.
struct LowerOptions {
  /// GPU targets keep thread_binding loops as `attr thread_extent` regions (lower-thread-binding).
  bool gpu = false;
  /// End with make-packed-api, the entry codegen compiles (the interpreter runs the IR before it).
  bool packedEntry = false;
};

/// The passes, in order (see pipeline.cpp, which reads top to bottom).
std::vector<Pass> loweringPipeline(const LowerOptions& options = {});
/// The pass names of loweringPipeline(options), in order.
std::vector<std::string> loweringPassNames(const LowerOptions& options = {});
/// Runs loweringPipeline(options) on `f` under `ctx` (its instruments see every pass).
tir::PrimFunc lower(const tir::PrimFunc& f, PassContext& ctx, const LowerOptions& options = {});

}  // namespace loom::transform
