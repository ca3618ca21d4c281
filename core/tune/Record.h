// One tuning record: a measured schedule trace of a workload on a target (a JSON line in R.json).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace loom::tune {

/// The error kinds a measurement can end with ("" when it succeeded).
namespace error_kind {
inline constexpr const char* kScheduleError = "schedule_error"; ///< the trace does not apply
inline constexpr const char* kBuildError = "build_error";       ///< lowering or codegen failed
inline constexpr const char* kCrash = "crash";                  ///< the worker died by a signal
inline constexpr const char* kTimeout = "timeout";              ///< the worker was killed
inline constexpr const char* kWrongResult = "wrong_result";     ///< output differs from reference
inline constexpr const char* kRuntimeError = "runtime_error";   ///< anything else in the worker
} // namespace error_kind

struct TuningRecord {
  std::string workload;        ///< the task key, e.g. "matmul:K=64,M=64,N=64"
  std::string target;          ///< "llvm", "llvm -mcpu=znver4", ...
  nlohmann::json trace;        ///< tir::Trace::toJson() of the (simplified) schedule
  std::vector<double> timesMs; ///< per-call time of each timing sample
  std::string errorKind;       ///< "" on success, else one of error_kind::*
  std::string errorMessage;
  std::string version;   ///< the Loom version that measured it
  std::string timestamp; ///< ISO 8601 UTC
  /// Timed with the caches flushed before each call (MeasureOptions::flushCache): "cache_flush"
  /// in the JSON line, written only when set. Times taken warm and flushed do not compare.
  bool cacheFlush = false;
  /// A re-measurement of a schedule recorded before (TaskTuner::retime), not a trial: "retime" in
  /// the JSON line, written only when set. The latest record of a schedule is the one that counts.
  bool retime = false;
  /// The machine that measured it ("host" in the JSON line, written only when known; records of
  /// older Loom versions have none). Distributed runs measure on many hosts.
  std::string host;

  bool ok() const { return errorKind.empty() && !timesMs.empty(); }
  /// Mean of the samples (TVM's MeasureResult::mean); +inf for failed records.
  double meanMs() const;
  /// The trace as a canonical string (two records with the same key measured the same schedule).
  std::string traceKey() const { return trace.dump(); }

  nlohmann::json toJson() const;
  /// Throws ParseError naming the missing or mistyped field.
  static TuningRecord fromJson(const nlohmann::json& j);
};

/// The current UTC time as "2026-11-22T01:02:03Z".
std::string utcTimestamp();
/// The Loom version compiled into this library.
std::string loomVersion();

} // namespace loom::tune
