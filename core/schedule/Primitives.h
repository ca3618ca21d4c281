// Every schedule primitive's C++ API (one header per family under primitive/), in one include.
#pragma once
#include "core/schedule/primitive/annotate.h"
#include "core/schedule/primitive/blockize_tensorize.h"
#include "core/schedule/primitive/cache_read_write.h"
#include "core/schedule/primitive/compute_inline.h"
#include "core/schedule/primitive/compute_location.h"
#include "core/schedule/primitive/for_kind.h"
#include "core/schedule/primitive/get_block_loop.h"
#include "core/schedule/primitive/layout_transformation.h"
#include "core/schedule/primitive/loop_transformation.h"
#include "core/schedule/primitive/reduction.h"
#include "core/schedule/primitive/sampling.h"

namespace loom::tir {

/// Registers every family's instruction kinds (primitive/registry.cpp lists them; called once,
/// on the first registry lookup). Add one line there per new family.
void registerBuiltinInstructionKinds();

} // namespace loom::tir
