// TIR to LLVM IR for CPUs: expressions, memory, loops, parallel closures, asserts, debug lines.
#include "codegen/CodeGenLLVM.h"

#include <cstdlib>
#include <exception>
#include <functional>
#include <thread>

#include <llvm/ADT/StringMap.h>
#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "codegen/Dot4.h"
#include "codegen/FastMath.h"
#include "codegen/FreeVars.h"
#include "codegen/LLVMModuleImpl.h"
#include "codegen/LLVMSupport.h"
#include "core/arith/Analyzer.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"
#include "core/transform/MakePackedAPI.h"
#include "loom/c_runtime_api.h"

namespace loom::codegen {

using namespace loom::tir;
namespace pk = loom::transform::packed;

std::unordered_map<const StmtNode*, int> loopLineMap(const PrintResult& printed) {
  std::unordered_map<const StmtNode*, int> out;
  for (auto& [s, r] : printed.stmtLines)
    if (s.as<ForNode>() && r.valid() && !out.count(s.get())) out[s.get()] = r.first;
  return out;
}

namespace {

/// A positive number known to divide `e` (1 when nothing is known); sets the alignment of accesses.
int64_t knownMultiple(const Expr& e) {
  if (auto* i = e.as<IntImmNode>()) return i->value == 0 ? (int64_t(1) << 30) : std::abs(i->value);
  if (auto* c = e.as<CastNode>()) return c->value.dtype().isIntegral() ? knownMultiple(c->value) : 1;
  if (auto* b = e.as<BinaryNode>()) {
    switch (b->op) {
    case BinOp::Add:
    case BinOp::Sub: return std::gcd(knownMultiple(b->a), knownMultiple(b->b));
    case BinOp::Mul: return std::min<int64_t>(knownMultiple(b->a) * knownMultiple(b->b), int64_t(1) << 30);
    default: return 1;
    }
  }
  if (auto* r = e.as<RampNode>()) return knownMultiple(r->base);
  if (auto* bc = e.as<BroadcastNode>()) return knownMultiple(bc->value);
  return 1;
}

class CodeGen {
public:
  CodeGen(llvm::LLVMContext& ctx, llvm::Module& mod, const Target& target, const CodeGenOptions& opts)
      : m_ctx(ctx), m_mod(mod), m_b(ctx), m_target(target), m_opts(opts), m_md(ctx) {
    m_i1 = llvm::Type::getInt1Ty(ctx);
    m_i8 = llvm::Type::getInt8Ty(ctx);
    m_i16 = llvm::Type::getInt16Ty(ctx);
    m_i32 = llvm::Type::getInt32Ty(ctx);
    m_i64 = llvm::Type::getInt64Ty(ctx);
    m_f32 = llvm::Type::getFloatTy(ctx);
    m_ptr = llvm::PointerType::get(ctx, 0);
    m_tbaaRoot = m_md.createTBAARoot("loom.tbaa");
    if (target.fastMath) m_b.setFastMathFlags(llvm::FastMathFlags::getFast());
    if (opts.debugInfo) {
      m_dib = std::make_unique<llvm::DIBuilder>(mod);
      m_diFile = m_dib->createFile(opts.sourceName, ".");
      m_dib->createCompileUnit(llvm::dwarf::DW_LANG_C, m_diFile, "loom", target.optLevel > 0, "", 0);
      mod.addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
      mod.addModuleFlag(llvm::Module::Warning, "Dwarf Version", 4);
    }
  }

  void finish() {
    if (m_dib) m_dib->finalize();
  }

  std::string addFunction(const PrimFunc& f) {
    m_func = f;
    std::string name = f->name;
    if (auto it = f->attrs.find("global_symbol"); it != f->attrs.end())
      if (auto* s = it->second.as<StringImmNode>()) name = s->value;
    m_funcName = name;
    bool noalias = true;
    if (auto it = f->attrs.find("tir.noalias"); it != f->attrs.end())
      if (auto* i = it->second.as<IntImmNode>()) noalias = i->value != 0;
    m_useTBAA = noalias;
    m_signedNoWrap = false;
    if (auto it = f->attrs.find("loom.signed_no_wrap"); it != f->attrs.end())
      if (auto* i = it->second.as<IntImmNode>()) m_signedNoWrap = i->value != 0;

    std::vector<llvm::Type*> paramTypes;
    for (auto& p : f->params) paramTypes.push_back(regType(p->dtype));
    auto* fty = llvm::FunctionType::get(m_i32, paramTypes, false);
    if (m_mod.getFunction(name))
      LOOM_THROW(CodeGenError) << "two functions named '" << name << "' in one module";
    llvm::Function* fn = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, m_mod);
    setFunctionAttrs(fn);
    for (size_t i = 0; i < f->params.size(); ++i) {
      llvm::Argument* a = fn->getArg(i);
      a->setName(f->params[i]->name);
      m_vars[f->params[i].get()] = a;
      Buffer b = f->bufferOf(f->params[i]);
      if (b.defined() && f->params[i]->dtype.isHandle()) {
        if (noalias) a->addAttr(llvm::Attribute::NoAlias);
        if (b->alignment > 1)
          a->addAttr(llvm::Attribute::getWithAlignment(m_ctx, llvm::Align(b->alignment)));
        // The buffer's own data var names the same memory.
        if (!b->data.same_as(f->params[i])) m_vars[b->data.get()] = a;
      }
    }
    // Code outside every loop (the argument checks, top-level statements) maps to the function's
    // own line when spans are the line source, else to line 0: "no TIR loop".
    int line = m_opts.lineMap.empty() && f->span.line > 0 ? f->span.line : 0;
    beginFunction(fn, name, line);
    emitStmt(f->body);
    if (!m_b.GetInsertBlock()->getTerminator()) m_b.CreateRet(llvm::ConstantInt::get(m_i32, 0));
    endFunction();
    m_vars.clear();
    m_stackBytes.clear();
    return name;
  }

private:
  // --- Function state -------------------------------------------------------------------------
  struct FunctionState {
    llvm::Function* fn = nullptr;
    llvm::BasicBlock* entry = nullptr;
    llvm::DISubprogram* sp = nullptr;
    int line = 0;
    bool inParallel = false;
    llvm::Value* errbuf = nullptr;
  };

  void setFunctionAttrs(llvm::Function* fn) {
    fn->addFnAttr("target-cpu", m_target.cpu);
    if (std::string features = llvmFeatureString(m_target); !features.empty()) fn->addFnAttr("target-features", features);
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    if (m_target.fastMath) {
      fn->addFnAttr("unsafe-fp-math", "true");
      fn->addFnAttr("no-signed-zeros-fp-math", "true");
    }
  }

  void beginFunction(llvm::Function* fn, const std::string& name, int line) {
    m_fs = FunctionState();
    m_fs.fn = fn;
    m_fs.entry = llvm::BasicBlock::Create(m_ctx, "entry", fn);
    m_fs.line = line;
    m_b.SetInsertPoint(m_fs.entry);
    if (m_dib) {
      auto* sty = m_dib->createSubroutineType(m_dib->getOrCreateTypeArray({}));
      auto flags = llvm::DISubprogram::SPFlagDefinition;
      if (m_target.optLevel > 0) flags |= llvm::DISubprogram::SPFlagOptimized;
      m_fs.sp = m_dib->createFunction(m_diFile, name, name, m_diFile, line, sty, line,
                                      llvm::DINode::FlagPrototyped, flags);
      fn->setSubprogram(m_fs.sp);
      setLine(line);
    }
  }

  void endFunction() {
    if (m_dib) m_dib->finalizeSubprogram(m_fs.sp);
  }

  void setLine(int line) {
    if (!m_dib) return;
    m_b.SetCurrentDebugLocation(llvm::DILocation::get(m_ctx, line, 0, m_fs.sp));
  }

  int lineOf(const StmtNode* s) const {
    // With a line map the lines are those of one printed text; spans point elsewhere.
    if (!m_opts.lineMap.empty()) {
      auto it = m_opts.lineMap.find(s);
      return it == m_opts.lineMap.end() ? 0 : it->second;
    }
    return s->span.line;
  }

  // --- Types ------------------------------------------------------------------------------------
  llvm::Type* scalarRegType(DataType t) {
    if (t.isVoid()) return llvm::Type::getVoidTy(m_ctx);
    switch (t.code()) {
    case DataType::Code::Bool: return m_i1;
    case DataType::Code::Int:
    case DataType::Code::UInt: return llvm::Type::getIntNTy(m_ctx, t.bits());
    case DataType::Code::Float:
      if (t.bits() == 16) return llvm::Type::getHalfTy(m_ctx);
      if (t.bits() == 32) return m_f32;
      if (t.bits() == 64) return llvm::Type::getDoubleTy(m_ctx);
      break;
    case DataType::Code::BFloat: return m_i16;
    case DataType::Code::Handle: return m_ptr;
    }
    LOOM_THROW(CodeGenError) << "codegen: unsupported type " << t.str();
  }
  llvm::Type* regType(DataType t) {
    llvm::Type* e = scalarRegType(t.element());
    return t.lanes() > 1 ? llvm::FixedVectorType::get(e, t.lanes()) : e;
  }
  /// In memory a bool takes one byte.
  llvm::Type* memType(DataType t) {
    llvm::Type* e = t.isBool() ? m_i8 : scalarRegType(t.element());
    return t.lanes() > 1 ? llvm::FixedVectorType::get(e, t.lanes()) : e;
  }
  llvm::Type* withLanes(llvm::Type* elem, int lanes) {
    return lanes > 1 ? llvm::FixedVectorType::get(elem, lanes) : elem;
  }
  int lanesOf(llvm::Value* v) {
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType())) return vt->getNumElements();
    return 1;
  }

  // --- bfloat16 ---------------------------------------------------------------------------------
  llvm::Value* bf16ToF32(llvm::Value* v) {
    int lanes = lanesOf(v);
    llvm::Value* w = m_b.CreateZExt(v, withLanes(m_i32, lanes));
    w = m_b.CreateShl(w, 16);
    return m_b.CreateBitCast(w, withLanes(m_f32, lanes));
  }
  llvm::Value* f32ToBf16(llvm::Value* v) {
    int lanes = lanesOf(v);
    llvm::Type* i32 = withLanes(m_i32, lanes);
    llvm::Value* bits = m_b.CreateBitCast(v, i32);
    llvm::Value* lsb = m_b.CreateAnd(m_b.CreateLShr(bits, 16), llvm::ConstantInt::get(i32, 1));
    llvm::Value* rounded = m_b.CreateAdd(bits, m_b.CreateAdd(lsb, llvm::ConstantInt::get(i32, 0x7fff)));
    llvm::Value* isNan = m_b.CreateFCmpUNO(v, v);
    llvm::Value* out = m_b.CreateSelect(isNan, llvm::ConstantInt::get(i32, 0x7fc00000), rounded);
    return m_b.CreateTrunc(m_b.CreateLShr(out, 16), withLanes(m_i16, lanes));
  }

  // --- Casts ------------------------------------------------------------------------------------
  llvm::Value* castValue(llvm::Value* v, DataType from, DataType to) {
    if (from == to) return v;
    int lanes = to.lanes();
    if (from.lanes() == 1 && lanes > 1) {
      v = castValue(v, from, to.element());
      return m_b.CreateVectorSplat(lanes, v);
    }
    if (from.isBFloat16()) {
      v = bf16ToF32(v);
      from = DataType::Float(32, from.lanes());
      if (from == to) return v;
    }
    if (to.isBFloat16()) return f32ToBf16(castValue(v, from, DataType::Float(32, lanes)));
    llvm::Type* ty = regType(to);
    if (to.isBool()) {
      if (from.isFloat()) return m_b.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
      if (from.isHandle()) return m_b.CreateIsNotNull(v);
      return m_b.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    }
    if (from.isBool()) {
      if (to.isFloat()) return m_b.CreateUIToFP(v, ty);
      return m_b.CreateZExt(v, ty);
    }
    if (from.isHandle() && to.isIntegral()) return m_b.CreatePtrToInt(v, ty);
    if (from.isIntegral() && to.isHandle()) return m_b.CreateIntToPtr(v, ty);
    if (from.isIntegral() && to.isIntegral()) return m_b.CreateIntCast(v, ty, from.isInt());
    if (from.isIntegral() && to.isFloat())
      return from.isInt() ? m_b.CreateSIToFP(v, ty) : m_b.CreateUIToFP(v, ty);
    if (from.isFloat() && to.isIntegral())
      return to.isInt() ? m_b.CreateFPToSI(v, ty) : m_b.CreateFPToUI(v, ty);
    if (from.isFloat() && to.isFloat()) return m_b.CreateFPCast(v, ty);
    LOOM_THROW(CodeGenError) << "codegen: cannot cast " << from.str() << " to " << to.str();
  }

  // --- Expressions ------------------------------------------------------------------------------
  llvm::Value* emitExpr(const Expr& e) {
    LOOM_ICHECK(e.defined()) << "undefined expression";
    switch (e->nodeKind) {
    case NodeKind::IntImm: {
      auto* op = e.as<IntImmNode>();
      return llvm::ConstantInt::get(regType(op->dtype), uint64_t(op->value), op->dtype.isInt());
    }
    case NodeKind::FloatImm: {
      auto* op = e.as<FloatImmNode>();
      if (op->dtype.isBFloat16())
        return f32ToBf16(llvm::ConstantFP::get(m_f32, op->value));
      return llvm::ConstantFP::get(regType(op->dtype), op->value);
    }
    case NodeKind::StringImm: return stringConstant(e.as<StringImmNode>()->value);
    case NodeKind::Var: {
      auto* op = e.as<VarNode>();
      auto it = m_vars.find(op);
      if (it == m_vars.end())
        LOOM_THROW(CodeGenError) << "codegen: variable '" << op->name << "' is used but not defined in '"
                                 << m_funcName << "'";
      return it->second;
    }
    case NodeKind::Cast: {
      auto* op = e.as<CastNode>();
      return castValue(emitExpr(op->value), op->value.dtype(), op->dtype);
    }
    case NodeKind::Binary: return emitBinary(e.as<BinaryNode>());
    case NodeKind::Not: return m_b.CreateNot(emitExpr(e.as<NotNode>()->a));
    case NodeKind::Select: {
      auto* op = e.as<SelectNode>();
      llvm::Value* c = emitCond(op->condition);
      llvm::Value* t = emitExpr(op->trueValue);
      llvm::Value* f = emitExpr(op->falseValue);
      if (lanesOf(c) == 1 && lanesOf(t) > 1) c = m_b.CreateVectorSplat(lanesOf(t), c);
      return m_b.CreateSelect(c, t, f);
    }
    case NodeKind::Let: {
      auto* op = e.as<LetNode>();
      llvm::Value* v = emitExpr(op->value);
      bindVar(op->var, v, op->value);
      llvm::Value* r = emitExpr(op->body);
      m_vars.erase(op->var.get());
      return r;
    }
    case NodeKind::BufferLoad: return emitLoad(e.as<BufferLoadNode>(), nullptr, nullptr);
    case NodeKind::Ramp: {
      auto* op = e.as<RampNode>();
      llvm::Value* base = emitExpr(op->base);
      llvm::Value* stride = emitExpr(op->stride);
      llvm::Type* ety = base->getType();
      std::vector<llvm::Constant*> steps;
      for (int i = 0; i < op->lanes; ++i) steps.push_back(llvm::ConstantInt::get(ety, i));
      llvm::Value* idx = llvm::ConstantVector::get(steps);
      llvm::Value* vs = m_b.CreateVectorSplat(op->lanes, stride);
      llvm::Value* vb = m_b.CreateVectorSplat(op->lanes, base);
      return m_b.CreateAdd(vb, m_b.CreateMul(vs, idx));
    }
    case NodeKind::Broadcast: {
      auto* op = e.as<BroadcastNode>();
      return m_b.CreateVectorSplat(op->lanes, emitExpr(op->value));
    }
    case NodeKind::Call: return emitCall(e.as<CallNode>());
    default: break;
    }
    LOOM_THROW(CodeGenError) << "codegen: unexpected expression node in '" << m_funcName << "'";
  }

  /// A condition as i1 (or <N x i1>): non-bool values compare against zero.
  llvm::Value* emitCond(const Expr& e) {
    llvm::Value* v = emitExpr(e);
    if (e.dtype().isBool()) return v;
    return castValue(v, e.dtype(), DataType::Bool(e.dtype().lanes()));
  }

  /// `e` converted to type `t` (loop bounds and let values whose type differs from their var).
  llvm::Value* emitAs(const Expr& e, DataType t) { return castValue(emitExpr(e), e.dtype(), t); }

  void bindVar(const Var& v, llvm::Value* value, const Expr& src) {
    if (src.defined() && src.dtype() != v->dtype && src.dtype().lanes() == v->dtype.lanes())
      value = castValue(value, src.dtype(), v->dtype);
    m_vars[v.get()] = value;
    if (!value->hasName() && !llvm::isa<llvm::Constant>(value)) value->setName(v->name);
    // A handle bound to another handle names the same memory (one alias class).
    if (v->dtype.isHandle())
      if (auto* sv = src.as<VarNode>()) m_handleAlias[v.get()] = aliasRoot(sv);
  }

  const VarNode* aliasRoot(const VarNode* v) const {
    for (int guard = 0; guard < 64; ++guard) {
      auto it = m_handleAlias.find(v);
      if (it == m_handleAlias.end()) break;
      v = it->second;
    }
    return v;
  }

  llvm::Value* stringConstant(const std::string& s) {
    auto it = m_strings.find(s);
    if (it != m_strings.end()) return it->second;
    llvm::Value* g = m_b.CreateGlobalString(s, ".str");
    m_strings[s] = g;
    return g;
  }

  /// The byte operand of dot4_u8s8 packed from four uint8 loads of consecutive elements of one
  /// buffer (a conv's input channels: cast(u32, x[i]) + cast(u32, x[i + 1]) * 256 + ... +
  /// cast(u32, x[i + 3]) * 2^24, as int32) is one unaligned 32-bit load. LLVM merges such byte
  /// loads itself only while it sees their addresses as scalars: in a register tile of 28 rows
  /// the SLP vectorizer put the addresses of most rows in vectors first, and each of those
  /// operands became 4 byte loads, their addresses extracted lane by lane, and shifts and ors
  /// (about 15 instructions per vpdpbusd; 24 of the 28 rows of MobileNet-v2's 1x1 int8 convs).
  /// Returns null when `e` is not such a sum, or on a big-endian target (where the word's bytes
  /// would be in the other order).
  llvm::Value* emitPackedBytes(const Expr& e) {
    if (!m_mod.getDataLayout().isLittleEndian()) return nullptr;
    auto* cast = e.as<CastNode>();
    if (!cast || cast->dtype != DataType::Int(32)) return nullptr;
    const Expr& sum = cast->value;
    if (sum.dtype() != DataType::UInt(32)) return nullptr;
    std::vector<Expr> terms;
    std::function<void(const Expr&)> flatten = [&](const Expr& x) {
      if (auto* b = x.as<BinaryNode>(); b && b->op == BinOp::Add) {
        flatten(b->a);
        flatten(b->b);
      } else {
        terms.push_back(x);
      }
    };
    flatten(sum);
    if (terms.size() != 4) return nullptr;
    const BufferLoadNode* byLane[4] = {nullptr, nullptr, nullptr, nullptr};
    for (const Expr& t : terms) {
      Expr v = t;
      int64_t factor = 1;
      if (auto* m = t.as<BinaryNode>(); m && m->op == BinOp::Mul) {
        const int64_t* c = asConstInt(m->b);
        v = m->a;
        if (!c) c = asConstInt(m->a), v = m->b;
        if (!c) return nullptr;
        factor = *c;
      }
      int k = factor == 1 ? 0 : factor == 256 ? 1 : factor == 65536 ? 2 : factor == 16777216 ? 3 : -1;
      auto* vc = v.as<CastNode>();
      if (k < 0 || byLane[k] || !vc || vc->dtype != DataType::UInt(32)) return nullptr;
      auto* ld = vc->value.as<BufferLoadNode>();
      if (!ld || ld->dtype != DataType::UInt(8)) return nullptr;
      byLane[k] = ld;
    }
    const Buffer& buf = byLane[0]->buffer;
    arith::Analyzer an;
    const Expr first = flatIndex(buf, byLane[0]->indices);
    for (int k = 1; k < 4; ++k) {
      if (byLane[k]->buffer.get() != buf.get()) return nullptr;
      // Kept alive: asConstInt points into the node (the temporary was freed before *d, an
      // AddressSanitizer heap-use-after-free in model.test_qnn_ops and model.test_vnni_emulated).
      const Expr diff = an.simplify(flatIndex(buf, byLane[k]->indices) - first);
      const int64_t* d = asConstInt(diff);
      if (!d || *d != k) return nullptr;
    }
    Address a = address(buf, byLane[0]->indices, 1);
    if (a.lanes != 1) return nullptr;
    llvm::LoadInst* ld = m_b.CreateAlignedLoad(m_i32, a.base, llvm::Align(1));
    annotate(ld, buf);
    return ld;
  }

  /// A dot4 byte operand: a broadcast of packed bytes as one 32-bit load (emitPackedBytes).
  llvm::Value* emitDot4Bytes(const Expr& e) {
    if (auto* bc = e.as<BroadcastNode>())
      if (llvm::Value* v = emitPackedBytes(bc->value)) return m_b.CreateVectorSplat(bc->lanes, v);
    return emitExpr(e);
  }

  llvm::Value* emitBinary(const BinaryNode* op) {
    // acc + dot4(a, w): the accumulator goes into vpdpbusd on VNNI targets (no separate add).
    if (op->op == BinOp::Add && op->a.dtype().isInt() && op->a.dtype().bits() == 32 && op->a.dtype().lanes() > 1)
      if (auto* c = op->b.as<CallNode>(); c && (c->op == "dot4_u8s8" || c->op == "dot4_u8s8_pairs16") &&
                                          c->args.size() == 2 && c->dtype == op->a.dtype())
        return emitDot4(m_b, m_mod, m_target, emitDot4Bytes(c->args[0]), emitExpr(c->args[1]), c->dtype.lanes(),
                        c->op == "dot4_u8s8_pairs16", emitExpr(op->a));
    DataType t = op->a.dtype();
    llvm::Value* a = emitExpr(op->a);
    llvm::Value* b = emitExpr(op->b);
    int la = lanesOf(a), lb = lanesOf(b);
    if (la != lb) {
      if (la == 1) a = m_b.CreateVectorSplat(lb, a);
      else b = m_b.CreateVectorSplat(la, b);
      t = t.withLanes(std::max(la, lb));
    }
    if (t.isBFloat16()) {
      a = bf16ToF32(a);
      b = bf16ToF32(b);
      llvm::Value* r = binaryOn(op->op, DataType::Float(32, t.lanes()), a, b);
      return isComparison(op->op) ? r : f32ToBf16(r);
    }
    return binaryOn(op->op, t, a, b);
  }

  /// Signed + - * of 32 bits and more in a kernel marked "loom.signed_no_wrap" (a kernel over
  /// shape symbols, transform/HoistSymbolicTerms.h) carry nsw, as TVM emits them everywhere: the
  /// index `sext(i * s + j)` of a symbolic stride `s` is then an affine recurrence to
  /// ScalarEvolution (a dynamic ResNet-18 compiled in 14.5 instead of 17.9 s of CPU).
  bool nsw(DataType t) const { return m_signedNoWrap && t.isInt() && t.bits() >= 32; }

  llvm::Value* binaryOn(BinOp op, DataType t, llvm::Value* a, llvm::Value* b) {
    bool isF = t.isFloat(), isS = t.isInt();
    switch (op) {
    case BinOp::Add: return isF ? m_b.CreateFAdd(a, b) : m_b.CreateAdd(a, b, "", false, nsw(t));
    case BinOp::Sub: return isF ? m_b.CreateFSub(a, b) : m_b.CreateSub(a, b, "", false, nsw(t));
    case BinOp::Mul: return isF ? m_b.CreateFMul(a, b) : m_b.CreateMul(a, b, "", false, nsw(t));
    case BinOp::Div:
      if (isF) return m_b.CreateFDiv(a, b);
      return isS ? m_b.CreateSDiv(a, b) : m_b.CreateUDiv(a, b);
    case BinOp::Mod:
      if (isF) return m_b.CreateFRem(a, b);
      return isS ? m_b.CreateSRem(a, b) : m_b.CreateURem(a, b);
    case BinOp::FloorDiv: {
      if (isF) return m_b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, m_b.CreateFDiv(a, b));
      if (!isS) return m_b.CreateUDiv(a, b);
      // q = a / b rounded toward zero, minus one when the remainder's sign differs from b's.
      llvm::Value* q = m_b.CreateSDiv(a, b);
      llvm::Value* r = m_b.CreateSRem(a, b);
      llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
      llvm::Value* adjust = m_b.CreateAnd(m_b.CreateICmpNE(r, zero),
                                          m_b.CreateICmpNE(m_b.CreateICmpSLT(r, zero), m_b.CreateICmpSLT(b, zero)));
      return m_b.CreateSub(q, m_b.CreateZExt(adjust, a->getType()));
    }
    case BinOp::FloorMod: {
      if (isF) {
        llvm::Value* q = m_b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, m_b.CreateFDiv(a, b));
        return m_b.CreateFSub(a, m_b.CreateFMul(q, b));
      }
      if (!isS) return m_b.CreateURem(a, b);
      llvm::Value* r = m_b.CreateSRem(a, b);
      llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
      llvm::Value* adjust = m_b.CreateAnd(m_b.CreateICmpNE(r, zero),
                                          m_b.CreateICmpNE(m_b.CreateICmpSLT(r, zero), m_b.CreateICmpSLT(b, zero)));
      return m_b.CreateSelect(adjust, m_b.CreateAdd(r, b), r);
    }
    case BinOp::Min:
      if (isF) return m_b.CreateSelect(m_b.CreateFCmpOLT(a, b), a, b);
      return m_b.CreateSelect(isS ? m_b.CreateICmpSLT(a, b) : m_b.CreateICmpULT(a, b), a, b);
    case BinOp::Max:
      if (isF) return m_b.CreateSelect(m_b.CreateFCmpOGT(a, b), a, b);
      return m_b.CreateSelect(isS ? m_b.CreateICmpSGT(a, b) : m_b.CreateICmpUGT(a, b), a, b);
    case BinOp::EQ: return isF ? m_b.CreateFCmpOEQ(a, b) : m_b.CreateICmpEQ(a, b);
    case BinOp::NE: return isF ? m_b.CreateFCmpUNE(a, b) : m_b.CreateICmpNE(a, b);
    case BinOp::LT:
      return isF ? m_b.CreateFCmpOLT(a, b) : isS ? m_b.CreateICmpSLT(a, b) : m_b.CreateICmpULT(a, b);
    case BinOp::LE:
      return isF ? m_b.CreateFCmpOLE(a, b) : isS ? m_b.CreateICmpSLE(a, b) : m_b.CreateICmpULE(a, b);
    case BinOp::GT:
      return isF ? m_b.CreateFCmpOGT(a, b) : isS ? m_b.CreateICmpSGT(a, b) : m_b.CreateICmpUGT(a, b);
    case BinOp::GE:
      return isF ? m_b.CreateFCmpOGE(a, b) : isS ? m_b.CreateICmpSGE(a, b) : m_b.CreateICmpUGE(a, b);
    case BinOp::And: return m_b.CreateAnd(a, b);
    case BinOp::Or: return m_b.CreateOr(a, b);
    }
    LOOM_ICHECK(false) << "unknown binary op";
    return nullptr;
  }

  // --- Memory -----------------------------------------------------------------------------------
  struct Address {
    llvm::Value* base = nullptr;  ///< scalar pointer to the first accessed element (contiguous)
    llvm::Value* ptrs = nullptr;  ///< vector of pointers (gather/scatter), or null
    llvm::Type* elemType = nullptr;
    int lanes = 1;
    llvm::Align align;
  };

  /// The flat element index of an access: the one index of a flattened buffer, or the row-major
  /// (or strided) combination of several.
  Expr flatIndex(const Buffer& buf, const std::vector<Expr>& indices) {
    if (indices.size() == 1) return indices[0];
    LOOM_ICHECK(!indices.empty()) << "access of " << buf->name << " without indices";
    Expr flat;
    for (size_t i = 0; i < indices.size(); ++i) {
      Expr stride;
      if (!buf->strides.empty()) {
        stride = buf->strides[i];
      } else {
        stride = Expr(1);
        for (size_t j = i + 1; j < buf->shape.size(); ++j) stride = stride * buf->shape[j];
      }
      Expr term = indices[i] * stride;
      flat = flat.defined() ? flat + term : term;
    }
    return flat;
  }

  /// An index's constant term: `x + c` gives (x, c), `x - c` (x, -c), anything else (e, 0).
  static std::pair<Expr, int64_t> constantTerm(const Expr& e) {
    if (auto* b = e.as<BinaryNode>(); b && (b->op == BinOp::Add || b->op == BinOp::Sub)) {
      if (const int64_t* c = asConstInt(b->b)) return {b->a, b->op == BinOp::Add ? *c : -*c};
      if (const int64_t* c = asConstInt(b->a); c && b->op == BinOp::Add) return {b->b, *c};
    }
    return {e, 0};
  }

  /// The address of element `index` of `data`. A constant term of the index is a GEP of its own
  /// in 64 bits, which the access's displacement absorbs: summed into the 32-bit index first it
  /// was sign-extended with it, and where LLVM had made the sum a disjoint `or` (static extents
  /// give it known bits) every access of a register tile computed and extended its own index
  /// (two integer instructions per broadcast). The row loads of ResNet-18's Winograd products
  /// then ran 10-35% slower than in the same model built with a symbolic batch. Neither GEP is
  /// inbounds: `x` alone may point past the buffer (a padded read's `x - 17`).
  /// LOOM_NO_CONSTANT_GEP=1 keeps the constant in the index (for A/B measurements).
  llvm::Value* elementAddress(llvm::Type* elemType, llvm::Value* data, const Expr& index) {
    static const bool off = std::getenv("LOOM_NO_CONSTANT_GEP") != nullptr;
    auto [rest, c] = constantTerm(index);
    if (off || c == 0 || rest.dtype().lanes() != 1) return m_b.CreateInBoundsGEP(elemType, data, emitExpr(index));
    llvm::Value* p = m_b.CreateGEP(elemType, data, emitExpr(rest));
    return m_b.CreateGEP(elemType, p, llvm::ConstantInt::get(m_i64, uint64_t(c), true));
  }

  Address address(const Buffer& buf, const std::vector<Expr>& indices, int valueLanes) {
    Address a;
    a.elemType = memType(buf->dtype);
    auto it = m_vars.find(buf->data.get());
    if (it == m_vars.end())
      LOOM_THROW(CodeGenError) << "codegen: buffer '" << buf->name << "' has no data pointer ('"
                               << buf->data->name << "' is not defined) in '" << m_funcName << "'";
    llvm::Value* data = it->second;
    if (buf->elemOffset.defined() && !isZero(buf->elemOffset))
      data = m_b.CreateInBoundsGEP(a.elemType, data, emitExpr(buf->elemOffset));
    Expr index = flatIndex(buf, indices);
    int64_t mult = knownMultiple(index);
    if (buf->elemOffset.defined()) mult = std::gcd(mult, knownMultiple(buf->elemOffset));
    int64_t elemBytes = std::max<int64_t>(1, buf->dtype.bytes());
    int64_t align = std::gcd(mult * elemBytes, int64_t(std::max(buf->alignment, 1)));
    align = std::max<int64_t>(align, std::min<int64_t>(elemBytes, buf->alignment > 0 ? buf->alignment : 1));
    // Powers of two only.
    int64_t p2 = 1;
    while (p2 * 2 <= align && align % (p2 * 2) == 0) p2 *= 2;
    a.align = llvm::Align(p2);
    int lanes = index.dtype().lanes();
    a.lanes = std::max(lanes, valueLanes);
    if (lanes == 1) {
      a.base = elementAddress(a.elemType, data, index);
      return a;
    }
    if (auto* r = index.as<RampNode>(); r && isOne(r->stride)) {
      a.base = elementAddress(a.elemType, data, r->base);
      return a;
    }
    a.ptrs = m_b.CreateInBoundsGEP(a.elemType, data, emitExpr(index));
    a.align = llvm::Align(std::min<int64_t>(p2, elemBytes));
    return a;
  }

  void annotate(llvm::Instruction* inst, const Buffer& buf) {
    if (!m_useTBAA) return;
    const VarNode* root = aliasRoot(buf->data.get());
    // Every buffer, the function's own allocations included, gets a tag of its own. Inside a
    // parallel task the buffers are pointers loaded from the closure, so the tags are all that
    // tell a local accumulator from the data it reads: without them LLVM stores the register
    // tile back to memory after every FMA (GoogLeNet's 1x1 convs ran at half speed). The one
    // transformation that merged two allocations while keeping their tags, memcpy's stack move
    // of a copy loop turned into memcpy (fuzz_difftest TIR seed 100057), is off: see
    // initializeLLVM's -disable-loop-idiom-memcpy.
    auto it = m_tbaa.find(root);
    if (it == m_tbaa.end()) {
      std::string name = root->name + "#" + std::to_string(m_tbaa.size());
      llvm::MDNode* type = m_md.createTBAAScalarTypeNode(name, m_tbaaRoot);
      it = m_tbaa.emplace(root, m_md.createTBAAStructTagNode(type, type, 0)).first;
    }
    inst->setMetadata(llvm::LLVMContext::MD_tbaa, it->second);
  }

  /// Whether a contiguous vector access of `buf` at `indices` lies wholly inside a buffer of the
  /// function's stack (a local accumulator): then an access guarded lane by lane may read and
  /// write the whole vector, blending the guarded lanes, which stay as they were. SROA keeps such
  /// a buffer in registers; a masked load or store keeps it in memory, and a masked store does not
  /// forward to the next masked load (a partial chunk summed over a whole reduction: the scores of
  /// a dynamic attention at 7 tokens).
  bool wholeVectorInStack(const Buffer& buf, const std::vector<Expr>& indices) const {
    auto it = m_stackBytes.find(buf->data.get());
    if (it == m_stackBytes.end() || buf->dtype.isBool() || indices.size() != 1) return false;
    if (buf->elemOffset.defined() && !isZero(buf->elemOffset)) return false;
    auto* r = indices[0].as<RampNode>();
    if (!r || !isOne(r->stride)) return false;
    const int64_t* base = asConstInt(r->base);
    return base && *base >= 0 && (*base + r->lanes) * std::max<int64_t>(1, buf->dtype.bytes()) <= it->second;
  }

  /// From memory form (bool as i8) to register form.
  llvm::Value* fromMemory(llvm::Value* v, DataType t) {
    if (t.isBool()) return m_b.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    return v;
  }
  llvm::Value* toMemory(llvm::Value* v, DataType t) {
    if (t.isBool()) return m_b.CreateZExt(v, withLanes(m_i8, lanesOf(v)));
    return v;
  }

  /// A load; with `mask`, lanes whose mask is false read `passthru` instead of memory.
  llvm::Value* emitLoad(const BufferLoadNode* op, llvm::Value* mask, llvm::Value* passthru) {
    Address a = address(op->buffer, op->indices, op->dtype.lanes());
    DataType t = op->dtype;
    llvm::Type* vty = withLanes(a.elemType, a.lanes);
    llvm::Value* pass = passthru ? toMemory(passthru, t) : nullptr;
    llvm::Instruction* inst;
    if (a.lanes == 1) {
      inst = m_b.CreateAlignedLoad(a.elemType, a.base, a.align);
    } else if (a.ptrs) {
      inst = m_b.CreateMaskedGather(vty, a.ptrs, a.align, mask, pass);
    } else if (mask && wholeVectorInStack(op->buffer, op->indices)) {
      inst = m_b.CreateAlignedLoad(vty, a.base, a.align);
      annotate(inst, op->buffer);
      llvm::Value* v = fromMemory(inst, t);
      return passthru ? m_b.CreateSelect(mask, v, passthru) : v;
    } else if (mask) {
      inst = m_b.CreateMaskedLoad(vty, a.base, a.align, mask, pass);
    } else {
      inst = m_b.CreateAlignedLoad(vty, a.base, a.align);
    }
    annotate(inst, op->buffer);
    return fromMemory(inst, t);
  }

  void emitStore(const BufferStoreNode* op, llvm::Value* mask) {
    llvm::Value* value = emitExpr(op->value);
    Address a = address(op->buffer, op->indices, lanesOf(value));
    if (a.lanes > 1 && lanesOf(value) == 1) value = m_b.CreateVectorSplat(a.lanes, value);
    value = toMemory(value, op->value.dtype().withLanes(lanesOf(value)));
    llvm::Instruction* inst;
    if (a.lanes == 1) {
      inst = m_b.CreateAlignedStore(value, a.base, a.align);
    } else if (a.ptrs) {
      inst = m_b.CreateMaskedScatter(value, a.ptrs, a.align, mask);
    } else if (mask && wholeVectorInStack(op->buffer, op->indices)) {
      llvm::Instruction* old = m_b.CreateAlignedLoad(value->getType(), a.base, a.align);
      annotate(old, op->buffer);
      inst = m_b.CreateAlignedStore(m_b.CreateSelect(mask, value, old), a.base, a.align);
    } else if (mask) {
      inst = m_b.CreateMaskedStore(value, a.base, a.align, mask);
    } else {
      inst = m_b.CreateAlignedStore(value, a.base, a.align);
    }
    annotate(inst, op->buffer);
  }

  // --- Calls ------------------------------------------------------------------------------------
  llvm::Function* externFunction(const std::string& name, llvm::Type* ret, std::vector<llvm::Type*> params,
                                 bool varArg = false) {
    auto* fty = llvm::FunctionType::get(ret, params, varArg);
    llvm::FunctionCallee c = m_mod.getOrInsertFunction(name, fty);
    return llvm::cast<llvm::Function>(c.getCallee());
  }

  /// Applies a scalar libm function `name` lane by lane.
  llvm::Value* libmCall(const std::string& name, llvm::Value* x) {
    llvm::Type* ety = x->getType()->getScalarType();
    std::string fname = ety->isFloatTy() ? name + "f" : name;
    llvm::Function* f = externFunction(fname, ety, {ety});
    int lanes = lanesOf(x);
    if (lanes == 1) return m_b.CreateCall(f, {x});
    llvm::Value* out = llvm::PoisonValue::get(x->getType());
    for (int i = 0; i < lanes; ++i) {
      llvm::Value* r = m_b.CreateCall(f, {m_b.CreateExtractElement(x, i)});
      out = m_b.CreateInsertElement(out, r, i);
    }
    return out;
  }

  llvm::Value* emitCall(const CallNode* op) {
    const std::string& name = op->op;
    auto requireArgs = [&](size_t n) {
      if (op->args.size() != n)
        LOOM_THROW(CodeGenError) << "codegen: " << name << " takes " << n << " arguments, got "
                                 << op->args.size() << " in '" << m_funcName << "'";
    };
    if (name == "if_then_else") {
      requireArgs(3);
      return emitIfThenElseExpr(op);
    }
    if (name.rfind("loom_", 0) == 0) return emitPackedIntrinsic(op);
    if (name == "dot4_u8s8" || name == "dot4_u8s8_pairs16") {
      requireArgs(2);
      if (!op->dtype.isInt() || op->dtype.bits() != 32)
        LOOM_THROW(CodeGenError) << "codegen: " << name << " must be int32, got " << op->dtype.str() << " in '"
                                 << m_funcName << "'";
      return emitDot4(m_b, m_mod, m_target, emitDot4Bytes(op->args[0]), emitExpr(op->args[1]), op->dtype.lanes(),
                      name == "dot4_u8s8_pairs16");
    }
    DataType t = op->dtype;
    if (!t.isFloat() || op->args.empty())
      LOOM_THROW(CodeGenError) << "codegen: unsupported intrinsic '" << name << "' of type " << t.str()
                               << " in '" << m_funcName << "'";
    // Half and bfloat16 compute in float32.
    DataType ct = t;
    std::vector<llvm::Value*> args;
    for (auto& a : op->args) {
      llvm::Value* v = emitExpr(a);
      DataType at = a.dtype();
      if (at.lanes() != t.lanes()) {
        v = castValue(v, at, at.withLanes(t.lanes()));
        at = at.withLanes(t.lanes());
      }
      DataType want = (t.bits() == 16) ? DataType::Float(32, t.lanes()) : t;
      args.push_back(castValue(v, at, want));
      ct = want;
    }
    llvm::Value* r = floatIntrinsic(name, ct, args);
    return castValue(r, ct, t);
  }

  llvm::Value* floatIntrinsic(const std::string& name, DataType t, const std::vector<llvm::Value*>& a) {
    bool f32 = t.bits() == 32;
    auto n = [&](size_t k) {
      if (a.size() != k)
        LOOM_THROW(CodeGenError) << "codegen: " << name << " takes " << k << " arguments, got " << a.size();
    };
    auto unary = [&](llvm::Intrinsic::ID id) {
      n(1);
      return m_b.CreateUnaryIntrinsic(id, a[0]);
    };
    if (name == "exp") {
      n(1);
      return f32 ? emitFastExp(m_b, a[0]) : m_b.CreateUnaryIntrinsic(llvm::Intrinsic::exp, a[0]);
    }
    if (name == "tanh") {
      n(1);
      return f32 ? emitFastTanh(m_b, a[0]) : libmCall("tanh", a[0]);
    }
    if (name == "sigmoid") {
      n(1);
      if (f32) return emitFastSigmoid(m_b, a[0], &m_target);
      llvm::Value* one = llvm::ConstantFP::get(a[0]->getType(), 1.0);
      llvm::Value* e = m_b.CreateUnaryIntrinsic(llvm::Intrinsic::exp, m_b.CreateFNeg(a[0]));
      return m_b.CreateFDiv(one, m_b.CreateFAdd(one, e));
    }
    if (name == "erf") {
      n(1);
      return f32 ? emitFastErf(m_b, a[0]) : libmCall("erf", a[0]);
    }
    if (name == "exp2") return unary(llvm::Intrinsic::exp2);
    if (name == "log") return unary(llvm::Intrinsic::log);
    if (name == "log2") return unary(llvm::Intrinsic::log2);
    if (name == "log10") return unary(llvm::Intrinsic::log10);
    if (name == "sqrt") return unary(llvm::Intrinsic::sqrt);
    if (name == "fabs") return unary(llvm::Intrinsic::fabs);
    if (name == "floor") return unary(llvm::Intrinsic::floor);
    if (name == "ceil") return unary(llvm::Intrinsic::ceil);
    if (name == "trunc") return unary(llvm::Intrinsic::trunc);
    if (name == "round") return unary(llvm::Intrinsic::roundeven);
    if (name == "float_fence") return unary(llvm::Intrinsic::arithmetic_fence);
    if (name == "sin") return unary(llvm::Intrinsic::sin);
    if (name == "cos") return unary(llvm::Intrinsic::cos);
    if (name == "rsqrt") {
      n(1);
      return m_b.CreateFDiv(llvm::ConstantFP::get(a[0]->getType(), 1.0),
                            m_b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a[0]));
    }
    if (name == "pow") {
      n(2);
      return m_b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, a[0], a[1]);
    }
    if (name == "fmod") {
      n(2);
      return m_b.CreateFRem(a[0], a[1]);
    }
    if (name == "fma") {
      n(3);
      return m_b.CreateIntrinsic(llvm::Intrinsic::fma, {a[0]->getType()}, {a[0], a[1], a[2]});
    }
    LOOM_THROW(CodeGenError) << "codegen: unsupported intrinsic '" << name << "' in '" << m_funcName << "'";
  }

  llvm::Value* emitIfThenElseExpr(const CallNode* op) {
    const Expr& c = op->args[0];
    if (c.dtype().lanes() > 1) {
      llvm::Value* cond = emitCond(c);
      // A masked load for a load guarded lane by lane (a vector tail).
      if (auto* load = op->args[1].as<BufferLoadNode>()) {
        llvm::Value* other = emitExpr(op->args[2]);
        if (lanesOf(other) == 1) other = m_b.CreateVectorSplat(lanesOf(cond), other);
        return emitLoad(load, cond, other);
      }
      return m_b.CreateSelect(cond, emitExpr(op->args[1]), emitExpr(op->args[2]));
    }
    llvm::Value* cond = emitCond(c);
    llvm::Function* fn = m_fs.fn;
    auto* thenBB = llvm::BasicBlock::Create(m_ctx, "if_then", fn);
    auto* elseBB = llvm::BasicBlock::Create(m_ctx, "if_else", fn);
    auto* endBB = llvm::BasicBlock::Create(m_ctx, "if_end", fn);
    m_b.CreateCondBr(cond, thenBB, elseBB);
    m_b.SetInsertPoint(thenBB);
    llvm::Value* tv = emitExpr(op->args[1]);
    llvm::BasicBlock* thenEnd = m_b.GetInsertBlock();
    m_b.CreateBr(endBB);
    m_b.SetInsertPoint(elseBB);
    llvm::Value* fv = emitExpr(op->args[2]);
    llvm::BasicBlock* elseEnd = m_b.GetInsertBlock();
    m_b.CreateBr(endBB);
    m_b.SetInsertPoint(endBB);
    llvm::PHINode* phi = m_b.CreatePHI(tv->getType(), 2);
    phi->addIncoming(tv, thenEnd);
    phi->addIncoming(fv, elseEnd);
    return phi;
  }

  /// Byte offset and type of a field that loom_struct_get reads (the layout of c_runtime_api.h).
  llvm::Value* emitPackedIntrinsic(const CallNode* op) {
    const std::string& name = op->op;
    if (name == pk::kStructGet) {
      if (op->args.size() != 3) LOOM_THROW(CodeGenError) << "codegen: loom_struct_get takes 3 arguments";
      llvm::Value* base = emitExpr(op->args[0]);
      llvm::Value* index = emitExpr(op->args[1]);
      const int64_t* field = asConstInt(op->args[2]);
      if (!field) LOOM_THROW(CodeGenError) << "codegen: loom_struct_get needs a constant field";
      llvm::Type* i8 = m_i8;
      llvm::Value* addr = nullptr;
      llvm::Type* fty = nullptr;
      auto tensorField = [&](size_t offset, llvm::Type* ty) {
        addr = m_b.CreateInBoundsGEP(i8, base, llvm::ConstantInt::get(m_i64, offset));
        fty = ty;
      };
      switch (*field) {
      case pk::kArgInt64:
      case pk::kArgFloat64:
      case pk::kArgHandle:
        addr = m_b.CreateInBoundsGEP(m_i64, base, index);
        fty = *field == pk::kArgInt64 ? m_i64 : *field == pk::kArgFloat64 ? llvm::Type::getDoubleTy(m_ctx) : m_ptr;
        break;
      case pk::kTypeCode:
        addr = m_b.CreateInBoundsGEP(m_i32, base, index);
        fty = m_i32;
        break;
      case pk::kTensorData: tensorField(offsetof(LoomTensor, data), m_ptr); break;
      case pk::kTensorDeviceType: tensorField(offsetof(LoomTensor, device), m_i32); break;
      case pk::kTensorDeviceId: tensorField(offsetof(LoomTensor, device) + 4, m_i32); break;
      case pk::kTensorNDim: tensorField(offsetof(LoomTensor, ndim), m_i32); break;
      case pk::kTensorDTypeCode: tensorField(offsetof(LoomTensor, dtype), m_i8); break;
      case pk::kTensorDTypeBits: tensorField(offsetof(LoomTensor, dtype) + 1, m_i8); break;
      case pk::kTensorDTypeLanes: tensorField(offsetof(LoomTensor, dtype) + 2, m_i16); break;
      case pk::kTensorShape: tensorField(offsetof(LoomTensor, shape), m_ptr); break;
      case pk::kTensorStrides: tensorField(offsetof(LoomTensor, strides), m_ptr); break;
      case pk::kTensorByteOffset: tensorField(offsetof(LoomTensor, byte_offset), m_i64); break;
      default: LOOM_THROW(CodeGenError) << "codegen: unknown loom_struct_get field " << *field;
      }
      llvm::Value* v = m_b.CreateLoad(fty, addr);
      llvm::Type* want = regType(op->dtype);
      if (v->getType() == want) return v;
      if (want->isIntegerTy() && fty->isIntegerTy())
        return m_b.CreateIntCast(v, want, *field == pk::kTypeCode || *field == pk::kTensorNDim ||
                                              *field == pk::kArgInt64);
      LOOM_THROW(CodeGenError) << "codegen: loom_struct_get field " << *field << " read as "
                               << op->dtype.str();
    }
    if (name == pk::kReturn) {
      llvm::Value* v = op->args.empty() ? llvm::ConstantInt::get(m_i32, 0) : emitExpr(op->args[0]);
      v = m_b.CreateIntCast(v, m_i32, true);
      m_b.CreateRet(v);
      // Code after a return is unreachable; give it a block so emission can go on.
      m_b.SetInsertPoint(llvm::BasicBlock::Create(m_ctx, "after_ret", m_fs.fn));
      return llvm::ConstantInt::get(m_i32, 0);
    }
    if (name == pk::kErrorFmt) {
      if (op->args.empty()) LOOM_THROW(CodeGenError) << "codegen: loom_error_fmt needs a format";
      std::vector<llvm::Value*> args;
      // One message buffer per function, shared by all its error paths.
      if (!m_fs.errbuf) m_fs.errbuf = entryAlloca(m_i8, 1024, 16, "errbuf");
      llvm::Value* buf = m_fs.errbuf;
      args.push_back(buf);
      args.push_back(llvm::ConstantInt::get(m_i64, 1024));
      for (auto& a : op->args) {
        llvm::Value* v = emitExpr(a);
        if (a.dtype().isIntegral() || a.dtype().isBool()) v = castValue(v, a.dtype(), DataType::Int(64));
        else if (a.dtype().isFloat()) v = castValue(v, a.dtype(), DataType::Float(64));
        args.push_back(v);
      }
      llvm::Function* snprintfFn = externFunction("snprintf", m_i32, {m_ptr, m_i64, m_ptr}, true);
      m_b.CreateCall(snprintfFn, args);
      m_b.CreateCall(setLastError(), {buf});
      return llvm::ConstantInt::get(m_i32, 0);
    }
    if (name == kParallelBarrier) {
      if (!op->args.empty()) LOOM_THROW(CodeGenError) << "codegen: " << kParallelBarrier << " takes no arguments";
      llvm::Value* r = llvm::ConstantInt::get(m_i32, -1);
      if (m_fs.inParallel) {
        llvm::Function* barrier = externFunction("loom_backend_parallel_barrier", m_i32, {m_i32, m_i32});
        r = m_b.CreateCall(barrier, {m_fs.fn->getArg(0), m_fs.fn->getArg(1)});
      }
      return m_b.CreateIntCast(r, regType(op->dtype), true);
    }
    if (name == pk::kPtrAdd) {
      if (op->args.size() != 2) LOOM_THROW(CodeGenError) << "codegen: loom_ptr_add takes 2 arguments";
      return m_b.CreateGEP(m_i8, emitExpr(op->args[0]), emitExpr(op->args[1]));
    }
    if (name == pk::kPtrToInt) {
      if (op->args.size() != 1) LOOM_THROW(CodeGenError) << "codegen: loom_ptr_to_int takes 1 argument";
      return m_b.CreatePtrToInt(emitExpr(op->args[0]), regType(op->dtype));
    }
    LOOM_THROW(CodeGenError) << "codegen: unsupported intrinsic '" << name << "' in '" << m_funcName << "'";
  }

  llvm::Function* setLastError() { return externFunction("loom_set_last_error", llvm::Type::getVoidTy(m_ctx), {m_ptr}); }

  llvm::Value* entryAlloca(llvm::Type* ty, int64_t count, int align, const std::string& name) {
    llvm::IRBuilder<> eb(m_fs.entry, m_fs.entry->begin());
    llvm::AllocaInst* a = eb.CreateAlloca(ty, llvm::ConstantInt::get(m_i64, count), name);
    a->setAlignment(llvm::Align(align));
    return a;
  }

  // --- Statements -------------------------------------------------------------------------------
  void emitStmt(const Stmt& s) {
    if (!s.defined()) return;
    switch (s->nodeKind) {
    case NodeKind::BufferStore: emitStore(s.as<BufferStoreNode>(), nullptr); return;
    case NodeKind::LetStmt: {
      auto* op = s.as<LetStmtNode>();
      bindVar(op->var, emitExpr(op->value), op->value);
      emitStmt(op->body);
      return;
    }
    case NodeKind::AttrStmt: emitStmt(s.as<AttrStmtNode>()->body); return;
    case NodeKind::AssertStmt: {
      auto* op = s.as<AssertStmtNode>();
      llvm::Value* c = emitCond(op->condition);
      auto* fail = llvm::BasicBlock::Create(m_ctx, "assert_fail", m_fs.fn);
      auto* ok = llvm::BasicBlock::Create(m_ctx, "assert_ok", m_fs.fn);
      auto* br = m_b.CreateCondBr(c, ok, fail);
      br->setMetadata(llvm::LLVMContext::MD_prof, m_md.createBranchWeights(1 << 20, 1));
      m_b.SetInsertPoint(fail);
      m_b.CreateCall(setLastError(), {stringConstant(op->message)});
      m_b.CreateRet(llvm::ConstantInt::get(m_i32, -1));
      m_b.SetInsertPoint(ok);
      emitStmt(op->body);
      return;
    }
    case NodeKind::Allocate: emitAllocate(s.as<AllocateNode>()); return;
    case NodeKind::DeclBuffer: emitStmt(s.as<DeclBufferNode>()->body); return;
    case NodeKind::SeqStmt:
      for (auto& x : s.as<SeqStmtNode>()->seq) emitStmt(x);
      return;
    case NodeKind::IfThenElse: emitIf(s.as<IfThenElseNode>()); return;
    case NodeKind::For: emitFor(s.as<ForNode>()); return;
    case NodeKind::While: emitWhile(s.as<WhileNode>()); return;
    case NodeKind::Evaluate: {
      auto* op = s.as<EvaluateNode>();
      if (op->value.as<IntImmNode>()) return;  // Evaluate(0) is a no-op
      emitExpr(op->value);
      return;
    }
    case NodeKind::Block:
    case NodeKind::BlockRealize: {
      const BlockNode* blk = s.as<BlockNode>();
      if (auto* br = s.as<BlockRealizeNode>()) blk = br->block.get();
      LOOM_THROW_AT(CodeGenError, s->span)
          << "codegen: '" << m_funcName << "' is not lowered: it still contains block '"
          << (blk ? blk->name : std::string("?")) << "' (run the lowering pipeline first)";
    }
    default: break;
    }
    LOOM_THROW(CodeGenError) << "codegen: unexpected statement in '" << m_funcName << "'";
  }

  void emitIf(const IfThenElseNode* op) {
    if (op->condition.dtype().lanes() > 1) {
      // A vector condition guards a vector store lane by lane: a masked store.
      auto* store = op->thenCase.as<BufferStoreNode>();
      if (!store || op->elseCase.defined())
        LOOM_THROW(CodeGenError) << "codegen: a vector condition can only guard one buffer store (in '"
                                 << m_funcName << "')";
      emitStore(store, emitCond(op->condition));
      return;
    }
    llvm::Value* c = emitCond(op->condition);
    auto* thenBB = llvm::BasicBlock::Create(m_ctx, "if_then", m_fs.fn);
    auto* endBB = llvm::BasicBlock::Create(m_ctx, "if_end", m_fs.fn);
    llvm::BasicBlock* elseBB = op->elseCase.defined() ? llvm::BasicBlock::Create(m_ctx, "if_else", m_fs.fn) : endBB;
    m_b.CreateCondBr(c, thenBB, elseBB);
    m_b.SetInsertPoint(thenBB);
    emitStmt(op->thenCase);
    if (!m_b.GetInsertBlock()->getTerminator()) m_b.CreateBr(endBB);
    if (op->elseCase.defined()) {
      m_b.SetInsertPoint(elseBB);
      emitStmt(op->elseCase);
      if (!m_b.GetInsertBlock()->getTerminator()) m_b.CreateBr(endBB);
    }
    m_b.SetInsertPoint(endBB);
  }

  void emitWhile(const WhileNode* op) {
    auto* head = llvm::BasicBlock::Create(m_ctx, "while_head", m_fs.fn);
    auto* body = llvm::BasicBlock::Create(m_ctx, "while_body", m_fs.fn);
    auto* end = llvm::BasicBlock::Create(m_ctx, "while_end", m_fs.fn);
    m_b.CreateBr(head);
    m_b.SetInsertPoint(head);
    m_b.CreateCondBr(emitCond(op->condition), body, end);
    m_b.SetInsertPoint(body);
    emitStmt(op->body);
    if (!m_b.GetInsertBlock()->getTerminator()) m_b.CreateBr(head);
    m_b.SetInsertPoint(end);
  }

  void emitAllocate(const AllocateNode* op) {
    DataType t = op->dtype;
    llvm::Type* ety = memType(t);
    int64_t constCount = 1;
    bool isConst = true;
    for (auto& e : op->extents) {
      if (auto* c = asConstInt(e)) constCount *= *c;
      else isConst = false;
    }
    int64_t elemBytes = std::max<int64_t>(1, t.isBool() ? t.lanes() : t.bytes());
    llvm::Value* ptr;
    bool workspace = !isConst || constCount * elemBytes > m_opts.maxStackBytes;
    if (!workspace) {
      ptr = entryAlloca(ety, std::max<int64_t>(constCount, 1), 64, op->bufferVar->name);
      m_stackBytes[op->bufferVar.get()] = std::max<int64_t>(constCount, 1) * elemBytes;
    } else {
      llvm::Value* n = llvm::ConstantInt::get(m_i64, 1);
      for (auto& e : op->extents) n = m_b.CreateMul(n, castValue(emitExpr(e), e.dtype(), DataType::Int(64)));
      llvm::Value* bytes = m_b.CreateMul(n, llvm::ConstantInt::get(m_i64, elemBytes));
      llvm::Function* alloc = externFunction("loom_backend_alloc_workspace", m_ptr,
                                             {m_i32, m_i32, m_i64, m_i32, m_i32});
      llvm::CallInst* call =
          m_b.CreateCall(alloc, {llvm::ConstantInt::get(m_i32, kLoomCPU), llvm::ConstantInt::get(m_i32, 0), bytes,
                                 llvm::ConstantInt::get(m_i32, int(t.code())), llvm::ConstantInt::get(m_i32, t.bits())},
                         op->bufferVar->name);
      call->addRetAttr(llvm::Attribute::NoAlias);  // fresh memory, like malloc's (it carries no TBAA tags)
      ptr = call;
      auto* fail = llvm::BasicBlock::Create(m_ctx, "alloc_fail", m_fs.fn);
      auto* ok = llvm::BasicBlock::Create(m_ctx, "alloc_ok", m_fs.fn);
      m_b.CreateCondBr(m_b.CreateIsNull(ptr), fail, ok, m_md.createBranchWeights(1, 1 << 20));
      m_b.SetInsertPoint(fail);
      m_b.CreateRet(llvm::ConstantInt::get(m_i32, -1));
      m_b.SetInsertPoint(ok);
    }
    m_vars[op->bufferVar.get()] = ptr;
    emitStmt(op->body);
    if (workspace && !m_b.GetInsertBlock()->getTerminator()) {
      llvm::Function* freeFn = externFunction("loom_backend_free_workspace", m_i32, {m_i32, m_i32, m_ptr});
      m_b.CreateCall(freeFn, {llvm::ConstantInt::get(m_i32, kLoomCPU), llvm::ConstantInt::get(m_i32, 0), ptr});
    }
    m_vars.erase(op->bufferVar.get());
    m_stackBytes.erase(op->bufferVar.get());
  }

  llvm::MDNode* loopMetadata(const ForNode* op) {
    std::vector<llvm::Metadata*> ops;
    ops.push_back(nullptr);  // self reference
    ops.push_back(llvm::MDNode::get(m_ctx, {llvm::MDString::get(m_ctx, "llvm.loop.mustprogress")}));
    if (op->kind == ForKind::Unrolled)
      ops.push_back(llvm::MDNode::get(m_ctx, {llvm::MDString::get(m_ctx, "llvm.loop.unroll.full")}));
    auto* md = llvm::MDNode::getDistinct(m_ctx, ops);
    md->replaceOperandWith(0, md);
    return md;
  }

  void emitFor(const ForNode* op) {
    if (op->kind == ForKind::ThreadBinding)
      LOOM_THROW_AT(CodeGenError, op->span)
          << "codegen: loop '" << op->loopVar->name << "' is bound to " << op->threadTag
          << ", which a CPU target cannot run";
    int line = lineOf(op);
    int savedLine = m_curLine;
    if (line > 0) {
      m_curLine = line;
      setLine(line);
    }
    if (op->kind == ForKind::Parallel && !m_fs.inParallel) {
      emitParallelFor(op);
    } else {
      llvm::Value* begin = emitAs(op->min, op->loopVar->dtype);
      llvm::Value* extent = emitAs(op->extent, op->loopVar->dtype);
      emitSerialLoop(op, begin, m_b.CreateAdd(begin, extent));
    }
    m_curLine = savedLine;
    setLine(m_curLine > 0 ? m_curLine : m_fs.line);
  }

  /// for (v = begin; v < end; ++v) body
  void emitSerialLoop(const ForNode* op, llvm::Value* begin, llvm::Value* end) {
    llvm::Function* fn = m_fs.fn;
    llvm::BasicBlock* pre = m_b.GetInsertBlock();
    auto* head = llvm::BasicBlock::Create(m_ctx, "for_" + op->loopVar->name, fn);
    auto* body = llvm::BasicBlock::Create(m_ctx, "for_body_" + op->loopVar->name, fn);
    auto* exit = llvm::BasicBlock::Create(m_ctx, "for_end_" + op->loopVar->name, fn);
    m_b.CreateBr(head);
    m_b.SetInsertPoint(head);
    llvm::PHINode* iv = m_b.CreatePHI(begin->getType(), 2, op->loopVar->name);
    iv->addIncoming(begin, pre);
    llvm::Value* cond = op->loopVar->dtype.isUInt() ? m_b.CreateICmpULT(iv, end) : m_b.CreateICmpSLT(iv, end);
    m_b.CreateCondBr(cond, body, exit);
    m_b.SetInsertPoint(body);
    m_vars[op->loopVar.get()] = iv;
    emitStmt(op->body);
    if (!m_b.GetInsertBlock()->getTerminator()) {
      setLine(m_curLine > 0 ? m_curLine : m_fs.line);
      llvm::Value* next = m_b.CreateAdd(iv, llvm::ConstantInt::get(iv->getType(), 1), "", false, true);
      llvm::BasicBlock* latch = m_b.GetInsertBlock();
      auto* br = m_b.CreateBr(head);
      br->setMetadata(llvm::LLVMContext::MD_loop, loopMetadata(op));
      iv->addIncoming(next, latch);
    }
    m_vars.erase(op->loopVar.get());
    m_b.SetInsertPoint(exit);
  }

  /// A parallel loop: its body becomes a closure run by loom_backend_parallel_launch, task i
  /// taking a contiguous chunk of the iterations.
  void emitParallelFor(const ForNode* op) {
    FreeVars fv;
    fv.visitStmt(Stmt(op));
    std::vector<const VarNode*> captured = fv.result();
    std::vector<llvm::Type*> fieldTypes;
    std::vector<llvm::Value*> values;
    for (auto* v : captured) {
      auto it = m_vars.find(v);
      if (it == m_vars.end())
        LOOM_THROW(CodeGenError) << "codegen: variable '" << v->name << "' is used in parallel loop '"
                                 << op->loopVar->name << "' but not defined in '" << m_funcName << "'";
      values.push_back(it->second);
      fieldTypes.push_back(it->second->getType());
    }
    auto* sty = llvm::StructType::get(m_ctx, fieldTypes.empty() ? std::vector<llvm::Type*>{m_i8} : fieldTypes);
    llvm::Value* cdata = m_b.CreateAlloca(sty, nullptr, "closure_data");
    for (size_t i = 0; i < values.size(); ++i) m_b.CreateStore(values[i], m_b.CreateStructGEP(sty, cdata, i));

    // The closure function.
    auto* cty = llvm::FunctionType::get(m_i32, {m_i32, m_i32, m_ptr}, false);
    std::string cname = m_funcName + "_parallel_" + std::to_string(m_closureCount++);
    llvm::Function* closure = llvm::Function::Create(cty, llvm::Function::InternalLinkage, cname, m_mod);
    setFunctionAttrs(closure);
    closure->getArg(0)->setName("task_id");
    closure->getArg(1)->setName("num_task");
    closure->getArg(2)->setName("cdata");

    FunctionState saved = m_fs;
    llvm::IRBuilderBase::InsertPoint savedIP = m_b.saveIP();
    llvm::DebugLoc savedLoc = m_b.getCurrentDebugLocation();
    auto savedVars = m_vars;

    beginFunction(closure, cname, m_curLine > 0 ? m_curLine : m_fs.line);
    m_fs.inParallel = true;
    for (size_t i = 0; i < captured.size(); ++i) {
      llvm::Value* v = m_b.CreateLoad(fieldTypes[i], m_b.CreateStructGEP(sty, closure->getArg(2), i));
      v->setName(captured[i]->name);
      m_vars[captured[i]] = v;
    }
    llvm::Value* minV = emitAs(op->min, op->loopVar->dtype);
    llvm::Value* extent = emitAs(op->extent, op->loopVar->dtype);
    llvm::Type* ity = extent->getType();
    llvm::Value* task = m_b.CreateIntCast(closure->getArg(0), ity, true);
    llvm::Value* ntask = m_b.CreateIntCast(closure->getArg(1), ity, true);
    llvm::Value* one = llvm::ConstantInt::get(ity, 1);
    llvm::Value* chunk = m_b.CreateSDiv(m_b.CreateSub(m_b.CreateAdd(extent, ntask), one), ntask);
    llvm::Value* lo = m_b.CreateMul(task, chunk);
    llvm::Value* hi = m_b.CreateAdd(lo, chunk);
    hi = m_b.CreateSelect(m_b.CreateICmpSLT(hi, extent), hi, extent);
    lo = m_b.CreateSelect(m_b.CreateICmpSLT(lo, extent), lo, extent);
    emitSerialLoop(op, m_b.CreateAdd(minV, lo), m_b.CreateAdd(minV, hi));
    if (!m_b.GetInsertBlock()->getTerminator()) m_b.CreateRet(llvm::ConstantInt::get(m_i32, 0));
    endFunction();

    m_fs = saved;
    m_vars = std::move(savedVars);
    m_b.restoreIP(savedIP);
    m_b.SetCurrentDebugLocation(savedLoc);

    llvm::Function* launch = externFunction("loom_backend_parallel_launch", m_i32, {m_ptr, m_ptr, m_i32});
    // A team loop (its body meets at barriers) launches one task per iteration; others let the
    // pool pick the task count.
    llvm::Value* numTask = llvm::ConstantInt::get(m_i32, 0);
    if (callsParallelBarrier(op->body)) {
      const int64_t* n = asConstInt(op->extent);
      if (!n || *n < 1 || *n > 1024)
        LOOM_THROW(CodeGenError) << "codegen: parallel loop '" << op->loopVar->name << "' in '" << m_funcName
                                 << "' calls " << kParallelBarrier << " but its extent is not a constant in [1, 1024]";
      numTask = llvm::ConstantInt::get(m_i32, *n);
    }
    llvm::Value* rc = m_b.CreateCall(launch, {closure, cdata, numTask});
    auto* fail = llvm::BasicBlock::Create(m_ctx, "parallel_fail", m_fs.fn);
    auto* ok = llvm::BasicBlock::Create(m_ctx, "parallel_ok", m_fs.fn);
    m_b.CreateCondBr(m_b.CreateICmpNE(rc, llvm::ConstantInt::get(m_i32, 0)), fail, ok,
                     m_md.createBranchWeights(1, 1 << 20));
    m_b.SetInsertPoint(fail);
    m_b.CreateRet(llvm::ConstantInt::get(m_i32, -1));
    m_b.SetInsertPoint(ok);
  }

  llvm::LLVMContext& m_ctx;
  llvm::Module& m_mod;
  llvm::IRBuilder<> m_b;
  const Target& m_target;
  const CodeGenOptions& m_opts;
  llvm::MDBuilder m_md;
  llvm::Type *m_i1, *m_i8, *m_i16, *m_i32, *m_i64, *m_f32, *m_ptr;
  std::unique_ptr<llvm::DIBuilder> m_dib;
  llvm::DIFile* m_diFile = nullptr;
  llvm::MDNode* m_tbaaRoot = nullptr;
  std::unordered_map<const VarNode*, llvm::MDNode*> m_tbaa;
  std::unordered_map<const VarNode*, const VarNode*> m_handleAlias;
  std::unordered_map<const VarNode*, llvm::Value*> m_vars;
  /// The bytes of each buffer on the stack (entryAlloca), by its data variable, while in scope.
  std::unordered_map<const VarNode*, int64_t> m_stackBytes;
  std::map<std::string, llvm::Value*> m_strings;
  FunctionState m_fs;
  PrimFunc m_func;
  std::string m_funcName;
  bool m_useTBAA = true;
  bool m_signedNoWrap = false;
  int m_curLine = 0;
  int m_closureCount = 0;
};

std::string jsonEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

}  // namespace

// Defined in LLVMOutput.cpp.
void optimizeModule(llvm::Module& m, llvm::TargetMachine& tm, int optLevel);

namespace {

/// A module of `funcs` for `target`: one LLVM function each, not yet verified or optimized.
std::unique_ptr<LLVMModule::Impl> generatePart(const std::vector<PrimFunc>& funcs, const Target& target,
                                               const CodeGenOptions& options, const std::string& modName) {
  auto impl = std::make_unique<LLVMModule::Impl>();
  impl->target = target;
  impl->machine = createTargetMachine(target);
  impl->context = std::make_unique<llvm::LLVMContext>();
  impl->module = std::make_unique<llvm::Module>(modName, *impl->context);
  impl->module->setTargetTriple(target.triple);
  impl->module->setDataLayout(impl->machine->createDataLayout());
  CodeGen cg(*impl->context, *impl->module, target, options);
  for (auto& f : funcs) {
    LOOM_ICHECK(f.defined()) << "undefined PrimFunc";
    impl->functionNames.push_back(cg.addFunction(f));
  }
  cg.finish();
  return impl;
}

/// The module's self-description for the runtime (function names and calling conventions), as
/// the exported global LOOM_MODULE_META_SYMBOL of `impl`.
void addModuleMeta(LLVMModule::Impl& impl, const Target& target, const std::vector<PrimFunc>& funcs,
                   const std::vector<std::string>& names) {
  std::string meta = "{\"target\": \"" + jsonEscape(target.str()) + "\", \"functions\": [";
  for (size_t i = 0; i < funcs.size(); ++i) {
    bool packed = false;
    if (auto it = funcs[i]->attrs.find("calling_conv"); it != funcs[i]->attrs.end())
      if (auto* s = it->second.as<StringImmNode>()) packed = s->value == "packed";
    meta += std::string(i ? ", " : "") + "{\"name\": \"" + jsonEscape(names[i]) +
            "\", \"packed\": " + (packed ? "true" : "false") + "}";
  }
  meta += "]}";
  auto* init = llvm::ConstantDataArray::getString(*impl.context, meta, true);
  auto* gv = new llvm::GlobalVariable(*impl.module, init->getType(), true, llvm::GlobalValue::ExternalLinkage,
                                      init, LOOM_MODULE_META_SYMBOL);
  gv->setAlignment(llvm::Align(1));
}

/// Verifies the module and runs the optimization pipeline.
void finishPart(LLVMModule::Impl& impl, const Target& target, const CodeGenOptions& options) {
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(*impl.module, &os)) {
    std::string ir;
    llvm::raw_string_ostream irs(ir);
    impl.module->print(irs, nullptr);
    LOOM_ICHECK(false) << "codegen produced invalid LLVM IR: " << os.str() << "\n" << ir.substr(0, 20000);
  }
  if (options.optimize) optimizeModule(*impl.module, *impl.machine, target.optLevel);
}

/// Runs `work(i)` for i in [0, n) on n threads (the calling thread takes i = 0); rethrows the
/// first exception.
void runParallel(size_t n, const std::function<void(size_t)>& work) {
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  for (size_t i = 1; i < n; ++i)
    threads.emplace_back([&, i] {
      try {
        work(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  try {
    work(0);
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace

LLVMModule buildLLVM(const std::vector<PrimFunc>& funcs, const Target& target, const CodeGenOptions& options) {
  initializeLLVM();
  std::string modName = funcs.empty() ? std::string("loom") : funcs.front()->name;
  std::unique_ptr<LLVMModule::Impl> impl = generatePart(funcs, target, options, modName);
  addModuleMeta(*impl, target, funcs, impl->functionNames);
  finishPart(*impl, target, options);
  return LLVMModule(std::move(impl));
}

std::vector<LLVMModule> buildLLVMParts(const std::vector<PrimFunc>& funcs, const Target& target,
                                       const CodeGenOptions& options, size_t parts) {
  parts = std::max<size_t>(1, std::min(parts, funcs.size()));
  if (parts == 1) {
    std::vector<LLVMModule> one;
    one.push_back(buildLLVM(funcs, target, options));
    return one;
  }
  initializeLLVM();
  // Round robin: neighbouring kernels of a model are often alike in size.
  std::vector<std::vector<PrimFunc>> split(parts);
  for (size_t i = 0; i < funcs.size(); ++i) split[i % parts].push_back(funcs[i]);
  std::vector<std::unique_ptr<LLVMModule::Impl>> impls(parts);
  runParallel(parts, [&](size_t p) {
    impls[p] = generatePart(split[p], target, options, split[p].front()->name + "_part" + std::to_string(p));
  });
  // The first part describes every function, in the order given.
  std::vector<std::string> names(funcs.size());
  for (size_t i = 0; i < funcs.size(); ++i) names[i] = impls[i % parts]->functionNames[i / parts];
  addModuleMeta(*impls[0], target, funcs, names);
  runParallel(parts, [&](size_t p) { finishPart(*impls[p], target, options); });
  std::vector<LLVMModule> out;
  for (auto& impl : impls) out.push_back(LLVMModule(std::move(impl)));
  return out;
}

std::vector<std::vector<uint8_t>> objectCodeOfParts(const std::vector<LLVMModule>& parts) {
  std::vector<std::vector<uint8_t>> out(parts.size());
  runParallel(parts.size(), [&](size_t p) { out[p] = parts[p].objectCode(); });
  return out;
}

std::vector<AsmLine> emitAsmWithLines(const PrimFunc& f, const Target& target, const CodeGenOptions& options) {
  return buildLLVM({f}, target, options).assemblyWithLines();
}

}  // namespace loom::codegen
