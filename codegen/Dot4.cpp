// dot4_u8s8 as x86 vpdpbusd (AVX-512 VNNI), vpmaddubsw + vpmaddwd (AVX2) or generic IR.
#include "codegen/Dot4.h"

#include "codegen/LLVMSupport.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>


namespace loom::codegen {

namespace {

llvm::Value* slice(llvm::IRBuilder<>& b, llvm::Value* v, int start, int n) {
  llvm::SmallVector<int, 64> idx;
  for (int i = 0; i < n; ++i) idx.push_back(start + i);
  return b.CreateShuffleVector(v, idx);
}

/// The concatenation of equally long vectors.
llvm::Value* concat(llvm::IRBuilder<>& b, std::vector<llvm::Value*> parts) {
  while (parts.size() > 1) {
    std::vector<llvm::Value*> next;
    for (size_t i = 0; i + 1 < parts.size(); i += 2) {
      int n = int(llvm::cast<llvm::FixedVectorType>(parts[i]->getType())->getNumElements());
      llvm::SmallVector<int, 64> idx;
      for (int k = 0; k < 2 * n; ++k) idx.push_back(k);
      next.push_back(b.CreateShuffleVector(parts[i], parts[i + 1], idx));
    }
    if (parts.size() % 2) next.push_back(parts.back());
    parts = std::move(next);
  }
  return parts[0];
}

/// A call of x86 intrinsic `id` with each argument bitcast to the parameter's type.
llvm::Value* x86Call(llvm::IRBuilder<>& b, llvm::Module& m, llvm::Intrinsic::ID id, std::vector<llvm::Value*> args) {
  llvm::Function* f = llvm::Intrinsic::getDeclaration(&m, id);
  for (size_t i = 0; i < args.size(); ++i)
    args[i] = b.CreateBitCast(args[i], f->getFunctionType()->getParamType(unsigned(i)));
  return b.CreateCall(f, args);
}

}  // namespace

Dot4Kind dot4Kind(const Target& t, int lanes, bool pairs16) {
  if (lanes % 16 == 0 && hasFeatures(t, "+avx512f,+avx512vnni")) return Dot4Kind::Vnni512;
  if (lanes % 8 == 0 && hasFeatures(t, "+avx512vl,+avx512vnni")) return Dot4Kind::Vnni256;
  if (lanes % 8 == 0 && pairs16 && hasFeatures(t, "+avx2")) return Dot4Kind::Avx2Pairs16;
  return Dot4Kind::Generic;
}

llvm::Value* emitDot4(llvm::IRBuilder<>& b, llvm::Module& m, const Target& t, llvm::Value* a, llvm::Value* w,
                      int lanes, bool pairs16, llvm::Value* acc) {
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Type* i8 = llvm::Type::getInt8Ty(ctx);
  auto vec = [&](llvm::Value* v) {
    if (v->getType()->isVectorTy()) return v;
    return lanes > 1 ? b.CreateVectorSplat(unsigned(lanes), v) : b.CreateBitCast(v, llvm::FixedVectorType::get(i32, 1));
  };
  a = vec(a);
  w = vec(w);
  auto bytes = [&](llvm::Value* v, int n) { return b.CreateBitCast(v, llvm::FixedVectorType::get(i8, unsigned(4 * n))); };
  auto scalarOut = [&](llvm::Value* r) { return lanes == 1 ? b.CreateExtractElement(r, uint64_t(0)) : r; };
  const Dot4Kind kind = dot4Kind(t, lanes, pairs16);
  if (kind == Dot4Kind::Vnni512 || kind == Dot4Kind::Vnni256) {
    const int step = kind == Dot4Kind::Vnni512 ? 16 : 8;
    const auto id = kind == Dot4Kind::Vnni512 ? llvm::Intrinsic::x86_avx512_vpdpbusd_512
                                              : llvm::Intrinsic::x86_avx512_vpdpbusd_256;
    std::vector<llvm::Value*> parts;
    for (int c = 0; c < lanes; c += step) {
      llvm::Value* src = acc ? slice(b, acc, c, step)
                             : llvm::Constant::getNullValue(llvm::FixedVectorType::get(i32, unsigned(step)));
      llvm::Value* r = x86Call(b, m, id, {src, slice(b, a, c, step), slice(b, w, c, step)});
      parts.push_back(b.CreateBitCast(r, llvm::FixedVectorType::get(i32, unsigned(step))));
    }
    return concat(b, parts);
  }
  if (kind == Dot4Kind::Avx2Pairs16) {
    llvm::Type* i16 = llvm::Type::getInt16Ty(ctx);
    llvm::Value* ones = llvm::ConstantInt::get(llvm::FixedVectorType::get(i16, 16), 1);
    std::vector<llvm::Value*> parts;
    for (int c = 0; c < lanes; c += 8) {
      llvm::Value* p = x86Call(b, m, llvm::Intrinsic::x86_avx2_pmadd_ub_sw,
                               {bytes(slice(b, a, c, 8), 8), bytes(slice(b, w, c, 8), 8)});
      llvm::Value* r = x86Call(b, m, llvm::Intrinsic::x86_avx2_pmadd_wd, {p, ones});
      parts.push_back(b.CreateBitCast(r, llvm::FixedVectorType::get(i32, 8)));
    }
    llvm::Value* r = concat(b, parts);
    return acc ? b.CreateAdd(acc, r) : r;
  }
  // Exact generic form: widen the bytes to i32, multiply, add the 4 products of each word.
  llvm::Type* wide = llvm::FixedVectorType::get(i32, unsigned(4 * lanes));
  llvm::Value* prod = b.CreateMul(b.CreateZExt(bytes(a, lanes), wide), b.CreateSExt(bytes(w, lanes), wide));
  llvm::Value* sum = nullptr;
  for (int k = 0; k < 4; ++k) {
    llvm::SmallVector<int, 64> idx;
    for (int l = 0; l < lanes; ++l) idx.push_back(4 * l + k);
    llvm::Value* part = b.CreateShuffleVector(prod, idx);
    sum = sum ? b.CreateAdd(sum, part) : part;
  }
  if (acc) sum = b.CreateAdd(vec(acc), sum);
  return scalarOut(sum);
}

}  // namespace loom::codegen
