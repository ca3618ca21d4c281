// PassContext: runs passes with their instruments and gathers diagnostics.
#include "core/transform/Pass.h"

#include "core/support/Error.h"

namespace loom::transform {

std::string Diagnostic::str() const {
  std::string s;
  if (span.defined()) s += span.str() + ": ";
  s += severity == Severity::Note ? "note: " : "warning: ";
  if (!pass.empty()) s += "[" + pass + "] ";
  return s + message;
}

tir::PrimFunc PassContext::run(const Pass& pass, const tir::PrimFunc& f) {
  LOOM_ICHECK(f.defined()) << "pass " << pass.name << " given no function";
  if (disabledPasses.count(pass.name)) return f;
  for (auto& in : instruments) in->runBeforePass(pass, f);
  std::string outer = std::exchange(m_current, pass.name);
  tir::PrimFunc out;
  try {
    out = pass.fn(f, *this);
  } catch (...) {
    m_current = outer;
    throw;
  }
  m_current = outer;
  LOOM_ICHECK(out.defined()) << "pass " << pass.name << " returned no function";
  bool changed = !out.same_as(f);
  for (auto& in : instruments) in->runAfterPass(pass, out, changed);
  return out;
}

tir::PrimFunc PassContext::run(const std::vector<Pass>& passes, const tir::PrimFunc& f) {
  tir::PrimFunc cur = f;
  for (auto& p : passes) cur = run(p, cur);
  return cur;
}

void PassContext::note(std::string message, Span span) {
  diagnostics.push_back({Diagnostic::Severity::Note, m_current, std::move(message), std::move(span)});
}
void PassContext::warn(std::string message, Span span) {
  diagnostics.push_back({Diagnostic::Severity::Warning, m_current, std::move(message), std::move(span)});
}

tir::PrimFunc updateBody(const tir::PrimFunc& f, const tir::Stmt& body) {
  if (body.same_as(f->body)) return f;
  return tir::withBody(f, body);
}

Pass bodyPass(std::string name, std::function<tir::Stmt(const tir::Stmt&)> rewrite) {
  return Pass{std::move(name), [rewrite = std::move(rewrite)](const tir::PrimFunc& f, PassContext&) {
                return updateBody(f, rewrite(f->body));
              }};
}

}  // namespace loom::transform
