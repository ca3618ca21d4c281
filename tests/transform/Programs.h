// Hand-built scheduled block-form programs for the lowering tests (what schedules produce).
#pragma once
#include "core/tir/Op.h"

namespace loom::transform::testing {

using namespace loom::tir;

struct Loop {
  Var var;
  Expr extent;
  ForKind kind = ForKind::Serial;
  std::string tag = {};
  Annotations ann = {};
};

inline Stmt nest(const std::vector<Loop>& loops, Stmt body) {
  for (auto it = loops.rbegin(); it != loops.rend(); ++it)
    body = forLoop(it->var, 0, it->extent, it->kind, body, it->tag, it->ann);
  return body;
}

inline Block makeBlock(std::string name, std::vector<IterVar> iters, Stmt body, Stmt init = Stmt(),
                       std::vector<Buffer> alloc = {}, Annotations ann = {}) {
  auto* b = new BlockNode();
  b->name = std::move(name);
  b->iterVars = std::move(iters);
  b->body = std::move(body);
  b->init = std::move(init);
  b->allocBuffers = std::move(alloc);
  b->annotations = std::move(ann);
  return Block(b);
}

inline IterVar spatial(const std::string& name, Expr extent) {
  return IterVar(makeVar(name), Range(0, std::move(extent)), IterType::DataPar);
}
inline IterVar reduce(const std::string& name, Expr extent) {
  return IterVar(makeVar(name), Range(0, std::move(extent)), IterType::CommReduce);
}

/// Wraps `body` in the root block (with `allocs` and `ann`) and makes the PrimFunc.
inline PrimFunc rootFunc(const std::vector<Buffer>& params, Stmt body, std::vector<Buffer> allocs = {},
                         Annotations ann = {}) {
  Stmt root = blockRealize({}, Expr(), makeBlock("root", {}, body, Stmt(), std::move(allocs), std::move(ann)));
  std::vector<Var> ps;
  std::vector<std::pair<Var, Buffer>> map;
  for (auto& b : params) {
    ps.push_back(b->data);
    map.emplace_back(b->data, b);
  }
  return makePrimFunc("main", ps, map, root);
}

inline const DataType f32 = DataType::Float(32);

/// C = A @ B with j split by `factor` (predicated when it does not divide N), loops
/// i, jo, k, ji; ji gets `innerKind`, i gets `outerKind`.
inline PrimFunc matmulSplit(int M, int N, int K, int factor, ForKind innerKind = ForKind::Serial,
                            ForKind outerKind = ForKind::Serial) {
  Buffer A = makeBuffer("A", f32, {M, K}), B = makeBuffer("B", f32, {K, N}), C = makeBuffer("C", f32, {M, N});
  Var i = makeVar("i"), jo = makeVar("j_0"), ji = makeVar("j_1"), k = makeVar("k");
  IterVar vi = spatial("vi", M), vj = spatial("vj", N), vk = reduce("vk", K);
  Stmt init = bufferStore(C, makeZero(f32), {vi.var, vj.var});
  Stmt body = bufferStore(C, bufferLoad(C, {vi.var, vj.var}) + bufferLoad(A, {vi.var, vk.var}) * bufferLoad(B, {vk.var, vj.var}),
                          {vi.var, vj.var});
  int outer = (N + factor - 1) / factor;
  Expr jv = Expr(jo) * factor + Expr(ji);
  Expr pred = N % factor ? Expr(jv < N) : Expr();
  Stmt br = blockRealize({i, jv, k}, pred, makeBlock("C", {vi, vj, vk}, body, init));
  return rootFunc({A, B, C}, nest({{i, M, outerKind}, {jo, outer}, {k, K}, {ji, factor, innerKind}}, br));
}

/// B[i] = A[i] * 2 + 1 over a split i (outer `outerKind`, inner `innerKind`), predicated tail.
inline PrimFunc elementwiseSplit(int n, int factor, ForKind outerKind, ForKind innerKind,
                                 std::string outerTag = {}, std::string innerTag = {}) {
  Buffer A = makeBuffer("A", f32, {n}), B = makeBuffer("B", f32, {n});
  Var io = makeVar("i_0"), ii = makeVar("i_1");
  IterVar vi = spatial("vi", n);
  Expr iv = Expr(io) * factor + Expr(ii);
  Expr pred = n % factor ? Expr(iv < n) : Expr();
  Stmt br = blockRealize({iv}, pred, makeBlock("B", {vi}, bufferStore(B, bufferLoad(A, {vi.var}) * 2.0f + 1.0f, {vi.var})));
  return rootFunc({A, B}, nest({{io, (n + factor - 1) / factor, outerKind, outerTag}, {ii, factor, innerKind, innerTag}}, br));
}

/// Three chained stages through intermediates T1, T2, T3 (root alloc_buffers) into C:
/// T1 = A + 1, T2 = T1 * 2, T3 = T2 - A, C = T3 * T3. T1 and T3 have disjoint lifetimes.
inline PrimFunc threeStages(int m, int n) {
  Buffer A = makeBuffer("A", f32, {m, n}), C = makeBuffer("C", f32, {m, n});
  Buffer T1 = makeBuffer("T1", f32, {m, n}), T2 = makeBuffer("T2", f32, {m, n}), T3 = makeBuffer("T3", f32, {m, n});
  auto stage = [&](const std::string& name, const Buffer& out, auto valueOf) {
    Var i = makeVar("i"), j = makeVar("j");
    IterVar vi = spatial("vi", m), vj = spatial("vj", n);
    Stmt st = bufferStore(out, valueOf(Expr(vi.var), Expr(vj.var)), {vi.var, vj.var});
    return nest({{i, m}, {j, n}}, blockRealize({i, j}, Expr(), makeBlock(name, {vi, vj}, st)));
  };
  Stmt s1 = stage("T1", T1, [&](Expr i, Expr j) { return bufferLoad(A, {i, j}) + 1.0f; });
  Stmt s2 = stage("T2", T2, [&](Expr i, Expr j) { return bufferLoad(T1, {i, j}) * 2.0f; });
  Stmt s3 = stage("T3", T3, [&](Expr i, Expr j) { return bufferLoad(T2, {i, j}) - bufferLoad(A, {i, j}); });
  Stmt s4 = stage("C", C, [&](Expr i, Expr j) { return bufferLoad(T3, {i, j}) * bufferLoad(T3, {i, j}); });
  return rootFunc({A, C}, seq({s1, s2, s3, s4}), {T1, T2, T3});
}

/// Row sums S[i] = sum_k A[i, k] with k marked unroll, under pragma_auto_unroll_max_step on the
/// root block (`maxStep` 0: no annotation); a second stage D[i] = S[i] * 0.5 runs over a small
/// serial loop the annotation may unroll.
inline PrimFunc rowSumUnrolled(int m, int k, int64_t maxStep) {
  Buffer A = makeBuffer("A", f32, {m, k}), D = makeBuffer("D", f32, {m});
  Buffer S = makeBuffer("S", f32, {m});
  Var i = makeVar("i"), r = makeVar("k"), i2 = makeVar("i2");
  IterVar vi = spatial("vi", m), vk = reduce("vk", k);
  Stmt upd = bufferStore(S, bufferLoad(S, {vi.var}) + bufferLoad(A, {vi.var, vk.var}), {vi.var});
  Stmt s1 = nest({{i, m}, {r, k, ForKind::Unrolled}},
                 blockRealize({i, r}, Expr(), makeBlock("S", {vi, vk}, upd, bufferStore(S, makeZero(f32), {vi.var}))));
  IterVar vi2 = spatial("vi", m);
  Stmt s2 = nest({{i2, m}}, blockRealize({i2}, Expr(), makeBlock("D", {vi2}, bufferStore(D, bufferLoad(S, {vi2.var}) * floatImm(f32, 0.5), {vi2.var}))));
  Annotations ann;
  if (maxStep > 0) ann["pragma_auto_unroll_max_step"] = intImm(DataType::Int(32), maxStep);
  return rootFunc({A, D}, seq({s1, s2}), {S}, ann);
}

/// Y = elementwise intrinsics of X: rsqrt(|x| + 1) + sigmoid(x) + pow(x, 2), and an int part
/// Z[i] = fmod(I[i], 3) + fabs(I[i]).
inline PrimFunc intrinsicsProgram(int n) {
  Buffer X = makeBuffer("X", f32, {n}), Y = makeBuffer("Y", f32, {n});
  Buffer I = makeBuffer("I", DataType::Int(32), {n}), Z = makeBuffer("Z", DataType::Int(32), {n});
  Var i = makeVar("i"), j = makeVar("j");
  IterVar vi = spatial("vi", n), vj = spatial("vj", n);
  Expr x = bufferLoad(X, {vi.var});
  Expr y = call("rsqrt", {call("fabs", {x}) + 1.0f}) + call("sigmoid", {x}) + call("pow", {x, floatImm(f32, 2.0)});
  Stmt s1 = nest({{i, n}}, blockRealize({i}, Expr(), makeBlock("Y", {vi}, bufferStore(Y, y, {vi.var}))));
  Expr iv = bufferLoad(I, {vj.var});
  Expr z = call("fmod", {iv, intImm(DataType::Int(32), 3)}) + call("fabs", {iv});
  Stmt s2 = nest({{j, n}}, blockRealize({j}, Expr(), makeBlock("Z", {vj}, bufferStore(Z, z, {vj.var}))));
  return rootFunc({X, I, Y, Z}, seq({s1, s2}));
}

/// Out[i, j] = In[i, j] + 1 where In is a strided view (row stride `rowStride`) at elem_offset `off`.
inline PrimFunc stridedCopy(int m, int n, int rowStride, int off) {
  Buffer In = makeBuffer("In", f32, {m, n});
  {
    auto* b = const_cast<BufferNode*>(In.get());
    b->strides = {rowStride, 1};
    b->elemOffset = off;
  }
  Buffer Out = makeBuffer("Out", f32, {m, n});
  Var i = makeVar("i"), j = makeVar("j");
  IterVar vi = spatial("vi", m), vj = spatial("vj", n);
  Stmt st = bufferStore(Out, bufferLoad(In, {vi.var, vj.var}) + 1.0f, {vi.var, vj.var});
  return rootFunc({In, Out}, nest({{i, m}, {j, n}}, blockRealize({i, j}, Expr(), makeBlock("Out", {vi, vj}, st))));
}

}  // namespace loom::transform::testing
