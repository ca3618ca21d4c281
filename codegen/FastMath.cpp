// Polynomial float32 exp, sigmoid (Cephes coefficients), tanh and erf (MLAS's, as ONNX Runtime's) emitted as LLVM IR.
#include "codegen/FastMath.h"

#include "codegen/LLVMSupport.h"
#include "codegen/Target.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>

#include <algorithm>

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

namespace {

/// exp(x) of an x already clamped to [-87.33654475, `hi`]: 2^n * exp(r), n = round(x / ln2),
/// r = x - n*ln2 in two parts (Cody-Waite), exp(r) by Cephes expf's degree-7 polynomial. With `hi`
/// above 88.0 the scale 2^n may reach 2^128, which is built as two halves; up to 88.0 n stays at
/// most 127 and one power of two does.
llvm::Value* expOfClamped(llvm::IRBuilder<>& b, llvm::Value* clamped, double hi) {
  llvm::Type* ty = clamped->getType();
  llvm::Type* ity = intTypeLike(ty);
  llvm::Value* n = unaryIntrinsic(b, llvm::Intrinsic::roundeven,
                                  b.CreateFMul(clamped, constF(b, ty, 1.44269504088896341)));
  llvm::Value* r = fma(b, n, constF(b, ty, -0.693359375), clamped);
  r = fma(b, n, constF(b, ty, 2.12194440e-4), r);
  llvm::Value* p = horner(b, r, {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2,
                                 1.6666665459E-1, 5.0000001201E-1});
  llvm::Value* r2 = b.CreateFMul(r, r);
  llvm::Value* y = fma(b, p, r2, b.CreateFAdd(r, constF(b, ty, 1.0)));
  llvm::Value* ni = b.CreateFPToSI(n, ity);
  auto pow2 = [&](llvm::Value* k) {
    llvm::Value* bits = b.CreateShl(b.CreateAdd(k, llvm::ConstantInt::get(ity, 127)),
                                    llvm::ConstantInt::get(ity, 23));
    return b.CreateBitCast(bits, ty);
  };
  if (hi <= 88.0) return b.CreateFMul(y, pow2(ni));
  llvm::Value* n1 = b.CreateAShr(ni, llvm::ConstantInt::get(ity, 1));
  llvm::Value* n2 = b.CreateSub(ni, n1);
  return b.CreateFMul(b.CreateFMul(y, pow2(n1)), pow2(n2));
}

/// 1 / v for v >= 1: with AVX-512 (16 lanes, or 8 and 4 with VL) VRCP14PS, whose relative error
/// is below 2^-14, and one Newton step (error below 2^-27, under half an ulp); a division
/// otherwise. The division is the slowest instruction of a sigmoid (a 16-lane vdivps issues every
/// 5 cycles on Zen 4/5), the estimate and the step take the FMA pipes.
llvm::Value* reciprocalOfAtLeastOne(llvm::IRBuilder<>& b, const Target* t, llvm::Value* v) {
  llvm::Type* ty = v->getType();
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(ty);
  llvm::Intrinsic::ID id = llvm::Intrinsic::not_intrinsic;
  if (t && vt) {
    const unsigned lanes = vt->getNumElements();
    if (lanes == 16 && hasFeatures(*t, "+avx512f")) id = llvm::Intrinsic::x86_avx512_rcp14_ps_512;
    else if (lanes == 8 && hasFeatures(*t, "+avx512f,+avx512vl")) id = llvm::Intrinsic::x86_avx512_rcp14_ps_256;
    else if (lanes == 4 && hasFeatures(*t, "+avx512f,+avx512vl")) id = llvm::Intrinsic::x86_avx512_rcp14_ps_128;
  }
  if (id == llvm::Intrinsic::not_intrinsic) return b.CreateFDiv(constF(b, ty, 1.0), v);
  // Every lane kept (the mask operand: i8 for 4 and 8 lanes, i16 for 16).
  llvm::Type* maskTy = llvm::Type::getIntNTy(ty->getContext(), std::max(8u, vt->getNumElements()));
  llvm::Value* all = llvm::ConstantInt::get(maskTy, -1);
  llvm::Value* r = b.CreateIntrinsic(id, {}, {v, llvm::Constant::getNullValue(ty), all});
  // r + r * (1 - v * r)
  llvm::Value* e = fma(b, b.CreateFNeg(v), r, constF(b, ty, 1.0));
  return fma(b, r, e, r);
}

}  // namespace

llvm::Value* emitFastExp(llvm::IRBuilder<>& b, llvm::Value* x) {
  // Results below 2^-126 flush to 0, above FLT_MAX go to inf.
  llvm::Type* ty = x->getType();
  const double lo = -87.33654475, hi = 88.72283905;
  llvm::Value* clamped = b.CreateIntrinsic(llvm::Intrinsic::maxnum, {ty}, {x, constF(b, ty, lo)});
  clamped = b.CreateIntrinsic(llvm::Intrinsic::minnum, {ty}, {clamped, constF(b, ty, hi)});
  llvm::Value* y = expOfClamped(b, clamped, hi);
  llvm::Value* zero = constF(b, ty, 0.0);
  llvm::Value* inf = llvm::ConstantFP::getInfinity(ty);
  y = b.CreateSelect(b.CreateFCmpOLT(x, constF(b, ty, lo)), zero, y);
  y = b.CreateSelect(b.CreateFCmpOGT(x, constF(b, ty, hi)), inf, y);
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

llvm::Value* emitFastSigmoid(llvm::IRBuilder<>& b, llvm::Value* x, const Target* t) {
  // 1 / (1 + exp(-x)), also for x > 0 (no cancellation). exp(-x) needs no range selects: -x is
  // clamped to [-87.34, 88], where exp(-87.34) = 1.2e-38 leaves 1 / (1 + e) at 1 and exp(88) =
  // 1.6e38 gives 6e-39 (the result is below the smallest normal float from -x = 87.34 on, where
  // the true value is too); the scale 2^n stays a single power of two. NaN stays NaN.
  llvm::Type* ty = x->getType();
  llvm::Value* m = b.CreateFNeg(x);
  m = b.CreateIntrinsic(llvm::Intrinsic::maxnum, {ty}, {m, constF(b, ty, -87.33654475)});
  m = b.CreateIntrinsic(llvm::Intrinsic::minnum, {ty}, {m, constF(b, ty, 88.0)});
  llvm::Value* e = expOfClamped(b, m, 88.0);
  llvm::Value* y = reciprocalOfAtLeastOne(b, t, b.CreateFAdd(constF(b, ty, 1.0), e));
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, y);
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
