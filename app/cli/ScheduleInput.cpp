// Reading and applying a schedule script file for `loom lower --schedule` and `loom verify`.
#include "app/cli/ScheduleInput.h"

#include <fstream>
#include <sstream>

#include "core/driver/BuildOperator.h"
#include "core/support/Error.h"

namespace loom::cli {

tir::Schedule applyScheduleFile(const tir::PrimFunc& func, const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) LOOM_THROW(Error) << file << ": cannot open file";
  std::ostringstream text;
  text << in.rdbuf();
  return driver::applySchedule(func, text.str(), file);
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
