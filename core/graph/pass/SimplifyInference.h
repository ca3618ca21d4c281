// SimplifyInference: rewrites training-time ops for inference (BatchNorm folding, no Dropout).
#pragma once
#include "core/graph/Expr.h"

namespace loom::graph {

/// - nn.dropout(x) becomes x.
/// - nn.batch_norm with constant parameters after a conv2d (optionally + bias_add) or a dense
///   whose weight is constant and used only there folds into that weight:
///   conv2d(x, W * s) + bias_add((b - mean) * s + beta), s = gamma / sqrt(var + eps).
/// - any other nn.batch_norm becomes x * s + shift with per-channel constants (or expressions
///   when the parameters are not constant).
/// - nn.layer_norm and nn.instance_norm become mean/subtract/multiply/rsqrt chains that fuse.
Expr simplifyInference(const Expr& e);
Module simplifyInference(const Module& m);

} // namespace loom::graph
