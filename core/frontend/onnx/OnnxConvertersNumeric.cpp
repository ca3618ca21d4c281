// Det, MelWeightMatrix and TfIdfVectorizer, composed from graph ops at import.
// - Det: LU elimination with partial pivoting (as ONNX Runtime's Eigen PartialPivLU), unrolled
//   over the n-1 columns; the pivot row is chosen by argmax and swapped in with one-hot masks, so
//   every step is a few elementwise ops and reductions over the whole batch of matrices.
// - MelWeightMatrix: the matrix is computed at import from its (constant) sizes, as the ONNX
//   definition's reference does.
// - TfIdfVectorizer (integer pools): for each n-gram length and skip, the windows of the input are
//   compared with every pooled n-gram at once; the counts go to their output columns through a
//   matrix (weights for TFIDF). Unigrams are counted once, longer n-grams once per skip 0..max_skip
//   (ONNX Runtime's counting).
#include <cmath>
#include <map>

#include "core/frontend/onnx/OnnxContext.h"

namespace loom::frontend::onnxi {

namespace {

using graph::Expr;
using Outs = std::vector<Expr>;

Expr sliceAxis(const Context& c, const Expr& x, int64_t axis, int64_t begin, int64_t end) {
  return c.call("strided_slice", {x},
                {{"begin", std::vector<int64_t>{begin}},
                 {"end", std::vector<int64_t>{end}},
                 {"strides", std::vector<int64_t>{1}},
                 {"axes", std::vector<int64_t>{axis}}});
}

Expr reshapeTo(const Context& c, const Expr& x, std::vector<int64_t> shape) {
  return c.call("reshape", {x}, {{"newshape", std::move(shape)}});
}

graph::Attrs reduceAxis(int64_t axis, bool keep) {
  return {{"axis", std::vector<int64_t>{axis}}, {"keepdims", int64_t(keep ? 1 : 0)}};
}

/// A constant of `shape` (row-major values) with `x`'s element type.
Expr constLike(const Context& c, const Expr& x, std::vector<int64_t> shape, const std::vector<double>& v) {
  runtime::NDArray a = runtime::NDArray::empty(shape, runtime::DType::f32());
  for (size_t i = 0; i < v.size(); ++i) a.as<float>()[i] = float(v[i]);
  Expr e = graph::makeConstant(a);
  DataType t = c.tensorType(x).dtype;
  return t == DataType::Float(32) ? e : c.call("cast", {e}, {{"dtype", t}});
}

Outs det(Context& c) {
  Expr x = c.input(0);
  DataType t = c.tensorType(x).dtype;
  if (!t.isFloat()) c.fail("Det takes floating-point matrices, got " + t.str());
  std::vector<int64_t> s = c.staticShape(x);
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2])
    c.fail("the input must be [..., M, M] (square matrices)");
  const int64_t n = s.back();
  std::vector<int64_t> batchShape(s.begin(), s.end() - 2);
  int64_t batch = 1;
  for (int64_t d : batchShape) batch *= d;
  Expr a = reshapeTo(c, x, {batch, n, n});
  if (t == DataType::Float(16) || t.isBFloat16()) a = c.call("cast", {a}, {{"dtype", DataType::Float(32)}});
  const DataType ft = c.tensorType(a).dtype;
  auto column = [&](std::vector<double> v) { return constLike(c, a, {1, n, 1}, v); };
  runtime::NDArray rows = runtime::NDArray::empty({1, n, 1}, graph::toDType(DataType::Int(64)));
  for (int64_t i = 0; i < n; ++i) rows.as<int64_t>()[i] = i;
  Expr rowIdx = graph::makeConstant(rows);
  Expr sign = constLike(c, a, {1, 1, 1}, {1.0});
  Expr zero = graph::makeScalar(0, ft), minusOne = graph::makeScalar(-1, ft);
  for (int64_t k = 0; k + 1 < n; ++k) {
    // Pivot: the row at or below k with the largest |a[row, k]|.
    std::vector<double> above(size_t(n), 0.0), ek(size_t(n), 0.0), below(size_t(n), 0.0);
    for (int64_t i = 0; i < n; ++i) {
      above[size_t(i)] = i < k;
      ek[size_t(i)] = i == k;
      below[size_t(i)] = i > k;
    }
    Expr col = c.call("abs", {sliceAxis(c, a, 2, k, k + 1)});
    Expr candidates = c.call("where", {c.call("greater", {column(above), zero}), minusOne, col});
    Expr p = c.call("argmax", {candidates}, {{"axis", int64_t(1)}, {"keepdims", int64_t(1)}});
    Expr pivotMask = c.call("cast", {c.call("equal", {rowIdx, p})}, {{"dtype", ft}});  // [B, n, 1]
    Expr eK = column(ek);
    Expr pivotRow = c.call("sum", {c.call("multiply", {a, pivotMask})}, reduceAxis(1, true));  // [B, 1, n]
    Expr rowK = sliceAxis(c, a, 1, k, k + 1);
    a = c.call("add", {a, c.call("multiply", {c.call("subtract", {eK, pivotMask}), c.call("subtract", {pivotRow, rowK})})});
    // A swap (pivot row != k) flips the sign.
    Expr stayed = c.call("sum", {c.call("multiply", {pivotMask, eK})}, reduceAxis(1, true));  // [B, 1, 1]
    sign = c.call("multiply", {sign, c.call("subtract", {c.call("multiply", {stayed, graph::makeScalar(2, ft)}),
                                                          graph::makeScalar(1, ft)})});
    // Eliminate below the pivot; a zero pivot means a zero column (det 0), no division.
    Expr newRowK = sliceAxis(c, a, 1, k, k + 1);
    Expr pivot = sliceAxis(c, newRowK, 2, k, k + 1);
    Expr factors = c.call("divide", {sliceAxis(c, a, 2, k, k + 1), pivot});
    factors = c.call("where", {c.call("equal", {pivot, zero}), zero, factors});
    factors = c.call("multiply", {factors, column(below)});
    a = c.call("subtract", {a, c.call("multiply", {factors, newRowK})});
  }
  std::vector<double> eye(size_t(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) eye[size_t(i * n + i)] = 1.0;
  Expr diag = c.call("sum", {c.call("multiply", {a, constLike(c, a, {1, n, n}, eye)})}, reduceAxis(2, false));
  Expr d = c.call("multiply", {c.call("prod", {diag}, reduceAxis(1, false)), reshapeTo(c, sign, {n > 1 ? batch : 1})});
  if (ft != t) d = c.call("cast", {d}, {{"dtype", t}});
  return {reshapeTo(c, d, batchShape)};
}

Outs melWeightMatrix(Context& c) {
  const int64_t bins = c.constInts(0).at(0), dftLength = c.constInts(1).at(0), rate = c.constInts(2).at(0);
  const double lower = c.constFloats(3).at(0), upper = c.constFloats(4).at(0);
  if (bins < 1 || dftLength < 1 || rate < 1) c.fail("num_mel_bins, dft_length and sample_rate must be positive");
  bool ok = false;
  DataType out = dtypeFromOnnx(int(c.attrInt("output_datatype", 1)), &ok);
  if (!ok || !out.isFloat()) c.fail("output_datatype must be a floating-point type");
  const int64_t spectrum = dftLength / 2 + 1;
  // The ONNX definition: bins+2 points evenly spaced in mel (step over bins+2 points, as its
  // reference), back to Hz, then to DFT bins by floor((dft_length + 1) * hz / sample_rate).
  const double lowMel = 2595.0 * std::log10(1.0 + float(lower) / 700.0f);
  const double highMel = 2595.0 * std::log10(1.0 + float(upper) / 700.0f);
  const double step = (highMel - lowMel) / double(bins + 2);
  std::vector<int64_t> f(size_t(bins + 2));
  for (int64_t i = 0; i < bins + 2; ++i) {
    double hz = 700.0 * (std::pow(10.0, (double(i) * step + lowMel) / 2595.0) - 1.0);
    f[size_t(i)] = int64_t(std::floor(double(dftLength + 1) * hz / double(rate)));
    if (f[size_t(i)] < 0 || f[size_t(i)] >= spectrum)
      c.fail("the mel band edges fall outside the " + std::to_string(spectrum) + " DFT bins (lower_edge_hertz " +
             std::to_string(lower) + ", upper_edge_hertz " + std::to_string(upper) + ")");
  }
  runtime::NDArray w = runtime::NDArray::empty({spectrum, bins}, runtime::DType::f32());
  float* o = w.as<float>();
  std::fill(o, o + spectrum * bins, 0.0f);
  for (int64_t i = 0; i < bins; ++i) {
    const int64_t left = f[size_t(i)], center = f[size_t(i + 1)], right = f[size_t(i + 2)];
    if (center == left) {
      o[center * bins + i] = 1.0f;
    } else {
      for (int64_t j = left; j <= center; ++j) o[j * bins + i] = float(double(j - left) / double(center - left));
    }
    for (int64_t j = center; j < right; ++j) o[j * bins + i] = float(double(right - j) / double(right - center));
  }
  Expr e = graph::makeConstant(w);
  return {out == DataType::Float(32) ? e : c.call("cast", {e}, {{"dtype", out}})};
}

Outs tfIdfVectorizer(Context& c) {
  Expr x = c.input(0);
  DataType t = c.tensorType(x).dtype;
  if (!t.isIntegral() || (t.bits() != 32 && t.bits() != 64))
    c.fail("only int32 and int64 inputs are supported (pool_int64s), got " + t.str());
  std::vector<int64_t> s = c.staticShape(x);
  if (s.empty() || s.size() > 2) c.fail("the input must be [C] or [N, C]");
  const bool flat = s.size() == 1;
  const int64_t N = flat ? 1 : s[0], C = s.back();
  if (flat) x = reshapeTo(c, x, {1, C});
  const int64_t minN = c.attrInt("min_gram_length", 0), maxN = c.attrInt("max_gram_length", 0);
  const int64_t maxSkip = c.attrInt("max_skip_count", 0);
  const std::string mode = c.attrString("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") c.fail("mode must be TF, IDF or TFIDF, got '" + mode + "'");
  if (c.attr("pool_strings")) c.fail("pool_strings (string n-grams) are not supported");
  std::vector<int64_t> pool = c.attrInts("pool_int64s"), starts = c.attrInts("ngram_counts");
  std::vector<int64_t> outIndex = c.attrInts("ngram_indexes");
  std::vector<double> weights = c.attrFloats("weights");
  if (minN < 1 || maxN < minN || maxSkip < 0) c.fail("need 1 <= min_gram_length <= max_gram_length, max_skip_count >= 0");
  if (starts.empty() || starts[0] != 0) c.fail("ngram_counts must start with 0");
  // The pool's n-grams, in order: length n from starts[n-1] to starts[n] (or the pool's end).
  struct Gram { int64_t n, at; };
  std::vector<Gram> grams;
  for (size_t g = 0; g < starts.size(); ++g) {
    const int64_t n = int64_t(g) + 1;
    const int64_t end = g + 1 < starts.size() ? starts[g + 1] : int64_t(pool.size());
    if (end < starts[g] || end > int64_t(pool.size()) || (end - starts[g]) % n != 0)
      c.fail("ngram_counts do not split pool_int64s into whole " + std::to_string(n) + "-grams");
    for (int64_t at = starts[g]; at < end; at += n) grams.push_back({n, at});
  }
  if (outIndex.size() != grams.size())
    c.fail("ngram_indexes has " + std::to_string(outIndex.size()) + " entries for " + std::to_string(grams.size()) +
           " n-grams in the pool");
  if (!weights.empty() && weights.size() != grams.size()) c.fail("weights must have one entry per n-gram");
  int64_t outSize = 0;
  for (int64_t i : outIndex) {
    if (i < 0) c.fail("ngram_indexes must be non-negative");
    outSize = std::max(outSize, i + 1);
  }
  const DataType f32 = DataType::Float(32);
  // counts[g] for each pool n-gram, as [N, G_n] blocks in pool order.
  std::vector<Expr> blocks;
  for (int64_t n = 1; n <= int64_t(starts.size()); ++n) {
    std::vector<size_t> ids;
    for (size_t g = 0; g < grams.size(); ++g)
      if (grams[g].n == n) ids.push_back(g);
    if (ids.empty()) continue;
    const int64_t G = int64_t(ids.size());
    if (n < minN || n > maxN) {
      blocks.push_back(graph::makeConstant([&] {
        runtime::NDArray z = runtime::NDArray::empty({N, G}, runtime::DType::f32());
        std::fill(z.as<float>(), z.as<float>() + N * G, 0.0f);
        return z;
      }()));
      continue;
    }
    runtime::NDArray p = runtime::NDArray::empty({1, 1, G, n}, graph::toDType(t));
    for (int64_t g = 0; g < G; ++g)
      for (int64_t k = 0; k < n; ++k) {
        int64_t v = pool[size_t(grams[ids[size_t(g)]].at + k)];
        if (t.bits() == 64) p.as<int64_t>()[g * n + k] = v;
        else p.as<int32_t>()[g * n + k] = int32_t(v);
      }
    Expr pooled = graph::makeConstant(p);
    Expr count;
    for (int64_t skip = 0; skip <= (n == 1 ? 0 : maxSkip); ++skip) {
      const int64_t span = (n - 1) * (skip + 1), L = C - span;
      if (L <= 0) break;
      std::vector<Expr> parts;
      for (int64_t k = 0; k < n; ++k)
        parts.push_back(reshapeTo(c, sliceAxis(c, x, 1, k * (skip + 1), k * (skip + 1) + L), {N, L, 1, 1}));
      Expr windows = parts.size() == 1 ? parts[0] : c.call("concatenate", parts, {{"axis", int64_t(3)}});
      Expr hit = c.call("cast", {c.call("equal", {windows, pooled})}, {{"dtype", f32}});   // [N, L, G, n]
      Expr all = c.call("prod", {hit}, reduceAxis(3, false));                            // [N, L, G]
      Expr sum = c.call("sum", {all}, reduceAxis(1, false));                             // [N, G]
      count = count.defined() ? c.call("add", {count, sum}) : sum;
    }
    if (!count.defined()) {
      runtime::NDArray z = runtime::NDArray::empty({N, G}, runtime::DType::f32());
      std::fill(z.as<float>(), z.as<float>() + N * G, 0.0f);
      count = graph::makeConstant(z);
    }
    blocks.push_back(count);
  }
  Expr counts = blocks.size() == 1 ? blocks[0] : c.call("concatenate", blocks, {{"axis", int64_t(1)}});  // [N, G]
  if (mode == "IDF") counts = c.call("minimum", {counts, graph::makeScalar(1, f32)});
  // [G, out]: each n-gram to its output column, times its weight (TF: 1).
  const int64_t G = int64_t(grams.size());
  runtime::NDArray m = runtime::NDArray::empty({G, outSize}, runtime::DType::f32());
  std::fill(m.as<float>(), m.as<float>() + G * outSize, 0.0f);
  for (int64_t g = 0; g < G; ++g)
    m.as<float>()[g * outSize + outIndex[size_t(g)]] +=
        mode == "TF" || weights.empty() ? 1.0f : float(weights[size_t(g)]);
  Expr y = c.call("nn.matmul", {counts, graph::makeConstant(m)});
  return {flat ? reshapeTo(c, y, {outSize}) : y};
}

}  // namespace

const std::unordered_map<std::string, Converter>& numericConverters() {
  static const std::unordered_map<std::string, Converter> table = {
      {"Det", det},
      {"MelWeightMatrix", melWeightMatrix},
      {"TfIdfVectorizer", tfIdfVectorizer},
  };
  return table;
}

}  // namespace loom::frontend::onnxi
