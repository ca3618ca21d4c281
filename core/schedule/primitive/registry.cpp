// The list of primitive families whose instruction kinds the registry loads (one line per family).
#include "core/schedule/Primitives.h"

namespace loom::tir {

void registerBuiltinInstructionKinds() {
  registerGetBlockLoopInstructions();
  registerLoopTransformationInstructions();
  registerForKindInstructions();
  registerAnnotateInstructions();
  registerSamplingInstructions();
  registerComputeLocationInstructions();
  registerComputeInlineInstructions();
  registerCacheReadWriteInstructions();
  registerReductionInstructions();
  registerLayoutTransformationInstructions();
  registerBlockizeTensorizeInstructions();
}

} // namespace loom::tir
