// The Winograd minimal-filtering transforms F(m x m, 3 x 3) (Lavin & Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2015): a 3x3 correlation over an (m+2) x (m+2) input tile is
// Y = A^T [(G g G^T) * (B^T d B)] A, so each m x m output tile takes (m+2)^2 multiplies instead
// of 9 m^2. Shared by the graph ops (nn.winograd_weight_transform, nn.conv2d_winograd), their
// TE computes and the pass that picks them.
#pragma once
#include <cstdint>
#include <vector>

namespace loom::graph {

struct WinogradMatrices {
  int64_t m = 0;      ///< output tile (m x m)
  int64_t alpha = 0;  ///< input tile, m + 2
  std::vector<std::vector<double>> BT;  ///< alpha x alpha: input transform B^T
  std::vector<std::vector<double>> G;   ///< alpha x 3: kernel transform
  std::vector<std::vector<double>> AT;  ///< m x alpha: output transform A^T
};

/// The "schedule_rule" annotation of the tile transform blocks of nn.conv2d_winograd's compute
/// (data_pack, inverse): each value is a select over two tile-position loops (x, y) that folds to
/// a short sum once they are unrolled, which the default schedule and the tuner's
/// winograd-transform rule do; the transforms are never inlined.
inline constexpr const char* kWinogradTransformRule = "winograd_transform";

/// The finite interpolation points of F(2x2, 3x3) (with the point at infinity): 0, 1, -1.
inline const std::vector<double> kWinogradPointsF2 = {0, 1, -1};
/// The finite interpolation points of F(4x4, 3x3): 0, 1, -1, 2, -1/2. With the usual 0, +-1, +-2
/// (Lavin & Gray; kWinogradPointsF4Lavin) the compiled float32 kernel of a 64 -> 32 conv rounds to
/// 4.3x the relative rms error of the direct conv against float64 (1.8e-6 against 0.42e-6); with
/// -1/2 for -2 the transforms' coefficients are smaller and it is 2.7x (1.1e-6). (The choice of
/// points is studied by Barabasz et al., "Error analysis and improving the accuracy of Winograd
/// convolution for deep neural networks", 2020.) The zoo's YOLO detector missed PyTorch's output
/// (rtol 1e-3, atol 1e-5) on 200 of 176,400 elements with the usual points, on 27 with these. B^T
/// and A^T stay exact in binary; B^T has more nonzeros, so the input transform runs as two 1-D
/// passes (topi/nn/Winograd.cpp) and costs the same. F(4x4) stays above the direct
/// conv's error whatever the points: the kernel transform's float32 rounding alone is about as
/// large, and the batched products' sums over the input channels are carried into the inverse
/// transform with coefficients up to 8 x 8.
inline const std::vector<double> kWinogradPointsF4 = {0, 1, -1, 2, -0.5};
inline const std::vector<double> kWinogradPointsF4Lavin = {0, 1, -1, 2, -2};

/// The matrices of F(m x m, 3 x 3) for m + 1 finite points (the modified Toom-Cook construction:
/// B^T's row i holds the polynomial that is zero at the other points, G's row i divides by its
/// value at point i, A^T's column i evaluates at point i; the last row / column is the point at
/// infinity). Points that are powers of two times small integers keep B^T and A^T exact.
WinogradMatrices winogradFromPoints(int64_t m, const std::vector<double>& points);

/// Whether F(m x m, 3 x 3) is available: m = 2 (alpha 4) or m = 4 (alpha 6).
bool winogradTileSupported(int64_t m);
/// The matrices of F(m x m, 3 x 3); ValueError for an unsupported m.
const WinogradMatrices& winogradMatrices(int64_t m);

}  // namespace loom::graph
