// Measures each candidate in its own worker process (fork + exec of `loom tune-worker`).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/tune/Measure.h"

namespace loom::tune {

/// A worker per candidate: a crash (signal), a hang (killed after MeasureOptions::timeoutS), a
/// wrong result or a build error fails only that candidate. With `overlapBuilds`, the next
/// candidate's worker builds and checks while the current one is being timed (off by default on
/// machines with fewer than 4 cores, where it would disturb the timing).
class ProcessRunner : public Runner {
public:
  /// Called around a candidate's phases, in this process (the MPI worker ranks take their host's
  /// build / timing lock and report their state here): before its worker starts building, before
  /// the go-ahead to time it, and once it is finished (whatever the outcome).
  struct PhaseHooks {
    std::function<void()> beforeBuild, beforeTiming, afterCandidate;
  };

  /// `workerCommand`: the program and leading arguments, e.g. {"/usr/bin/loom", "tune-worker"};
  /// the input and output file paths are appended.
  explicit ProcessRunner(std::vector<std::string> workerCommand, bool overlapBuilds = defaultOverlap());
  ~ProcessRunner() override;

  std::vector<MeasureResult> run(const std::vector<MeasureCandidate>& candidates,
                                 const MeasureOptions& options,
                                 const std::function<void(size_t, const MeasureResult&)>& onResult = {}) override;

  /// {"/proc/self/exe", "tune-worker"}: this program (the `loom` binary) as the worker.
  static std::vector<std::string> selfWorkerCommand();
  static bool defaultOverlap();
  /// Hooks for every later candidate (they imply no overlap of builds with timing).
  void setPhaseHooks(PhaseHooks hooks);
  /// This machine's name (gethostname), recorded with each result.
  static std::string hostName();

private:
  std::vector<std::string> m_command;
  bool m_overlap;
  std::string m_dir; ///< temp dir for candidate / result files and the reference cache
  int m_counter = 0;
  PhaseHooks m_hooks;
};

} // namespace loom::tune
