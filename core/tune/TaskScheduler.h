// Tuning several tasks under one trial budget (whole-model tuning): identical tasks are merged,
// and trials go to the task with the largest expected gain (Ansor's gradient-based scheduler).
#pragma once
#include <functional>
#include <vector>

#include "core/tune/Tuner.h"

namespace loom::tune {

struct TaskSchedulerOptions {
  int totalTrials = 256;  ///< over all tasks
  double alpha = 0.2;     ///< weight of the backward (observed) gradient against the forward one
  int window = 3;         ///< batches looked back for the backward gradient
  /// When TuneOptions::measureBaseline is set: the schedule whose time is each task's baseline
  /// (e.g. the driver's default schedule), measured for every task (not yet done) at the start
  /// of run(); unset, the unscheduled program.
  std::function<tir::PrimFunc(const tir::PrimFunc&)> baselineSchedule;
  /// A design each task measures first and the search mutates from (e.g. the driver's default
  /// schedule as a trace with sampled tiles, driver::defaultScheduleTrace); a design that does
  /// not replay on a task (or throws) is skipped for that task.
  std::function<tir::Trace(const tir::PrimFunc&)> seedTrace;
};

/// Ansor's task scheduler, simplified: after one batch per task (round robin; tasks resumed from
/// the database are already warm), each batch goes to the task maximizing weight * (alpha * backward + (1 - alpha) * forward), where backward is the
/// best-time drop per trial over the last `window` batches and forward = best / trials (what the
/// task gained per trial so far, an optimistic estimate of the next gain). Tasks without a
/// successful trial go first. `perTask.trials` caps each task. Before each batch the chosen task
/// reports TuneEventKind::TaskSelected; `perTask.shouldStop` / `perTask.paused` are polled between
/// batches. With `perTask.retimeTopK`, each task's fastest schedules and its baseline schedule are
/// re-measured together at the end (TaskTuner::retime).
class TaskScheduler {
public:
  TaskScheduler(std::vector<TuneTask> tasks, Database& db, Runner& runner, const TuneOptions& perTask,
                const TaskSchedulerOptions& options, TuneCallback callback = {});
  /// Runs until the total budget is spent or every task is done; one result per merged task.
  std::vector<TuneResult> run();
  /// The tasks after merging identical keys (weights summed).
  const std::vector<TuneTask>& tasks() const { return m_tasks; }

private:
  /// The task for the next batch (m_tasks.size(): none); blocked tasks are passed over.
  size_t pick(const std::vector<bool>& blocked = {}) const;
  /// Task `i` under TaskSchedulerOptions::baselineSchedule; undefined (the unscheduled program)
  /// without one or when it throws.
  tir::PrimFunc baselineFor(size_t i) const;

  std::vector<TuneTask> m_tasks;
  std::vector<std::unique_ptr<TaskTuner>> m_tuners;
  std::vector<std::vector<std::pair<int, double>>> m_history; ///< per task: (trials, best ms) after each batch
  std::vector<bool> m_baselineDone;
  Runner& m_runner;
  TuneOptions m_perTask;
  TaskSchedulerOptions m_options;
};

} // namespace loom::tune
