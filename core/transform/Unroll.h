// unroll: expand loops marked unroll, and small inner loops under pragma_auto_unroll_max_step.
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

class PassContext;

/// Expands every `unroll` loop of constant extent into one copy of its body per iteration (the
/// loop var replaced by its value; loops and lets inside each copy bind fresh vars). Inside `attr "pragma_auto_unroll_max_step" = N` (what
/// lower-blocks makes of the annotation) serial loops of constant extent are expanded too when
/// they contain no loop left after unrolling and extent * (statements in the body) <= N; the
/// attr itself is consumed, as is "pragma_unroll_explicit" (unrolling here always copies). An `unroll` loop whose extent is not a constant stays serial and
/// leaves a note in `ctx.diagnostics`.
tir::PrimFunc unrollLoops(const tir::PrimFunc& f, PassContext& ctx);

}  // namespace loom::transform
