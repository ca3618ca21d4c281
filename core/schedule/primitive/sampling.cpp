// sample_categorical, sample_perfect_tile: random choices recorded with their decisions so traces
// replay.
#include "core/schedule/primitive/sampling.h"

#include <functional>
#include <numeric>

#include "core/schedule/Analysis.h"

namespace loom::tir {

ExprRV sampleCategorical(Schedule& sch, const std::vector<int64_t>& candidates,
                         const std::vector<double>& probs, std::optional<int64_t> decision) {
  // Step 1. Check the distribution.
  if (candidates.empty() || candidates.size() != probs.size())
    throw ScheduleValueError("sample_categorical: " + std::to_string(candidates.size()) +
                             " candidates but " + std::to_string(probs.size()) +
                             " probabilities (need the same, at least one)");
  for (double p : probs)
    if (!(p >= 0))
      throw ScheduleValueError("sample_categorical: probabilities must be non-negative");
  double total = std::accumulate(probs.begin(), probs.end(), 0.0);
  if (!(total > 0)) throw ScheduleValueError("sample_categorical: the probabilities sum to 0");
  // Step 2. Draw (or take the decision).
  int64_t idx = 0;
  if (decision) {
    idx = *decision;
    if (idx < 0 || size_t(idx) >= candidates.size())
      throw InvalidDecisionError("sample_categorical: decision " + std::to_string(idx) +
                                 " is not an index into " + std::to_string(candidates.size()) +
                                 " candidates");
  } else {
    std::discrete_distribution<int64_t> dist(probs.begin(), probs.end());
    idx = dist(sch.rng());
  }
  ExprRV out = sch.addExprRV(candidates[size_t(idx)]);
  std::vector<Value> cands(candidates.begin(), candidates.end()), ps(probs.begin(), probs.end());
  sch.record("sample_categorical", {Value(cands), Value(ps)}, {Value(out)}, Value(idx));
  return out;
}

std::vector<ExprRV> samplePerfectTile(Schedule& sch, const LoopRV& loopRV, int n,
                                      int64_t maxInnermostFactor,
                                      std::optional<std::vector<int64_t>> decision) {
  const ForNode* loop = sch.get(loopRV);
  // Step 1. Check the request.
  if (n < 1)
    throw ScheduleValueError("sample_perfect_tile: n must be at least 1, got " + std::to_string(n),
                             sch.func());
  std::optional<int64_t> ext = constIntValue(loop->extent);
  if (!ext)
    throw ScheduleValueError("sample_perfect_tile: loop '" + loop->loopVar->name +
                                 "' has no constant extent",
                             sch.func(), {loop});
  // Step 2. Take the decision, or draw one among all tilings.
  std::vector<int64_t> tiles;
  if (decision) {
    tiles = *decision;
    int64_t prod = 1;
    for (int64_t t : tiles)
      prod *= t;
    bool ok = tiles.size() == size_t(n) && prod == *ext &&
              std::all_of(tiles.begin(), tiles.end(), [](int64_t t) { return t > 0; });
    if (!ok)
      throw InvalidDecisionError("sample_perfect_tile: decision does not tile loop '" +
                                     loop->loopVar->name + "' of extent " + std::to_string(*ext) +
                                     " into " + std::to_string(n) + " factors",
                                 sch.func(), {loop});
  } else {
    std::vector<std::vector<int64_t>> all;
    std::vector<int64_t> cur;
    std::function<void(int64_t)> rec = [&](int64_t rest) {
      if (all.size() > 200000) return;
      if (int(cur.size()) == n - 1) {
        if (maxInnermostFactor > 0 && rest > maxInnermostFactor) return;
        cur.push_back(rest);
        all.push_back(cur);
        cur.pop_back();
        return;
      }
      for (int64_t d = 1; d <= rest; ++d)
        if (rest % d == 0) {
          cur.push_back(d);
          rec(rest / d);
          cur.pop_back();
        }
    };
    rec(*ext);
    if (all.empty())
      throw ScheduleValueError(
          "sample_perfect_tile: no tiling of extent " + std::to_string(*ext) +
              " has an innermost factor <= " + std::to_string(maxInnermostFactor),
          sch.func(), {loop});
    std::uniform_int_distribution<size_t> pick(0, all.size() - 1);
    tiles = all[pick(sch.rng())];
  }
  std::vector<ExprRV> out;
  for (int64_t t : tiles)
    out.push_back(sch.addExprRV(t));
  std::vector<Value> d(tiles.begin(), tiles.end());
  sch.record("sample_perfect_tile", {Value(loopRV), Value(int64_t(n)), Value(maxInnermostFactor)},
             Value::list(out).asList(), Value(d));
  return out;
}

// --- Trace instructions -------------------------------------------------------------------

void registerSamplingInstructions() {
  registerInstructionKind({"sample_categorical",
                           {{"candidates", vt::List, vt::Int, std::nullopt, true},
                            {"probs", vt::List, vt::Float, std::nullopt, true}},
                           false,
                           true,
                           true,
                           "Draw one of the candidates",
                           [](Schedule& s, const std::vector<Value>& in, const Value& decision) {
                             std::vector<int64_t> c;
                             std::vector<double> p;
                             for (auto& v : in[0].asList())
                               c.push_back(v.asInt());
                             for (auto& v : in[1].asList())
                               p.push_back(v.asFloat());
                             std::optional<int64_t> d;
                             if (decision.kind() == Value::Kind::Int)
                               d = decision.asInt();
                             else if (!decision.isNone())
                               throw InvalidDecisionError(
                                   "sample_categorical: the decision must be an int");
                             return std::vector<Value>{Value(sampleCategorical(s, c, p, d))};
                           }});
  registerInstructionKind(
      {"sample_perfect_tile",
       {{"loop", vt::Loop},
        {"n", vt::Int, 0, std::nullopt, true},
        {"max_innermost_factor", vt::Int, 0, Value(16), true}},
       true,
       true,
       true,
       "Draw factors that tile a loop exactly",
       [](Schedule& s, const std::vector<Value>& in, const Value& decision) {
         std::optional<std::vector<int64_t>> d;
         if (decision.kind() == Value::Kind::List) {
           d.emplace();
           for (auto& v : decision.asList()) {
             if (v.kind() != Value::Kind::Int)
               throw InvalidDecisionError(
                   "sample_perfect_tile: the decision must be a list of ints");
             d->push_back(v.asInt());
           }
         } else if (!decision.isNone()) {
           throw InvalidDecisionError("sample_perfect_tile: the decision must be a list of ints");
         }
         return Value::list(
                    samplePerfectTile(s, in[0].asLoop(), int(in[1].asInt()), in[2].asInt(), d))
             .asList();
       }});
}

} // namespace loom::tir
