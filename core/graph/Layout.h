// Tensor layouts of 4-D conv data and kernels: NCHW, NCHW{k}c (channel-blocked), OIHW,
// OIHW{i}i{o}o.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::graph {

/// A parsed layout. Data: "NCHW" (block 0) or "NCHW16c" (blockC 16): physical shape
/// [N, C/16, H, W, 16]. Kernel: "OIHW" or "OIHW8i16o": physical [O/16, I/8, KH, KW, 8, 16].
struct Layout {
  bool kernel = false;
  int64_t blockA = 0; ///< data: channel block; kernel: input-channel block
  int64_t blockB = 0; ///< kernel: output-channel block
  std::string str() const;
  bool isPlain() const { return blockA == 0 && blockB == 0; }
  bool operator==(const Layout&) const = default;
};

/// Parses a layout name; nullopt when it is not one of the supported forms.
std::optional<Layout> parseLayout(const std::string& text);
/// The physical shape of a tensor whose logical (NCHW / OIHW) shape is `logical`; nullopt when a
/// blocked dim does not divide.
std::optional<std::vector<int64_t>> physicalShape(const Layout& l,
                                                  const std::vector<int64_t>& logical);
/// The logical shape of a physical shape in layout `l` (nullopt when the rank does not fit).
std::optional<std::vector<int64_t>> logicalShape(const Layout& l,
                                                 const std::vector<int64_t>& physical);
/// Flat physical index of logical index (a, b, h, w) for a tensor of logical shape `logical`.
int64_t physicalIndex(const Layout& l, const std::vector<int64_t>& logical, int64_t a, int64_t b,
                      int64_t h, int64_t w);

} // namespace loom::graph
