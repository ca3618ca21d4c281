// Primitives that look things up: get_block, get_loops, get_child_blocks, get_producers,
// get_consumers.
#pragma once
#include <string>
#include <vector>

#include "core/schedule/Schedule.h"

namespace loom::tir {

/// The block named `name` (BlockNotFoundError when there is none or several).
BlockRV getBlock(Schedule& sch, const std::string& name, const std::string& funcName = "main");
/// The loops above `block`, outermost first, up to the enclosing block.
std::vector<LoopRV> getLoops(Schedule& sch, const BlockRV& block);
/// The blocks directly under a block or loop (not inside another block under it).
std::vector<BlockRV> getChildBlocks(Schedule& sch, const BlockRV& parent);
std::vector<BlockRV> getChildBlocks(Schedule& sch, const LoopRV& parent);
/// The blocks of the same scope that write a buffer `block` reads / read a buffer it writes.
std::vector<BlockRV> getProducers(Schedule& sch, const BlockRV& block);
std::vector<BlockRV> getConsumers(Schedule& sch, const BlockRV& block);

void registerGetBlockLoopInstructions();

} // namespace loom::tir
