// Polynomial float32 exp, sigmoid (Cephes coefficients), tanh and erf (MLAS's, as ONNX Runtime's) emitted as LLVM IR.
#include "codegen/FastMath.h"

#include <llvm/IR/Intrinsics.h>

#include <initializer_list>

namespace loom::codegen {

namespace {

llvm::Value* constF(llvm::IRBuilder<>& b, llvm::Type* ty, double v) {
  return llvm::ConstantFP::get(ty, v);
}

/// Horner evaluation c0*x^n + c1*x^(n-1) + ... with fused multiply-adds.
llvm::Value* horner(llvm::IRBuilder<>& b, llvm::Value* x, std::initializer_list<double> coeffs) {
  llvm::Type* ty = x->getType();
  auto it = coeffs.begin();
  llvm::Value* acc = constF(b, ty, *it++);
  for (; it != coeffs.end(); ++it)
    acc = b.CreateIntrinsic(llvm::Intrinsic::fma, {ty}, {acc, x, constF(b, ty, *it)});
  return acc;
}

llvm::Value* fma(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y, llvm::Value* z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, y, z});
}

llvm::Value* unaryIntrinsic(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id, llvm::Value* x) {
  return b.CreateIntrinsic(id, {x->getType()}, {x});
}

llvm::Type* intTypeLike(llvm::Type* ty) {
  llvm::Type* i32 = llvm::Type::getInt32Ty(ty->getContext());
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(ty))
    return llvm::FixedVectorType::get(i32, vt->getNumElements());
  return i32;
}

}  // namespace

llvm::Value* emitFastExp(llvm::IRBuilder<>& b, llvm::Value* x) {
  // exp(x) = 2^n * exp(r), n = round(x / ln2), r = x - n*ln2 in two parts (Cody-Waite); exp(r) by
  // Cephes expf's degree-7 polynomial. Results below 2^-126 flush to 0, above FLT_MAX go to inf.
  llvm::Type* ty = x->getType();
  llvm::Type* ity = intTypeLike(ty);
  llvm::Value* lo = constF(b, ty, -87.33654475);
  llvm::Value* hi = constF(b, ty, 88.72283905);
  llvm::Value* clamped = b.CreateIntrinsic(llvm::Intrinsic::maxnum, {ty}, {x, lo});
  clamped = b.CreateIntrinsic(llvm::Intrinsic::minnum, {ty}, {clamped, hi});
  llvm::Value* n = unaryIntrinsic(b, llvm::Intrinsic::roundeven,
                                  b.CreateFMul(clamped, constF(b, ty, 1.44269504088896341)));
  llvm::Value* r = fma(b, n, constF(b, ty, -0.693359375), clamped);
  r = fma(b, n, constF(b, ty, 2.12194440e-4), r);
  llvm::Value* p = horner(b, r, {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2,
                                 1.6666665459E-1, 5.0000001201E-1});
  llvm::Value* r2 = b.CreateFMul(r, r);
  llvm::Value* y = fma(b, p, r2, b.CreateFAdd(r, constF(b, ty, 1.0)));
  // 2^n by building the exponent bits; n is in [-126, 128], so split it in two halves to stay
  // in range of a normal float exponent.
  llvm::Value* ni = b.CreateFPToSI(n, ity);
  llvm::Value* n1 = b.CreateAShr(ni, llvm::ConstantInt::get(ity, 1));
  llvm::Value* n2 = b.CreateSub(ni, n1);
  auto pow2 = [&](llvm::Value* k) {
    llvm::Value* bits = b.CreateShl(b.CreateAdd(k, llvm::ConstantInt::get(ity, 127)),
                                    llvm::ConstantInt::get(ity, 23));
    return b.CreateBitCast(bits, ty);
  };
  y = b.CreateFMul(b.CreateFMul(y, pow2(n1)), pow2(n2));
  llvm::Value* zero = constF(b, ty, 0.0);
  llvm::Value* inf = llvm::ConstantFP::getInfinity(ty);
  y = b.CreateSelect(b.CreateFCmpOLT(x, lo), zero, y);
  y = b.CreateSelect(b.CreateFCmpOGT(x, hi), inf, y);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, y);
}

llvm::Value* emitFastTanh(llvm::IRBuilder<>& b, llvm::Value* x) {
  // MLAS's tanh (Eigen's rational approximation, as ONNX Runtime computes Tanh): x clamped to
  // [-9, 9], an odd degree-13 polynomial over an even degree-6 one in fused multiply-adds.
  llvm::Type* ty = x->getType();
  llvm::Value* v = b.CreateIntrinsic(llvm::Intrinsic::maxnum, {ty}, {x, constF(b, ty, -9.0f)});
  v = b.CreateIntrinsic(llvm::Intrinsic::minnum, {ty}, {v, constF(b, ty, 9.0f)});
  llvm::Value* s = b.CreateFMul(v, v);
  llvm::Value* p = horner(b, s, {-2.76076847742355e-16f, 2.00018790482477e-13f, -8.60467152213735e-11f,
                                 5.12229709037114e-08f, 1.48572235717979e-05f, 6.37261928875436e-04f,
                                 4.89352455891786e-03f});
  p = b.CreateFMul(p, v);
  llvm::Value* q = horner(b, s, {1.19825839466702e-06f, 1.18534705686654e-04f, 2.26843463243900e-03f,
                                 4.89352518554385e-03f});
  llvm::Value* y = b.CreateFDiv(p, q);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, y);
}

llvm::Value* emitFastSigmoid(llvm::IRBuilder<>& b, llvm::Value* x) {
  // 1 / (1 + exp(-x)) for x <= 0 is accurate; for x > 0 use exp(-x) too (no cancellation).
  llvm::Type* ty = x->getType();
  llvm::Value* e = emitFastExp(b, b.CreateFNeg(x));
  return b.CreateFDiv(constF(b, ty, 1.0), b.CreateFAdd(constF(b, ty, 1.0), e));
}

llvm::Value* emitFastErf(llvm::IRBuilder<>& b, llvm::Value* x) {
  // MLAS's erf (mlas/lib/erf.cpp constants, the FMA3 kernel as ONNX Runtime 1.32 computes it, so
  // Erf and Gelu equal ORT's bit for bit): below |x| = 0.921875 an odd polynomial in x^2; above,
  // 1 - exp(-|x| * P(|x|)) with MLAS's exp polynomial and 2^m from the exponent bits (-127 gives
  // 0, so erf is exactly 1 far out); the sign OR'ed back.
  llvm::Type* ty = x->getType();
  llvm::Type* ity = intTypeLike(ty);
  auto bits = [&](llvm::Value* v) { return b.CreateBitCast(v, ity); };
  llvm::Value* sign = b.CreateAnd(bits(x), llvm::ConstantInt::get(ity, 0x80000000u));
  llvm::Value* a = unaryIntrinsic(b, llvm::Intrinsic::fabs, x);
  llvm::Value* ac = b.CreateIntrinsic(llvm::Intrinsic::minnum, {ty}, {a, constF(b, ty, 3.725f)});
  llvm::Value* s = b.CreateFMul(ac, ac);
  llvm::Value* small = horner(b, s, {-5.99104969e-4f, 4.99339588e-3f, -2.67667342e-2f, 1.12818025e-1f,
                                     -3.76124859e-1f, 1.28379151e-1f});
  small = fma(b, small, ac, ac);
  llvm::Value* big = b.CreateFCmpOLE(constF(b, ty, 0.921875f), ac);
  llvm::Value* zero = constF(b, ty, 0.0);
  small = b.CreateSelect(big, zero, small);
  llvm::Value* ab = b.CreateSelect(big, a, zero);
  llvm::Value* r = horner(b, ab, {1.72948930e-5f, -3.83208680e-4f, 3.88393435e-3f, -2.42545605e-2f, 1.06777847e-1f,
                                  6.34846687e-1f, 1.28717512e-1f});
  r = fma(b, r, ab, ab);
  r = b.CreateFNeg(r);
  r = b.CreateIntrinsic(llvm::Intrinsic::maxnum, {ty}, {r, constF(b, ty, -88.3762626647949f)});
  llvm::Value* c = constF(b, ty, 1.25829120e+7f);
  llvm::Value* vr = b.CreateFSub(fma(b, constF(b, ty, 1.44269504088896341f), r, c), c);
  llvm::Value* vf = fma(b, vr, constF(b, ty, -6.93145752e-1f), r);
  vf = fma(b, vr, constF(b, ty, -1.42860677e-6f), vf);
  llvm::Value* y = horner(b, vf, {1.38319808e-3f, 8.37550033e-3f, 4.16689515e-2f, 1.66664466e-1f, 4.99999851e-1f,
                                  1.0f, 1.0f});
  llvm::Value* pow2 = b.CreateShl(b.CreateAdd(b.CreateFPToSI(vr, ity), llvm::ConstantInt::get(ity, 127)),
                                  llvm::ConstantInt::get(ity, 23));
  y = b.CreateFMul(y, b.CreateBitCast(pow2, ty));
  y = b.CreateFSub(constF(b, ty, 1.0), y);
  llvm::Value* res = b.CreateOr(b.CreateOr(bits(y), bits(small)), sign);
  y = b.CreateBitCast(res, ty);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, y);
}

}  // namespace loom::codegen
