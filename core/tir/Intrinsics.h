// The registry of named intrinsics that Call nodes refer to: one place to add a new one.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace loom::tir {

/// What the compiler knows of an intrinsic. `evalFloat` is its float64 reference semantics
/// (used by the interpreter and constant folding); `numArgs` is -1 for variadic ones.
struct Intrinsic {
  std::string name;
  int numArgs = 1;
  bool pure = true;
  std::function<double(const std::vector<double>&)> evalFloat;
};

/// Registers (or replaces) an intrinsic.
void registerIntrinsic(Intrinsic info);
/// The intrinsic called `name`, or nullptr.
const Intrinsic* findIntrinsic(const std::string& name);
/// Every registered name, sorted.
std::vector<std::string> intrinsicNames();

}  // namespace loom::tir
