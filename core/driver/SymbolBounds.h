// Upper bounds of a dynamic model's symbols (--input-shapes "x:[1,3,48,W<=2048]"), recorded in
// the compiled graph and used to plan its storage once.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "core/driver/CompileModel.h"

namespace loom::driver {

/// Records `bounds` in `model`'s graph JSON (each symbol's "bound"; the executor refuses an
/// input above it, naming the input, dim and values). When every input symbol has a bound, the
/// storages are re-sized for the shapes at the bounds (data-dependent counts at their bounds
/// there too), so that no run within the bounds grows one. A bound for a symbol the compiled
/// model lacks is a ValueError naming it and listing the model's symbols.
void applySymbolBounds(CompiledModel& model, const std::map<std::string, int64_t>& bounds);

/// Adds to `model`'s graph JSON ("shape_checks") the dim equalities of `m` (the typed module it
/// was compiled from) that the type relations assumed without proof: the non-axis dims of a
/// concatenation (typed with input 0's) and the dims of a numpy-style broadcast (add, where,
/// comparisons; a batched matmul's batch dims) where two symbolic dims, or a symbolic and a
/// static one other than 1, meet (the kernels index them as equal); a matmul's or dense layer's
/// reduction dim; the channel vectors of nn.bias_add, nn.batch_norm and nn.instance_norm against
/// the data's dim on their axis. The executor evaluates them when the input
/// shapes change and refuses inputs that break one, naming the node and the dims. compileModel
/// calls it for every dynamic model.
void addShapeChecks(CompiledModel& model, const graph::Module& m);

}  // namespace loom::driver
