// PrimFunc (a tensor program with buffer parameters) and IRModule (named PrimFuncs).
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/tir/Stmt.h"

namespace loom::tir {

/// A tensor program. `params` are handle (or scalar) Vars; `bufferMap` gives the Buffer each
/// handle param is viewed as, in parameter order. `attrs` holds "global_symbol", "tir.noalias", ...
struct PrimFuncNode : public Object {
  std::string name;
  std::vector<Var> params;
  std::vector<std::pair<Var, Buffer>> bufferMap;
  Stmt body;
  Annotations attrs;
  Span span;

  /// The buffer bound to param `v`, or an undefined Buffer.
  Buffer bufferOf(const Var& v) const;
  /// The buffer bound to parameter number `i` (which must be a handle param).
  Buffer paramBuffer(size_t i) const;
};
using PrimFunc = Ref<PrimFuncNode>;

/// A PrimFunc with the given parts; `name` is also stored as attr "global_symbol".
PrimFunc makePrimFunc(std::string name, std::vector<Var> params,
                      std::vector<std::pair<Var, Buffer>> bufferMap, Stmt body, Annotations attrs = {});
/// A copy of `f` with a new body (same params, buffers and attrs).
PrimFunc withBody(const PrimFunc& f, Stmt body);

/// Named PrimFuncs, kept in name order so printing is deterministic.
struct IRModule {
  std::map<std::string, PrimFunc> functions;

  void add(const PrimFunc& f) { functions[f->name] = f; }
  PrimFunc lookup(const std::string& name) const;
  /// The single function of a one-function module ("main" in the usual case).
  PrimFunc mainFunction() const;
};

}  // namespace loom::tir
