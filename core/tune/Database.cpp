// Queries shared by every Database.
#include "core/tune/Database.h"

#include <algorithm>
#include <map>

namespace loom::tune {

std::optional<TuningRecord> Database::best(const std::string& workload,
                                           const std::string& target) const {
  auto top = topK(workload, target, 1);
  if (top.empty()) return std::nullopt;
  return top.front();
}

std::vector<TuningRecord> Database::topK(const std::string& workload, const std::string& target,
                                         size_t k) const {
  // The latest record of each schedule, in the order the schedules were first measured.
  std::vector<TuningRecord> latest;
  std::map<std::string, size_t> index;
  for (auto& r : records(workload, target)) {
    auto [it, inserted] = index.emplace(r.traceKey(), latest.size());
    if (inserted) latest.push_back(r);
    else latest[it->second] = r;
  }
  std::vector<TuningRecord> ok;
  for (auto& r : latest)
    if (r.ok()) ok.push_back(r);
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
