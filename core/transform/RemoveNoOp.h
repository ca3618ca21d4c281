// remove-no-op: drop statements that do nothing.
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

/// Removes: loops of extent 0 (constant) or with an empty body, ifs with a constant condition
/// (the taken branch stays) or with empty branches, Evaluate of a constant, stores of a value
/// just loaded from the same place, lets whose var is unused (pure value), allocations never
/// used, and empty sequences. A function left with nothing gets `evaluate(0)`.
tir::PrimFunc removeNoOps(const tir::PrimFunc& f);

}  // namespace loom::transform
