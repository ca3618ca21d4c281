// sample_categorical, sample_perfect_tile, sample_compute_location: random choices recorded with
// their decisions so traces replay.
#include "core/schedule/primitive/sampling.h"

#include <functional>
#include <numeric>

#include "core/schedule/Analysis.h"
#include "core/schedule/primitive/compute_location.h"
#include "core/tir/Visitor.h"

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
  // Drawing enumerates tilings (at most 200,000 of n factors each): n is bounded so that they
  // fit in memory (a tuning record with n = 4564 made the record fuzzer allocate 7 GB).
  constexpr int kMaxFactors = 64;
  if (n > kMaxFactors)
    throw ScheduleValueError("sample_perfect_tile: n must be at most " + std::to_string(kMaxFactors) + ", got " +
                                 std::to_string(n),
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
    bool overflow = false;
    for (int64_t t : tiles)
      overflow |= __builtin_mul_overflow(prod, t, &prod);
    bool ok = tiles.size() == size_t(n) && !overflow && prod == *ext &&
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

// --- sample_compute_location --------------------------------------------------------------

namespace {
/// True when every block under `loop` binds its var to spatial iter vars only.
bool isDataParallelLoop(const ForNode* loop) {
  bool used = false;
  for (auto* r : realizesUnder(loop)) {
    const BlockNode* b = r->block.get();
    for (size_t i = 0; i < b->iterVars.size() && i < r->iterValues.size(); ++i) {
      if (!usesVar(r->iterValues[i], loop->loopVar)) continue;
      used = true;
      if (b->iterVars[i].iterType != IterType::DataPar) return false;
    }
  }
  return used;
}
} // namespace

std::vector<std::pair<int64_t, const ForNode*>> computeLocationCandidates(const Schedule& sch,
                                                                          const BlockRV& blockRV) {
  const BlockNode* block = sch.get(blockRV);
  std::vector<std::pair<int64_t, const ForNode*>> out;
  // Step 1. The consumers and the loops of the first one.
  std::vector<const BlockNode*> consumers = consumersOf(sch, block);
  if (consumers.empty()) return out;
  std::vector<const ForNode*> loops = loopsAbove(sch, consumers[0]);
  // Step 2. The deepest of them enclosing every consumer.
  int64_t boundary = -1;
  for (size_t d = 0; d < loops.size(); ++d) {
    bool all = std::all_of(consumers.begin(), consumers.end(),
                           [&](const BlockNode* c) { return isAncestor(sch, loops[d], c); });
    if (!all) break;
    boundary = int64_t(d);
  }
  // Step 3. Stop at the last data-parallel loop: deeper ones would recompute the block inside a
  // reduction.
  int64_t lastDataPar = -1;
  for (int64_t d = 0; d <= boundary; ++d)
    if (isDataParallelLoop(loops[size_t(d)])) lastDataPar = d;
  // Step 4. Keep the loops where compute_at succeeds (tried on a copy of the schedule).
  for (int64_t d = 0; d <= lastDataPar; ++d) {
    Schedule trial = sch;
    Schedule::Silent quiet(trial);
    try {
      computeAt(trial, blockRV, trial.addRV(loops[size_t(d)]));
      out.push_back({d, loops[size_t(d)]});
    } catch (const ScheduleError&) {
    }
  }
  return out;
}

LoopRV sampleComputeLocation(Schedule& sch, const BlockRV& blockRV,
                             std::optional<int64_t> decision) {
  const BlockNode* block = sch.get(blockRV);
  // Step 1. The candidate loops.
  auto candidates = computeLocationCandidates(sch, blockRV);
  if (candidates.empty())
    throw ScheduleValueError("sample_compute_location: block '" + block->name + "' has " +
                                 (consumersOf(sch, block).empty()
                                      ? std::string("no consumer to be computed under")
                                      : std::string("no loop it can be computed at")),
                             sch.func(), {block});
  // Step 2. Take the decision (a depth among the candidates) or draw one.
  size_t pick = 0;
  if (decision) {
    auto it = std::find_if(candidates.begin(), candidates.end(),
                           [&](auto& c) { return c.first == *decision; });
    if (it == candidates.end()) {
      std::string depths;
      for (auto& c : candidates)
        depths += (depths.empty() ? "" : ", ") + std::to_string(c.first);
      throw InvalidDecisionError("sample_compute_location: decision " + std::to_string(*decision) +
                                     " is not a loop depth block '" + block->name +
                                     "' can be computed at (candidates: " + depths + ")",
                                 sch.func(), {block});
    }
    pick = size_t(it - candidates.begin());
  } else {
    std::uniform_int_distribution<size_t> dist(0, candidates.size() - 1);
    pick = dist(sch.rng());
  }
  LoopRV out = sch.addRV(candidates[pick].second);
  sch.record("sample_compute_location", {Value(blockRV)}, {Value(out)},
             Value(candidates[pick].first));
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
  registerInstructionKind(
      {"sample_compute_location",
       {{"block", vt::Block}},
       false,
       true,
       true,
       "Draw a loop the block can be computed at",
       [](Schedule& s, const std::vector<Value>& in, const Value& decision) {
         std::optional<int64_t> d;
         if (decision.kind() == Value::Kind::Int)
           d = decision.asInt();
         else if (!decision.isNone())
           throw InvalidDecisionError("sample_compute_location: the decision must be an int");
         return std::vector<Value>{Value(sampleComputeLocation(s, in[0].asBlock(), d))};
       }});
}

} // namespace loom::tir
