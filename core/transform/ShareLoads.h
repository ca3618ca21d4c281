// share-loads: a load an unrolled block reads in several stores, loaded once.
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

/// In a sequence of buffer stores (an unrolled loop body), each load that two or more of the
/// stored values read, or a padded load `select(c, load, constant)` they read, becomes a let
/// before the sequence and the stores read the let. Only loads of buffers the sequence does not
/// write, and selects whose condition reads no memory, are shared; two reads are one only when
/// they read the same buffer at identical indices (`arith::exprEqual`, not structuralEqual,
/// which matches two same-shaped buffers); a load in an `if_then_else` branch is never shared
/// (it runs only where its condition holds). A sequence with anything but stores in it (or a
/// let expression in a value) is left alone.
///
/// Why: a Winograd transform unrolled over its 6x6 tile positions reads each position in several
/// of its 36 sums (430 reads of 36 positions). Over a symbolic image each read is a select with
/// a four-way bounds test and a clamped index over `(W + 3) // 4` tiles (~40 integer
/// instructions); LLVM spent 5x the static model's time on those copies (ScalarEvolution over
/// the long loop bodies) before merging them. Shared, the body computes each position once.
tir::PrimFunc shareLoads(const tir::PrimFunc& f);

/// shareLoads on a kernel with a symbolic dim in a parameter's shape (a dynamic model's); others
/// are returned unchanged. Over static shapes the bounds tests fold away and LLVM merges the
/// reads itself, and the lets made the static Winograd kernels slower (ResNet-18 on one AVX-512
/// core: its six Winograd kernels 15-65% slower, 13.6 -> 15.5 ms for the model).
tir::PrimFunc shareLoadsOfSymbolicKernels(const tir::PrimFunc& f);

}  // namespace loom::transform
