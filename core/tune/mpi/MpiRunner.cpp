// MpiRunner: rank 0's dispatcher thread hands candidates to worker ranks as they free up.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/tune/SearchStrategy.h"
#include "core/tune/mpi/Protocol.h"
#include "core/tune/mpi/TraceLog.h"

namespace loom::tune::mpi {

using Clock = std::chrono::steady_clock;

namespace {
/// CPU seconds (user + system) of this process, all threads.
double processCpuS() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}
} // namespace

void sendText(const std::string& text, int dest, int tag) {
  MPI_Send(text.data(), int(text.size()), MPI_CHAR, dest, tag, MPI_COMM_WORLD);
}

std::string recvText(const MPI_Status& status) {
  int n = 0;
  MPI_Get_count(&status, MPI_CHAR, &n);
  std::string text(size_t(std::max(n, 0)), '\0');
  MPI_Recv(text.data(), n, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return text;
}

nlohmann::json optionsToJson(const MeasureOptions& o) {
  return {{"repeat", o.repeat},   {"min_repeat_ms", o.minRepeatMs}, {"timeout_s", o.timeoutS},
          {"reference_timeout_s", o.referenceTimeoutS}, {"check", o.check}, {"seed", o.seed},
          {"flush_cache", o.flushCache}};
}

MeasureOptions optionsFromJson(const nlohmann::json& j) {
  MeasureOptions o;
  o.repeat = j.value("repeat", o.repeat);
  o.minRepeatMs = j.value("min_repeat_ms", o.minRepeatMs);
  o.timeoutS = j.value("timeout_s", o.timeoutS);
  o.referenceTimeoutS = j.value("reference_timeout_s", o.referenceTimeoutS);
  o.check = j.value("check", o.check);
  o.seed = j.value("seed", o.seed);
  o.flushCache = j.value("flush_cache", o.flushCache);
  return o;
}

MpiRunner::MpiRunner(std::vector<std::string> workerHosts, bool workerEvents, bool searchShared, int dispatcherPriority)
    : m_events(workerEvents), m_dispatcherPriority(dispatcherPriority) {
  // Tests only: LOOM_TUNE_TEST_FAULTS=1 and LOOM_TUNE_TEST_JOB_FAULTS=",,crash,hang,wrong": the
  // first jobs handed out carry these faults in turn, "" none (MeasureCandidate::testFault; the
  // worker process acts on them under the same switch), so a test of `mpirun ... loom tune` can
  // make candidates fail.
  const char* faults = std::getenv("LOOM_TUNE_TEST_FAULTS");
  const char* jobFaults = std::getenv("LOOM_TUNE_TEST_JOB_FAULTS");
  if (faults && std::string(faults) == "1" && jobFaults) {
    std::stringstream in(jobFaults);
    for (std::string f; std::getline(in, f, ',');) m_testFaults.push_back(f);
  }
  if (searchShared) m_searchLock = std::make_unique<HostLock>();
  for (size_t i = 0; i < workerHosts.size(); ++i) {
    Worker w;
    w.rank = int(i + 1);
    w.host = workerHosts[i];
    m_workers.push_back(std::move(w));
  }
  if (m_events)
    for (auto& w : m_workers) event(w);
  m_thread = std::thread([this] { dispatch(); });
}

MpiRunner::~MpiRunner() {
  {
    std::lock_guard lk(m_mutex);
    m_stop = true;
  }
  if (m_thread.joinable()) m_thread.join();
  for (auto& w : m_workers) {
    if (w.sending != MPI_REQUEST_NULL) MPI_Wait(&w.sending, MPI_STATUS_IGNORE);
    sendText("", w.rank, kStop);
  }
}

void MpiRunner::submit(uint64_t ticket, const MeasureCandidate& c, const MeasureOptions& options) {
  const uint64_t key = keyHash(c.trace.dump()); // the candidate's key (a record's traceKey)
  std::lock_guard lk(m_mutex);
  m_known[c.task.key].add(key); // handed out: known to every worker's next mutation requests
  if (!m_started) {
    m_started = true;
    m_first = Clock::now();
    m_cpuFirst = processCpuS();
    m_phaseFirst = cpu::totals();
  }
  m_queue.push_back({ticket, c, options});
  ++m_outstanding;
}

void MpiRunner::submitFillIn(uint64_t ticket, const MeasureCandidate& c, const MeasureOptions& options) {
  const uint64_t key = keyHash(c.trace.dump());
  std::lock_guard lk(m_mutex);
  m_known[c.task.key].add(key);
  m_fillIns.push_back({ticket, c, options});
  ++m_outstanding;
}

void MpiRunner::knowPoints(const std::string& taskKey, const std::vector<uint64_t>& hashes) {
  std::lock_guard lk(m_mutex);
  Known& known = m_known[taskKey];
  for (uint64_t h : hashes) known.add(h);
}

std::vector<uint64_t> MpiRunner::takeBackFillIns() {
  std::lock_guard lk(m_mutex);
  std::vector<uint64_t> tickets;
  for (const Job& j : m_fillIns) tickets.push_back(j.ticket);
  m_outstanding -= m_fillIns.size();
  m_fillIns.clear();
  return tickets;
}

size_t MpiRunner::fillInsWaiting() const {
  std::lock_guard lk(m_mutex);
  return m_fillIns.size();
}

std::optional<std::pair<uint64_t, MeasureResult>> MpiRunner::next() {
  std::unique_lock lk(m_mutex);
  if (m_outstanding == 0) return std::nullopt;
  auto t0 = Clock::now();
  trace::event("next_wait", int64_t(m_results.size()));
  m_resultReady.wait(lk, [&] { return !m_results.empty(); });
  trace::event("next_got", int64_t(m_results.size()));
  m_last = Clock::now();
  m_cpuLast = processCpuS();
  m_phaseLast = cpu::totals();
  m_waitS += std::chrono::duration<double>(m_last - t0).count();
  auto r = std::move(m_results.front());
  m_results.pop_front();
  --m_outstanding;
  ++m_trials;
  return r;
}

void MpiRunner::searchBegins() {
  trace::event("search_begin", int64_t(outstanding()));
  if (m_searchLock) m_searchLock->shared();
}

void MpiRunner::searchEnds() {
  if (m_searchLock) m_searchLock->unlock();
  trace::event("search_end", int64_t(outstanding()));
}

size_t MpiRunner::outstanding() const {
  std::lock_guard lk(m_mutex);
  return m_outstanding;
}

SessionStats MpiRunner::stats() const {
  std::lock_guard lk(m_mutex);
  SessionStats s;
  s.workers = int(m_workers.size());
  s.trials = m_trials;
  s.fillIns = m_fillInsSent;
  s.workerWorkCpuS = m_simCpuS;
  s.workerWorkWallS = m_simWallS;
  s.simulatedOverruns = m_simOverruns;
  s.wallS = m_started ? std::chrono::duration<double>(m_last - m_first).count() : 0;
  if (s.wallS > 0) {
    s.driverBusy = std::max(0.0, 1 - m_waitS / s.wallS);
    double busy = 0;
    for (auto& w : m_workers) busy += w.busyS;
    s.workerBusy = busy / (s.wallS * double(std::max<size_t>(1, m_workers.size())));
    s.driverCpuS = std::max(0.0, m_cpuLast - m_cpuFirst);
    s.meanTrialS = m_trials > 0 ? busy / m_trials : 0;
    for (size_t i = 0; i < s.phaseCpuS.size(); ++i) s.phaseCpuS[i] = std::max(0.0, m_phaseLast[i] - m_phaseFirst[i]);
  }
  return s;
}

void MpiRunner::event(const Worker& w) {
  if (!m_events) return;
  char line[512];
  int n = std::snprintf(line, sizeof line, "loom-worker rank=%d host=%s state=%s trials=%d failed=%d\n", w.rank,
                        w.host.c_str(), w.state.c_str(), w.trials, w.failed);
  if (n > 0) {
    ssize_t ignored = ::write(2, line, size_t(std::min<int>(n, int(sizeof line) - 1)));
    (void)ignored;
  }
}

namespace {
/// Tracing only: every 20 ms, the machine's steal and idle ticks and runnable threads
/// (/proc/stat), so a stall can be told from the hypervisor taking the vCPUs.
void sampleSystem() {
  static Clock::time_point next;
  if (Clock::now() < next) return;
  next = Clock::now() + std::chrono::milliseconds(20);
  FILE* f = std::fopen("/proc/stat", "r");
  if (!f) return;
  char line[512];
  long long steal = -1, idle = -1, running = -1;
  while (std::fgets(line, sizeof line, f)) {
    unsigned long long v[8] = {};
    if (std::sscanf(line, "cpu  %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                    &v[7]) == 8) {
      idle = (long long)v[3];
      steal = (long long)v[7];
    }
    std::sscanf(line, "procs_running %lld", &running);
  }
  std::fclose(f);
  trace::event("stat_steal_idle", steal, idle);
  trace::event("stat_running", running);
}
} // namespace

void MpiRunner::dispatch() {
  // Idle turns sleep 0.2 ms, doubling up to 1 ms while nothing happens: each MPI_Iprobe polls
  // every worker's channel (at 16-32 workers an idle turn every 0.5 ms cost rank 0 a quarter of a
  // core). Up to session mpi7 2 ms: a result then waited 2.8 ms on average at 32 workers, now 1.5.
  std::chrono::microseconds idle{200};
  // At real-time priority (the bench's --rt-priority P): P + 1, above the worker ranks (P - 1) and
  // rank 0's search and training threads (P - 2), which would otherwise hold both cores of a small
  // machine while results wait.
  if (m_dispatcherPriority > 0) {
    sched_param p{};
    p.sched_priority = std::min(m_dispatcherPriority, sched_get_priority_max(SCHED_FIFO));
    sched_setscheduler(0, SCHED_FIFO, &p);
  }
  for (;;) {
    bool active = false;
    cpu::Scope profile(cpu::Phase::Dispatch); // an idle turn costs two clock reads
    {
      std::unique_lock lk(m_mutex);
      if (m_stop) return;
      for (auto& w : m_workers) {
        if (w.busy || (m_queue.empty() && m_fillIns.empty())) continue;
        // A fill-in only when no searched candidate waits; the worker computes its features.
        const bool fillIn = m_queue.empty();
        std::deque<Job>& from = fillIn ? m_fillIns : m_queue;
        Job job = std::move(from.front());
        from.pop_front();
        if (!m_started) { // the run's clock starts with the first candidate handed out
          m_started = true;
          m_first = Clock::now();
          m_cpuFirst = processCpuS();
          m_phaseFirst = cpu::totals();
        }
        nlohmann::json j = {{"ticket", job.ticket},
                            {"task_key", job.candidate.task.key},
                            {"trace", job.candidate.trace},
                            {"options", optionsToJson(job.options)}};
        if (fillIn || job.candidate.wantFeatures) j["features"] = true; // the worker lowers it
        if (m_events) j["states"] = true; // report building / timing
        if (fillIn) ++m_fillInsSent;
        Known& known = m_known[job.candidate.task.key];
        if (!job.candidate.alsoLower.empty()) {
          j["lower"] = job.candidate.alsoLower;
          // With mutation requests, the points known since this worker's last ones: it does not
          // make and lower a mutant the search knows (lowerForSearch).
          bool requests = false;
          for (const nlohmann::json& t : job.candidate.alsoLower) requests |= t.is_object() && t.contains("mutate");
          size_t& sent = w.knownSent[job.candidate.task.key];
          if (requests && sent < known.log.size()) {
            j["known"] = std::vector<uint64_t>(known.log.begin() + long(sent), known.log.end());
            sent = known.log.size();
          }
        }
        w.taskKey = job.candidate.task.key;
        // Each worker gets a task's function once; later candidates name it by key.
        if (w.tasksSent.insert(job.candidate.task.key).second) j["task"] = job.candidate.task.toJson();
        if (!job.candidate.testFault.empty()) {
          j["test_fault"] = job.candidate.testFault;
        } else if (!m_testFaults.empty()) {
          if (!m_testFaults.front().empty()) j["test_fault"] = m_testFaults.front();
          m_testFaults.pop_front();
        }
        w.busy = true;
        w.since = Clock::now();
        // Sent without waiting: a job over MPI's eager limit (a few KB: the first with the task's
        // function, or one with traces to lower) waits for the worker to post its receive, and a
        // blocking send spun for it (12 ms of rank 0's CPU per candidate at 16 workers under the
        // bench's real-time priority). The worker has taken the previous job (it answered it).
        if (w.sending != MPI_REQUEST_NULL) {
          trace::event("job_wait_prev", w.rank);
          MPI_Wait(&w.sending, MPI_STATUS_IGNORE);
          trace::event("job_wait_prev_done", w.rank);
        }
        w.sendBuffer = j.dump();
        MPI_Isend(w.sendBuffer.data(), int(w.sendBuffer.size()), MPI_CHAR, w.rank, kJob, MPI_COMM_WORLD, &w.sending);
        trace::event("job_isend", w.rank, int64_t(job.ticket & 0xffffff) << 24 | int64_t(w.sendBuffer.size()));
        active = true;
      }
    }
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (flag) {
      active = true;
      trace::event("probe_hit", st.MPI_SOURCE, st.MPI_TAG);
      std::string text = recvText(st);
      trace::event("recv_done", st.MPI_SOURCE, int64_t(text.size()));
      nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
      std::lock_guard lk(m_mutex);
      if (st.MPI_SOURCE < 1 || size_t(st.MPI_SOURCE) > m_workers.size() || j.is_discarded()) continue;
      Worker& w = m_workers[size_t(st.MPI_SOURCE - 1)];
      if (st.MPI_TAG == kState) {
        w.state = j.value("state", std::string("building"));
        event(w);
      } else if (st.MPI_TAG == kResult) {
        MeasureResult r = MeasureResult::fromJson(j.value("result", nlohmann::json::object()));
        if (j.contains("features") && j["features"].is_array()) r.features = j["features"].get<std::vector<float>>();
        if (j.contains("lowered") && j["lowered"].is_array())
          r.alsoFeatures = j["lowered"].get<std::vector<std::vector<float>>>();
        if (j.contains("made") && j["made"].is_array()) {
          Known& known = m_known[w.taskKey];
          for (const nlohmann::json& m : j["made"])
            if (m.is_object() && m.contains("hash") && m["hash"].is_number_unsigned()) known.add(m["hash"].get<uint64_t>());
          r.alsoMade = std::move(j["made"]).get<std::vector<nlohmann::json>>();
        }
        if (j.contains("sim") && j["sim"].is_object()) {
          m_simCpuS += j["sim"].value("lower_cpu_ms", 0.0) / 1000;
          m_simWallS += j["sim"].value("lower_wall_ms", 0.0) / 1000;
          m_simOverruns += j["sim"].value("overran", false) ? 1 : 0;
        }
        w.busy = false;
        w.busyS += std::chrono::duration<double>(Clock::now() - w.since).count();
        ++w.trials;
        if (!r.ok()) ++w.failed;
        w.state = r.ok() ? "idle" : "failed";
        event(w);
        m_results.push_back({j.value("ticket", uint64_t(0)), std::move(r)});
        m_resultReady.notify_one();
      }
    }
    // An oversubscribed host needs its idle ranks asleep, not spinning in MPI's progress loop.
    if (trace::on()) sampleSystem();
    if (active) {
      idle = std::chrono::microseconds(200);
    } else {
      std::this_thread::sleep_for(idle);
      idle = std::min(2 * idle, std::chrono::microseconds(1000));
    }
  }
}

} // namespace loom::tune::mpi
