// The best record of a workload as a schedule script.
#include "core/tune/ApplyHistoryBest.h"

#include <filesystem>

#include "core/schedule/Trace.h"
#include "core/tune/database/JsonDatabase.h"

namespace loom::tune {

std::string bestScheduleScript(const Database& db, const std::string& workloadKey, const std::string& target,
                               const std::string& origin) {
  auto best = db.best(workloadKey, target);
  if (!best) {
    size_t n = db.records(workloadKey, target).size();
    LOOM_THROW(Error) << origin << ": no successful tuning record of workload '" << workloadKey << "' on target '"
                      << target << "' (" << n << " failed record" << (n == 1 ? "" : "s") << ")";
  }
  return tir::Trace::fromJson(best->trace).str();
}

std::string bestScheduleScript(const std::string& recordsPath, const std::string& workloadKey,
                               const std::string& target) {
  if (!std::filesystem::exists(recordsPath))
    LOOM_THROW(tune::RecordFileError) << recordsPath << ": no such tuning record file";
  JsonDatabase db(recordsPath);
  return bestScheduleScript(db, workloadKey, target, recordsPath);
}

} // namespace loom::tune
