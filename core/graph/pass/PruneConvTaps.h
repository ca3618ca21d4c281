// PruneConvTaps: drops the kernel rows and columns of a conv2d that only ever read padding.
#pragma once
#include "core/graph/Expr.h"

namespace loom::graph {

/// A dilated conv2d over a small input can have kernel taps that fall in the zero padding for
/// every output position: DeepLab's ASPP convs (3x3, dilation 24 and 36) on a 16x16 feature map
/// read data only through their centre tap. Such taps contribute exactly 0, so each conv2d in
/// NCHW/OIHW with a static input and a constant weight keeps only its live kernel rows and
/// columns (a leading or trailing run of dead taps is cut, the padding shrunk by the same
/// amount, the output shape unchanged); the weight slice is left for FoldConstant. A tap is
/// dead when the rows (columns) it reads, over all output positions, lie outside the input.
Expr pruneConvTaps(const Expr& e);
Module pruneConvTaps(const Module& m);

}  // namespace loom::graph
