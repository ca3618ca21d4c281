// Annotations on loops and blocks: annotate, unannotate.
#pragma once
#include <string>

#include "core/schedule/Schedule.h"

namespace loom::tir {

/// unannotate() of a key the loop/block does not have.
LOOM_DECLARE_ERROR(AnnotationNotFoundError, ScheduleError);

/// Sets annotation `key` to `value` (int, float, str, bool or an ExprRV's value) on a loop or
/// block, replacing an earlier value.
void annotate(Schedule& sch, const LoopRV& loop, const std::string& key, const Value& value);
void annotate(Schedule& sch, const BlockRV& block, const std::string& key, const Value& value);
/// Removes annotation `key`.
void unannotate(Schedule& sch, const LoopRV& loop, const std::string& key);
void unannotate(Schedule& sch, const BlockRV& block, const std::string& key);

void registerAnnotateInstructions();

} // namespace loom::tir
