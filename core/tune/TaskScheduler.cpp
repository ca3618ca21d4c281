// TaskScheduler: merge identical tasks, warm up round robin, then follow the largest gradient.
#include "core/tune/TaskScheduler.h"

#include <cmath>
#include <map>

namespace loom::tune {

TaskScheduler::TaskScheduler(std::vector<TuneTask> tasks, Database& db, Runner& runner, const TuneOptions& perTask,
                             const TaskSchedulerOptions& options, TuneCallback callback)
    : m_runner(runner), m_perTask(perTask), m_options(options) {
  std::map<std::string, size_t> byKey;
  for (auto& t : tasks) {
    std::string k = t.key + "@" + t.target;
    auto it = byKey.find(k);
    if (it != byKey.end()) {
      m_tasks[it->second].weight += t.weight;
      for (auto& name : t.kernels) m_tasks[it->second].kernels.push_back(name);
      continue;
    }
    byKey[k] = m_tasks.size();
    m_tasks.push_back(std::move(t));
  }
  for (auto& t : m_tasks) {
    m_tuners.push_back(std::make_unique<TaskTuner>(t, db, runner, perTask, callback));
    m_tuners.back()->setTaskIndex(int(m_tuners.size() - 1), int(m_tasks.size()));
    if (m_options.seedTrace && !m_tuners.back()->done()) {
      try {
        m_tuners.back()->addSeed(m_options.seedTrace(t.func));
      } catch (const Error&) {
        // no seed for this task
      }
    }
  }
  m_history.resize(m_tasks.size());
  m_baselineDone.assign(m_tasks.size(), false);
  // Resumed tasks are past their warm-up: their history starts where the records leave them.
  for (size_t i = 0; i < m_tasks.size(); ++i) {
    TuneResult r = m_tuners[i]->result();
    if (r.trialsDone > 0) m_history[i].push_back({r.trialsDone, r.best ? r.best->meanMs() : INFINITY});
  }
}

size_t TaskScheduler::pick(const std::vector<bool>& blocked) const {
  size_t best = m_tasks.size();
  double bestScore = -1;
  for (size_t i = 0; i < m_tasks.size(); ++i) {
    if (m_tuners[i]->done() || (i < blocked.size() && blocked[i])) continue;
    const auto& h = m_history[i];
    if (h.empty()) {
      if (m_tuners[i]->pending() == 0) return i; // warm-up: one batch each, in order
      continue;                                   // (pipelined: its first batch is out)
    }
    auto [trials, ms] = h.back();
    double score;
    if (!std::isfinite(ms)) {
      score = INFINITY; // nothing works yet: keep trying
    } else {
      size_t back = h.size() > size_t(m_options.window) ? h.size() - 1 - size_t(m_options.window) : 0;
      double prevMs = std::isfinite(h[back].second) ? h[back].second : ms;
      int dt = trials - h[back].first;
      double backward = dt > 0 ? (prevMs - ms) / dt : 0;
      double forward = trials > 0 ? ms / trials : ms;
      score = m_tasks[i].weight * (m_options.alpha * backward + (1 - m_options.alpha) * forward);
    }
    if (score > bestScore) {
      bestScore = score;
      best = i;
    }
  }
  return best;
}

tir::PrimFunc TaskScheduler::baselineFor(size_t i) const {
  if (!m_options.baselineSchedule) return {};
  try {
    return m_options.baselineSchedule(m_tasks[i].func);
  } catch (const Error&) {
    return {}; // no such schedule for this task: the unscheduled program is its baseline
  }
}

std::vector<TuneResult> TaskScheduler::run() {
  // Every task's baseline first, so each run records what the baseline schedule gives today.
  if (m_perTask.measureBaseline && m_options.totalTrials > 0) {
    for (size_t i = 0; i < m_tasks.size(); ++i) {
      if (m_baselineDone[i] || m_tuners[i]->done()) continue;
      if (!continueTuning(m_perTask)) break;
      m_tuners[i]->announce();
      m_baselineDone[i] = true;
      m_tuners[i]->measureBaseline(baselineFor(i));
    }
  }
  int spent = 0;
  if (auto* pipelined = dynamic_cast<PipelinedRunner*>(&m_runner)) {
    std::vector<TaskTuner*> tuners;
    for (auto& t : m_tuners) tuners.push_back(t.get());
    spent = runPipelined(
        *pipelined, tuners, m_perTask, m_options.totalTrials,
        [&](const std::vector<bool>& blocked) {
          size_t i = pick(blocked);
          if (i >= m_tasks.size()) return -1;
          m_tuners[i]->announce();
          return int(i);
        },
        [&](size_t i, bool batchDone) {
          if (!batchDone) return;
          TuneResult r = m_tuners[i]->result();
          m_history[i].push_back({r.trialsDone, r.best ? r.best->meanMs() : INFINITY});
        });
  }
  while (spent < m_options.totalTrials && !dynamic_cast<PipelinedRunner*>(&m_runner)) {
    if (!continueTuning(m_perTask)) break;
    size_t i = pick();
    if (i >= m_tasks.size()) break;
    m_tuners[i]->announce();
    int before = m_tuners[i]->result().trialsThisRun;
    if (!m_tuners[i]->step(m_options.totalTrials - spent)) continue; // exhausted: done() is now true
    TuneResult r = m_tuners[i]->result();
    spent += r.trialsThisRun - before;
    m_history[i].push_back({r.trialsDone, r.best ? r.best->meanMs() : INFINITY});
  }
  if (m_perTask.retimeTopK > 0) {
    for (size_t i = 0; i < m_tasks.size(); ++i) {
      if (!continueTuning(m_perTask)) break;
      m_tuners[i]->announce();
      m_tuners[i]->retime(size_t(m_perTask.retimeTopK), m_perTask.measureBaseline ? baselineFor(i) : tir::PrimFunc());
    }
  }
  std::vector<TuneResult> out;
  for (auto& t : m_tuners) out.push_back(t->result());
  return out;
}

} // namespace loom::tune
