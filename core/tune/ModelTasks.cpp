// Model kernels as tuning tasks (name-independent keys, flops, weights) and the record provider.
#include "core/tune/ModelTasks.h"

#include <cstdio>
#include <filesystem>
#include <memory>

#include "core/driver/CompileModelGPU.h"
#include "core/driver/DefaultSchedule.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Trace.h"
#include "core/tir/Op.h"
#include "core/tir/StructuralEqual.h"
#include "core/tune/FlopCount.h"
#include "core/tune/Tuner.h"
#include "core/tune/database/JsonDatabase.h"

namespace loom::tune {

tir::PrimFunc asTaskFunc(const tir::PrimFunc& f) {
  LOOM_ICHECK(f.defined()) << "asTaskFunc of an undefined function";
  if (f->name == "main") {
    auto it = f->attrs.find("global_symbol");
    const auto* s = it == f->attrs.end() ? nullptr : it->second.as<tir::StringImmNode>();
    if (s && s->value == "main") return f;
  }
  return tir::makePrimFunc("main", f->params, f->bufferMap, f->body, f->attrs);
}

std::string groupKey(const tir::PrimFunc& unscheduled) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)tir::structuralHash(asTaskFunc(unscheduled)));
  return std::string("tir:") + buf;
}

std::vector<TuneTask> extractTasks(const graph::Module& m, const std::map<std::string, runtime::NDArray>& params,
                                   const driver::CompileModelOptions& options, const std::string& target) {
  std::vector<TuneTask> tasks;
  std::map<std::string, size_t> byKey;
  for (const driver::ModelGroup& g : driver::extractGroups(m, params, options)) {
    if (g.prescheduled) continue;  // a loop kernel (nn.recurrence) keeps its own schedule
    tir::PrimFunc f = asTaskFunc(g.func);
    std::string key = groupKey(g.func);
    auto it = byKey.find(key);
    if (it != byKey.end()) {
      TuneTask& t = tasks[it->second];
      t.weight += g.occurrences;
      t.kernels.push_back(g.name);
      continue;
    }
    TuneTask t = TuneTask::fromFunc(f, g.numInputs, target, countFlops(f));
    LOOM_ICHECK(t.key == key) << "task key " << t.key << " differs from group key " << key;
    t.weight = g.occurrences;
    t.kernels = {g.name};
    t.ops = g.ops;
    byKey[key] = tasks.size();
    tasks.push_back(std::move(t));
  }
  return tasks;
}

const char* RecordChoice::name(Why w) {
  switch (w) {
  case Why::NoRecord: return "no record";
  case Why::NoDefault: return "no default measurement";
  case Why::DefaultFaster: return "default faster";
  case Why::Tuned: return "tuned";
  }
  return "?";
}

std::string RecordUse::summary() const {
  std::string s;
  for (RecordChoice::Why w : {RecordChoice::Why::Tuned, RecordChoice::Why::DefaultFaster, RecordChoice::Why::NoDefault,
                              RecordChoice::Why::NoRecord}) {
    auto it = count.find(w);
    if (it == count.end() || it->second == 0) continue;
    s += (s.empty() ? "" : ", ") + std::to_string(it->second) + " " + RecordChoice::name(w);
  }
  return s;
}

RecordChoice chooseRecord(const Database& db, const std::string& key, const std::string& target) {
  RecordChoice c;
  c.best = db.best(key, target);
  if (!c.best) return c;
  // The default schedule as last measured under the best record's conditions (it changes with
  // Loom; with --retime both were timed one after the other at the end of the run).
  for (const TuningRecord& r : db.records(baselineKey(key), target)) {
    if (!r.ok() || r.cacheFlush != c.best->cacheFlush) continue;
    if (!r.host.empty() && !c.best->host.empty() && r.host != c.best->host) continue;
    c.baseline = r;
  }
  if (!c.baseline) c.why = RecordChoice::Why::NoDefault;
  else if (c.best->meanMs() < c.baseline->meanMs()) c.why = RecordChoice::Why::Tuned;
  else c.why = RecordChoice::Why::DefaultFaster;
  return c;
}

driver::ScheduleProvider scheduleProviderFromRecords(const std::string& recordsPath, const std::string& target,
                                                     std::shared_ptr<RecordUse> use) {
  if (!std::filesystem::exists(recordsPath))
    LOOM_THROW(tune::RecordFileError) << recordsPath << ": no such tuning record file";
  if (std::filesystem::is_directory(recordsPath))
    LOOM_THROW(tune::RecordFileError) << recordsPath << ": is a directory, not a tuning record file";
  std::shared_ptr<JsonDatabase> db;
  try {
    db = std::make_shared<JsonDatabase>(recordsPath);
  } catch (const RecordFileError&) {
    throw;
  } catch (const Error& e) {
    LOOM_THROW(tune::RecordFileError) << "malformed tuning record file: " << e.what();
  }
  std::string source = "tuned:" + std::filesystem::path(recordsPath).filename().string();
  return [db, source, recordsPath, target, use](const driver::ModelGroup& g) -> std::optional<driver::GroupSchedule> {
    std::string key = groupKey(g.func);
    RecordChoice choice = chooseRecord(*db, key, target);
    if (use) ++use->count[choice.why];
    if (!choice.useRecord()) return std::nullopt;
    const TuningRecord& best = *choice.best;
    try {
      tir::Trace trace = tir::Trace::fromJson(best.trace);
      tir::Schedule sch(g.func);
      trace.apply(sch);
      return driver::GroupSchedule{sch.func(), source};
    } catch (const Error& e) {
      LOOM_THROW(tune::RecordApplyError) << recordsPath << ": the best record of kernel '" << g.name << "' (" << key
                                   << ", " << best.timestamp << ") does not apply: " << e.what();
    }
  };
}

void useDefaultSchedule(TaskSchedulerOptions& options, const std::string& target) {
  options.baselineSchedule = [](const tir::PrimFunc& f) { return driver::defaultSchedule(f, true); };
  if (!driver::isGPUTarget(target))
    options.seedTrace = [](const tir::PrimFunc& f) { return driver::defaultScheduleTrace(f, true); };
}

} // namespace loom::tune
