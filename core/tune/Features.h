// Features of a lowered tensor program for the learned cost model (Ansor-style, simplified to one
// fixed-length vector per program).
#pragma once
#include <string>
#include <vector>

#include "core/tir/Function.h"

namespace loom::tune {

/// One row per program: per buffer access the stride of the innermost loop (0, 1, small, large),
/// the reuse (trip counts of loops the index does not depend on), vectorized accesses; counts of
/// float and integer arithmetic and intrinsic calls; loop structure (parallel extent, vector
/// lanes, innermost extents, depth, statement count after unrolling); allocations. Counts are
/// weighted by how often they run and given as log2(1 + x).
std::vector<float> extractFeatures(const tir::PrimFunc& lowered);
/// The length of extractFeatures' rows, and a name per entry.
size_t featureCount();
const std::vector<std::string>& featureNames();

} // namespace loom::tune
