// Applying a schedule script (--schedule S.py) to a subcommand's program.
#pragma once
#include <string>

#include "core/schedule/Schedule.h"

namespace loom::cli {

/// Runs the schedule script in `file` on `func`. On a failing line throws an Error whose
/// formatted() text is "S.py:LINE:COL: error: message" followed by the IR with the offending
/// loop/block underlined (ParseError for syntax, ScheduleError for a refused primitive).
tir::Schedule applyScheduleFile(const tir::PrimFunc& func, const std::string& file);

/// For `lower --schedule S.py [--emit trace]`: the scheduled function and the printed trace.
struct ScheduledProgram {
  tir::PrimFunc func;
  std::string trace;
};
/// `func` unchanged when `file` is empty (an Error when `needTrace`: there is nothing to print).
ScheduledProgram applyScheduleOption(const tir::PrimFunc& func, const std::string& file,
                                     bool needTrace);

} // namespace loom::cli
