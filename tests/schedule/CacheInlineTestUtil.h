// Helpers of the compute_at / compute_inline / cache tests: trace round trip, expected errors.
#pragma once
#include <nlohmann/json.hpp>

#include "ScheduleTestUtil.h"

namespace loom::tir::testing {

/// Runs `script` on `f`, then checks that re-running the printed trace, replaying its JSON form
/// and applying it to a fresh schedule all give a structurally equal function.
inline void checkTraceRoundTrip(const PrimFunc& f, const std::string& script) {
  Schedule sch(f);
  ScriptResult r = runScript(sch, script, "s.py");
  QVERIFY2(r.ok, (r.message + "\n" + r.detail).c_str());
  std::string text = sch.trace().str();
  Schedule again(f);
  ScriptResult r2 = runScript(again, text, "trace.py");
  QVERIFY2(r2.ok, (text + r2.message).c_str());
  QVERIFY2(structuralEqual(again.func(), sch.func()), text.c_str());
  QCOMPARE(QString::fromStdString(again.trace().str()), QString::fromStdString(text));
  Trace back = Trace::fromJson(nlohmann::json::parse(sch.trace().toJson().dump()));
  Schedule fresh(f);
  back.apply(fresh);
  QVERIFY2(structuralEqual(fresh.func(), sch.func()), text.c_str());
}

/// Runs `script` on the parsed `func` and checks the error kind and that the message contains
/// `text`.
inline void expectError(const std::string& func, const std::string& script, const char* kind,
                        const char* text) {
  auto [k, msg] = scriptError(parseFunc(func), script);
  QVERIFY2(k == kind, (k + ": " + msg).c_str());
  QVERIFY2(msg.find(text) != std::string::npos, msg.c_str());
}

} // namespace loom::tir::testing
