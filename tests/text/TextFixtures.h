// Hand-built PrimFuncs shared by the text-form tests.
#pragma once
#include "core/tir/Op.h"

namespace loom::tir::testing {

/// C[i, j] += A[i, k] * B[k, j] as TE's create_prim_func builds it (root block, one block "C").
inline PrimFunc matmulFunc(int n = 64) {
  DataType f32 = DataType::Float(32);
  Buffer A = makeBuffer("A", f32, {n, n}), B = makeBuffer("B", f32, {n, n}), C = makeBuffer("C", f32, {n, n});
  Var a = makeVar("A", DataType::Handle()), b = makeVar("B", DataType::Handle()),
      c = makeVar("C", DataType::Handle());
  Var i = makeVar("i"), j = makeVar("j"), k = makeVar("k");
  Var vi = makeVar("vi"), vj = makeVar("vj"), vk = makeVar("vk");
  auto* blk = new BlockNode();
  blk->name = "C";
  blk->iterVars = {IterVar(vi, Range(0, n), IterType::DataPar), IterVar(vj, Range(0, n), IterType::DataPar),
                   IterVar(vk, Range(0, n), IterType::CommReduce)};
  blk->reads = {BufferRegion(A, {Range(vi, 1), Range(vk, 1)}), BufferRegion(B, {Range(vk, 1), Range(vj, 1)})};
  blk->writes = {BufferRegion(C, {Range(vi, 1), Range(vj, 1)})};
  blk->init = bufferStore(C, floatImm(f32, 0), {vi, vj});
  blk->body = bufferStore(C, bufferLoad(C, {vi, vj}) + bufferLoad(A, {vi, vk}) * bufferLoad(B, {vk, vj}), {vi, vj});
  Stmt realize = blockRealize({i, j, k}, Expr(), Block(blk));
  Stmt loops = forLoop(i, 0, n, ForKind::Serial,
                       forLoop(j, 0, n, ForKind::Serial, forLoop(k, 0, n, ForKind::Serial, realize)));
  auto* root = new BlockNode();
  root->name = "root";
  root->body = loops;
  Annotations attrs;
  attrs["tir.noalias"] = boolImm(true);
  return makePrimFunc("main", {a, b, c}, {{a, A}, {b, B}, {c, C}}, blockRealize({}, Expr(), Block(root)), attrs);
}

}  // namespace loom::tir::testing

namespace loom::tir::testing {

/// A function with one float32 buffer parameter per shape, named A, B, C, ... and `body`
/// built by `make` from those buffers.
template <class F> PrimFunc funcWith(std::vector<std::vector<Expr>> shapes, F&& make, DataType t = DataType::Float(32)) {
  std::vector<Var> params;
  std::vector<std::pair<Var, Buffer>> bmap;
  std::vector<Buffer> bufs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::string name(1, static_cast<char>('A' + i));
    Buffer b = makeBuffer(name, t, shapes[i]);
    Var p = makeVar(name, DataType::Handle());
    params.push_back(p);
    bmap.emplace_back(p, b);
    bufs.push_back(b);
  }
  return makePrimFunc("main", params, bmap, make(bufs));
}

/// A function touching most statement kinds, without blocks.
inline PrimFunc kitchenSinkFunc() {
  DataType f32 = DataType::Float(32);
  return funcWith({{16, 16}, {256}}, [&](const std::vector<Buffer>& b) {
    const Buffer &A = b[0], &B = b[1];
    Var i = makeVar("i"), j = makeVar("j"), x = makeVar("x");
    Var tmp = makeVar("tmp", DataType::Handle());
    Buffer T1 = makeBuffer("T1", f32, {16}, "local");
    {
      auto* n = new BufferNode(*T1.get());
      n->data = tmp;
      T1 = Buffer(n);
    }
    Stmt inner = seq({bufferStore(T1, bufferLoad(A, {i, j}) * floatImm(f32, 2.5), {j}),
                      ifThen(Expr(j) < 8, bufferStore(A, call("exp", {bufferLoad(T1, {j})}), {i, j}),
                             bufferStore(A, floatImm(f32, 0), {i, j}))});
    Stmt loopJ = forLoop(j, 0, 16, ForKind::Vectorized, inner);
    Stmt alloc = allocate(tmp, f32, {16}, declBuffer(T1, loopJ), "local");
    Stmt loopI = forLoop(i, 0, 16, ForKind::Parallel, alloc, {}, {{"pragma_unroll", intImm(DataType::Int(32), 4)}});
    Var i2 = makeVar("i"), i3 = makeVar("i");  // same names, different variables
    Stmt let = letStmt(x, Expr(i2) * 2, bufferStore(B, cast(f32, Expr(x)), {Expr(x)}));
    Stmt threads = forLoop(i3, 0, 8, ForKind::ThreadBinding,
                           attrStmt(i3, "pragma_note", stringImm("hi"), evaluate(Expr(i3) + 1)), "threadIdx.x");
    Stmt w = whileLoop(bufferLoad(B, {0}) < floatImm(f32, 1), bufferStore(B, bufferLoad(B, {0}) + floatImm(f32, 1), {0}));
    return seq({loopI, assertStmt(Expr(1) > 0, "always", forLoop(i2, 2, 5, ForKind::Unrolled, let)), threads, w});
  });
}

}  // namespace loom::tir::testing
