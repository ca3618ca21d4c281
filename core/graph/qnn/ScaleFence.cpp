// An integer result scaled to float is rounded before its consumer uses it.
//
// ONNX Runtime's quantize_dynamic writes MatMulInteger -> Cast -> Mul(scale) -> Add(bias), and its
// optimizer fuses that chain into DynamicQuantizeMatMul / MatMulIntegerToFloat, whose output
// processor multiplies and then adds: two float32 roundings, as the ONNX ops define. Loom's LLVM
// backend contracts a multiply followed by an add into one fused multiply-add (one rounding), so
// the outputs differed in the last bit in about a quarter of the elements; a dynamically
// quantized model requantizes every activation from such values, and the last bits moved whole
// quantization steps downstream. `float_fence` keeps the product rounded.
#include "core/graph/Mutator.h"
#include "core/graph/Op.h"
#include "core/graph/qnn/Qnn.h"
#include "core/graph/qnn/QnnUtil.h"

namespace loom::graph::qnn {

namespace {

/// `cast` of an integer tensor to a float type.
bool isIntegerToFloatCast(const Expr& e) {
  auto* c = e.as<CallNode>();
  if (!c || !c->op || c->op->name != "cast") return false;
  return tensorTypeOf(c->args[0]).dtype.isIntegral() && tensorTypeOf(e).dtype.isFloat();
}

class ScaleFence : public ExprMutator {
  Expr rewrite(const Expr&, const Expr& e) override {
    auto* c = e.as<CallNode>();
    if (!c || !c->op || c->op->name != "multiply") return e;
    if (!isIntegerToFloatCast(c->args[0]) && !isIntegerToFloatCast(c->args[1])) return e;
    return makeCall("float_fence", {e});
  }
};

}  // namespace

Module fenceIntegerScaling(const Module& m) {
  return mapFunctions(m, [](const Expr& body) { return ScaleFence().mutate(body); });
}

}  // namespace loom::graph::qnn
