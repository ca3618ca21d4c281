// storage-rewrite: intermediate allocations whose lifetimes do not overlap share memory.
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

/// Where allocations are nested directly around a sequence (`allocate A { allocate B { s0; s1;
/// ... } }`, as lower-blocks makes of a block's alloc_buffers), each allocation lives from the
/// first to the last statement of the sequence that mentions it. Allocations of the same dtype,
/// scope and constant size class whose lifetimes do not overlap are merged into one (sized for
/// the largest); later ones are rebound to the survivor's data var. Runs after flatten-buffers.
tir::PrimFunc rewriteStorage(const tir::PrimFunc& f);

}  // namespace loom::transform
