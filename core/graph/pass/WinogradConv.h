// WinogradConv: 3x3 stride-1 blocked conv2d -> Winograd F(m x m, 3x3) with a folded kernel.
#pragma once
#include <cstdint>

#include "core/graph/Expr.h"

namespace loom::graph {

/// The largest Winograd-domain kernel WinogradConv makes (bytes).
inline constexpr int64_t kDefaultWinogradKernelBytes = int64_t(4) << 20;

/// Convs with fewer input channels stay direct.
inline constexpr int64_t kMinWinogradInChannels = 16;

/// Convs whose transformed input (tiles x channels x (m+2)^2) would exceed this stay direct.
inline constexpr int64_t kMaxWinogradDataBytes = int64_t(8) << 20;

/// The tile size WinogradConv gives a conv2d call, 0 when it leaves the call alone: a conv2d
/// in NCHW{k}c / OIHW{i}i{o}o (after convert-layout) with a constant 3x3 kernel, stride 1,
/// dilation 1, one group, at least kMinWinogradInChannels input channels and a transformed input
/// of at most kMaxWinogradDataBytes, whose output height and width are multiples of the tile: 4 (F(4x4):
/// 36 multiplies per 16 outputs instead of 144) when both divide by 4, else 2 (F(2x2): 16 per 4
/// instead of 36). A conv whose Winograd kernel would exceed `maxKernelBytes` stays direct: the
/// kernel grows by (m+2)^2 / 9 and the batched products read all of it for few tiles.
int64_t winogradTileFor(const CallNode& conv, int64_t maxKernelBytes);

/// Replaces each such conv2d by nn.conv2d_winograd(data, nn.winograd_weight_transform(kernel)),
/// leaving the kernel transform for FoldConstant.
Expr winogradConv(const Expr& e, int64_t maxKernelBytes = kDefaultWinogradKernelBytes);
Module winogradConv(const Module& m, int64_t maxKernelBytes = kDefaultWinogradKernelBytes);

}  // namespace loom::graph
