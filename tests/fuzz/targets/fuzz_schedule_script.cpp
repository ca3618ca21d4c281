// Fuzz target: the schedule script (parse + apply) on small workload presets. The first byte picks
// the preset, the rest is the script. runScript never throws on bad input; what it applies must
// print as TVMScript that parses back, and must keep the program's meaning (the reference
// interpreter on random inputs, before and after).
#include <cstdio>
#include <cstdlib>

#include "FuzzCommon.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Script.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/Op.h"
#include "core/tir/Parser.h"
#include "core/tir/Visitor.h"
#include "core/tir/Printer.h"
#include "core/topi/Workloads.h"

using namespace loom;

namespace {

const char* const kPresets[] = {
    "matmul:M=8,N=8,K=4",      "conv2d:N=1,C=2,H=5,W=5,K=2,R=3,S=3",
    "softmax:M=4,N=8",         "layernorm:M=4,N=8",
    "add:M=4,N=8",             "reduce_sum:M=4,N=8",
    "transpose:M=4,N=8",       "batch_matmul:B=2,M=4,N=4,K=4",
    "depthwise_conv2d:N=1,C=2,H=5,W=5,R=3,S=3", "relu:M=4,N=8",
};

/// About how many stores running `f` executes (the interpreter under ASan runs a few thousand a
/// second on a loaded machine; libFuzzer times a run out after 25 s): a legal schedule may split by a huge factor (a
/// loop nest of 10^9 iterations, each masked off but one): too slow to interpret, not a finding.
class StoreCount : public tir::IRVisitor {
public:
  double total = 0;
  void visit(const tir::ForNode* f) override {
    const int64_t* e = tir::asConstInt(f->extent);
    double save = m_mult;
    m_mult *= e ? double(*e) : 1e6;
    tir::IRVisitor::visit(f);
    m_mult = save;
  }
  void visit(const tir::BufferStoreNode* s) override {
    total += m_mult;
    tir::IRVisitor::visit(s);
  }

private:
  double m_mult = 1;
};

/// The outputs of `f` on inputs drawn from `seed` (every parameter array, in order).
std::vector<runtime::NDArray> runOn(const tir::PrimFunc& f, uint64_t seed) {
  auto arrays = topi::makeParamArrays(f);
  std::vector<tir::Arg> args;
  for (size_t i = 0; i < arrays.size(); ++i) {
    tir::fillRandom(arrays[i], seed + i);
    args.push_back(arrays[i]);
  }
  tir::interpret(f, args);
  return arrays;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 8 * 1024) return -1;
  const size_t n = sizeof(kPresets) / sizeof(kPresets[0]);
  const char* preset = kPresets[data[0] % n];
  std::string script = fuzz::bytesOf(data + 1, size - 1);
  static std::map<std::string, std::pair<tir::PrimFunc, std::vector<runtime::NDArray>>> cache;
  auto it = cache.find(preset);
  if (it == cache.end()) {
    tir::PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec(preset));
    it = cache.emplace(preset, std::make_pair(f, runOn(f, 11))).first;
  }
  tir::Schedule sch(it->second.first);
  tir::ScriptResult r = tir::runScript(sch, script, "fuzz.py");
  if (r.linesApplied == 0) return 0;
  tir::PrimFunc after = sch.func();
  std::string printed = tir::printFunc(after);
  try {
    tir::parseFunc(printed, "printed.py");
  } catch (const Error& e) {
    std::fprintf(stderr, "scheduled function does not parse back: %s\n--- printed:\n%s\n", e.what(), printed.c_str());
    std::abort();
  }
  StoreCount cost;
  cost.visitStmt(after->body);
  if (cost.total > 2e4) return 0;
  // An accepted schedule must leave a program that runs (no out-of-bounds access, no
  // uninitialized read) and computes the same values.
  std::vector<runtime::NDArray> got;
  try {
    got = runOn(after, 11);
  } catch (const Error& e) {
    std::fprintf(stderr, "the scheduled %s fails in the interpreter: %s\n--- script:\n%s\n--- after:\n%s\n", preset,
                 e.what(), script.c_str(), printed.c_str());
    std::abort();
  }
  const auto& want = it->second.second;
  for (size_t i = 0; i < want.size(); ++i) {
    // transform_layout on a parameter changes the function's signature: nothing to compare.
    if (got[i].shape() != want[i].shape()) continue;
    if (!tir::allClose(got[i], want[i], 1e-4, 1e-4)) {
      std::fprintf(stderr, "the schedule changed the result of %s (parameter %zu):\n%s\n--- script:\n%s\n--- after:\n%s\n",
                   preset, i, tir::mismatchReport(got[i], want[i], 1e-4, 1e-4).c_str(), script.c_str(), printed.c_str());
      std::abort();
    }
  }
  return 0;
}
