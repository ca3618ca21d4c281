// The library of named workloads (presets): parameterized TE programs with FLOP counts and
// plain C++ references, addressed by specs like "matmul:M=64,N=64,K=64".
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/support/Error.h"
#include "core/te/Tensor.h"
#include "core/tir/Function.h"
#include "runtime/NDArray.h"

namespace loom::topi {

/// A bad workload spec or parameter set: names the workload, parameter or value at fault.
LOOM_DECLARE_ERROR(WorkloadError, ValueError);

/// One integer parameter with its default and smallest allowed value.
struct WorkloadParam {
  std::string name;
  int64_t defaultValue = 1;
  int64_t minValue = 1;
  std::string help;
};

/// Parameter values by name; a complete map has every parameter of the workload.
using ParamMap = std::map<std::string, int64_t>;

/// A named workload. `compute` returns the PrimFunc's arguments, inputs first (the first
/// `numInputs` tensors) then outputs; it throws WorkloadError when the parameters do not fit
/// together (e.g. groups not dividing channels). `reference` fills `outputs` from `inputs`
/// (float32 arrays shaped like those tensors) in plain C++, accumulating in float64.
struct Workload {
  std::string name;
  std::string description;
  std::vector<WorkloadParam> params;
  int numInputs = 1;
  std::function<std::vector<te::Tensor>(const ParamMap&)> compute;
  std::function<double(const ParamMap&)> flops;
  std::function<void(const ParamMap&, const std::vector<runtime::NDArray>& inputs,
                     const std::vector<runtime::NDArray>& outputs)>
      reference;
  /// How many terms are summed into one output element (the reduction length; 1 when none).
  std::function<int64_t(const ParamMap&)> accumulation;
};

/// Every workload, sorted by name.
const std::vector<Workload>& allWorkloads();
/// The workload called `name`, or nullptr.
const Workload* findWorkload(const std::string& name);

/// A workload with a complete parameter map.
struct WorkloadSpec {
  const Workload* workload = nullptr;
  ParamMap params;
  /// "matmul:K=64,M=64,N=64": every parameter, in name order.
  std::string str() const;
};

/// Parses "NAME" or "NAME:P=V,P=V" (missing parameters take their defaults). Throws
/// WorkloadError for an unknown workload (listing the known ones), an unknown parameter (listing
/// the valid ones), a malformed or out-of-range value (naming the parameter), or a repeat.
WorkloadSpec parseWorkloadSpec(const std::string& spec);
/// A spec of `name` with `overrides` applied to the defaults (same checks as parsing).
WorkloadSpec makeWorkloadSpec(const std::string& name, const ParamMap& overrides = {});

/// The spec's tensors (inputs, then outputs).
std::vector<te::Tensor> workloadTensors(const WorkloadSpec& spec);
/// The spec's PrimFunc ("main" unless `funcName` is given).
tir::PrimFunc buildWorkload(const WorkloadSpec& spec, const std::string& funcName = "main");
double workloadFlops(const WorkloadSpec& spec);
/// Zero-filled float32 arrays shaped like the PrimFunc's parameters (constant shapes only).
std::vector<runtime::NDArray> makeParamArrays(const tir::PrimFunc& f);
/// The max relative error a float32 run may show against the float64 reference: 1e-4 for up to 64
/// terms summed per output, growing linearly beyond (float32 rounding grows with the sum length).
double checkTolerance(const WorkloadSpec& spec);
/// Runs the C++ reference: `args` holds the inputs then the outputs, in parameter order.
void runReference(const WorkloadSpec& spec, const std::vector<runtime::NDArray>& args);

} // namespace loom::topi
