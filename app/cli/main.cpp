// `loom`: the command-line face of the driver API. Each subcommand lives in its own file.
#include <CLI/CLI.hpp>
#include <iostream>

#include "app/cli/Commands.h"
#include "codegen/LLVMInfo.h"
#include "core/support/Error.h"
#include "runtime/DeviceAPI.h"

int main(int argc, char** argv) {
  CLI::App app{"loom: a deep-learning compiler"};
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "Print the Loom and LLVM versions");
  loom::cli::registerCommands(app);
  // GPU device plugins next to this binary (also for tuning workers, which inherit it).
  loom::runtime::useDevicePluginsBesideProgram();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;  // a bad command line is a user error
  }
  if (version) {
    std::cout << "loom " << LOOM_VERSION << " (LLVM " << loom::codegen::llvmVersion() << ", host cpu "
              << loom::codegen::hostCpuName() << ")\n";
    return 0;
  }
  if (app.get_subcommands().empty()) {
    std::cout << app.help();
    return 0;
  }
  return loom::cli::runSelected(app);
}
