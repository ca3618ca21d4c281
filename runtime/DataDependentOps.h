// Ops whose output shape depends on the input data (NonZero, TopK with k from data,
// NonMaxSuppression, Unique): host implementations shared by the graph evaluator and the
// graph executor (docs/dynamic-shapes.md, "Data-dependent output shapes").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/NDArray.h"

namespace loom::runtime::datadep {

/// The attributes of the four ops (each uses some of them).
struct Attrs {
  int64_t axis = 0;            ///< topk, unique (with hasAxis)
  bool hasAxis = false;        ///< unique: false flattens the input
  bool largest = true;         ///< topk
  bool sorted = true;          ///< topk, unique
  int64_t centerPointBox = 0;  ///< nms: 0 corners [y1, x1, y2, x2], 1 centers [xc, yc, w, h]
  bool hasScoreThreshold = false;  ///< nms: false keeps every score
};

/// True for "nonzero", "topk", "nms" and "unique".
bool isKnownOp(const std::string& op);

/// Runs `op` on host arrays; returns its outputs with their actual (data-dependent) shapes:
///   nonzero(x)                       -> int64[max(rank, 1), n] (row-major order)
///   topk(x, k)                       -> values, int64 indices: x's shape with axis = k
///   nms(boxes, scores, max_per_class, iou_threshold, score_threshold)
///                                    -> int64[n, 3] (batch, class, box), ONNX's order
///   unique(x)                        -> y, int64 indices, int64 inverse_indices, int64 counts
/// Bad data (k out of range, wrong ranks) throws RuntimeFailure; callers add the node's name.
std::vector<NDArray> run(const std::string& op, const Attrs& attrs, const std::vector<NDArray>& inputs);

}  // namespace loom::runtime::datadep
