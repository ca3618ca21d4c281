// Subcommand registry and the error-to-exit-code policy shared by every subcommand.
#include "app/cli/Commands.h"

#include <iostream>
#include <vector>

#include "core/support/Error.h"

namespace loom::cli {

namespace {
struct Entry {
  Command cmd;
  CLI::App* sub = nullptr;
};
std::vector<Entry>& entries() {
  static std::vector<Entry> e;
  return e;
}
}  // namespace

bool addCommand(Command c) {
  entries().push_back({std::move(c), nullptr});
  return true;
}

void registerCommands(CLI::App& app) {
  for (auto& e : entries()) e.sub = e.cmd.setup(app);
}

int runSelected(CLI::App& app) {
  for (auto& e : entries()) {
    if (!e.sub || !e.sub->parsed()) continue;
    try {
      return e.cmd.run();
    } catch (const InternalError& err) {
      std::cerr << "loom: internal error: " << err.what() << "\n";
      return 2;
    } catch (const Error& err) {
      std::cerr << err.formatted() << "\n";
      return 1;
    } catch (const std::exception& err) {
      std::cerr << "loom: internal error: " << err.what() << "\n";
      return 2;
    }
  }
  return 0;
}

}  // namespace loom::cli
