// Whole-model tuning: a model's kernels as tuning tasks, and tuning records as the schedules of a
// compiled model (`loom tune MODEL.onnx`, `loom compile --tuning-records R.json`).
#pragma once
#include <map>
#include <memory>
#include <optional>
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

/// Which schedule `loom compile --tuning-records` gives one kernel, and why.
struct RecordChoice {
  enum class Why {
    NoRecord,         ///< no successful record of the kernel's key: the default schedule
    NoDefault,        ///< records, but no default-schedule measurement to compare them with
                      ///< under the same conditions: the default schedule (a record is taken
                      ///< only when it was measured faster than the default)
    DefaultFaster,    ///< the default schedule's measurement is as fast or faster: the default
    Tuned,            ///< the best record was measured faster than the default: the record
  };
  Why why = Why::NoRecord;
  std::optional<TuningRecord> best;     ///< the fastest record of the key (Database::best)
  std::optional<TuningRecord> baseline; ///< the default schedule's measurement it was compared with
  bool useRecord() const { return why == Why::Tuned; }
  /// "tuned", "no record", "no default measurement", "default faster".
  static const char* name(Why w);
};

/// The choice for the kernel with record key `key` on `target`: the best record
/// (Database::best: of a re-timed task, only the re-timed schedules compete) is taken only when
/// the latest successful baseline record (baselineKey(key): the default schedule, measured by
/// the tuner in the same worker, with the same inputs and options) measured under the same
/// conditions as it (cache flushed or not; the same host when both name one) has a larger mean
/// time. Ties keep the default.
RecordChoice chooseRecord(const Database& db, const std::string& key, const std::string& target);

/// How many kernels of one compile got each RecordChoice::Why (filled by the provider).
struct RecordUse {
  std::map<RecordChoice::Why, int> count;
  /// "3 tuned, 2 default faster, 1 no default measurement" (kinds with a count only).
  std::string summary() const;
};

/// A provider for CompileModelOptions::scheduleFor: per kernel, chooseRecord on the JSON-lines
/// file; a chosen record's trace is replayed on the kernel (source "tuned:<file name>"), every
/// other kernel keeps the default schedule (std::nullopt). Loads the file once, here: throws
/// RecordFileError for a missing or malformed file; the provider throws RecordApplyError when a
/// record's trace does not replay on its kernel. `use`, when given, counts the choices.
driver::ScheduleProvider scheduleProviderFromRecords(const std::string& recordsPath, const std::string& target,
                                                     std::shared_ptr<RecordUse> use = nullptr);

/// What a model's tasks start from, for `loom tune MODEL` and the Studio's model tuning alike:
/// the driver's default schedule as each task's baseline (`baselineSchedule`) and, on CPU
/// targets, its trace as each task's seed (`seedTrace`, driver::defaultScheduleTrace).
void useDefaultSchedule(TaskSchedulerOptions& options, const std::string& target);

} // namespace loom::tune
