// ONNX Einsum (as transpose/reshape, broadcast multiply and sum, with ellipsis and diagonals) and NonZero (folded to a constant).
#include <algorithm>
#include <cstring>
#include <map>

#include "core/frontend/onnx/OnnxContext.h"

namespace loom::frontend::onnxi {

namespace {

using graph::Expr;

bool isLetter(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); }

/// Einsum: "..." becomes fresh indices (aligned from the right, as in broadcasting); a repeated
/// index within an operand (a diagonal) becomes a fresh index tied to the first by an identity
/// matrix operand. Then every operand is transposed into one global index order (output indices
/// first, then the summed ones), reshaped with 1s for its missing indices, the operands are
/// multiplied with broadcasting and the summed indices reduced.
std::vector<Expr> einsum(Context& c) {
  std::string eq;
  for (char ch : c.attrString("equation", "")) if (ch != ' ') eq += ch;
  size_t arrow = eq.find("->");
  std::string lhs = arrow == std::string::npos ? eq : eq.substr(0, arrow);
  std::vector<std::string> raw{""};
  for (char ch : lhs) {
    if (ch == ',') raw.emplace_back();
    else raw.back() += ch;
  }
  if (int(raw.size()) != c.numInputs())
    c.fail("equation \"" + eq + "\" has " + std::to_string(raw.size()) + " operands but the node has " +
           std::to_string(c.numInputs()) + " inputs");
  // Each term as a string of index characters: letters, and chars 1..31 for the ellipsis dims.
  auto parse = [&](const std::string& term, size_t rank, size_t* ellRank, bool output) {
    size_t dots = term.find("...");
    std::string named = term;
    if (dots != std::string::npos) named.erase(dots, 3);
    for (char ch : named)
      if (!isLetter(ch)) c.fail("bad character '" + std::string(1, ch) + "' in term \"" + term + "\" of \"" + eq + "\"");
    if (dots == std::string::npos) {
      if (!output && named.size() != rank)
        c.fail("term \"" + term + "\" has " + std::to_string(named.size()) + " indices for an operand of rank " +
               std::to_string(rank));
      return named;
    }
    size_t er = output ? *ellRank : rank - std::min(rank, named.size());
    if (!output && named.size() > rank)
      c.fail("term \"" + term + "\" has more indices than its operand's rank " + std::to_string(rank));
    if (!output) *ellRank = std::max(*ellRank, er);
    std::string ell;
    for (size_t k = 0; k < er; ++k) ell += char(1 + k);  // right-aligned later
    return named.substr(0, dots) + ell + named.substr(dots);
  };
  size_t ellRank = 0;
  std::vector<std::string> terms;
  std::vector<Expr> xs;
  std::vector<std::vector<int64_t>> shapes;
  for (size_t t = 0; t < raw.size(); ++t) {
    xs.push_back(c.input(int(t)));
    shapes.push_back(c.staticShape(xs.back()));
    terms.push_back(parse(raw[t], shapes.back().size(), &ellRank, false));
  }
  if (ellRank > 30) c.fail("too many dimensions under \"...\"");
  // Right-align the ellipsis indices: an operand with fewer ellipsis dims takes the last ones.
  for (std::string& t : terms) {
    size_t n = size_t(std::count_if(t.begin(), t.end(), [](char ch) { return !isLetter(ch); }));
    for (char& ch : t) if (!isLetter(ch)) ch = char(ch + (ellRank - n));
  }
  std::map<char, int> count;
  for (const std::string& t : terms) for (char l : t) if (isLetter(l)) ++count[l];
  std::string out;
  std::string allEll;
  for (size_t k = 0; k < ellRank; ++k) allEll += char(1 + k);
  if (arrow != std::string::npos) {
    std::string o = eq.substr(arrow + 2);
    out = parse(o, 0, &ellRank, true);
    for (size_t i = 0; i < out.size(); ++i) {
      if (isLetter(out[i]) && !count.count(out[i])) c.fail("output index '" + std::string(1, out[i]) + "' appears in no operand");
      if (out.find(out[i]) != i) c.fail("repeated output index '" + std::string(1, out[i]) + "'");
    }
  } else {
    out = allEll;
    for (const auto& [l, n] : count) if (n == 1) out += l;  // std::map: sorted
  }
  // Diagonals: a repeated index gets a fresh character ('!'...) and an identity operand.
  char fresh = '!';
  size_t nOperands = terms.size();
  std::map<char, int64_t> size;
  for (size_t t = 0; t < nOperands; ++t) {
    for (size_t i = 0; i < terms[t].size(); ++i) {
      char l = terms[t][i];
      int64_t d = shapes[t][i];
      auto it = size.find(l);
      if (it == size.end() || it->second == 1) size[l] = d;
      else if (d != 1 && d != it->second)
        c.fail("index '" + std::string(1, isLetter(l) ? l : '.') + "' has sizes " + std::to_string(it->second) + " and " +
               std::to_string(d));
    }
  }
  for (size_t t = 0; t < nOperands; ++t) {
    for (size_t i = 0; i < terms[t].size(); ++i) {
      char l = terms[t][i];
      if (terms[t].find(l) == i) continue;
      if (fresh > '?') c.fail("too many repeated indices");
      if (shapes[t][i] != shapes[t][terms[t].find(l)]) c.fail("repeated index '" + std::string(1, l) + "' has different sizes");
      char f = fresh++;
      terms[t][i] = f;
      int64_t n = shapes[t][i];
      size[f] = n;
      runtime::NDArray eye = runtime::NDArray::empty({n, n}, runtime::DType::f32());
      for (int64_t a = 0; a < n; ++a)
        for (int64_t b = 0; b < n; ++b) eye.as<float>()[a * n + b] = a == b ? 1.0f : 0.0f;
      xs.push_back(c.call("cast", {graph::makeConstant(eye)}, {{"dtype", c.tensorType(xs[t]).dtype}}));
      shapes.push_back({n, n});
      terms.push_back(std::string{l, f});
    }
  }
  std::string order = out;
  for (const std::string& t : terms)
    for (char l : t) if (order.find(l) == std::string::npos) order += l;
  Expr prod;
  for (size_t t = 0; t < terms.size(); ++t) {
    const std::string& term = terms[t];
    std::vector<int64_t> perm(term.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = int64_t(i);
    std::sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return order.find(term[size_t(a)]) < order.find(term[size_t(b)]); });
    Expr x = xs[t];
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int64_t(i);
    if (!identity) x = c.call("transpose", {x}, {{"axes", perm}});
    std::vector<int64_t> full;
    for (char l : order) {
      size_t p = term.find(l);
      full.push_back(p == std::string::npos ? 1 : shapes[t][p]);
    }
    if (full.size() != term.size()) x = c.call("reshape", {x}, {{"newshape", full}});
    prod = prod.defined() ? c.call("multiply", {prod, x}) : x;
  }
  if (order.size() > out.size()) {
    std::vector<int64_t> axes;
    for (size_t i = out.size(); i < order.size(); ++i) axes.push_back(int64_t(i));
    prod = c.call("sum", {prod}, {{"axis", axes}, {"keepdims", int64_t(0)}});
  }
  // Output dims that stayed 1 in every operand but broadcast elsewhere already have their size.
  std::vector<int64_t> want;
  for (char l : out) want.push_back(size[l]);
  if (c.staticShape(prod) != want)
    prod = c.call("broadcast_to", {prod}, {{"shape", want}});
  return {prod};
}

/// NonZero of a constant: the [rank, count] int64 indices of the nonzero elements, row-major.
std::vector<Expr> nonZero(Context& c) {
  runtime::NDArray a;
  try {
    a = c.constInput(0);
  } catch (const ImportError&) {
    c.fail("NonZero needs a constant input: its output shape depends on the data");
  }
  const std::vector<int64_t>& shape = a.shape();
  size_t rank = shape.size();
  size_t bytes = a.dtype().bytes();
  bool isFloat = a.dtype().code == runtime::DType::Float;
  const unsigned char* p = static_cast<const unsigned char*>(a.data());
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const unsigned char* e = p + size_t(i) * bytes;
    bool nz = false;
    for (size_t b = 0; b < bytes; ++b) {
      unsigned char v = e[b];
      if (isFloat && b + 1 == bytes) v &= 0x7f;  // little-endian sign bit: -0.0 is zero
      nz = nz || v != 0;
    }
    if (nz) hits.push_back(i);
  }
  int64_t n = int64_t(hits.size());
  runtime::NDArray r = runtime::NDArray::empty({int64_t(std::max<size_t>(rank, 1)), n}, runtime::DType{runtime::DType::Int, 64, 1});
  int64_t* o = r.as<int64_t>();
  for (int64_t k = 0; k < n; ++k) {
    int64_t flat = hits[size_t(k)];
    if (rank == 0) o[k] = 0;
    for (size_t d = rank; d-- > 0;) {
      o[int64_t(d) * n + k] = flat % shape[d];
      flat /= shape[d];
    }
  }
  return {graph::makeConstant(r)};
}

}  // namespace

const std::unordered_map<std::string, Converter>& einsumConverters() {
  static const std::unordered_map<std::string, Converter> table{
      {"Einsum", einsum},
      {"NonZero", nonZero},
  };
  return table;
}

}  // namespace loom::frontend::onnxi
