// Hand-built TIR programs shared by the interp tests (matmul in block form, loop nests).
#pragma once
#include "core/tir/Op.h"

namespace loom::tir::testing {

inline Block makeBlock(std::string name, std::vector<IterVar> iters, std::vector<BufferRegion> reads,
                       std::vector<BufferRegion> writes, Stmt body, Stmt init = Stmt(),
                       std::vector<Buffer> alloc = {}, Annotations ann = {}) {
  auto* b = new BlockNode();
  b->name = std::move(name);
  b->iterVars = std::move(iters);
  b->reads = std::move(reads);
  b->writes = std::move(writes);
  b->body = std::move(body);
  b->init = std::move(init);
  b->allocBuffers = std::move(alloc);
  b->annotations = std::move(ann);
  return Block(b);
}

/// C[i, j] = sum_k A[i, k] * B[k, j] in block form with an init statement.
inline PrimFunc matmul(int n, int m, int k, DataType t = DataType::Float(32),
                       ForKind outerKind = ForKind::Serial) {
  Buffer A = makeBuffer("A", t, {n, k}), B = makeBuffer("B", t, {k, m}), C = makeBuffer("C", t, {n, m});
  Var i = makeVar("i"), j = makeVar("j"), r = makeVar("k");
  Var vi = makeVar("vi"), vj = makeVar("vj"), vk = makeVar("vk");
  Stmt init = bufferStore(C, makeZero(t), {vi, vj});
  Stmt body = bufferStore(C, bufferLoad(C, {vi, vj}) + bufferLoad(A, {vi, vk}) * bufferLoad(B, {vk, vj}), {vi, vj});
  Block blk = makeBlock("C",
                        {IterVar(vi, Range(0, n), IterType::DataPar), IterVar(vj, Range(0, m), IterType::DataPar),
                         IterVar(vk, Range(0, k), IterType::CommReduce)},
                        {BufferRegion(A, {Range(vi, 1), Range(0, k)}), BufferRegion(B, {Range(0, k), Range(vj, 1)})},
                        {BufferRegion(C, {Range(vi, 1), Range(vj, 1)})}, body, init);
  Stmt loops = forLoop(i, 0, n, outerKind,
                       forLoop(j, 0, m, ForKind::Serial,
                               forLoop(r, 0, k, ForKind::Serial, blockRealize({i, j, r}, Expr(), blk))));
  return makePrimFunc("main", {A->data, B->data, C->data}, {{A->data, A}, {B->data, B}, {C->data, C}}, loops);
}

}  // namespace loom::tir::testing
