// The pass instruments: print-after-all, time-passes, and the pass recorder.
#include "core/transform/Instruments.h"

#include <cstdio>
#include <ostream>

#include "core/tir/Printer.h"

namespace loom::transform {

PrintAfterAll::PrintAfterAll(std::ostream& os, std::function<std::string(const tir::PrimFunc&)> printer)
    : m_os(os), m_printer(std::move(printer)) {
  if (!m_printer) m_printer = [](const tir::PrimFunc& f) { return tir::printFunc(f); };
}

void PrintAfterAll::runAfterPass(const Pass& pass, const tir::PrimFunc& after, bool changed) {
  if (!changed) return;
  m_os << "// after " << pass.name << "\n" << m_printer(after);
  m_os << "\n";
  m_os.flush();
}

void TimePasses::runBeforePass(const Pass&, const tir::PrimFunc&) { m_start = std::chrono::steady_clock::now(); }

void TimePasses::runAfterPass(const Pass& pass, const tir::PrimFunc&, bool changed) {
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  m_entries.push_back({pass.name, s, changed});
}

double TimePasses::totalSeconds() const {
  double t = 0;
  for (auto& e : m_entries) t += e.seconds;
  return t;
}

std::string TimePasses::report() const {
  double total = totalSeconds();
  std::string out = "     time (ms)    %   pass\n";
  char line[256];
  for (auto& e : m_entries) {
    double pct = total > 0 ? 100.0 * e.seconds / total : 0.0;
    std::snprintf(line, sizeof line, "  %12.3f  %5.1f  %s%s\n", e.seconds * 1e3, pct, e.pass.c_str(),
                  e.changed ? "" : " (unchanged)");
    out += line;
  }
  std::snprintf(line, sizeof line, "  %12.3f  100.0  total\n", total * 1e3);
  return out + line;
}

void PassRecorder::runBeforePass(const Pass&, const tir::PrimFunc& before) {
  if (!m_input.defined()) m_input = before;
}

void PassRecorder::runAfterPass(const Pass& pass, const tir::PrimFunc& after, bool changed) {
  m_steps.push_back({pass.name, after, changed});
}

void PassRecorder::clear() {
  m_input = tir::PrimFunc();
  m_steps.clear();
}

}  // namespace loom::transform
