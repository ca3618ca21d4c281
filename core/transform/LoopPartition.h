// loop-partition: peel the predicated tail of a non-divisible split so the main loop has no if.
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

/// For a loop `v` whose body holds conditions (of ifs and if_then_else, split at &&) affine in
/// `v` and in the vars of the loops between them (`io * 32 + ii < n`, `1 <= xo * 4 + xi`),
/// splits the loop into a head [min, lo), a middle [lo, hi) and a tail [hi, min + extent): in
/// the middle every such condition holds for all inner iterations and is dropped (an if keeps
/// only its then-branch), head and tail keep them. A part of one iteration becomes its body
/// with `v` replaced. Bounds are constants when the loop's are, else let-bound expressions
/// clamped to the loop's range. A parallel loop (constant bounds only) is partitioned in place,
/// `if lo <= v < hi: middle else: body`, so that its head and tail still run in parallel with
/// the middle rather than serially after it.
tir::PrimFunc partitionLoops(const tir::PrimFunc& f);

}  // namespace loom::transform
