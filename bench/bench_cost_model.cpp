// Does the XGBoost cost model rank schedules better than chance? Measures random candidates of a
// workload's search space, trains on part of them and reports top-k recall and rank correlation
// on the held-out rest (averaged over random splits), next to what a random ranking gives.
//   bench_cost_model [WORKLOAD] [CANDIDATES]   (default matmul:M=256,N=256,K=256, 120)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>

#include "core/tune/CostModel.h"
#include "core/tune/SearchStrategy.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/runner/ProcessRunner.h"

using namespace loom;
using namespace loom::tune;

namespace {

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < idx.size(); ++i) r[idx[i]] = double(i);
  return r;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  auto ra = ranks(a), rb = ranks(b);
  double n = double(a.size()), d = 0;
  for (size_t i = 0; i < a.size(); ++i) d += (ra[i] - rb[i]) * (ra[i] - rb[i]);
  return 1 - 6 * d / (n * (n * n - 1));
}

/// |predicted top-k ∩ true top-k| / k, scores: higher = predicted faster; times: lower = faster.
double topKRecall(const std::vector<double>& scores, const std::vector<double>& times, size_t k) {
  std::vector<size_t> byScore(scores.size()), byTime(times.size());
  std::iota(byScore.begin(), byScore.end(), 0);
  std::iota(byTime.begin(), byTime.end(), 0);
  std::sort(byScore.begin(), byScore.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  std::sort(byTime.begin(), byTime.end(), [&](size_t a, size_t b) { return times[a] < times[b]; });
  size_t hit = 0;
  for (size_t i = 0; i < k; ++i)
    hit += std::find(byTime.begin(), byTime.begin() + long(k), byScore[i]) != byTime.begin() + long(k);
  return double(hit) / double(k);
}

} // namespace

int main(int argc, char** argv) {
  std::string spec = argc > 1 ? argv[1] : "matmul:M=256,N=256,K=256";
  size_t count = argc > 2 ? size_t(std::atoi(argv[2])) : 120;
  TuneTask task = TuneTask::fromWorkload(spec);
  SpaceGenerator space = SpaceGenerator::defaultCpu();
  std::vector<Candidate> cands;
  std::set<std::string> seen;
  for (uint64_t seed = 1; cands.size() < count && seed < 20 * count; ++seed) {
    auto p = space.sample(task.func, seed);
    if (!p || seen.count(p->key())) continue;
    seen.insert(p->key());
    if (auto c = makeCandidate(std::move(*p), task.target)) cands.push_back(std::move(*c));
  }
  std::printf("workload %s: measuring %zu random candidates of the search space\n", task.key.c_str(), cands.size());
  std::vector<MeasureCandidate> inputs;
  for (auto& c : cands) inputs.push_back({task, c.point.finalJson(), ""});
  ProcessRunner runner({LOOM_BINARY_DIR "/bin/loom", "tune-worker"}, false);
  MeasureOptions mo;
  mo.repeat = 3;
  mo.minRepeatMs = 10;
  auto results = runner.run(inputs, mo);
  std::vector<std::vector<float>> x;
  std::vector<double> t;
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].ok()) {
      x.push_back(cands[i].features);
      t.push_back(results[i].meanMs());
    }
  std::printf("%zu measured ok; fastest %.4f ms, slowest %.4f ms\n", t.size(), *std::min_element(t.begin(), t.end()),
              *std::max_element(t.begin(), t.end()));
  const int splits = 10;
  std::mt19937_64 rng(42);
  double recall5 = 0, recall10 = 0, rho = 0, rand5 = 0, rand10 = 0;
  size_t heldOut = 0;
  for (int s = 0; s < splits; ++s) {
    std::vector<size_t> idx(x.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::shuffle(idx.begin(), idx.end(), rng);
    size_t nTrain = idx.size() * 2 / 3;
    std::vector<std::vector<float>> xt, xh;
    std::vector<double> tt, th;
    for (size_t i = 0; i < idx.size(); ++i) {
      (i < nTrain ? xt : xh).push_back(x[idx[i]]);
      (i < nTrain ? tt : th).push_back(t[idx[i]]);
    }
    heldOut = xh.size();
    auto model = makeXGBoostModel();
    model->update(xt, tt);
    auto pred = model->predict(xh);
    std::vector<double> negT;
    for (double v : th) negT.push_back(-v);
    std::vector<double> randomScores(xh.size());
    for (auto& v : randomScores) v = std::uniform_real_distribution<double>(0, 1)(rng);
    recall5 += topKRecall(pred, th, 5);
    recall10 += topKRecall(pred, th, 10);
    rand5 += topKRecall(randomScores, th, 5);
    rand10 += topKRecall(randomScores, th, 10);
    rho += spearman(pred, negT);
  }
  std::printf("held-out %zu of %zu, %d random splits:\n", heldOut, x.size(), splits);
  std::printf("  top-5 recall:  model %.2f, random %.2f (expected %.2f)\n", recall5 / splits, rand5 / splits,
              5.0 / double(heldOut));
  std::printf("  top-10 recall: model %.2f, random %.2f (expected %.2f)\n", recall10 / splits, rand10 / splits,
              10.0 / double(heldOut));
  std::printf("  rank correlation (Spearman) of predicted score and speed: %.2f (random: 0)\n", rho / splits);
  return 0;
}
