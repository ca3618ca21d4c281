// GPU kernel source in two C dialects: CUDA C (for NVRTC/nvcc) and OpenCL C (for any OpenCL device).
#include "codegen/CodeGenCUDA.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "codegen/CodeGenLLVM.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"

namespace loom::codegen {

using namespace loom::tir;

namespace {

const char* kCudaPrelude = R"(typedef signed char loom_i8;
typedef short loom_i16;
typedef int loom_i32;
typedef long long loom_i64;
typedef unsigned char loom_u8;
typedef unsigned short loom_u16;
typedef unsigned int loom_u32;
typedef unsigned long long loom_u64;
#define LOOM_INLINE static __device__ __forceinline__
)";

const char* kOpenCLPrelude = R"(typedef char loom_i8;
typedef short loom_i16;
typedef int loom_i32;
typedef long loom_i64;
typedef uchar loom_u8;
typedef ushort loom_u16;
typedef uint loom_u32;
typedef ulong loom_u64;
#define LOOM_INLINE static inline
)";

// Floor division and modulo of signed integers (TIR's floordiv/floormod), one pair per width.
const char* kIntHelpers = R"(LOOM_INLINE loom_i32 loom_floordiv_i32(loom_i32 a, loom_i32 b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
LOOM_INLINE loom_i32 loom_floormod_i32(loom_i32 a, loom_i32 b) { loom_i32 r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
LOOM_INLINE loom_i64 loom_floordiv_i64(loom_i64 a, loom_i64 b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
LOOM_INLINE loom_i64 loom_floormod_i64(loom_i64 a, loom_i64 b) { loom_i64 r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
LOOM_INLINE loom_i32 loom_dot4_u8s8(loom_i32 a, loom_i32 w) { loom_i32 s = 0; for (int k = 0; k < 4; ++k) s += (loom_i32)(loom_u8)((loom_u32)a >> (8 * k)) * (loom_i32)(loom_i8)(loom_u8)((loom_u32)w >> (8 * k)); return s; }
)";

std::string floatText(double v) {
  std::ostringstream os;
  os << std::setprecision(17) << v;
  std::string s = os.str();
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

/// Element types of the buffers a kernel touches, by data handle; which of them it stores to, and
/// which it loads from.
struct BufferTypes : IRVisitor {
  std::unordered_map<const VarNode*, DataType> types;
  std::unordered_set<const VarNode*> stored, loaded;
  void note(const Buffer& b) { types.emplace(b->data.get(), b->dtype); }
  void visit(const BufferLoadNode* op) override {
    note(op->buffer);
    loaded.insert(op->buffer->data.get());
    IRVisitor::visit(op);
  }
  void visit(const BufferStoreNode* op) override {
    note(op->buffer);
    stored.insert(op->buffer->data.get());
    IRVisitor::visit(op);
  }
  /// The kernel loads from a buffer it also stores to (a reduction into global memory, a global
  /// cache written then read by the same thread).
  bool readsBack() const {
    for (auto* v : stored)
      if (loaded.count(v)) return true;
    return false;
  }
};

class GPUGen {
public:
  GPUGen(GPUDialect d, std::string funcName) : m_d(d), m_func(std::move(funcName)) {}

  /// The kernel's text; `lines` gets one entry per line of it.
  std::string kernel(const transform::DeviceKernel& k, std::vector<GPUSourceLine>& lines) {
    m_lineOwners.clear();
    m_names.clear();
    m_used.clear();
    m_os.str("");
    m_launch = {{"blockIdx.x", k.grid[0]}, {"blockIdx.y", k.grid[1]}, {"blockIdx.z", k.grid[2]},
                {"threadIdx.x", k.block[0]}, {"threadIdx.y", k.block[1]}, {"threadIdx.z", k.block[2]}};
    m_oneThread = k.block[0] * k.block[1] * k.block[2] == 1;
    BufferTypes bt;
    bt.visitStmt(k.body);
    std::ostringstream head;
    bool cuda = m_d == GPUDialect::CUDA;
    head << (cuda ? "extern \"C\" __global__ void " : "__kernel void ");
    if (m_d == GPUDialect::CUDA) head << "__launch_bounds__(" << k.block[0] * k.block[1] * k.block[2] << ") ";
    head << k.name << "(";
    // Buffers the kernel stores to are restrict; the ones it only reads are const, and restrict
    // too unless the kernel reads back a buffer it stores to. NVRTC 13.0 (NVVM) loads through a
    // pointer selected between a read-only restrict parameter and a written one (`c ? t0[i] :
    // B[i]` becomes a load of `c ? &t0[i] : &B[i]`) with ld.global.nc, the non-coherent cache,
    // which is only for data that no thread changes during the kernel: the thread need not see its
    // own store (fuzz_difftest seeds 1100071 and 1230077 on the H200: an int32 sum read as 0, the
    // fresh buffer's content, and an int8 -2 read as -4). Without restrict on the read-only ones
    // that load is a plain ld.global, and their own loads still go through the read-only cache
    // (NVVM proves them unchanged: every store is through a restrict parameter).
    const std::string restrictWord = cuda ? " __restrict__" : " restrict";
    bool readsBack = bt.readsBack();
    for (size_t i = 0; i < k.params.size(); ++i) {
      const Var& p = k.params[i];
      std::string n = define(p.get());
      head << (i ? ", " : "");
      if (p->dtype.isHandle()) {
        auto it = bt.types.find(p.get());
        DataType t = it == bt.types.end() ? DataType::Float(32) : it->second;
        bool stored = bt.stored.count(p.get()) > 0;
        head << (cuda ? "" : "__global ") << (stored ? "" : "const ") << memType(t) << "*"
             << (stored || !readsBack ? restrictWord : "") << " " << n;
      } else {
        head << ctype(p->dtype) << " " << n;
      }
    }
    head << ")";
    m_indent = 1;
    // Shared arrays live at the kernel's outermost scope (OpenCL requires it).
    std::ostringstream shared;
    std::vector<GPUSourceLine> sharedOwners;
    postOrderVisit(k.body, [&](const IRNode* n) {
      if (n->nodeKind != NodeKind::Allocate) return;
      auto* a = static_cast<const AllocateNode*>(n);
      if (a->scope != "shared") return;
      shared << "  " << (m_d == GPUDialect::CUDA ? "__shared__ " : "__local ") << memType(a->dtype) << " "
             << define(a->bufferVar.get()) << "[" << constCount(a) << "];\n";
      sharedOwners.push_back({a, nullptr});
      m_sharedDefined.insert(a->bufferVar.get());
    });
    std::string body;
    {
      std::ostringstream saved;
      std::swap(saved, m_os);
      stmt(k.body);
      body = m_os.str();
      std::swap(saved, m_os);
    }
    std::string vars = threadVars();
    lines.push_back({});  // the signature
    lines.insert(lines.end(), size_t(std::count(vars.begin(), vars.end(), '\n')), GPUSourceLine{});
    lines.insert(lines.end(), sharedOwners.begin(), sharedOwners.end());
    lines.insert(lines.end(), m_lineOwners.begin(), m_lineOwners.end());
    lines.push_back({});  // the closing brace
    return head.str() + " {\n" + vars + shared.str() + body + "}\n";
  }

  bool usesDouble = false;

private:
  std::string threadVars() {
    std::string out;
    for (auto& [tag, var] : m_threadVars) {
      std::string axis(1, tag.back());
      int dim = axis == "x" ? 0 : axis == "y" ? 1 : 2;
      bool block = tag.rfind("blockIdx", 0) == 0;
      std::string src = m_d == GPUDialect::CUDA ? tag : std::string(block ? "get_group_id(" : "get_local_id(") + std::to_string(dim) + ")";
      out += "  const " + ctype(var->dtype) + " " + m_names[var] + " = (" + ctype(var->dtype) + ")" + src + ";\n";
    }
    m_threadVars.clear();
    return out;
  }

  int64_t constCount(const AllocateNode* a) {
    int64_t count = 1;
    for (auto& e : a->extents) {
      const int64_t* c = asConstInt(e);
      if (!c) LOOM_THROW(CodeGenError) << "GPU codegen: buffer '" << a->bufferVar->name << "' has a dynamic size";
      count *= *c;
    }
    return std::max<int64_t>(count, 1);
  }

  std::string define(const VarNode* v) {
    std::string base;
    for (char c : v->name) base += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "v_" + base;
    static const std::set<std::string> reserved = {
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
        "float", "for", "goto", "if", "int", "long", "register", "return", "short", "signed", "sizeof", "static",
        "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "true", "false",
        "inline", "restrict", "half", "kernel", "global", "local", "private", "constant", "uint", "uchar", "ulong",
        "ushort", "threadIdx", "blockIdx", "blockDim", "gridDim", "min", "max", "exp", "log", "sqrt", "barrier"};
    std::string name = base;
    for (int k = 1; reserved.count(name) || m_used.count(name); ++k) name = base + "_" + std::to_string(k);
    m_used.insert(name);
    m_names[v] = name;
    return name;
  }
  std::string nameOf(const VarNode* v) {
    auto it = m_names.find(v);
    if (it == m_names.end())
      LOOM_THROW(CodeGenError) << "GPU codegen: variable '" << v->name << "' is used but not defined in '" << m_func << "'";
    return it->second;
  }

  std::string ctype(DataType t) {
    if (t.lanes() > 1)
      LOOM_THROW(CodeGenError) << "GPU codegen: vector type " << t.str() << " in '" << m_func
                               << "' (the GPU backends emit scalar code; do not vectorize under thread bindings)";
    switch (t.code()) {
    case DataType::Code::Bool: return "bool";
    case DataType::Code::Int: return "loom_i" + std::to_string(t.bits());
    case DataType::Code::UInt: return "loom_u" + std::to_string(t.bits());
    case DataType::Code::Float:
      if (t.bits() == 32) return "float";
      if (t.bits() == 64) {
        usesDouble = true;
        return "double";
      }
      break;
    default: break;
    }
    LOOM_THROW(CodeGenError) << "GPU codegen: type " << t.str() << " is not supported by the GPU backends (in '" << m_func << "')";
  }
  std::string memType(DataType t) { return t.isBool() ? "loom_u8" : ctype(t); }

  // --- Expressions -------------------------------------------------------------------------------
  std::string expr(const Expr& e) {
    if (e.dtype().lanes() > 1) ctype(e.dtype());
    switch (e->nodeKind) {
    case NodeKind::IntImm: {
      auto* op = e.as<IntImmNode>();
      if (op->dtype.isBool()) return op->value ? "true" : "false";
      if (op->dtype.isInt() && op->dtype.bits() == 32 && op->value != INT32_MIN) return std::to_string(op->value);
      return "((" + ctype(op->dtype) + ")" + std::to_string(op->value) + (op->dtype.bits() == 64 ? "LL" : "") + ")";
    }
    case NodeKind::FloatImm: {
      auto* op = e.as<FloatImmNode>();
      std::string v;
      if (std::isnan(op->value)) v = "NAN";
      else if (std::isinf(op->value)) v = op->value > 0 ? "INFINITY" : "(-INFINITY)";
      else v = floatText(op->value) + (op->dtype.bits() == 32 ? "f" : "");
      return "((" + ctype(op->dtype) + ")" + v + ")";
    }
    case NodeKind::Var: return nameOf(e.as<VarNode>());
    case NodeKind::Cast: {
      auto* op = e.as<CastNode>();
      if (op->dtype.isBool()) return "((" + expr(op->value) + ") != 0)";
      return "((" + ctype(op->dtype) + ")(" + expr(op->value) + "))";
    }
    case NodeKind::Binary: return binary(e.as<BinaryNode>());
    case NodeKind::Not: return "(!" + expr(e.as<NotNode>()->a) + ")";
    case NodeKind::Select: {
      auto* op = e.as<SelectNode>();
      return ternary(op->condition, op->trueValue, op->falseValue, op->dtype);
    }
    case NodeKind::BufferLoad: {
      auto* op = e.as<BufferLoadNode>();
      std::string ref = access(op->buffer, op->indices);
      return op->buffer->dtype.isBool() ? "((bool)" + ref + ")" : ref;
    }
    case NodeKind::Call: return callText(e.as<CallNode>());
    case NodeKind::Let:
      LOOM_THROW(CodeGenError) << "GPU codegen: a let expression in '" << m_func << "' (not lowered)";
    default: break;
    }
    LOOM_THROW(CodeGenError) << "GPU codegen: unexpected expression in '" << m_func << "'";
  }

  /// `c ? a : b` (Select, if_then_else) of type `t`. C's ?: promotes char and short operands to
  /// int: the value is cast back to its type (an OpenCL min(char, int) around it is ambiguous).
  std::string ternary(const Expr& c, const Expr& a, const Expr& b, DataType t) {
    std::string sel = "(" + expr(c) + " ? " + expr(a) + " : " + expr(b) + ")";
    if (!t.isFloat() && !t.isBool() && t.bits() < 32) return "((" + ctype(t) + ")" + sel + ")";
    return sel;
  }

  std::string binary(const BinaryNode* op) {
    DataType t = op->a.dtype();
    std::string a = expr(op->a), b = expr(op->b), ty = ctype(t);
    auto wrap = [&](const std::string& s) { return "((" + ty + ")(" + s + "))"; };
    // The floor helpers compute in 32 bits: an int8 / int16 result is cast back to its type, so it
    // wraps as the type does (int8 -128 // -1 is -128) and an OpenCL min / max of it sees one
    // operand type (min(char, int) is ambiguous there).
    auto narrow = [&](const std::string& s) { return t.bits() < 32 ? wrap(s) : s; };
    bool cuda = m_d == GPUDialect::CUDA;
    std::string fsuf = cuda && t.isFloat() && t.bits() == 32 ? "f" : "";
    switch (op->op) {
    case BinOp::Add: return wrap(a + " + " + b);
    case BinOp::Sub: return wrap(a + " - " + b);
    case BinOp::Mul: return wrap(a + " * " + b);
    case BinOp::Div: return wrap(a + " / " + b);
    case BinOp::Mod: return t.isFloat() ? "fmod" + fsuf + "(" + a + ", " + b + ")" : wrap(a + " % " + b);
    case BinOp::FloorDiv:
      if (t.isFloat()) return "floor" + fsuf + "(" + a + " / " + b + ")";
      if (t.isUInt() || t.isBool()) return wrap(a + " / " + b);
      return narrow("loom_floordiv_i" + std::string(t.bits() == 64 ? "64" : "32") + "(" + a + ", " + b + ")");
    case BinOp::FloorMod:
      if (t.isFloat()) return "(" + a + " - floor" + fsuf + "(" + a + " / " + b + ") * " + b + ")";
      if (t.isUInt() || t.isBool()) return wrap(a + " % " + b);
      return narrow("loom_floormod_i" + std::string(t.bits() == 64 ? "64" : "32") + "(" + a + ", " + b + ")");
    case BinOp::Min:
      if (t.isFloat()) return "fmin" + fsuf + "(" + a + ", " + b + ")";
      return wrap("min(" + a + ", " + b + ")");
    case BinOp::Max:
      if (t.isFloat()) return "fmax" + fsuf + "(" + a + ", " + b + ")";
      return wrap("max(" + a + ", " + b + ")");
    case BinOp::EQ: return "(" + a + " == " + b + ")";
    case BinOp::NE: return "(" + a + " != " + b + ")";
    case BinOp::LT: return "(" + a + " < " + b + ")";
    case BinOp::LE: return "(" + a + " <= " + b + ")";
    case BinOp::GT: return "(" + a + " > " + b + ")";
    case BinOp::GE: return "(" + a + " >= " + b + ")";
    case BinOp::And: return "(" + a + " && " + b + ")";
    case BinOp::Or: return "(" + a + " || " + b + ")";
    }
    return "?";
  }

  std::string access(const Buffer& buf, const std::vector<Expr>& indices) {
    Expr index;
    for (size_t i = 0; i < indices.size(); ++i) {
      Expr stride = buf->strides.empty() ? Expr(1) : buf->strides[i];
      if (buf->strides.empty())
        for (size_t j = i + 1; j < buf->shape.size(); ++j) stride = stride * buf->shape[j];
      Expr term = indices.size() == 1 ? indices[i] : indices[i] * stride;
      index = index.defined() ? index + term : term;
    }
    std::string idx = expr(index);
    if (buf->elemOffset.defined() && !isZero(buf->elemOffset)) idx = expr(buf->elemOffset) + " + " + idx;
    return nameOf(buf->data.get()) + "[" + idx + "]";
  }

  std::string callText(const CallNode* op) {
    const std::string& name = op->op;
    if (name == "if_then_else" && op->args.size() == 3) return ternary(op->args[0], op->args[1], op->args[2], op->dtype);
    // The int8 byte dot product (tir intrinsics dot4_u8s8*): a prelude helper.
    if ((name == "dot4_u8s8" || name == "dot4_u8s8_pairs16") && op->args.size() == 2 && op->dtype.lanes() == 1)
      return "loom_dot4_u8s8((loom_i32)(" + expr(op->args[0]) + "), (loom_i32)(" + expr(op->args[1]) + "))";
    DataType t = op->dtype;
    if (!t.isFloat() || op->args.empty())
      LOOM_THROW(CodeGenError) << "GPU codegen: unsupported intrinsic '" << name << "' of type " << t.str() << " in '" << m_func << "'";
    ctype(t);
    std::vector<std::string> args;
    for (auto& a : op->args) args.push_back(expr(a));
    bool cuda = m_d == GPUDialect::CUDA;
    std::string suf = cuda && t.bits() == 32 ? "f" : "";
    auto call = [&](const std::string& fn, size_t n) {
      if (args.size() != n) LOOM_THROW(CodeGenError) << "GPU codegen: " << name << " takes " << n << " argument(s)";
      std::string s = fn + suf + "(";
      for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + args[i];
      return s + ")";
    };
    static const std::set<std::string> unary = {"exp", "exp2", "log", "log2", "log10", "sqrt", "tanh", "erf",
                                                "fabs", "floor", "ceil", "trunc", "sin", "cos", "rsqrt"};
    if (unary.count(name)) return call(name, 1);
    if (name == "round") return call("rint", 1);
    if (name == "float_fence" && args.size() == 1) return "(" + args[0] + ")";
    if (name == "sigmoid") return "(1 / (1 + " + std::string("exp") + suf + "(-(" + args.at(0) + "))))";
    if (name == "pow") return call("pow", 2);
    if (name == "fmod") return call("fmod", 2);
    if (name == "fma") return call("fma", 3);
    LOOM_THROW(CodeGenError) << "GPU codegen: unsupported intrinsic '" << name << "' in '" << m_func << "'";
  }

  // --- Statements --------------------------------------------------------------------------------
  /// `(cond)` without doubled parentheses (clang warns about `if ((a == b))`).
  std::string cond(const Expr& e) {
    std::string c = expr(e);
    if (c.size() >= 2 && c.front() == '(' && c.back() == ')') {
      int depth = 0;
      bool wraps = true;
      for (size_t i = 0; i < c.size(); ++i) {
        depth += c[i] == '(' ? 1 : c[i] == ')' ? -1 : 0;
        if (depth == 0 && i + 1 < c.size()) wraps = false;
      }
      if (wraps) return c;
    }
    return "(" + c + ")";
  }
  /// Starts one output line (every caller writes exactly one, ending in '\n'), written by the
  /// statement being emitted.
  std::ostream& line() {
    m_lineOwners.push_back({m_stmt, m_loop});
    return m_os << std::string(size_t(m_indent) * 2, ' ');
  }
  void block(const Stmt& s) {
    ++m_indent;
    stmt(s);
    --m_indent;
  }

  void stmt(const Stmt& s) {
    if (!s.defined()) return;
    // The lines this statement writes are its own; its children's are theirs.
    const StmtNode* outerStmt = m_stmt;
    const ForNode* outerLoop = m_loop;
    m_stmt = s.get();
    if (s->nodeKind == NodeKind::For) m_loop = s.as<ForNode>();
    emitStmt(s);
    m_stmt = outerStmt;
    m_loop = outerLoop;
  }

  void emitStmt(const Stmt& s) {
    switch (s->nodeKind) {
    case NodeKind::BufferStore: {
      auto* op = s.as<BufferStoreNode>();
      std::string conv = op->buffer->dtype.isBool() ? "(loom_u8)" : "";
      line() << access(op->buffer, op->indices) << " = " << conv << expr(op->value) << ";\n";
      return;
    }
    case NodeKind::LetStmt: {
      auto* op = s.as<LetStmtNode>();
      std::string v = expr(op->value);
      line() << ctype(op->value.dtype()) << " " << define(op->var.get()) << " = " << v << ";\n";
      stmt(op->body);
      return;
    }
    case NodeKind::AttrStmt: {
      auto* op = s.as<AttrStmtNode>();
      if (op->key != "thread_extent") {
        stmt(op->body);
        return;
      }
      auto* v = op->node.as<VarNode>();
      LOOM_ICHECK(v) << "thread_extent attr without a thread var";
      const std::string& tag = v->name;
      if (!m_names.count(v)) {
        define(v);
        m_threadVars[tag] = v;
      }
      const int64_t* ext = asConstInt(op->value);
      LOOM_ICHECK(ext) << "non-constant thread extent reached codegen";
      bool guard = *ext < m_launch[tag];
      if (guard) {
        line() << "if (" << m_names[v] << " < " << *ext << ") {\n";
        block(op->body);
        line() << "}\n";
      } else {
        stmt(op->body);
      }
      return;
    }
    case NodeKind::Allocate: {
      auto* op = s.as<AllocateNode>();
      if (m_sharedDefined.count(op->bufferVar.get())) {
        stmt(op->body);
        return;
      }
      line() << "{\n";
      ++m_indent;
      line() << memType(op->dtype) << " " << define(op->bufferVar.get()) << "[" << constCount(op) << "];\n";
      stmt(op->body);
      --m_indent;
      line() << "}\n";
      return;
    }
    case NodeKind::DeclBuffer: stmt(s.as<DeclBufferNode>()->body); return;
    case NodeKind::SeqStmt:
      for (auto& x : s.as<SeqStmtNode>()->seq) stmt(x);
      return;
    case NodeKind::IfThenElse: {
      auto* op = s.as<IfThenElseNode>();
      line() << "if " << cond(op->condition) << " {\n";
      block(op->thenCase);
      if (op->elseCase.defined()) {
        line() << "} else {\n";
        block(op->elseCase);
      }
      line() << "}\n";
      return;
    }
    case NodeKind::For: {
      auto* op = s.as<ForNode>();
      if (op->kind == ForKind::ThreadBinding)
        LOOM_THROW_AT(CodeGenError, op->span) << "GPU codegen: loop '" << op->loopVar->name << "' is still a thread_binding loop";
      std::string t = ctype(op->loopVar->dtype);
      std::string minText = expr(op->min), endText = expr(op->min + op->extent);
      std::string v = define(op->loopVar.get());
      if (op->kind == ForKind::Unrolled) line() << "#pragma unroll\n";
      line() << "for (" << t << " " << v << " = " << minText << "; " << v << " < " << endText << "; ++" << v << ") {\n";
      block(op->body);
      line() << "}\n";
      return;
    }
    case NodeKind::While: {
      auto* op = s.as<WhileNode>();
      line() << "while " << cond(op->condition) << " {\n";
      block(op->body);
      line() << "}\n";
      return;
    }
    case NodeKind::Evaluate: {
      auto* op = s.as<EvaluateNode>();
      if (op->value.as<IntImmNode>()) return;
      if (auto* c = op->value.as<CallNode>(); c && c->op == transform::kThreadSync) {
        // A block of one thread has nothing to wait for. PoCL 5's kernel compiler also aborts
        // (ParallelRegion.cc: "exit != NULL") on barriers in a loop of a kernel launched as one
        // work-item in all (a 1 x 22 int8 matrix-vector product with shared tiles, fuzz_difftest).
        if (m_oneThread) return;
        line() << (m_d == GPUDialect::CUDA ? "__syncthreads();" : "barrier(CLK_LOCAL_MEM_FENCE);") << "\n";
        return;
      }
      line() << "(void)(" << expr(op->value) << ");\n";
      return;
    }
    case NodeKind::AssertStmt:
      LOOM_THROW(CodeGenError) << "GPU codegen: an assert inside kernel of '" << m_func << "' (kernels cannot report errors)";
    default: break;
    }
    LOOM_THROW(CodeGenError) << "GPU codegen: unexpected statement in '" << m_func << "'";
  }

  GPUDialect m_d;
  std::string m_func;
  std::ostringstream m_os;
  int m_indent = 0;
  bool m_oneThread = false;  ///< the kernel's block is one thread: no barriers
  std::unordered_map<const VarNode*, std::string> m_names;
  std::set<std::string> m_used;
  std::set<const VarNode*> m_sharedDefined;
  std::map<std::string, const VarNode*> m_threadVars;
  std::map<std::string, int64_t> m_launch;
  const StmtNode* m_stmt = nullptr;  ///< the statement being emitted
  const ForNode* m_loop = nullptr;   ///< the innermost loop around it
  std::vector<GPUSourceLine> m_lineOwners;  ///< per line of the kernel's body
};

}  // namespace

GPUSource emitGPUSourceWithMap(const std::vector<transform::DeviceProgram>& programs, GPUDialect dialect) {
  std::string kernels;
  std::vector<GPUSourceLine> kernelLines;
  bool usesDouble = false;
  for (auto& program : programs) {
    GPUGen gen(dialect, program.func->name);
    for (auto& k : program.kernels) {
      kernels += gen.kernel(k, kernelLines) + "\n";
      kernelLines.push_back({});  // the blank line after it
    }
    usesDouble |= gen.usesDouble;
  }
  std::string out = dialect == GPUDialect::CUDA ? "// Generated by Loom's GPU backend (CUDA C).\n"
                                                : "// Generated by Loom's GPU backend (OpenCL C).\n";
  if (dialect == GPUDialect::OpenCL && usesDouble) out += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  out += dialect == GPUDialect::CUDA ? kCudaPrelude : kOpenCLPrelude;
  if (dialect == GPUDialect::CUDA) out += "#define INFINITY __int_as_float(0x7f800000)\n#define NAN __int_as_float(0x7fffffff)\n";
  out += kIntHelpers;
  out += "\n";
  GPUSource src;
  src.lines.assign(size_t(std::count(out.begin(), out.end(), '\n')), GPUSourceLine{});
  src.lines.insert(src.lines.end(), kernelLines.begin(), kernelLines.end());
  src.text = out + kernels;
  LOOM_ICHECK(src.lines.size() == size_t(std::count(src.text.begin(), src.text.end(), '\n')))
      << "GPU codegen: the line map has " << src.lines.size() << " lines for a text of "
      << std::count(src.text.begin(), src.text.end(), '\n');
  return src;
}

std::string emitGPUSource(const std::vector<transform::DeviceProgram>& programs, GPUDialect dialect) {
  return emitGPUSourceWithMap(programs, dialect).text;
}

std::string emitGPUSource(const transform::DeviceProgram& program, GPUDialect dialect) {
  return emitGPUSource(std::vector<transform::DeviceProgram>{program}, dialect);
}

}  // namespace loom::codegen
