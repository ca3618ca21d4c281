// Inlining a block into its neighbours: compute_inline (a producer into its consumers) and
// reverse_compute_inline (a consumer into its producer).
#pragma once
#include "core/schedule/Schedule.h"

namespace loom::tir {

/// The block's body is not one store `B[v0, v1, ...] = f(...)` (indices: distinct iter vars,
/// all of them; value not reading B), or it has a predicate that inlining would drop.
LOOM_DECLARE_ERROR(NotInlinableBodyError, ScheduleError);
/// The block is a reduction (has an init or a non-spatial iter var).
LOOM_DECLARE_ERROR(InlineReductionError, ScheduleError);
/// The block writes more than one buffer.
LOOM_DECLARE_ERROR(MultipleWritesError, ScheduleError);
/// Another block also writes the buffer that would disappear.
LOOM_DECLARE_ERROR(NotSingleWriterError, ScheduleError);
/// The buffer that would disappear is a parameter of the function (an output).
LOOM_DECLARE_ERROR(OutputBlockError, ScheduleError);
/// reverse_compute_inline: the consumer has no producer or several in its scope.
LOOM_DECLARE_ERROR(NotSingleProducerError, ScheduleError);
/// reverse_compute_inline: another block also reads the produced buffer.
LOOM_DECLARE_ERROR(MultipleReadersError, ScheduleError);
/// reverse_compute_inline: the consumer does not read the produced buffer at one index made of
/// its iter vars (each once, all of them, spanning the buffer's shape).
LOOM_DECLARE_ERROR(NotInvertibleLoadError, ScheduleError);

/// Inlining would copy the producer's value into several loads of its buffer, more than
/// maxInlinedNodes() expression nodes in all (counted as a tree).
LOOM_DECLARE_ERROR(InlineTooLargeError, ScheduleError);

/// The most expression nodes (counted as a tree) that compute_inline and reverse_compute_inline
/// copy when the consumer reads the producer's buffer more than once. A value that reads its input
/// k times, inlined into one that reads it k times, and so on, grows as k^depth: twelve LeakyRelus
/// in a row (select(x >= 0, x, a x) reads x three times) made 3^12 loads and a compile that did
/// not end in minutes, Asinh(Asinh(x)) (about 170 reads of x each) 20 s and 500 MB (graph seed
/// 68698). Above the limit the primitives refuse (InlineTooLargeError), so the default schedules
/// keep the producer as its own block. A single load always inlines.
int64_t maxInlinedNodes();

/// Replaces every load of the buffer `block` writes by the expression it stores there, removes
/// the block and the buffer's allocation.
void computeInline(Schedule& sch, const BlockRV& block);
/// Folds consumer `block` into its single producer: the producer stores the consumer's value
/// directly into the consumer's output; the consumer and the intermediate buffer disappear.
void reverseComputeInline(Schedule& sch, const BlockRV& block);

void registerComputeInlineInstructions();

} // namespace loom::tir
