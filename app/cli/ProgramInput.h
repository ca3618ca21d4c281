// Where a subcommand's tensor program comes from: a .tir file or a named workload preset.
#pragma once
#include <optional>
#include <string>

#include "core/tir/Function.h"
#include "core/topi/Workloads.h"

namespace loom::cli {

/// The program a subcommand works on, and the preset it was built from (if any).
struct ProgramInput {
  tir::PrimFunc func;
  std::optional<topi::WorkloadSpec> workload;
  std::string origin; ///< the file name or the workload spec, for messages
};

/// Reads and parses `file` (ParseError with file:line:col on bad text; Error when unreadable).
tir::PrimFunc loadTirFile(const std::string& file);

/// The program named by exactly one of `file` and `workloadSpec` (throws Error otherwise).
/// `command` names the subcommand in messages.
ProgramInput loadProgram(const std::string& command, const std::string& file,
                         const std::string& workloadSpec);

/// The `--list-workloads` listing: each workload's name, description and parameters.
std::string workloadListing();

} // namespace loom::cli
