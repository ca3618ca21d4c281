// The blocks of nn.conv2d_winograd's TE compute that schedules treat apart.
#pragma once

namespace loom::tir {
struct BlockNode;
}

namespace loom::topi::nn {

/// A tile transform of a Winograd convolution (data_pack, inverse; annotated schedule_rule =
/// graph::kWinogradTransformRule): its value is a select over two tile-position loops that folds
/// to a short sum once they are unrolled over whole tiles, so it keeps its own loop nest (never
/// inlined, never moved under a consumer's loop). The default schedule and the tuner's rules ask.
bool isWinogradTransform(const tir::BlockNode* block);

}  // namespace loom::topi::nn
