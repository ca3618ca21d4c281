// Reading and applying a schedule script file for `loom lower --schedule` and `loom verify`.
#include "app/cli/ScheduleInput.h"

#include <fstream>
#include <sstream>

#include "core/schedule/Script.h"
#include "core/support/Error.h"

namespace loom::cli {

namespace {
/// A script failure as an Error: the location and message are already formatted by runScript.
class ScriptError : public Error {
public:
  explicit ScriptError(const tir::ScriptResult& r)
      : Error(r.error, r.span), m_kind(r.errorKind), m_detail(r.detail) {}
  const char* kind() const override { return m_kind.c_str(); }
  /// The message and, for a refused primitive, the IR with the offending loop/block underlined.
  std::string detailedMessage() const override { return m_detail; }

private:
  std::string m_kind, m_detail;
};
} // namespace

tir::Schedule applyScheduleFile(const tir::PrimFunc& func, const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) LOOM_THROW(Error) << file << ": cannot open file";
  std::ostringstream text;
  text << in.rdbuf();
  tir::Schedule sch(func);
  tir::ScriptResult r = tir::runScript(sch, text.str(), file);
  if (!r.ok) throw ScriptError(r);
  return sch;
}

ScheduledProgram applyScheduleOption(const tir::PrimFunc& func, const std::string& file,
                                     bool needTrace) {
  if (file.empty()) {
    if (needTrace) LOOM_THROW(Error) << "lower: --emit trace needs --schedule S.py";
    return {func, {}};
  }
  tir::Schedule sch = applyScheduleFile(func, file);
  return {sch.func(), sch.trace().str()};
}

} // namespace loom::cli
