// Random valid ONNX models (NNSmith-style: ops drawn with compatible shapes and attributes), for
// differential testing of the whole model pipeline against the graph evaluator.
#pragma once
#include <cstdint>
#include <random>
#include <string>

namespace loom::fuzz {

/// A serialized ModelProto (opset 13): 1-2 float32 inputs (NCHW images or matrices) and 2-8
/// nodes drawn from Conv (strides, pads, dilations, groups), pools, BatchNormalization, unary and
/// binary elementwise ops (Elu, Selu, Celu, Softplus, Exp, Erf among the unary; broadcast
/// constants), Concat, Transpose, Flatten, MatMul, Gemm, Softmax
/// and ReduceMean; `summary` gets the op sequence.
std::string randomOnnxModel(std::mt19937_64& rng, std::string* summary);

} // namespace loom::fuzz
