// Layout parsing and the index maps between logical NCHW/OIHW and blocked physical layouts.
#include "core/graph/Layout.h"

#include <cctype>

namespace loom::graph {

std::string Layout::str() const {
  if (!kernel) return blockA ? "NCHW" + std::to_string(blockA) + "c" : "NCHW";
  return isPlain() ? "OIHW" : "OIHW" + std::to_string(blockA) + "i" + std::to_string(blockB) + "o";
}

namespace {
/// Reads a positive number at `i` followed by `suffix`.
bool readBlock(const std::string& t, size_t& i, char suffix, int64_t* out) {
  size_t start = i;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])))
    ++i;
  if (i == start || i >= t.size() || t[i] != suffix || i - start > 6) return false;
  *out = std::stoll(t.substr(start, i - start));
  ++i;
  return *out > 0;
}
} // namespace

std::optional<Layout> parseLayout(const std::string& t) {
  Layout l;
  if (t.rfind("NCHW", 0) == 0) {
    size_t i = 4;
    if (i == t.size()) return l;
    if (!readBlock(t, i, 'c', &l.blockA) || i != t.size()) return std::nullopt;
    return l;
  }
  if (t.rfind("OIHW", 0) == 0) {
    l.kernel = true;
    size_t i = 4;
    if (i == t.size()) return l;
    if (!readBlock(t, i, 'i', &l.blockA) || !readBlock(t, i, 'o', &l.blockB) || i != t.size())
      return std::nullopt;
    return l;
  }
  return std::nullopt;
}

std::optional<std::vector<int64_t>> physicalShape(const Layout& l, const std::vector<int64_t>& s) {
  if (s.size() != 4) return std::nullopt;
  if (l.isPlain()) return s;
  if (!l.kernel) {
    if (s[1] % l.blockA) return std::nullopt;
    return std::vector<int64_t>{s[0], s[1] / l.blockA, s[2], s[3], l.blockA};
  }
  if (s[1] % l.blockA || s[0] % l.blockB) return std::nullopt;
  return std::vector<int64_t>{s[0] / l.blockB, s[1] / l.blockA, s[2], s[3], l.blockA, l.blockB};
}

std::optional<std::vector<int64_t>> logicalShape(const Layout& l, const std::vector<int64_t>& p) {
  if (l.isPlain()) return p.size() == 4 ? std::optional(p) : std::nullopt;
  if (!l.kernel) {
    if (p.size() != 5 || p[4] != l.blockA) return std::nullopt;
    return std::vector<int64_t>{p[0], p[1] * p[4], p[2], p[3]};
  }
  if (p.size() != 6 || p[4] != l.blockA || p[5] != l.blockB) return std::nullopt;
  return std::vector<int64_t>{p[0] * p[5], p[1] * p[4], p[2], p[3]};
}

int64_t physicalIndex(const Layout& l, const std::vector<int64_t>& s, int64_t a, int64_t b,
                      int64_t h, int64_t w) {
  int64_t H = s[2], W = s[3];
  if (l.isPlain()) return ((a * s[1] + b) * H + h) * W + w;
  if (!l.kernel) {
    int64_t k = l.blockA, cb = b / k, ci = b % k;
    return (((a * (s[1] / k) + cb) * H + h) * W + w) * k + ci;
  }
  int64_t bi = l.blockA, bo = l.blockB;
  int64_t ob = a / bo, oi = a % bo, ib = b / bi, ii = b % bi;
  return ((((ob * (s[1] / bi) + ib) * H + h) * W + w) * bi + ii) * bo + oi;
}

} // namespace loom::graph
