// Structural equality, hashing and first-difference reports of TIR, modulo variable renaming.
#pragma once
#include <cstddef>
#include <string>

#include "core/tir/Function.h"
#include "core/tir/Stmt.h"

namespace loom::tir {

/// Equality of meaning, like TVM's StructuralEqual. Variables are equal when they are bound at
/// corresponding definition points (For loop var, Let/LetStmt var, block iter vars, PrimFunc
/// params, Allocate buffer var, free vars of a defined buffer's shape); other (free) variables
/// compare by identity. Buffers are defined by the PrimFunc buffer map, block alloc_buffers and
/// DeclBuffer (a buffer first met at a use is defined there) and compare on dtype, shape, strides,
/// elem_offset, scope and alignment. Names of variables and buffers, and spans, are ignored;
/// block names are compared. Immediates compare by type and value (floats bitwise). Annotations
/// and attrs compare as maps.
/// With `mapFreeVars`, free variables (and free buffers) also match when they correspond
/// consistently (TVM's map_free_vars), e.g. to compare two separately built statements.
bool structuralEqual(const Expr& a, const Expr& b, bool mapFreeVars = false);
bool structuralEqual(const Stmt& a, const Stmt& b, bool mapFreeVars = false);
bool structuralEqual(const PrimFunc& a, const PrimFunc& b);
bool structuralEqual(const IRModule& a, const IRModule& b);

/// A hash consistent with structuralEqual: equal inputs hash equal.
/// With `mapFreeVars`, free variables hash by first occurrence (consistent with structuralEqual's
/// `mapFreeVars`) instead of by identity.
size_t structuralHash(const Expr& e, bool mapFreeVars = false);
size_t structuralHash(const Stmt& s, bool mapFreeVars = false);
size_t structuralHash(const PrimFunc& f);
size_t structuralHash(const IRModule& m);

/// The first mismatch as "path: lhs-description vs rhs-description" lines, for test failure
/// messages; the empty string when the two are structurally equal.
std::string structuralDiff(const Expr& a, const Expr& b, bool mapFreeVars = false);
std::string structuralDiff(const Stmt& a, const Stmt& b, bool mapFreeVars = false);
std::string structuralDiff(const PrimFunc& a, const PrimFunc& b);
std::string structuralDiff(const IRModule& a, const IRModule& b);

}  // namespace loom::tir
