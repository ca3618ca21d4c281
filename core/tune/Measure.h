// Measuring candidates: options (TVM's repeat / number / min_repeat_ms), results, and the Runner
// interface; the worker body that builds, checks and times one candidate.
#pragma once
#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/tune/Task.h"

namespace loom::tune {

struct MeasureOptions {
  int repeat = 3;            ///< timing samples (each of `number` calls, picked automatically)
  double minRepeatMs = 20;   ///< the least duration of one sample
  double timeoutS = 10;      ///< per candidate and phase (build+check, then timing)
  /// Added to the build+check phase of a candidate whose worker computes the task's reference
  /// outputs (the first one of a task; later ones read them from the runner's cache): a large
  /// workload's unscheduled reference can take far longer than any candidate.
  double referenceTimeoutS = 120;
  bool check = true;         ///< compare the first run's output with the reference
  uint64_t seed = 0;         ///< seed of the random inputs
  /// Before each timed call, evict every argument but the first (the data a producer just wrote)
  /// from the CPU caches, as TVM's cache_flush_cpu_non_first_arg: weights then come from memory,
  /// as they do when a model's weights do not fit in the cache. Each call is timed on its own.
  /// CPU targets only (GPU measurements ignore it).
  bool flushCache = false;
  /// When set and true, a worker in flight is killed at once (within ~5 ms; ProcessRunner): the
  /// candidate fails with error kind "Cancelled" and is not a measurement. A cancelled tuning
  /// run then stops without waiting up to timeoutS for the candidate being measured.
  const std::atomic<bool>* abort = nullptr;
};

/// One schedule of a task to measure.
struct MeasureCandidate {
  TuneTask task;
  nlohmann::json trace; ///< tir::Trace::toJson()
  /// Test-only fault injection ("crash", "hang", "wrong"): honoured only when the worker's
  /// environment has LOOM_TUNE_TEST_FAULTS=1, never in normal runs.
  std::string testFault;
  /// The search did not lower it (a random sample needs no score): the runner returns its
  /// cost-model features with the result (MeasureResult::features). Only for a PipelinedRunner
  /// whose lowersForFeatures() is true.
  bool wantFeatures = false;
  /// Other points of the task whose features the runner returns with this candidate's result
  /// (MeasureResult::alsoFeatures), so the search's lowering is done where candidates are built:
  /// final traces of points the search made, or mutation requests ({"mutate": ...}, the
  /// evolutionary search's mutants, which the runner makes too: MeasureResult::alsoMade). Each
  /// is handled by lowerForSearch (SearchStrategy.h). lowersForFeatures() runners only.
  std::vector<nlohmann::json> alsoLower = {};
};

struct MeasureResult {
  std::vector<double> timesMs; ///< per-call time of each sample
  std::string errorKind;       ///< "" or one of error_kind::*
  std::string errorMessage;
  double buildMs = 0;          ///< schedule + lowering + JIT time in the worker
  bool cacheFlushed = false;   ///< timed with MeasureOptions::flushCache
  std::string host;            ///< the machine that measured it ("" when unknown)
  /// The candidate's cost-model features, when the runner computed them
  /// (MeasureCandidate::wantFeatures, fill-ins); not part of the JSON.
  std::vector<float> features;
  /// The features of MeasureCandidate::alsoLower, in its order (empty: that point did not lower);
  /// not part of the JSON.
  std::vector<std::vector<float>> alsoFeatures;
  /// For each MeasureCandidate::alsoLower that was a mutation request: the point made
  /// ({"final": final trace, "design": design trace}; null when it did not replay, and for the
  /// other kind). Empty when there were none; not part of the JSON.
  std::vector<nlohmann::json> alsoMade;
  bool ok() const { return errorKind.empty() && !timesMs.empty(); }
  double meanMs() const;
  nlohmann::json toJson() const;
  static MeasureResult fromJson(const nlohmann::json& j);
};

/// Measures candidates, each isolated so a crash, hang or wrong result fails only that one.
class Runner {
public:
  virtual ~Runner() = default;
  /// Results in candidate order; `onResult(i, r)` is called as each one finishes.
  virtual std::vector<MeasureResult> run(
      const std::vector<MeasureCandidate>& candidates, const MeasureOptions& options,
      const std::function<void(size_t, const MeasureResult&)>& onResult = {}) = 0;
};

/// A runner that measures several candidates at once and takes new ones while others run (the MPI
/// runner): the tuning loop keeps it fed (TaskScheduler, tuneTask) instead of waiting for whole
/// batches. run() submits and waits.
class PipelinedRunner : public Runner {
public:
  /// How many candidates it measures at once (its workers; not "slots", a Qt macro).
  virtual size_t capacity() const = 0;
  /// Queues a candidate; its result comes back from next() with `ticket`.
  virtual void submit(uint64_t ticket, const MeasureCandidate& c, const MeasureOptions& options) = 0;
  /// Blocks until a submitted candidate finishes; std::nullopt when none is queued or running.
  virtual std::optional<std::pair<uint64_t, MeasureResult>> next() = 0;
  /// Submitted candidates whose results next() has not returned yet.
  virtual size_t outstanding() const = 0;
  /// The tuning loop's search (proposing a batch, on every core: TuneOptions::searchThreads)
  /// begins / ends. A runner whose workers time on this machine keeps them from timing meanwhile.
  virtual void searchBegins() {}
  virtual void searchEnds() {}
  /// Fill-ins: a reserve of cheap candidates (random samples, not lowered by the search) that the
  /// runner hands to a worker only when no submitted candidate waits, i.e. while the search has
  /// fallen behind; the runner computes their features (MeasureResult::features) where it builds
  /// them. How many it wants in reserve (0: it takes none) and how many wait there now.
  virtual size_t fillInTarget() const { return 0; }
  /// Whether it computes the features of candidates with MeasureCandidate::wantFeatures where it
  /// builds them (the search then leaves random samples unlowered; fill-ins need it too).
  virtual bool lowersForFeatures() const { return false; }
  virtual size_t fillInsWaiting() const { return 0; }
  /// Takes the fill-ins not handed out yet back out of the reserve (they will not be measured);
  /// their tickets. The tuning loop does so near the end of the budget, so that the budget goes to
  /// searched candidates and the reserve is not measured just because it is there.
  virtual std::vector<uint64_t> takeBackFillIns() { return {}; }
  /// Puts a candidate in the fill-in reserve; its result comes back from next() like any other.
  virtual void submitFillIn(uint64_t ticket, const MeasureCandidate& c, const MeasureOptions& options) {
    submit(ticket, c, options);
  }
  /// Points of task `taskKey` that the search knows but did not hand out through this runner, by
  /// keyHash() (core/tune/SearchStrategy.h): the records of a resumed run, and points the search
  /// made and lowered itself and keeps as parents (the evolutionary search's population). A runner
  /// whose workers make mutants (MeasureCandidate::alsoLower) passes them on, so no worker makes
  /// and lowers such a point again (rank 0 would drop it as a repeat).
  virtual void knowPoints(const std::string& taskKey, const std::vector<uint64_t>& hashes) {}

  std::vector<MeasureResult> run(const std::vector<MeasureCandidate>& candidates, const MeasureOptions& options,
                                 const std::function<void(size_t, const MeasureResult&)>& onResult = {}) override;
};

/// The worker's body, in the worker process: builds the candidate (trace applied to the task's
/// function, lowered, JIT-compiled), runs it once and checks the outputs against the reference
/// (the preset's C++ reference for up to 2e8 flops, else the unscheduled program compiled; cached
/// in `referenceCache` when given), then calls `beforeTiming` (the runner's go-ahead) and times
/// it. Every failure becomes an error kind; it never throws.
MeasureResult measureCandidate(const MeasureCandidate& c, const MeasureOptions& options,
                               const std::string& referenceCache,
                               const std::function<void()>& beforeTiming = {});

/// `loom tune-worker IN.json OUT.json`: reads {"task", "trace", "options", "reference_cache",
/// "test_fault"}, prints "ready" on stdout once built and checked, waits for a line on stdin,
/// times, and writes the MeasureResult JSON to OUT.json. Returns the exit code.
int tuneWorkerMain(const std::string& inputPath, const std::string& outputPath);

} // namespace loom::tune
