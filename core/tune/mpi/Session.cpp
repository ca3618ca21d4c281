// Session: MPI start-up (hosts, CPU check), the worker ranks' loop, and shutdown.
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <sched.h>
#include <sys/resource.h>
#include <thread>
#include <unordered_set>

#include "codegen/LLVMInfo.h"
#include "core/schedule/Trace.h"
#include "core/tune/CpuProfile.h"
#include "core/tune/Record.h"
#include "core/tune/SearchStrategy.h"
#include "core/tune/mpi/HostLock.h"
#include "core/tune/mpi/Protocol.h"
#include "core/tune/mpi/TraceLog.h"
#include "core/tune/runner/ProcessRunner.h"

namespace loom::tune::mpi {

namespace {

/// What each rank tells rank 0 at start.
struct RankInfo {
  std::string host, cpu, features;
  int leader = 0; ///< the lowest world rank on the same host
};

std::string processorName() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  return std::string(name, size_t(std::max(len, 0)));
}

/// Tests only (with LOOM_TUNE_TEST_FAULTS=1): the value after "RANK:" of environment variable
/// `name` when it names this rank.
std::optional<std::string> testFake(const char* name, int rank) {
  const char* faults = std::getenv("LOOM_TUNE_TEST_FAULTS");
  const char* fake = std::getenv(name);
  if (!faults || std::string(faults) != "1" || !fake) return std::nullopt;
  std::string f = fake;
  size_t colon = f.find(':');
  if (colon == std::string::npos || f.substr(0, colon) != std::to_string(rank)) return std::nullopt;
  return f.substr(colon + 1);
}

/// LOOM_TUNE_TEST_FAKE_CPU="RANK:NAME" makes that rank report another CPU (tests only).
std::string cpuOf(int rank) { return testFake("LOOM_TUNE_TEST_FAKE_CPU", rank).value_or(codegen::hostCpuName()); }

/// The host's ISA extensions (sorted, comma-separated); LOOM_TUNE_TEST_FAKE_FEATURES="RANK:-a,+b"
/// makes that rank report the host's without a and with b (tests only: the same CPU name, other
/// extensions, as a virtual machine that hides some).
std::string cpuFeaturesOf(int rank) {
  std::string features = codegen::hostCpuFeatures();
  std::optional<std::string> delta = testFake("LOOM_TUNE_TEST_FAKE_FEATURES", rank);
  if (!delta) return features;
  std::set<std::string> on;
  std::stringstream in(features);
  for (std::string f; std::getline(in, f, ',');)
    if (!f.empty()) on.insert(f);
  std::stringstream change(*delta);
  for (std::string f; std::getline(change, f, ',');) {
    if (f.size() < 2) continue;
    if (f[0] == '-') on.erase(f.substr(1));
    if (f[0] == '+') on.insert(f.substr(1));
  }
  std::string out;
  for (const std::string& f : on) out += (out.empty() ? "" : ",") + f;
  return out;
}

/// "+a,-b" between two sorted comma lists: what `other` has that `mine` lacks (+) and the reverse (-).
std::string featureDiff(const std::string& mine, const std::string& other) {
  auto split = [](const std::string& s) {
    std::set<std::string> out;
    std::stringstream in(s);
    for (std::string f; std::getline(in, f, ',');)
      if (!f.empty()) out.insert(f);
    return out;
  };
  std::set<std::string> a = split(mine), b = split(other);
  std::string d;
  for (auto& f : b)
    if (!a.count(f)) d += (d.empty() ? "+" : " +") + f;
  for (auto& f : a)
    if (!b.count(f)) d += (d.empty() ? "-" : " -") + f;
  return d;
}

/// The -mcpu of a target string ("" when it has none: the host CPU of rank 0).
std::string mcpuOf(const std::string& target) {
  size_t p = target.find("-mcpu=");
  if (p == std::string::npos) return "";
  size_t e = target.find(' ', p);
  return target.substr(p + 6, e == std::string::npos ? std::string::npos : e - p - 6);
}

/// Gathers one string per rank at rank 0.
std::vector<std::string> gatherText(const std::string& mine, int rank, int size) {
  int len = int(mine.size());
  std::vector<int> lens(static_cast<size_t>(size)), offs(static_cast<size_t>(size));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  if (rank == 0)
    for (int i = 0; i < size; ++i) {
      offs[size_t(i)] = total;
      total += lens[size_t(i)];
    }
  std::string all(size_t(total), '\0');
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (rank == 0)
    for (int i = 0; i < size; ++i) out.push_back(all.substr(size_t(offs[size_t(i)]), size_t(lens[size_t(i)])));
  return out;
}

std::string broadcastText(std::string text, int rank) {
  int len = int(text.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank != 0) text.assign(size_t(len), '\0');
  MPI_Bcast(text.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
  return text;
}

void sendState(const char* state) { sendText(nlohmann::json{{"state", state}}.dump(), 0, kState); }

/// Every thread of this process (MPI's own too) and the threads it starts later at SCHED_FIFO
/// `priority` (SessionOptions::rtPriority). All of them: a thread left at
/// normal priority on a loaded machine can hold a lock of the process (its memory map, during a
/// page fault or an mmap) for long, and a real-time thread that needs it waits. (A precaution: the
/// bench's stalls were other real-time jobs at rank 0's priority, bench/README.md "Session mpi6".
/// Session mpi5 also made malloc keep one arena and never trim under this option; that made rank
/// 0's threads queue on the arena's lock, 12% of its CPU samples, and was taken out in mpi6.)
void setRealtime(int priority) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    sched_param p{};
    p.sched_priority = priority;
    if (sched_setscheduler(pid_t(std::stol(e.path().filename().string())), SCHED_FIFO, &p) != 0) {
      std::fprintf(stderr, "tune: --rt-priority %d: %s (running at normal priority)\n", priority, std::strerror(errno));
      return;
    }
  }
}

/// Every thread of this process back to SCHED_OTHER (those started at real-time priority too).
void dropRealtime() {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    sched_param p{};
    if (sched_getscheduler(pid_t(std::stol(e.path().filename().string()))) != SCHED_OTHER)
      sched_setscheduler(pid_t(std::stol(e.path().filename().string())), SCHED_OTHER, &p);
  }
}

} // namespace

bool launchedByMpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

Session::Session(const SessionOptions& options) : m_options(options) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &m_size);
  trace::open(m_rank);
  const bool simulate = options.simulateBuildMs > 0 || options.simulateMeasureMs > 0;
  // Which ranks share a host: the lowest world rank of each shared-memory group leads it.
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m_rank, MPI_INFO_NULL, &local);
  int leader = m_rank;
  MPI_Bcast(&leader, 1, MPI_INT, 0, local);
  MPI_Comm_free(&local);
  if (simulate) leader = m_rank; // each simulated rank stands for a host of its own
  nlohmann::json me = {{"host", simulate ? "sim-" + std::to_string(m_rank) : processorName()},
                       {"cpu", cpuOf(m_rank)},
                       {"features", cpuFeaturesOf(m_rank)},
                       {"leader", leader},
                       {"provided", provided}};
  std::vector<std::string> all = gatherText(me.dump(), m_rank, m_size);
  std::string verdict;
  std::vector<std::string> workerHosts;
  bool searchShared = false; // a worker rank on rank 0's host
  if (m_rank == 0) {
    std::vector<RankInfo> info;
    for (auto& text : all) {
      nlohmann::json j = nlohmann::json::parse(text);
      info.push_back({j["host"], j["cpu"], j["features"], j["leader"]});
      if (j["provided"].get<int>() < MPI_THREAD_SERIALIZED && verdict.empty())
        verdict = "tune: this MPI library does not support threads (MPI_THREAD_SERIALIZED), which rank 0 needs";
    }
    const std::string want = mcpuOf(options.target);
    for (int r = 1; r < m_size && verdict.empty(); ++r) {
      const RankInfo& w = info[size_t(r)];
      bool same = want.empty() ? w.cpu == info[0].cpu && w.features == info[0].features : w.cpu == want;
      if (same) continue;
      std::ostringstream os;
      os << "tune: rank " << r << " on host " << w.host << " has CPU " << w.cpu;
      std::string diff = featureDiff(info[0].features, w.features);
      if (want.empty() && !diff.empty()) os << " (ISA extensions " << diff << ")";
      os << ", but rank 0 tunes for " << (want.empty() ? info[0].cpu + ", the CPU of its host " + info[0].host : want)
         << " (target '" << options.target << "'): its timings would not hold for the target. Run all ranks on hosts "
         << "with that CPU (leave the others out of the host file)";
      verdict = os.str();
    }
    std::map<std::string, int> perHost;
    std::vector<std::string> order;
    for (int r = 1; r < m_size; ++r) {
      workerHosts.push_back(info[size_t(r)].host);
      if (!perHost[info[size_t(r)].host]++) order.push_back(info[size_t(r)].host);
    }
    m_hosts = int(order.size());
    std::ostringstream os;
    os << (m_size - 1) << " worker rank" << (m_size == 2 ? "" : "s") << " on " << m_hosts << " host" << (m_hosts == 1 ? "" : "s") << " (";
    for (size_t i = 0; i < order.size() && i < 8; ++i) os << (i ? ", " : "") << order[i] << ": " << perHost[order[i]];
    if (order.size() > 8) os << ", ...";
    os << ")";
    if (!simulate) {
      for (int r = 1; r < m_size; ++r) searchShared |= info[size_t(r)].leader == info[0].leader;
      bool shared = false;
      for (int r = 1; r < m_size; ++r)
        for (int q = r + 1; q < m_size; ++q) shared |= info[size_t(r)].leader == info[size_t(q)].leader;
      if (shared) os << "; ranks on one host build in parallel and take turns to time";
      if (searchShared) os << "; no timing on " << info[0].host << " while rank 0 searches";
    } else {
      os << "; simulated: build " << options.simulateBuildMs << " ms, measure " << options.simulateMeasureMs << " ms";
    }
    m_layout = os.str();
  }
  verdict = broadcastText(verdict, m_rank);
  if (!verdict.empty()) {
    m_refused = true;
    m_refusal = verdict;
    return;
  }
  // Real-time priority (bench) only now that MPI's start-up is over; this thread's later threads
  // (rank 0's dispatcher, search and training threads) inherit it.
  // Rank 0's search, training and main threads go *below* the worker ranks (P - 2 against P - 1),
  // its dispatcher above everything (P + 1, MpiRunner): a worker's job is short (reading it,
  // lowering a point or two: ~5 ms) and on a cluster it would not wait for rank 0 at all, while a
  // search at P held both vCPUs of this VM for 30-50 ms bursts, and every worker that woke then
  // (to take its next job, or from its stand-in's sleep) waited: 12 ms per trial on average at 32
  // workers (session mpi7's traces). Now the search gets what the workers leave (1.5 of 2 vCPUs),
  // and if that is too little it shows as fill-ins and a busier driver, as it should.
  if (options.rtPriority > 0) setRealtime(std::max(1, options.rtPriority - (m_rank == 0 ? 2 : 1)));
  if (m_rank == 0 && m_size > 1)
    m_runner = std::make_unique<MpiRunner>(workerHosts, options.workerEvents, searchShared,
                                           options.rtPriority > 0 ? options.rtPriority + 1 : 0);
}

Session::~Session() {
  m_runner.reset(); // joins the dispatcher and sends the workers home
  trace::flush();
  if (m_options.rtPriority > 0) dropRealtime(); // MPI's shutdown may spin
  MPI_Finalize();
}

PipelinedRunner& Session::runner() {
  if (m_refused) LOOM_THROW(tune::mpi::CpuMismatchError) << m_refusal;
  LOOM_ICHECK(m_runner) << "tune: only rank 0 of a job with workers has a runner";
  return *m_runner;
}

std::string Session::describe() const { return m_layout; }

SessionStats Session::stats() const {
  SessionStats s = m_runner ? m_runner->stats() : SessionStats{};
  s.hosts = m_hosts;
  return s;
}

int Session::serve() {
  // A refused job: rank 0 reports it and exits 1. A worker exiting 1 first made mpirun abort the
  // job before rank 0 had printed why (tune_mpi.test_mpi_tune otherCpuRefused, 1 clean-clone run).
  if (m_refused) return 0;
  const bool simulate = m_options.simulateBuildMs > 0 || m_options.simulateMeasureMs > 0;
  // A simulated worker rank stands for a host of its own, yet all of them share rank 0's machine:
  // what they compute (the features of the points they lower) must not take rank 0's CPU, as it
  // would not on a cluster. At a lower priority (nice 10) they get what rank 0 leaves; a lowering
  // that then outlasts the build stand-in makes that trial longer.
  if (simulate && m_options.rtPriority <= 0) setpriority(PRIO_PROCESS, 0, 10);
  // Whether rank 0 wants this rank's state changes (building, timing): only when it prints them
  // for the Studio's monitor (--worker-events); else two messages a trial it would only parse.
  bool states = false;
  ProcessRunner runner(ProcessRunner::selfWorkerCommand(), /*overlapBuilds=*/false);
  std::unique_ptr<HostLock> lock;
  if (!simulate) {
    lock = std::make_unique<HostLock>();
    ProcessRunner::PhaseHooks hooks;
    hooks.beforeBuild = [&] {
      if (states) sendState("building");
      lock->shared();
    };
    hooks.beforeTiming = [&] {
      lock->exclusive();
      if (states) sendState("timing");
    };
    hooks.afterCandidate = [&] { lock->unlock(); };
    runner.setPhaseHooks(std::move(hooks));
  }
  std::map<std::string, TuneTask> tasks;
  std::map<std::string, SpaceGenerator> spaces; ///< by task key: the space mutation requests are made in
  /// By task key: keyHash()es of the points the search knows (rank 0 sends them with mutation
  /// requests, "known") and of the mutants made here: a mutant among them is drawn again.
  std::map<std::string, std::unordered_set<uint64_t>> known;
  std::string resultBuffer;
  MPI_Request resultSending = MPI_REQUEST_NULL;
  std::chrono::microseconds idle{500};
  for (;;) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (!flag) {
      // Asleep between polls: idle ranks of an oversubscribed host must leave the cores to others
      // (0.5 ms after a result, doubling up to 1 ms while no job comes: the next job comes ~2 ms
      // after a result, and with 2 ms a worker took it 3.4-5.4 ms late (median; now 1.7-1.8 ms).
      std::this_thread::sleep_for(idle);
      idle = std::min(2 * idle, std::chrono::microseconds(1000));
      continue;
    }
    idle = std::chrono::microseconds(500);
    trace::event("probe_hit", st.MPI_TAG);
    std::string text = recvText(st);
    trace::event("recv_done", st.MPI_TAG, int64_t(text.size()));
    // The job's clocks start as it arrives: parsing it is part of the work too.
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = cpu::threadSeconds();
    if (st.MPI_TAG == kStop) break;
    if (st.MPI_TAG != kJob) continue;
    nlohmann::json reply;
    MeasureResult r;
    try {
      nlohmann::json j = nlohmann::json::parse(text);
      reply["ticket"] = j.at("ticket");
      const std::string key = j.at("task_key");
      if (j.contains("task")) tasks.insert_or_assign(key, TuneTask::fromJson(j["task"]));
      auto t = tasks.find(key);
      if (t == tasks.end()) LOOM_THROW(RuntimeError) << "tune: rank " << m_rank << " was sent a candidate of unknown task " << key;
      MeasureCandidate c{t->second, j.at("trace"), j.value("test_fault", std::string())};
      MeasureOptions o = optionsFromJson(j.at("options"));
      // A fill-in (a random sample rank 0 did not lower): its cost-model features, computed here
      // as part of its build (in simulation, within the build stand-in's time).
      states = j.value("states", false);
      if (simulate && states) sendState("building");
      // And the points rank 0's search left for the workers ("lower"): their features come back
      // in order ([] for one that does not lower).
      auto lowerOne = [&](const nlohmann::json& trace) -> std::optional<std::vector<float>> {
        try {
          tir::Schedule sch(c.task.func);
          tir::Trace::fromJson(trace).apply(sch);
          return featuresOf(sch.func(), c.task.target);
        } catch (const Error&) {
          return std::nullopt; // it does not replay or lower here (for the candidate: the build reports why)
        }
      };
      const bool others = j.contains("lower") && j["lower"].is_array() && !j["lower"].empty();
      trace::event("job", j.value("ticket", int64_t(0)) & 0xffffff, others ? int64_t(j["lower"].size()) : 0);
      if (j.value("features", false) || others) {
        if (lock) lock->shared();
        if (j.value("features", false))
          if (auto f = lowerOne(c.trace)) reply["features"] = *f;
        if (others) {
          // Final traces to lower, or mutation requests: the evolutionary search's mutants, made
          // here (the point comes back in "made", null where it did not replay).
          auto space = spaces.find(key);
          if (space == spaces.end()) space = spaces.emplace(key, SpaceGenerator::forTarget(c.task.target)).first;
          std::unordered_set<uint64_t>& knownHere = known[key];
          if (j.contains("known") && j["known"].is_array())
            for (const nlohmann::json& h : j["known"])
              if (h.is_number_unsigned()) knownHere.insert(h.get<uint64_t>());
          nlohmann::json lowered = nlohmann::json::array(), made = nlohmann::json::array();
          bool anyMade = false;
          for (const nlohmann::json& t : j["lower"]) {
            LoweredForSearch l = lowerForSearch(c.task, space->second, t, &knownHere);
            lowered.push_back(l.features ? nlohmann::json(*l.features) : nlohmann::json::array());
            anyMade |= !l.made.is_null();
            made.push_back(std::move(l.made));
          }
          reply["lowered"] = std::move(lowered);
          if (anyMade) reply["made"] = std::move(made);
        }
        if (lock) lock->unlock();
      }
      trace::event("lowered");
      if (simulate) {
        // The lowering above is real work, part of the build on a host of its own. Charged (the
        // default): the build stand-in lasts max(build ms, the lowering's CPU time) -- on a host of
        // its own the lowering's CPU time is its wall time -- and the measurement stand-in ends
        // `measure ms` after that, so the time this rank waited for a CPU on the one machine all
        // simulated ranks share is not charged; only a wait longer than the measurement stand-in
        // makes the trial longer (counted: "overran"). Wall (--simulate-lowering wall): the build
        // stand-in ends build ms after the job came or when the lowering ends, whichever is later.
        using Ms = std::chrono::duration<double, std::milli>;
        auto dur = [](double ms) { return std::chrono::duration_cast<std::chrono::steady_clock::duration>(Ms(ms)); };
        const bool charge = m_options.simulateChargeLowering;
        const double lowerCpuMs = 1000 * (cpu::threadSeconds() - cpu0);
        const auto lowered = std::chrono::steady_clock::now();
        auto buildEnd = t0 + dur(charge ? std::max(m_options.simulateBuildMs, lowerCpuMs) : m_options.simulateBuildMs);
        auto measureEnd = buildEnd + dur(m_options.simulateMeasureMs);
        bool overran = false;
        if (!charge) {
          buildEnd = std::max(buildEnd, lowered);
          measureEnd = buildEnd + dur(m_options.simulateMeasureMs);
        } else if (lowered > measureEnd) {
          overran = true;
          measureEnd = lowered;
        }
        reply["sim"] = {{"lower_cpu_ms", lowerCpuMs}, {"lower_wall_ms", Ms(lowered - t0).count()}, {"overran", overran}};
        trace::event("sim_sleep", int64_t(Ms(buildEnd - lowered).count() * 1000), overran);
        std::this_thread::sleep_until(buildEnd);
        if (states) sendState("timing");
        std::this_thread::sleep_until(measureEnd);
        trace::event("sim_woke", int64_t(Ms(std::chrono::steady_clock::now() - measureEnd).count() * 1000));
        // A made-up time that depends on the schedule only, so the search has something to follow.
        double ms = 1.0 + double(std::hash<std::string>()(c.trace.dump()) % 10000) / 1000.0;
        r.timesMs.assign(size_t(std::max(1, o.repeat)), ms);
        r.buildMs = m_options.simulateBuildMs;
        r.host = "sim-" + std::to_string(m_rank);
      } else {
        r = runner.run({c}, o)[0];
      }
    } catch (const std::exception& e) {
      if (lock) lock->unlock();
      r = MeasureResult{};
      r.errorKind = error_kind::kRuntimeError;
      r.errorMessage = std::string("rank ") + std::to_string(m_rank) + ": " + e.what();
    }
    reply["result"] = r.toJson();
    // Sent without waiting (a result with features may be over MPI's eager limit, and a blocking
    // send would spin until rank 0's dispatcher takes it); rank 0 has taken the previous result.
    if (resultSending != MPI_REQUEST_NULL) {
      trace::event("result_wait_prev");
      MPI_Wait(&resultSending, MPI_STATUS_IGNORE);
      trace::event("result_wait_prev_done");
    }
    resultBuffer = reply.dump();
    MPI_Isend(resultBuffer.data(), int(resultBuffer.size()), MPI_CHAR, 0, kResult, MPI_COMM_WORLD, &resultSending);
    trace::event("result_isend", int64_t(resultBuffer.size()));
  }
  if (resultSending != MPI_REQUEST_NULL) MPI_Wait(&resultSending, MPI_STATUS_IGNORE);
  return 0;
}

} // namespace loom::tune::mpi
