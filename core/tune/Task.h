// A tuning task: one tensor program (a workload preset or any PrimFunc) on one target.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/tir/Function.h"

namespace loom::tune {

/// What the tuner searches schedules for. Presets are rebuilt from their spec in the worker;
/// other functions (e.g. fused groups of a model) travel as TVMScript text. `weight` counts how
/// often a model runs the task (whole-model tuning allocates trials by it).
struct TuneTask {
  std::string key;          ///< the record key: the preset spec, or "tir:<structural hash>"
  std::string target = "llvm";
  tir::PrimFunc func;       ///< the unscheduled function ("main")
  std::string workloadSpec; ///< the preset spec when the task is a preset, else ""
  int numInputs = 1;        ///< leading parameters that are inputs (the rest are outputs)
  double flops = 0;         ///< floating-point operations of one call (0 when unknown)
  int weight = 1;
  /// Whole-model tuning: the model kernels this task stands for, and the graph ops of the first
  /// (not part of the JSON form).
  std::vector<std::string> kernels;
  std::vector<std::string> ops;

  /// A preset ("matmul:M=64,N=64,K=64"); throws topi::WorkloadError for a bad spec.
  static TuneTask fromWorkload(const std::string& spec, const std::string& target = "llvm");
  /// Any PrimFunc whose first `numInputs` parameters are inputs.
  static TuneTask fromFunc(const tir::PrimFunc& f, int numInputs, const std::string& target = "llvm",
                           double flops = 0);

  /// {"key", "target", "workload" | "tir", "num_inputs", "flops", "weight"}; fromJson rebuilds
  /// the function (throws ParseError / WorkloadError on bad input).
  nlohmann::json toJson() const;
  static TuneTask fromJson(const nlohmann::json& j);
};

} // namespace loom::tune
