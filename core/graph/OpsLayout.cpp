// channel_shuffle: the channel permutations of ShuffleNet (concat -> reshape [N, g, C/g, H, W] ->
// transpose -> reshape [N, C, H, W] -> channel slices) as one op that also works in NCHW{k}c, so
// ConvertLayout keeps such a block channel-blocked instead of going back to NCHW for a copy.
#include <algorithm>

#include "core/graph/Layout.h"
#include "core/graph/OpsInternal.h"

namespace loom::graph {

namespace {

/// The channel block of `layout` (1 for NCHW); GraphTypeError for another layout.
int64_t shuffleBlock(const CallNode& call) {
  const std::string& name = call.attrs.getString("layout");
  std::optional<Layout> l = parseLayout(name);
  if (!l || l->kernel) LOOM_TYPE_FAIL(call) << "layout must be NCHW or NCHW{k}c, got \"" << name << "\"";
  return l->isPlain() ? 1 : l->blockA;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

Type channelShuffleRel(const CallNode& call, const std::vector<Type>& args) {
  const int64_t k = shuffleBlock(call);
  const size_t rank = k > 1 ? 5 : 4;
  const std::vector<int64_t>& channels = call.attrs.getInts("channels");
  if (channels.size() != args.size())
    LOOM_TYPE_FAIL(call) << "channels names " << channels.size() << " counts for " << args.size() << " inputs";
  const TensorTypeNode& first = argTensor(call, args, 0);
  int64_t total = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const TensorTypeNode& t = argTensor(call, args, i);
    // The batch and the image may be symbolic (a model exported with a dynamic batch); the
    // channels, which the permutation is made of, may not.
    if (t.ndim() != rank || !t.shape[1].isStatic() || t.dtype != first.dtype || (k > 1 && t.shape[4].value != k))
      LOOM_TYPE_FAIL(call) << "input " << i << " " << typeStr(args[i]) << " is not a tensor with static channels in layout "
                           << call.attrs.getString("layout") << " like input 0 " << typeStr(args[0]);
    for (size_t d : {size_t(0), size_t(2), size_t(3)})
      if (!(t.shape[d] == first.shape[d]))
        LOOM_TYPE_FAIL(call) << "input " << i << " " << typeStr(args[i]) << " differs from input 0 "
                             << typeStr(args[0]) << " in dimension " << d;
    if (channels[i] < 1 || t.shape[1].value * k < channels[i] || t.shape[1].value != ceilDiv(channels[i], k))
      LOOM_TYPE_FAIL(call) << "input " << i << " " << typeStr(args[i]) << " does not hold " << channels[i]
                           << " channels in layout " << call.attrs.getString("layout");
    total += channels[i];
  }
  const int64_t g = call.attrs.getInt("groups"), begin = call.attrs.getInt("begin"),
                count = call.attrs.getInt("count");
  if (g < 1 || total % g)
    LOOM_TYPE_FAIL(call) << "groups " << g << " do not divide the " << total << " channels";
  if (begin < 0 || count < 1 || begin + count > total)
    LOOM_TYPE_FAIL(call) << "channels [" << begin << ", " << begin + count << ") are not within the " << total
                         << " channels";
  Shape s = first.shape;
  s[1] = Dim(ceilDiv(count, k));
  return tensorType(s, first.dtype);
}

HostTensor channelShuffleKernel(const CallNode& call, const std::vector<HostTensor>& in,
                                const TensorTypeNode& outT) {
  const int64_t k = shuffleBlock(call);
  const std::vector<int64_t>& channels = call.attrs.getInts("channels");
  const int64_t g = call.attrs.getInt("groups"), begin = call.attrs.getInt("begin"),
                count = call.attrs.getInt("count");
  int64_t total = 0;
  for (int64_t c : channels)
    total += c;
  HostTensor r(outT.staticShape(), outT.dtype);
  const int64_t N = r.shape[0], H = r.shape[2], W = r.shape[3], OC = r.shape[1] * k;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oc = 0; oc < OC; ++oc) {
      // Padding channels of the output repeat its last channel (finite, never observed).
      const int64_t c = begin + std::min(oc, count - 1);
      int64_t src = (c % g) * (total / g) + c / g;
      size_t i = 0;
      while (src >= channels[i])
        src -= channels[i++];
      const HostTensor& x = in[i];
      const int64_t XC = x.shape[1];
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) {
          const int64_t o = k > 1 ? (((n * r.shape[1] + oc / k) * H + h) * W + w) * k + oc % k
                                  : ((n * OC + oc) * H + h) * W + w;
          const int64_t s = k > 1 ? (((n * XC + src / k) * H + h) * W + w) * k + src % k
                                  : ((n * XC + src) * H + h) * W + w;
          r.v[size_t(o)] = x.v[size_t(s)];
        }
    }
  return r;
}

} // namespace

void registerLayoutOps() {
  defineOp("channel_shuffle", -1, OpPattern::Injective,
           {attrInts("channels"), attrInt("groups", 1), attrInt("begin", 0), attrInt("count"),
            attrString("layout", std::string("NCHW"))},
           channelShuffleRel, channelShuffleKernel,
           "channels [begin, begin + count) of the inputs concatenated along channels (input i holds "
           "channels[i]) and shuffled in `groups` (reshape [N, groups, C/groups, H, W], swap axes 1 "
           "and 2, reshape back), in layout NCHW or NCHW{k}c (inputs and output; an output's "
           "padding channels repeat its last channel)");
}

} // namespace loom::graph
