// Shared helpers of the schedule rules: block lists and queries on the current function.
#pragma once
#include <string>
#include <vector>

#include "core/schedule/Analysis.h"
#include "core/schedule/Schedule.h"

namespace loom::tune::rule {

/// Block annotations parallel-vectorize-unroll records for its postprocessor.
inline constexpr const char* kParallelKey = "meta_schedule.parallel";
inline constexpr const char* kUnrollKey = "meta_schedule.unroll_explicit";

/// Names of the blocks of the function (except the root), in program order.
std::vector<std::string> blockNames(const tir::Schedule& sch);
/// The block's realize binds each iter var to exactly one loop var of its own loop nest, in
/// order, every loop of constant extent (the form TE computes have before scheduling).
bool isPlainNest(const tir::Schedule& sch, const tir::BlockNode* block);
/// True when the block has a reduction iter var.
bool isReduction(const tir::BlockNode* block);
/// True when the block writes a parameter buffer of the function (an output).
bool writesOutput(const tir::Schedule& sch, const tir::BlockNode* block);
/// True when the body uses if_then_else or select (padding: kept as its own stage on CPU).
bool hasConditional(const tir::BlockNode* block);
/// Some read of the block leaves out a spatial iter var: the data is reused across it
/// (matmul, conv), so tiling pays off.
bool hasDataReuse(const tir::BlockNode* block);

} // namespace loom::tune::rule
