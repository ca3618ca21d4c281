// Where a tuning process's CPU goes, by phase (the search's points, lowering for features, cost-model
// scoring and training, results and records, the distributed dispatcher): thread CPU clocks, which
// stay steady on a loaded machine where wall times do not. A distributed run's rank 0 prints them
// per candidate (core/tune/mpi/README.md); anything may read them.
#pragma once
#include <array>
#include <cstdint>
#include <string>

namespace loom::tune::cpu {

enum class Phase : int {
  Search,   ///< proposing a batch, apart from the phases below (evolution, bookkeeping)
  Points,   ///< making points of the space (sample / replay a trace) and their keys
  Lowering, ///< lowering points and extracting their cost-model features
  Scoring,  ///< cost-model predictions
  Training, ///< cost-model retraining (a background thread in pipelined tuning)
  Results,  ///< taking a result: the record written, events reported, the batch's data kept
  Dispatch, ///< a distributed runner's dispatcher thread (MPI messages, JSON)
  Count
};

/// The phase's name as printed ("search", "points", ...).
const char* name(Phase p);

/// CPU seconds of the calling thread.
double threadSeconds();

/// Counts the calling thread's CPU time from construction to destruction against `phase`, minus
/// the time of scopes nested in it on the same thread (each phase is counted once: exclusive times).
class Scope {
public:
  explicit Scope(Phase phase);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

private:
  Phase m_phase;
  double m_start;
  Scope* m_parent;
};

/// Seconds counted per phase since the process started (or the last reset), all threads.
std::array<double, size_t(Phase::Count)> totals();
void reset();

} // namespace loom::tune::cpu
