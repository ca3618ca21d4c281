// The messages between rank 0 and the worker ranks (JSON text, one MPI tag per kind), and the
// MpiRunner that rank 0 measures through. Internal to core/tune/mpi.
#pragma once
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mpi.h>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "core/tune/Measure.h"
#include "core/tune/mpi/Distributed.h"
#include "core/tune/mpi/HostLock.h"

namespace loom::tune::mpi {

enum Tag : int {
  kJob = 1,    ///< 0 -> worker: {"ticket", "task_key", "task"? (first time only), "trace", "options", "test_fault"?,
               ///  "features"? (return the candidate's features), "lower"? (final traces to lower too, or
               ///  mutation requests {"mutate": ...} to make and lower: lowerForSearch),
               ///  "states"? (send kState messages while on it: rank 0 prints worker events),
               ///  "known"? (with mutation requests: keyHash()es of the task's points known since the
               ///  last job to this worker, the worker's known set: lowerForSearch)}
  kStop = 2,   ///< 0 -> worker: go home
  kState = 3,  ///< worker -> 0: {"state": "building" | "timing"} (only for jobs with "states")
  kResult = 4, ///< worker -> 0: {"ticket", "result": MeasureResult, "features"?, "lowered"? (one array per "lower"),
               ///  "made"? (one per "lower": {"final", "design", "hash", "redrawn"?} of a mutant made,
               ///  {"known": true, "redrawn"} when every draw was known, else null),
               ///  "sim"? (simulated: {"lower_cpu_ms", "lower_wall_ms", "overran"})}
};

void sendText(const std::string& text, int dest, int tag);
/// Receives a message already probed (`status`).
std::string recvText(const MPI_Status& status);

nlohmann::json optionsToJson(const MeasureOptions& o);
MeasureOptions optionsFromJson(const nlohmann::json& j);

/// Rank 0's runner: a dispatcher thread (the only thread that talks MPI while it runs) hands queued
/// candidates to idle workers and collects results and state changes; next() waits for a result.
class MpiRunner : public PipelinedRunner {
public:
  /// `searchShared`: worker ranks share rank 0's host, so rank 0's search holds the host lock
  /// (shared, as a build) and no timing runs on the host while it searches.
  /// `dispatcherPriority` (> 0): the dispatcher thread's SCHED_FIFO priority (--rt-priority P:
  /// P + 1, above the workers and the rest of rank 0).
  MpiRunner(std::vector<std::string> workerHosts, bool workerEvents, bool searchShared = false, int dispatcherPriority = 0);
  ~MpiRunner() override; ///< stops the dispatcher and sends every worker home

  size_t capacity() const override { return m_workers.size(); }
  void submit(uint64_t ticket, const MeasureCandidate& c, const MeasureOptions& options) override;
  std::optional<std::pair<uint64_t, MeasureResult>> next() override;
  size_t outstanding() const override;
  SessionStats stats() const;
  void searchBegins() override;
  void searchEnds() override;
  /// Two per worker (none under 4 workers): enough to keep the workers busy through a search on a
  /// loaded rank 0 (the bench: 22x at 32 workers against 15x with one per worker).
  size_t fillInTarget() const override { return m_workers.size() >= 4 ? 2 * m_workers.size() : 0; }
  size_t fillInsWaiting() const override;
  bool lowersForFeatures() const override { return true; }
  std::vector<uint64_t> takeBackFillIns() override;
  void submitFillIn(uint64_t ticket, const MeasureCandidate& c, const MeasureOptions& options) override;
  /// Added to the task's known points (Known): each worker gets them with its next mutation requests.
  void knowPoints(const std::string& taskKey, const std::vector<uint64_t>& hashes) override;

private:
  std::unique_ptr<HostLock> m_searchLock; ///< when searchShared
  struct Job {
    uint64_t ticket;
    MeasureCandidate candidate;
    MeasureOptions options;
  };
  struct Worker {
    int rank;
    std::string host;
    std::string state = "idle";
    bool busy = false;
    std::set<std::string> tasksSent; ///< task keys this worker has (sent once)
    std::map<std::string, size_t> knownSent; ///< by task key: how much of Known::log it was sent
    std::string taskKey;             ///< the task of the job it is on
    std::string sendBuffer;          ///< the job being sent (MPI_Isend), kept until `sending` completes
    MPI_Request sending = MPI_REQUEST_NULL;
    int trials = 0, failed = 0;
    double busyS = 0;
    std::chrono::steady_clock::time_point since;
  };
  void dispatch();
  void event(const Worker& w);

  std::vector<Worker> m_workers; ///< index = rank - 1
  /// A task's known points (keyHash() of every candidate handed out, every mutant a worker made,
  /// the records of a resumed run and the points rank 0's search keeps: knowPoints), in the order
  /// learnt: each worker is sent what it has not had with its next mutation requests, so it does
  /// not make and lower a mutant the search already knows (the repeats were 41% of the mutants
  /// made at 32 workers).
  struct Known {
    std::vector<uint64_t> log;
    std::unordered_set<uint64_t> set;
    void add(uint64_t h) {
      if (set.insert(h).second) log.push_back(h);
    }
  };
  std::map<std::string, Known> m_known; ///< by task key
  bool m_events;
  int m_dispatcherPriority = 0;
  std::deque<std::string> m_testFaults; ///< tests only: faults for the next jobs (LOOM_TUNE_TEST_JOB_FAULTS)
  mutable std::mutex m_mutex;
  std::condition_variable m_resultReady;
  std::deque<Job> m_queue;
  std::deque<Job> m_fillIns; ///< handed out only when m_queue is empty
  std::deque<std::pair<uint64_t, MeasureResult>> m_results;
  size_t m_outstanding = 0; ///< submitted, not yet returned by next()
  bool m_stop = false;
  std::thread m_thread;
  // Stats.
  bool m_started = false;
  std::chrono::steady_clock::time_point m_first, m_last;
  double m_waitS = 0;
  double m_cpuFirst = 0, m_cpuLast = 0; ///< process CPU seconds at m_first, m_last
  std::array<double, size_t(cpu::Phase::Count)> m_phaseFirst{}, m_phaseLast{}; ///< cpu::totals() then
  int m_trials = 0;
  int m_fillInsSent = 0;
  double m_simCpuS = 0, m_simWallS = 0; ///< simulated runs: the workers' "sim" reports, summed
  int m_simOverruns = 0;
};

} // namespace loom::tune::mpi
