// The registry of `loom` subcommands: each file registers its own and runs when selected.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>

namespace loom::cli {

/// A subcommand: `setup` adds it (and its options) to the app; `run` executes it after parsing
/// and returns the exit code (0 ok, 1 user error, 2 internal error).
struct Command {
  std::function<CLI::App*(CLI::App&)> setup;
  std::function<int()> run;
};

/// Called from each subcommand's file (static registration) to add itself.
bool addCommand(Command c);
void registerCommands(CLI::App& app);
/// Runs the subcommand that was parsed, turning loom::Error into "error: ..." and exit code 1.
int runSelected(CLI::App& app);

}  // namespace loom::cli
