// vectorize: loops marked vectorized become Ramp/Broadcast vector code, or serial with a note.
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

class PassContext;

/// Replaces each `vectorized` loop of constant extent L by its body over L lanes: the loop var
/// becomes Ramp(min, 1, L), loop-invariant values are broadcast, 1-D accesses with affine
/// indices become vector loads/stores. Where that would change the meaning or needs what the
/// vector form cannot say (a condition that depends on the lane, a non-affine index, a store
/// every lane makes to one element, an inner loop or allocation, lanes that read each other's
/// results, a non-constant extent), the loop stays a serial loop and a note naming it goes to
/// `ctx.diagnostics`. Runs after flatten-buffers.
tir::PrimFunc vectorizeLoops(const tir::PrimFunc& f, PassContext& ctx);

}  // namespace loom::transform
