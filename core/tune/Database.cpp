// Queries shared by every Database.
#include "core/tune/Database.h"

#include <algorithm>
#include <map>
#include <optional>

namespace loom::tune {

std::optional<TuningRecord> Database::best(const std::string& workload,
                                           const std::string& target) const {
  auto top = topK(workload, target, 1);
  if (top.empty()) return std::nullopt;
  return top.front();
}

std::vector<TuningRecord> Database::topK(const std::string& workload, const std::string& target,
                                         size_t k) const {
  // The latest record of each schedule, in the order the schedules were first measured. Once
  // schedules were re-timed, the others' older (possibly lucky) times no longer compete with
  // them: the candidates are the re-timed schedules and those first measured after the last
  // re-timing.
  std::vector<TuningRecord> rs = records(workload, target);
  std::optional<size_t> lastRetime;
  for (size_t i = 0; i < rs.size(); ++i)
    if (rs[i].retime) lastRetime = i;
  std::vector<TuningRecord> latest;
  std::vector<bool> candidate;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < rs.size(); ++i) {
    auto [it, inserted] = index.emplace(rs[i].traceKey(), latest.size());
    if (inserted) {
      latest.push_back(rs[i]);
      candidate.push_back(!lastRetime || i > *lastRetime);
    } else {
      latest[it->second] = rs[i];
    }
    if (rs[i].retime) candidate[it->second] = true;
  }
  std::vector<TuningRecord> ok;
  for (size_t i = 0; i < latest.size(); ++i)
    if (candidate[i] && latest[i].ok()) ok.push_back(latest[i]);
  std::stable_sort(ok.begin(), ok.end(),
                   [](const TuningRecord& a, const TuningRecord& b) { return a.meanMs() < b.meanMs(); });
  if (ok.size() > k) ok.resize(k);
  return ok;
}

size_t Database::trialCount(const std::string& workload, const std::string& target) const {
  size_t n = 0;
  for (auto& r : records(workload, target)) n += !r.retime;
  return n;
}

bool Database::hasTrace(const std::string& workload, const std::string& target,
                        const std::string& traceKey) const {
  for (auto& r : records(workload, target))
    if (r.traceKey() == traceKey) return true;
  return false;
}

} // namespace loom::tune
