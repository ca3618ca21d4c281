// Passes over PrimFuncs, the context that runs them, its instruments and its diagnostic list.
#pragma once
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/support/Span.h"
#include "core/tir/Function.h"

namespace loom::transform {

class PassContext;

/// One lowering step: a kebab-case name (used by the CLI, --print-after-all and the Studio's pass
/// list) and a function PrimFunc -> PrimFunc. A pass that changes nothing returns its input
/// (the same node), which is how instruments tell "unchanged" apart.
struct Pass {
  std::string name;
  std::function<tir::PrimFunc(const tir::PrimFunc&, PassContext&)> fn;
};

/// A note a pass leaves for the user ("loop j not vectorized: ...").
struct Diagnostic {
  enum class Severity { Note, Warning };
  Severity severity = Severity::Note;
  std::string pass;     ///< the pass that emitted it
  std::string message;  ///< one line, names the offending loop/buffer
  Span span;            ///< where that loop/buffer came from, when known
  /// "file:line:col: note: [pass] message" (location omitted when unknown).
  std::string str() const;
};

/// Hooks around every pass a PassContext runs (TVM's PassInstrument, Halide's LoweringLogger).
class PassInstrument {
public:
  virtual ~PassInstrument() = default;
  virtual void runBeforePass(const Pass& pass, const tir::PrimFunc& before) {}
  /// `changed` is false when the pass returned its input node unchanged.
  virtual void runAfterPass(const Pass& pass, const tir::PrimFunc& after, bool changed) {}
};

/// Runs passes: calls the instruments around each, skips disabled passes, collects diagnostics.
class PassContext {
public:
  std::vector<std::shared_ptr<PassInstrument>> instruments;
  /// Names of passes to skip (e.g. {"loop-partition"}).
  std::set<std::string> disabledPasses;
  std::vector<Diagnostic> diagnostics;

  /// Runs `pass` on `f` (or returns `f` when the pass is disabled).
  tir::PrimFunc run(const Pass& pass, const tir::PrimFunc& f);
  /// Runs `passes` in order.
  tir::PrimFunc run(const std::vector<Pass>& passes, const tir::PrimFunc& f);

  /// Adds a note attributed to the pass currently running.
  void note(std::string message, Span span = {});
  void warn(std::string message, Span span = {});
  /// The name of the pass being run, or "" outside run().
  const std::string& currentPass() const { return m_current; }

private:
  std::string m_current;
};

/// `f` with `body`, or `f` itself (same node) when `body` is the body it already has.
tir::PrimFunc updateBody(const tir::PrimFunc& f, const tir::Stmt& body);
/// A pass whose function only rewrites the body.
Pass bodyPass(std::string name, std::function<tir::Stmt(const tir::Stmt&)> rewrite);

}  // namespace loom::transform
