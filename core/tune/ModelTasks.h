// Whole-model tuning: a model's kernels as tuning tasks, and tuning records as the schedules of a
// compiled model (`loom tune MODEL.onnx`, `loom compile --tuning-records R.json`).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/driver/CompileModel.h"
#include "core/graph/Expr.h"
#include "core/tune/Database.h"
#include "core/tune/Task.h"
#include "core/tune/TaskScheduler.h"
#include "runtime/NDArray.h"

namespace loom::tune {

/// A record whose schedule does not replay on the kernel it is keyed to (e.g. measured by an
/// older Loom): names the kernel and the record file.
LOOM_DECLARE_ERROR(RecordApplyError, RecordFileError);

/// `f` renamed to "main" (name and "global_symbol"): what a model kernel is tuned as, so that the
/// same computation in two models (or under two names) is one task.
tir::PrimFunc asTaskFunc(const tir::PrimFunc& f);

/// The record key of a model kernel, independent of the kernel's name: "tir:<16 hex digits>", the
/// structural hash of asTaskFunc(unscheduled) (equal to TuneTask::fromFunc's key of that func).
/// Stable across processes and runs.
std::string groupKey(const tir::PrimFunc& unscheduled);

/// One task per distinct kernel of the model (groups from driver::extractGroups with `options`):
/// func = asTaskFunc(kernel), key = groupKey, weight = occurrences (summed over kernels with the
/// same key), flops counted from the TIR (countFlops), `kernels` / `ops` naming what it stands
/// for. In the order the model first uses them.
std::vector<TuneTask> extractTasks(const graph::Module& m, const std::map<std::string, runtime::NDArray>& params,
                                   const driver::CompileModelOptions& options, const std::string& target);

/// A provider for CompileModelOptions::scheduleFor: the best record of each kernel's key (on
/// `target`) in the JSON-lines file, its trace replayed on the kernel (source "tuned:<file name>");
/// kernels without a successful record, or whose latest baseline record (baselineKey, the default
/// schedule measured while tuning) is faster than the best one, keep the default (std::nullopt). Loads the file once, here:
/// throws RecordFileError for a missing or malformed file; the provider throws RecordApplyError
/// when a record's trace does not replay on its kernel.
driver::ScheduleProvider scheduleProviderFromRecords(const std::string& recordsPath, const std::string& target);

/// What a model's tasks start from, for `loom tune MODEL` and the Studio's model tuning alike:
/// the driver's default schedule as each task's baseline (`baselineSchedule`) and, on CPU
/// targets, its trace as each task's seed (`seedTrace`, driver::defaultScheduleTrace).
void useDefaultSchedule(TaskSchedulerOptions& options, const std::string& target);

} // namespace loom::tune
