// Using tuning records: the best measured schedule of a workload, as a script the driver applies
// (`loom bench-op --tuning-records R.json`).
#pragma once
#include <string>

#include "core/tune/Database.h"

namespace loom::tune {

/// The schedule script (tir::Trace::str()) of the fastest successful record of `workloadKey` on
/// `target` in `db`. Throws Error naming the workload, target and `origin` (the file) when there
/// is none, ParseError when the stored trace is malformed.
std::string bestScheduleScript(const Database& db, const std::string& workloadKey, const std::string& target,
                               const std::string& origin);
/// Same, loading the JSON-lines record file `recordsPath`.
std::string bestScheduleScript(const std::string& recordsPath, const std::string& workloadKey,
                               const std::string& target);

} // namespace loom::tune
