// Distributed tuning over MPI: `mpirun -np N loom tune ...`. Rank 0 searches (task scheduler, cost
// model, search strategy, database, progress output); the other ranks build and measure candidates,
// each in an isolated worker process. No MPI header here: only core/tune/mpi/*.cpp include mpi.h.
#pragma once
#include <memory>
#include <string>

#include "core/support/Error.h"
#include "core/tune/CpuProfile.h"
#include "core/tune/Measure.h"

namespace loom::tune::mpi {

/// A rank whose CPU (model or ISA extensions) differs from what rank 0 tunes for.
LOOM_DECLARE_ERROR(CpuMismatchError, Error);

/// True when this process was started by an MPI launcher (mpirun, mpiexec, srun with PMI/PMIx):
/// then `loom tune` joins the job. A plain `loom tune` never initializes MPI.
bool launchedByMpi();

struct SessionOptions {
  std::string target = "llvm"; ///< what rank 0 tunes for: "llvm" (its host CPU) or "llvm -mcpu=X"
  /// Bench mode (bench/bench_tune_mpi.sh): the worker ranks do not build or time but sleep this
  /// long for each phase and report a made-up time; each rank then stands for a host of its own.
  double simulateBuildMs = 0, simulateMeasureMs = 0;
  /// Bench mode: the real work a simulated worker does (lowering points for rank 0's cost model)
  /// is charged against the build stand-in by its CPU time (true: as on a host of its own; the
  /// wait for a CPU on the shared machine is not charged) or by its wall time (false).
  bool simulateChargeLowering = true;
  /// Benches on a shared machine: once started (MPI's start-up spins, which real-time ranks on an
  /// oversubscribed machine turn into a livelock), the job runs at real-time priority (SCHED_FIFO):
  /// rank 0's dispatcher thread at P + 1, the worker ranks, with the measurement processes they
  /// start, at P - 1, and rank 0's other threads (search, training) at P - 2, below the workers'
  /// short jobs (the search gets what they leave), so the other jobs on the machine wait while it
  /// runs; every rank goes back to normal before MPI's shutdown. 0: normal priority (simulated
  /// worker ranks at nice 10).
  int rtPriority = 0;
  /// Rank 0 prints a line per worker state change on stderr:
  /// "loom-worker rank=R host=H state=building|timing|idle|failed trials=N failed=F" (the Studio's monitor reads them).
  bool workerEvents = false;
};

/// Driver-side numbers of a distributed run.
struct SessionStats {
  int workers = 0, hosts = 0;
  int trials = 0;           ///< candidates measured through the runner
  double wallS = 0;         ///< from the first submitted candidate to the last result
  double driverBusy = 0;    ///< fraction of wallS rank 0's search thread was not waiting for results
  double workerBusy = 0;    ///< mean fraction of wallS a worker rank held a candidate
  /// CPU seconds rank 0's process used over wallS (search threads, dispatcher, cost model
  /// training): divided by trials, the driver's cost per candidate, which with the mean trial time
  /// says how many workers one of rank 0's cores can keep busy.
  double driverCpuS = 0;
  double meanTrialS = 0;    ///< mean time a worker held a candidate (build + measure)
  /// Of driverCpuS, the CPU seconds of each phase (thread CPU clocks, core/tune/CpuProfile.h); the
  /// rest of driverCpuS is the main thread's loop, MPI's own threads and output.
  std::array<double, size_t(cpu::Phase::Count)> phaseCpuS{};
  /// Of `trials`, the fill-ins: random candidates handed to a worker that would have waited for
  /// the search (PipelinedRunner::fillInTarget), or taken from the reserve at the end.
  int fillIns = 0;
  /// Simulated runs: the worker ranks' real work per trial (parsing the job, lowering points for
  /// rank 0), its CPU and wall time summed over the trials, and how many trials outlasted their
  /// simulated length (charged mode: the wait for a CPU was longer than the measurement stand-in).
  double workerWorkCpuS = 0, workerWorkWallS = 0;
  int simulatedOverruns = 0;
};

class MpiRunner;

/// One process's part in the job. Construction initializes MPI, finds which ranks share a host
/// (MPI_Comm_split_type shared) and checks every rank's CPU against rank 0's target: after a
/// mismatch, runner() throws CpuMismatchError on rank 0 and serve() returns 0 on the others (rank
/// 0's exit 1 fails the job once it has said why). The
/// destructor of rank 0 sends the workers home; every rank finalizes MPI.
class Session {
public:
  explicit Session(const SessionOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int rank() const { return m_rank; }
  int size() const { return m_size; }
  /// More than one rank (mpirun -np 1 has no workers: rank 0 then measures locally).
  bool hasWorkers() const { return m_size > 1; }
  /// Worker ranks: build and measure what rank 0 sends until it says stop; the exit code.
  int serve();
  /// Rank 0: the runner that hands candidates to the workers as they free up; throws
  /// CpuMismatchError when a rank was refused.
  PipelinedRunner& runner();
  /// Rank 0: "4 worker ranks on 2 hosts (node1: 2, node2: 2)".
  std::string describe() const;
  SessionStats stats() const;

private:
  SessionOptions m_options;
  int m_rank = 0, m_size = 1;
  bool m_refused = false;
  std::string m_refusal;
  std::string m_layout; ///< describe()'s text
  int m_hosts = 1;
  std::unique_ptr<MpiRunner> m_runner;
};

} // namespace loom::tune::mpi
