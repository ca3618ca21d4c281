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
/// A conv with no dead taps but mostly padding under its live ones (ASPP's dilation 12 on a 16x16
/// map: 75% of its multiply-adds read zeros), stride 1 and groups 1, becomes a sum of one 1x1
/// conv per tap over the input window the tap reads, each padded back to the output's extent.
Expr pruneConvTaps(const Expr& e);
Module pruneConvTaps(const Module& m);

}  // namespace loom::graph
