// Loading a subcommand's program from a .tir file or a workload preset.
#include "app/cli/ProgramInput.h"

#include <fstream>
#include <sstream>

#include "core/support/Error.h"
#include "core/tir/Parser.h"

namespace loom::cli {

tir::PrimFunc loadTirFile(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) LOOM_THROW(Error) << file << ": cannot open file";
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) LOOM_THROW(Error) << file << ": read error";
  return tir::parseFunc(text.str(), file);
}

ProgramInput loadProgram(const std::string& command, const std::string& file,
                         const std::string& workloadSpec) {
  if (file.empty() == workloadSpec.empty())
    LOOM_THROW(Error) << command << ": give either a .tir FILE or --workload SPEC"
                      << (file.empty() ? "" : ", not both");
  ProgramInput p;
  if (!file.empty()) {
    p.func = loadTirFile(file);
    p.origin = file;
  } else {
    p.workload = topi::parseWorkloadSpec(workloadSpec);
    p.func = topi::buildWorkload(*p.workload);
    p.origin = p.workload->str();
  }
  return p;
}

std::string workloadListing() {
  std::ostringstream os;
  for (auto& w : topi::allWorkloads()) {
    os << w.name << "\n    " << w.description << "\n";
    for (auto& p : w.params) {
      std::string nv = p.name + "=" + std::to_string(p.defaultValue);
      os << "    " << nv << std::string(nv.size() < 14 ? 14 - nv.size() : 1, ' ') << p.help << "\n";
    }
  }
  return os.str();
}

} // namespace loom::cli
