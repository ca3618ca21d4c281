// TE computes of the operators behind the workload presets, reusable on any te::Tensor (the graph
// lowering builds on these). Names of the result tensors follow TVM's topi ("T_add", "pad_temp").
#pragma once
#include <string>
#include <vector>

#include "core/te/Tensor.h"

namespace loom::topi {

/// C[i, j] = sum_k A[i, k] * B[k, j].
te::Tensor matmul(const te::Tensor& A, const te::Tensor& B, std::string name = "C");
/// C[b, i, j] = sum_k A[b, i, k] * B[b, k, j].
te::Tensor batchMatmul(const te::Tensor& A, const te::Tensor& B, std::string name = "C");

/// `data` with `before[d]` / `after[d]` elements of `value` added on each side of dimension d
/// (the lists are as long as the rank). Returns `data` itself when nothing is padded.
te::Tensor pad(const te::Tensor& data, const std::vector<int64_t>& before,
               const std::vector<int64_t>& after, double value = 0.0,
               std::string name = "pad_temp");

/// 2-D convolution of NCHW `data` with KCRS `weight` (C = channels / groups), zero padding `pad`
/// on each spatial side (a separate pad_temp stage), and the given stride and dilation.
te::Tensor conv2dNchw(const te::Tensor& data, const te::Tensor& weight, int64_t stride, int64_t pad,
                      int64_t dilation, int64_t groups = 1, std::string name = "conv2d_nchw");
/// Depthwise 2-D convolution: weight (C, multiplier, R, S); output channel c reads input channel
/// c / multiplier.
te::Tensor depthwiseConv2dNchw(const te::Tensor& data, const te::Tensor& weight, int64_t stride,
                               int64_t pad, int64_t dilation, std::string name = "DepthwiseConv2d");

/// max(A, 0) elementwise.
te::Tensor relu(const te::Tensor& A, std::string name = "T_relu");
/// A + B with numpy broadcasting (shapes aligned from the right; a constant 1 stretches).
te::Tensor add(const te::Tensor& A, const te::Tensor& B, std::string name = "T_add");
/// The sum over dimension `axis` (which is removed from the shape).
te::Tensor sum(const te::Tensor& A, int axis, std::string name = "A_red");
/// Dimensions permuted: result dimension d is A's dimension axes[d] (reversed when empty).
te::Tensor transpose(const te::Tensor& A, std::vector<int> axes = {},
                     std::string name = "T_transpose");
/// Softmax over the last dimension, in TVM's four stages (max, exp, sum, normalize).
te::Tensor softmax(const te::Tensor& A);
/// Layer normalization over the last dimension N: (A - mean) / sqrt(var + eps) * gamma + beta,
/// with gamma and beta of shape (N).
te::Tensor layerNorm(const te::Tensor& A, const te::Tensor& gamma, const te::Tensor& beta,
                     double eps = 1e-5);

} // namespace loom::topi
