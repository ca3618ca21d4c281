// The pass instruments: print-after-all, time-passes, and the recorder behind the Studio's pass list.
#pragma once
#include <chrono>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/transform/Pass.h"

namespace loom::transform {

/// Prints "// after <pass-name>" and the function after every pass that changed it.
class PrintAfterAll : public PassInstrument {
public:
  /// `printer` turns a function into text; the default is tir::printFunc.
  explicit PrintAfterAll(std::ostream& os, std::function<std::string(const tir::PrimFunc&)> printer = {});
  void runAfterPass(const Pass& pass, const tir::PrimFunc& after, bool changed) override;

private:
  std::ostream& m_os;
  std::function<std::string(const tir::PrimFunc&)> m_printer;
};

/// Measures the wall time of every pass; report() is a table in run order, with a total.
class TimePasses : public PassInstrument {
public:
  struct Entry {
    std::string pass;
    double seconds = 0;
    bool changed = false;
  };
  void runBeforePass(const Pass& pass, const tir::PrimFunc& before) override;
  void runAfterPass(const Pass& pass, const tir::PrimFunc& after, bool changed) override;
  const std::vector<Entry>& entries() const { return m_entries; }
  double totalSeconds() const;
  /// "  ms   %  pass" lines, one per pass run, then the total.
  std::string report() const;

private:
  std::chrono::steady_clock::time_point m_start;
  std::vector<Entry> m_entries;
};

/// Keeps (pass name, function after, changed?) for each pass run, for the Studio's pass list.
class PassRecorder : public PassInstrument {
public:
  struct Step {
    std::string pass;
    tir::PrimFunc after;
    bool changed = false;
  };
  void runBeforePass(const Pass& pass, const tir::PrimFunc& before) override;
  void runAfterPass(const Pass& pass, const tir::PrimFunc& after, bool changed) override;
  /// The function the first pass was given (undefined before any pass ran).
  const tir::PrimFunc& input() const { return m_input; }
  const std::vector<Step>& steps() const { return m_steps; }
  void clear();

private:
  tir::PrimFunc m_input;
  std::vector<Step> m_steps;
};

}  // namespace loom::transform
