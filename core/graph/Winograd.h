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

/// Whether F(m x m, 3 x 3) is available: m = 2 (alpha 4) or m = 4 (alpha 6).
bool winogradTileSupported(int64_t m);
/// The matrices of F(m x m, 3 x 3); ValueError for an unsupported m.
const WinogradMatrices& winogradMatrices(int64_t m);

}  // namespace loom::graph
