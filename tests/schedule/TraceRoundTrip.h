// Test helper: a scheduled function's trace reproduces it as a script, through JSON and by replay.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "ScheduleTestUtil.h"

namespace loom::tir::testing {

/// Runs `script` on a schedule of `f` (seeded with `seed`), then checks that the printed trace
/// re-run as a script, the JSON round trip applied to a fresh schedule, and a plain replay all
/// give a structurally equal function. Returns "" when they do, else what went wrong.
inline std::string traceRoundTripError(const PrimFunc& f, const std::string& script,
                                       uint64_t seed = 1) {
  Schedule sch(f, seed);
  ScriptResult r = runScript(sch, script, "s.py");
  if (!r.ok) return "script failed: " + r.message;
  std::string text = sch.trace().str();
  Schedule again(f, seed + 1000);
  ScriptResult r2 = runScript(again, text, "trace.py");
  if (!r2.ok) return "printed trace failed: " + r2.message + "\n" + text;
  if (!structuralEqual(again.func(), sch.func()))
    return "printed trace gives another function:\n" + structuralDiff(again.func(), sch.func());
  Trace back = Trace::fromJson(nlohmann::json::parse(sch.trace().toJson().dump()));
  Schedule fresh(f, seed + 2000);
  back.apply(fresh);
  if (!structuralEqual(fresh.func(), sch.func()))
    return "JSON trace gives another function:\n" + structuralDiff(fresh.func(), sch.func());
  Schedule replay(f, seed + 3000);
  sch.trace().apply(replay);
  if (!structuralEqual(replay.func(), sch.func())) return "replay gives another function";
  return {};
}

} // namespace loom::tir::testing
