// Queries every primitive needs: the tree around a block or loop, block signatures, dependencies,
// affine bindings.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/schedule/Schedule.h"
#include "core/tir/Stmt.h"

namespace loom::tir {

// --- Tree structure (statements only) -----------------------------------------------------

/// The statement children of `s` (a For's body, a SeqStmt's entries, a BlockRealize's block, a
/// Block's init and body, both branches of an IfThenElse, ...).
std::vector<Stmt> childStmts(const StmtNode* s);
/// A copy of `parent` with child `oldChild` replaced by `newChild`. An undefined `newChild`
/// deletes it from a SeqStmt; a statement left with no body becomes undefined itself (so an
/// emptied loop disappears), except a Block, whose body becomes a no-op.
Stmt withChildReplaced(const StmtNode* parent, const IRNode* oldChild, Stmt newChild);

/// The loops from the outermost to the innermost that enclose `n`, up to the nearest enclosing
/// block (TVM's get_loops: loops of one block scope).
std::vector<const ForNode*> loopsAbove(const Schedule& sch, const IRNode* n);
/// The nearest block strictly enclosing `n`, or nullptr when `n` is at the function root.
const BlockNode* enclosingBlock(const Schedule& sch, const IRNode* n);
/// The blocks under `n` (a Block, For or any statement) that are not inside another block under
/// it, in program order.
std::vector<const BlockNode*> childBlocks(const StmtNode* n);
/// Every block of the function, in program order, and the one named `name` (nullptr if none).
std::vector<const BlockNode*> allBlocks(const PrimFunc& f);
std::vector<const BlockNode*> findBlocks(const PrimFunc& f, const std::string& name);
/// True when `outer` encloses `inner` (strictly).
bool isAncestor(const Schedule& sch, const IRNode* outer, const IRNode* inner);
/// The single statement child of loop `loop` when its body is one For (else nullptr).
const ForNode* onlyChildLoop(const ForNode* loop);

// --- Block signatures ---------------------------------------------------------------------

/// The block realizes under `s` (including nested blocks), in program order.
std::vector<const BlockRealizeNode*> realizesUnder(const StmtNode* s);
/// True when some iter var of `block` whose binding (in `realize`) uses `var` is of a type not
/// in `allowed` (e.g. a reduce iter var when only DataPar is allowed); returns that iter var.
const IterVar* iterVarUsingVarOfOtherType(const BlockRealizeNode* realize, const VarNode* var,
                                          std::initializer_list<IterType> allowed);
/// The buffers a block reads / writes (from its signature).
std::vector<Buffer> readBuffers(const BlockNode* b);
std::vector<Buffer> writeBuffers(const BlockNode* b);
/// Blocks in the same scope (children of the enclosing block) that write a buffer `block`
/// reads (producers) / read a buffer `block` writes (consumers), in program order.
std::vector<const BlockNode*> producersOf(const Schedule& sch, const BlockNode* block);
std::vector<const BlockNode*> consumersOf(const Schedule& sch, const BlockNode* block);

// --- Affine bindings ----------------------------------------------------------------------

/// True when every iter value of `realize` is a quasi-affine expression of the loop vars in
/// `loopVars` (sums of constant multiples of vars, floordiv/floormod of such by positive
/// constants), and no loop var contributes to two iter values in the same way twice.
bool isAffineBinding(const BlockRealizeNode* realize, const std::vector<const ForNode*>& loops);
/// Shorthand for the loops above the realize.
bool isAffineBinding(const Schedule& sch, const BlockRealizeNode* realize);

// --- Small arithmetic ---------------------------------------------------------------------

/// Folds integer constants and removes x+0, x*1, x*0, x//1, x%1 bottom-up (no algebra beyond).
Expr foldConstants(const Expr& e);
/// The value of `e` when it folds to an integer constant.
std::optional<int64_t> constIntValue(const Expr& e);

} // namespace loom::tir
