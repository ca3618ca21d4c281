// TuneTask construction and its JSON form (sent to measurement workers).
#include "core/tune/Task.h"

#include <cstdio>

#include "core/support/Error.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "core/tir/StructuralEqual.h"
#include "core/topi/Workloads.h"

namespace loom::tune {

TuneTask TuneTask::fromWorkload(const std::string& spec, const std::string& target) {
  topi::WorkloadSpec ws = topi::parseWorkloadSpec(spec);
  TuneTask t;
  t.key = ws.str();
  t.target = target;
  t.func = topi::buildWorkload(ws);
  t.workloadSpec = ws.str();
  t.numInputs = ws.workload->numInputs;
  t.flops = topi::workloadFlops(ws);
  return t;
}

TuneTask TuneTask::fromFunc(const tir::PrimFunc& f, int numInputs, const std::string& target,
                            double flops) {
  TuneTask t;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)tir::structuralHash(f));
  t.key = std::string("tir:") + buf;
  t.target = target;
  t.func = f;
  t.numInputs = numInputs;
  t.flops = flops;
  return t;
}

nlohmann::json TuneTask::toJson() const {
  nlohmann::json j;
  j["key"] = key;
  j["target"] = target;
  if (!workloadSpec.empty())
    j["workload"] = workloadSpec;
  else
    j["tir"] = tir::printFunc(func);
  j["num_inputs"] = numInputs;
  j["flops"] = flops;
  j["weight"] = weight;
  return j;
}

TuneTask TuneTask::fromJson(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("key") || !j["key"].is_string() || !j.contains("target") ||
      !j["target"].is_string())
    LOOM_THROW(ParseError) << "tuning task: expected an object with string 'key' and 'target'";
  TuneTask t;
  if (j.contains("workload") && j["workload"].is_string()) {
    t = fromWorkload(j["workload"].get<std::string>(), j["target"].get<std::string>());
  } else if (j.contains("tir") && j["tir"].is_string()) {
    t.func = tir::parseFunc(j["tir"].get<std::string>(), "<task>");
    t.target = j["target"].get<std::string>();
  } else {
    LOOM_THROW(ParseError) << "tuning task: needs a 'workload' spec or 'tir' text";
  }
  t.key = j["key"].get<std::string>();
  if (j.contains("num_inputs") && j["num_inputs"].is_number_integer()) t.numInputs = j["num_inputs"].get<int>();
  if (j.contains("flops") && j["flops"].is_number()) t.flops = j["flops"].get<double>();
  if (j.contains("weight") && j["weight"].is_number_integer()) t.weight = j["weight"].get<int>();
  return t;
}

} // namespace loom::tune
