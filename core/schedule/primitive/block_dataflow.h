// Helpers shared by compute_at, compute_inline and cache_read/write: block kinds (complete,
// reduction), writers and readers of a buffer, buffer substitution, regions relaxed over loops.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "core/arith/Analyzer.h"
#include "core/arith/IntSet.h"
#include "core/schedule/Schedule.h"

namespace loom::tir::dataflow {

/// The child blocks of the scope `block` lives in (its siblings and itself), in program order.
std::vector<const BlockNode*> scopeBlocks(const Schedule& sch, const BlockNode* block);
/// The blocks of `blocks` that write / read `buf` (by signature).
std::vector<const BlockNode*> writersOf(const std::vector<const BlockNode*>& blocks,
                                        const Buffer& buf);
std::vector<const BlockNode*> readersOf(const std::vector<const BlockNode*>& blocks,
                                        const Buffer& buf);
/// True when `buf` is bound to a parameter of `f` (an input or output of the function).
bool isParamBuffer(const PrimFunc& f, const Buffer& buf);
/// True when some block of `f` allocates `buf`.
bool isAllocated(const PrimFunc& f, const Buffer& buf);

/// Why `block` is not a complete block (all iter vars spatial, the only writer of its outputs
/// among `scope`, no buffer both read and written); empty when it is one.
std::string whyNotComplete(const BlockNode* block, const std::vector<const BlockNode*>& scope);
/// Why `block` is not a reduction block (spatial/reduce iter vars, an init, the only writer,
/// written indices free of reduce iter vars); empty when it is one.
std::string whyNotReduction(const BlockNode* block, const std::vector<const BlockNode*>& scope);

/// The single BufferStore a block body consists of, or nullptr.
const BufferStoreNode* singleStore(const BlockNode* block);
/// When `e` is `v` or `v + c` / `v - c` for a var `v` among `vars` and an integer constant `c`:
/// that var's index in `vars` and `c`; otherwise -1.
int varPlusConst(const Expr& e, const std::vector<IterVar>& vars, int64_t* c);

/// The region of the signature region `br` of the block realized by `realize`, as one interval per
/// dimension, while the loop vars in `relaxed` run over their ranges (other vars are symbols).
std::vector<arith::IntSet> relaxedRegion(const BlockRealizeNode* realize, const BufferRegion& br,
                                         const arith::IntSetMap& relaxed, arith::Analyzer& an);
/// The range [lo, hi + 1) of an interval, simplified; `fallback` when unbounded.
Range toRange(const arith::IntSet& s, const Range& fallback, arith::Analyzer& an);

/// Replaces buffers by others in loads, stores, block signatures and allocations.
Stmt replaceBuffers(const Stmt& s, const std::unordered_map<const BufferNode*, Buffer>& map);
/// `f` without the allocation of `buf` (in whichever block allocates it).
PrimFunc withoutAlloc(const PrimFunc& f, const Buffer& buf);
/// `f` with `buf` added to the alloc_buffers of the block `scope` (nullptr: the root block);
/// `newScope` receives the rebuilt scope block.
PrimFunc withAlloc(const PrimFunc& f, const BlockNode* scope, const Buffer& buf,
                   const BlockNode** newScope = nullptr);
/// A block name not used in `f`, starting from `base`.
std::string freshBlockName(const PrimFunc& f, const std::string& base);

} // namespace loom::tir::dataflow
