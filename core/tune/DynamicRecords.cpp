// aliasDynamicRecords: pairs the kernels of a symbolic model and of its representative shape and
// copies the records across.
#include "core/tune/DynamicRecords.h"

#include "core/schedule/Schedule.h"
#include "core/schedule/Trace.h"
#include "core/tune/ModelTasks.h"
#include "core/tune/Tuner.h"

namespace loom::tune {

DynamicRecordSummary aliasDynamicRecords(Database& db, const graph::Module& dynamic, const graph::Module& representative,
                                         const driver::CompileModelOptions& options, const std::string& target) {
  DynamicRecordSummary s;
  driver::CompileModelOptions o = options;
  o.scheduleFor = nullptr;
  o.progress = nullptr;
  std::vector<driver::ModelGroup> dyn = driver::extractGroups(dynamic, {}, o);
  std::vector<driver::ModelGroup> rep = driver::extractGroups(representative, {}, o);
  s.kernels = int(dyn.size());
  if (dyn.size() != rep.size()) {
    s.notes.push_back("the symbolic model has " + std::to_string(dyn.size()) + " kernels and the representative shape " +
                      std::to_string(rep.size()) + ": they do not pair, no record applies to the symbolic model");
    return s;
  }
  for (size_t k = 0; k < dyn.size(); ++k)
    if (dyn[k].ops != rep[k].ops) {
      s.notes.push_back("kernel " + std::to_string(k + 1) + " (" + dyn[k].name + ") computes other ops than its twin " +
                        rep[k].name + " at the representative shape: they do not pair, no record applies");
      return s;
    }
  for (size_t k = 0; k < dyn.size(); ++k) {
    if (dyn[k].prescheduled) continue;
    std::string symKey = groupKey(dyn[k].func), repKey = groupKey(rep[k].func);
    if (symKey == repKey) continue;  // a kernel without symbols: its records already fit
    std::optional<TuningRecord> best = db.best(repKey, target);
    if (!best) {
      s.notes.push_back(dyn[k].name + ": no record at the representative shape");
      continue;
    }
    try {
      tir::Trace trace = tir::Trace::fromJson(best->trace);
      tir::Schedule sch(dyn[k].func);
      trace.apply(sch);
    } catch (const Error& e) {
      s.notes.push_back(dyn[k].name + ": its best schedule does not replay on the symbolic kernel (" + std::string(e.what()) + ")");
      continue;
    }
    TuningRecord copy = *best;
    copy.workload = symKey;
    db.commit(copy);
    for (TuningRecord b : db.records(baselineKey(repKey), target))
      if (b.ok() && b.cacheFlush == best->cacheFlush) {
        b.workload = baselineKey(symKey);
        db.commit(b);
      }
    ++s.aliased;
  }
  return s;
}

}  // namespace loom::tune
