// Fuzz target: tuning-record files (JSON lines: JsonDatabase, TuningRecord::fromJson) and the
// traces they hold: each parsed trace is replayed on its workload preset when that preset is small,
// as ApplyHistoryBest does. A trace that does not apply must give a ScheduleError, nothing else.
#include "FuzzCommon.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Trace.h"
#include "core/topi/Workloads.h"
#include "core/tune/database/JsonDatabase.h"

using namespace loom;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return -1;
  fuzz::MemFile file(fuzz::bytesOf(data, size), "fuzz.json");
  if (!file.ok()) return 0;
  std::vector<tune::TuningRecord> records;
  fuzz::refusesCleanly([&] { records = tune::JsonDatabase(file.path()).all(); });
  for (const auto& r : records) {
    (void)r.meanMs();
    (void)r.toJson().dump();
    fuzz::refusesCleanly([&] {
      tir::Trace trace = tir::Trace::fromJson(r.trace);
      topi::WorkloadSpec spec = topi::parseWorkloadSpec(r.workload);
      if (topi::workloadFlops(spec) > 1e5) return;
      tir::Schedule sch(topi::buildWorkload(spec));
      trace.apply(sch);
    });
  }
  return 0;
}
