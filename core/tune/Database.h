// The tuning database interface: where measured records go and where the best schedule comes from.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/support/Error.h"
#include "core/tune/Record.h"

namespace loom::tune {

/// A record file that cannot be created, read or appended to.
LOOM_DECLARE_ERROR(RecordFileError, RuntimeError);

/// TVM's meta_schedule Database, reduced to what tuning and compilation need. Records are keyed by
/// (workload key, target).
class Database {
public:
  virtual ~Database() = default;
  /// Stores a record (appended durably before returning, so an interrupted run can resume).
  virtual void commit(const TuningRecord& r) = 0;
  /// Every record of a workload on a target, in commit order.
  virtual std::vector<TuningRecord> records(const std::string& workload,
                                            const std::string& target) const = 0;
  /// Every record, in commit order.
  virtual const std::vector<TuningRecord>& all() const = 0;

  /// The successful record with the smallest mean time, if any. Of several records of one
  /// schedule (a trial and its re-timings), only the latest counts; once some schedules were
  /// re-timed, only they and the schedules first measured after the last re-timing compete.
  std::optional<TuningRecord> best(const std::string& workload, const std::string& target) const;
  /// The `k` fastest successful records, fastest first.
  std::vector<TuningRecord> topK(const std::string& workload, const std::string& target,
                                 size_t k) const;
  /// How many trials (successful or not) the workload already has on the target (re-timings
  /// are not trials).
  size_t trialCount(const std::string& workload, const std::string& target) const;
  /// True when a record with this trace key exists for the workload on the target.
  bool hasTrace(const std::string& workload, const std::string& target,
                const std::string& traceKey) const;
};

} // namespace loom::tune
