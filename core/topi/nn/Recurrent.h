// Loop kernels: ops lowered to a hand-written loop program instead of a TE compute, because
// their lowering is a serial loop (nn.recurrence: the time loop of LSTM/GRU/RNN).
#pragma once
#include <functional>
#include <string>

#include "core/graph/Expr.h"
#include "core/tir/Function.h"

namespace loom::topi::nn {

/// Builds the already scheduled PrimFunc `name` of a call: its params are the call's arguments
/// (in order), then its outputs (tuple fields flattened).
using LoopKernel = std::function<tir::PrimFunc(const graph::CallNode& call, const std::string& name)>;

/// The loop kernel of `op`, or nullptr when the op lowers through its TE compute.
const LoopKernel* findLoopKernel(const std::string& op);

/// A float32 constant as loop kernels' TVMScript writes it (`T.float32(0.5)`, 9 significant
/// digits: the float's exact value round-trips).
std::string float32Literal(double v);

/// The TVMScript text of nn.recurrence's kernel (what findLoopKernel("nn.recurrence") parses).
std::string recurrenceScript(const graph::CallNode& call, const std::string& name);

/// The TVMScript text of the kernels of nn.ort_layer_norm, nn.ort_skip_layer_norm and
/// nn.ort_softmax (OrtFloatKernels.cpp): ONNX Runtime's CPU arithmetic, serial per row.
std::string ortFloatScript(const graph::CallNode& call, const std::string& name);

}  // namespace loom::topi::nn
