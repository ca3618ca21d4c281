// The reference interpreter: a direct, checked tree walk over TIR with exact per-dtype arithmetic.
#include "core/tir/Interpreter.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/support/Error.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Intrinsics.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"

namespace loom::tir {

namespace {

using runtime::NDArray;

/// A block of memory: a parameter's NDArray or a fresh allocation.
struct Memory {
  uint8_t* ptr = nullptr;
  int64_t bytes = 0;
  std::vector<uint8_t> owned;
  NDArray keep;
};
using MemRef = std::shared_ptr<Memory>;

/// One lane: integers (and bools) are kept normalized in `i` (signed types sign-extended, unsigned
/// zero-extended), floats in `f` holding a value exactly representable in their type.
union Scalar {
  int64_t i;
  double f;
};

/// A runtime value: lanes of a scalar or vector type, or a handle (memory and byte offset).
struct Value {
  DataType t;
  Scalar s{0};
  std::vector<Scalar> v;  ///< every lane when t is a vector type; empty for scalars
  MemRef mem;
  int64_t offset = 0;

  int lanes() const { return t.lanes(); }
  Scalar lane(int k) const { return v.empty() ? s : v[size_t(k)]; }
  Scalar& at(int k) { return v.empty() ? s : v[size_t(k)]; }
};

Value makeValue(DataType t) {
  Value r;
  r.t = t;
  if (t.lanes() > 1) r.v.resize(size_t(t.lanes()), Scalar{0});
  return r;
}

int64_t normInt(DataType t, uint64_t raw) {
  if (t.isBool()) return raw != 0;
  int b = t.bits();
  if (b >= 64) return int64_t(raw);
  uint64_t mask = (uint64_t(1) << b) - 1;
  raw &= mask;
  if (t.isInt() && ((raw >> (b - 1)) & 1)) raw |= ~mask;
  return int64_t(raw);
}

double roundFloat(DataType t, double v) {
  if (t.isBFloat16()) return fromBFloat16Bits(toBFloat16Bits(v));
  switch (t.bits()) {
  case 16: return fromHalfBits(toHalfBits(v));
  case 32: return double(float(v));
  default: return v;
  }
}

/// C truncation toward zero; NaN gives 0 and values beyond 64 bits the int64 minimum (both are
/// undefined behaviour in C). The result is wrapped by the caller.
uint64_t floatToIntBits(double v, bool isUnsigned) {
  if (std::isnan(v)) return 0;
  double t = std::trunc(v);
  if (t >= -9223372036854775808.0 && t < 9223372036854775808.0) return uint64_t(int64_t(t));
  if (isUnsigned && t >= 0 && t < 18446744073709551616.0) return uint64_t(t);
  return uint64_t(std::numeric_limits<int64_t>::min());
}

Scalar intScalar(int64_t v) {
  Scalar s;
  s.i = v;
  return s;
}
Scalar floatScalar(double v) {
  Scalar s;
  s.f = v;
  return s;
}

double asDouble(DataType e, Scalar x) {
  if (e.isFloat()) return x.f;
  if (e.isUInt()) return double(uint64_t(x.i));
  return double(x.i);
}

/// The lane `x` of type `e` converted to `to`, with C / LLVM semantics.
Scalar fromDouble(DataType to, double r) {
  if (to.isFloat()) return floatScalar(roundFloat(to, r));
  if (to.isBool()) return intScalar(r != 0);
  return intScalar(normInt(to, floatToIntBits(r, to.isUInt())));
}

Scalar castScalar(DataType from, DataType to, Scalar x) {
  if (to.isBool()) return intScalar(from.isFloat() ? x.f != 0 : x.i != 0);
  if (to.isIntegral()) {
    if (from.isFloat()) return intScalar(normInt(to, floatToIntBits(x.f, to.isUInt())));
    return intScalar(normInt(to, uint64_t(x.i)));
  }
  // to a float type
  if (from.isFloat()) return floatScalar(roundFloat(to, x.f));
  bool wide = to.bits() == 64;
  if (from.isUInt()) {
    auto u = uint64_t(x.i);
    if (wide) return floatScalar(double(u));
    if (to.bits() == 32 && !to.isBFloat16()) return floatScalar(double(float(u)));
    return floatScalar(roundFloat(to, double(u)));
  }
  if (wide) return floatScalar(double(x.i));
  if (to.bits() == 32 && !to.isBFloat16()) return floatScalar(double(float(x.i)));
  return floatScalar(roundFloat(to, double(x.i)));
}

size_t elemBytes(DataType e) { return e.bits() < 8 ? 1 : size_t(e.bits()) / 8; }

bool storable(DataType e) {
  if (e.isBool()) return true;
  if (e.isIntegral()) return e.bits() == 8 || e.bits() == 16 || e.bits() == 32 || e.bits() == 64;
  if (e.isBFloat16()) return e.bits() == 16;
  if (e.isFloat()) return e.bits() == 16 || e.bits() == 32 || e.bits() == 64;
  return false;
}

Scalar readScalar(const uint8_t* p, DataType e) {
  if (e.isBool()) return intScalar(*p != 0);
  if (e.isIntegral()) {
    uint64_t raw = 0;
    std::memcpy(&raw, p, elemBytes(e));  // little-endian: the low bytes
    return intScalar(normInt(e, raw));
  }
  if (e.isBFloat16()) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return floatScalar(fromBFloat16Bits(h));
  }
  switch (e.bits()) {
  case 16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return floatScalar(fromHalfBits(h));
  }
  case 32: {
    float f;
    std::memcpy(&f, p, 4);
    return floatScalar(f);
  }
  default: {
    double d;
    std::memcpy(&d, p, 8);
    return floatScalar(d);
  }
  }
}

void writeScalar(uint8_t* p, DataType e, Scalar x) {
  if (e.isBool()) {
    *p = x.i != 0;
  } else if (e.isIntegral()) {
    auto raw = uint64_t(x.i);
    std::memcpy(p, &raw, elemBytes(e));
  } else if (e.isBFloat16()) {
    uint16_t h = toBFloat16Bits(x.f);
    std::memcpy(p, &h, 2);
  } else if (e.bits() == 16) {
    uint16_t h = toHalfBits(x.f);
    std::memcpy(p, &h, 2);
  } else if (e.bits() == 32) {
    auto f = float(x.f);
    std::memcpy(p, &f, 4);
  } else {
    std::memcpy(p, &x.f, 8);
  }
}

std::string listStr(const std::vector<int64_t>& v) {
  std::string r = "[";
  for (size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + std::to_string(v[i]);
  return r + "]";
}

std::string scalarStr(DataType e, Scalar x) {
  std::ostringstream os;
  if (e.isFloat()) os << x.f;
  else if (e.isUInt()) os << uint64_t(x.i);
  else os << x.i;
  return os.str();
}

constexpr int64_t kMaxAllocBytes = int64_t(1) << 34;

template <class F> F floatBinary(BinOp op, F a, F b) {
  switch (op) {
  case BinOp::Add: return a + b;
  case BinOp::Sub: return a - b;
  case BinOp::Mul: return a * b;
  case BinOp::Div: return a / b;
  case BinOp::Mod: return std::fmod(a, b);
  case BinOp::FloorDiv: return std::floor(a / b);
  case BinOp::FloorMod: return a - std::floor(a / b) * b;
  case BinOp::Min: return a < b ? a : b;
  case BinOp::Max: return a > b ? a : b;
  default: return F(0);
  }
}

/// The interpreter state: variable bindings (scoped) and nothing else; memory is reference counted.
class Interp {
public:
  void run(const PrimFunc& f, const std::vector<Arg>& args);

private:
  /// A variable's binding. Slots are never erased, so pointers to them stay valid; unbinding
  /// clears `bound`.
  struct Slot {
    Value value;
    bool bound = false;
  };

  /// Binds variables for the lifetime of the scope, restoring shadowed bindings after.
  class Scope {
  public:
    explicit Scope(Interp& in) : m_in(in) {}
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope() {
      for (auto it = m_more.rbegin(); it != m_more.rend(); ++it) restore(*it);
      for (int i = m_count; i-- > 0;) restore(m_inline[i]);
    }
    /// Binds `v` and returns its slot (valid until the interpreter ends).
    Slot* bind(const VarNode* v, Value val) {
      if (!m_in.m_entryVars.empty() && m_in.m_entryVars.count(v)) {
        // An entry variable rebound (not SSA): layouts computed from it are no longer fixed.
        m_in.m_entryVars.clear();
        m_in.m_layouts.clear();
      }
      Slot& s = m_in.m_env[v];
      Saved& sv = m_count < kInline ? m_inline[m_count++] : m_more.emplace_back();
      sv.slot = &s;
      sv.wasBound = s.bound;
      if (s.bound) sv.old = std::move(s.value);
      s.value = std::move(val);
      s.bound = true;
      return &s;
    }

  private:
    struct Saved {
      Slot* slot = nullptr;
      bool wasBound = false;
      Value old;
    };
    static void restore(Saved& sv) {
      sv.slot->bound = sv.wasBound;
      if (sv.wasBound) sv.slot->value = std::move(sv.old);
    }
    static constexpr int kInline = 4;
    Interp& m_in;
    Saved m_inline[kInline];
    int m_count = 0;
    std::vector<Saved> m_more;
  };

  /// A buffer's evaluated shape, strides (compact when the buffer has none) and element offset.
  struct Layout {
    std::vector<int64_t> shape, strides;
    int64_t offset = 0;
  };
  /// Where an access goes: the memory, and the byte offset of each index lane.
  struct Access {
    Memory* mem = nullptr;
    int64_t base = 0;
    int lanes = 1;
    int64_t byte0 = 0;           ///< lane 0 (the only one for scalar indices)
    std::vector<int64_t> bytes;  ///< every lane, when lanes > 1
    int64_t byteAt(int k) const { return lanes == 1 ? byte0 : bytes[size_t(k)]; }
  };

  Value eval(const Expr& e);
  void exec(const Stmt& s);
  void execNode(const Stmt& s);

  Value evalBinary(const BinaryNode* n);
  Scalar binaryScalar(BinOp op, DataType e, Scalar a, Scalar b);
  Value evalCall(const CallNode* n);
  /// `active`: a masked access (a vector condition's lanes); inactive lanes are neither
  /// bounds-checked nor read or written (a load gives them `other`'s lanes).
  Value evalLoad(const BufferLoadNode* n, const Value* active = nullptr, const Value* other = nullptr);
  void execStore(const BufferStoreNode* n, const Value* active = nullptr);
  void execRealize(const BlockRealizeNode* n);
  void execBlock(const BlockNode* b, Scope& scope);

  int64_t evalInt(const Expr& e, const char* what);
  bool evalCond(const Expr& e, const char* what);
  Value lookup(const VarNode* v);
  MemRef allocate(int64_t elements, DataType t, const std::string& what);
  /// The memory, base byte offset and per-lane element offsets of an access.
  void resolve(const Buffer& b, const std::vector<Expr>& indices, const char* what, Access& acc,
               const Value* active = nullptr);
  const Layout& layoutOf(const Buffer& b, Layout& scratch);
  Slot* find(const VarNode* v) {
    auto it = m_env.find(v);
    return it == m_env.end() || !it->second.bound ? nullptr : &it->second;
  }
  void set(const VarNode* v, Value val) {
    Slot& s = m_env[v];
    s.value = std::move(val);
    s.bound = true;
  }
  std::vector<int64_t> evalShape(const Buffer& b);
  Value handleValue(MemRef m) {
    Value v = makeValue(DataType::Handle());
    v.mem = std::move(m);
    return v;
  }

  std::unordered_map<const VarNode*, Slot> m_env;
  /// Layouts of buffers whose shape, strides and offset are constants.
  std::unordered_map<const BufferNode*, Layout> m_layouts;
  /// Variables bound once at entry (scalar params and symbolic dimensions), never rebound.
  std::unordered_set<const VarNode*> m_entryVars;
};

Value Interp::lookup(const VarNode* v) {
  Slot* s = find(v);
  if (!s) LOOM_THROW(RuntimeError) << "variable '" << v->name << "' is used but not bound";
  return s->value;
}

int64_t Interp::evalInt(const Expr& e, const char* what) {
  if (!e.defined()) LOOM_THROW(RuntimeError) << what << " is undefined";
  if (auto* imm = e.as<IntImmNode>()) return imm->value;
  Value v = eval(e);
  if (v.lanes() != 1 || !(v.t.isIntegral() || v.t.isBool()))
    LOOM_THROW(RuntimeError) << what << " has type " << v.t.str() << ", expected a scalar integer";
  return v.s.i;
}

bool Interp::evalCond(const Expr& e, const char* what) {
  Value v = eval(e);
  if (v.lanes() != 1) LOOM_THROW(RuntimeError) << what << " has vector type " << v.t.str();
  if (v.t.isFloat()) return v.s.f != 0;
  if (v.t.isHandle()) return v.mem != nullptr;
  return v.s.i != 0;
}

MemRef Interp::allocate(int64_t elements, DataType t, const std::string& what) {
  int64_t lanes = t.lanes();
  auto eb = int64_t(elemBytes(t.element()));
  if (elements < 0) LOOM_THROW(RuntimeError) << what << ": negative size " << elements;
  if (!storable(t.element())) LOOM_THROW(RuntimeError) << what << ": cannot allocate elements of type " << t.str();
  if (elements > kMaxAllocBytes / (lanes * eb))
    LOOM_THROW(RuntimeError) << what << ": " << elements << " elements of " << t.str() << " is too large";
  auto m = std::make_shared<Memory>();
  m->bytes = elements * lanes * eb;
  m->owned.resize(size_t(m->bytes));
  m->ptr = m->owned.data();
  // Poison: NaN for floats, 0xA5 bytes otherwise, so uninitialized reads change results.
  DataType e = t.element();
  if (e.isFloat()) {
    Scalar nan = floatScalar(std::numeric_limits<double>::quiet_NaN());
    for (int64_t i = 0; i < elements * lanes; ++i) writeScalar(m->ptr + i * eb, e, nan);
  } else {
    std::memset(m->ptr, 0xA5, size_t(m->bytes));
  }
  return m;
}

std::vector<int64_t> Interp::evalShape(const Buffer& b) {
  std::vector<int64_t> shape;
  shape.reserve(b->shape.size());
  for (auto& s : b->shape) shape.push_back(evalInt(s, "buffer shape"));
  return shape;
}

const Interp::Layout& Interp::layoutOf(const Buffer& b, Layout& scratch) {
  auto it = m_layouts.find(b.get());
  if (it != m_layouts.end()) return it->second;
  // Cacheable when every part depends only on variables bound at entry (params, symbolic dims).
  bool constant = true;
  auto fixed = [&](const Expr& e) {
    if (!e.defined() || e.as<IntImmNode>()) return;
    postOrderVisit(e, [&](const IRNode* n) {
      if (n->nodeKind == NodeKind::Var) constant = constant && m_entryVars.count(static_cast<const VarNode*>(n));
      else if (n->nodeKind == NodeKind::BufferLoad || n->nodeKind == NodeKind::Let) constant = false;
    });
  };
  fixed(b->elemOffset);
  for (auto& e : b->shape) fixed(e);
  for (auto& e : b->strides) fixed(e);
  Layout& l = constant ? m_layouts[b.get()] : scratch;
  l.shape = evalShape(b);
  size_t nd = l.shape.size();
  l.strides.assign(nd, 0);
  if (b->strides.empty()) {
    int64_t acc = 1;
    for (size_t d = nd; d-- > 0;) {
      l.strides[d] = acc;
      acc *= l.shape[d];
    }
  } else {
    if (b->strides.size() != nd)
      LOOM_THROW(RuntimeError) << "buffer " << b->name << " has " << b->strides.size() << " strides for " << nd
                               << " dimensions";
    for (size_t d = 0; d < nd; ++d) l.strides[d] = evalInt(b->strides[d], "buffer stride");
  }
  l.offset = b->elemOffset.defined() ? evalInt(b->elemOffset, "buffer elem_offset") : 0;
  return l;
}

void Interp::resolve(const Buffer& b, const std::vector<Expr>& indices, const char* what, Access& acc,
                     const Value* active) {
  Slot* slot = find(b->data.get());
  if (!slot || !slot->value.mem)
    LOOM_THROW(RuntimeError) << what << " of buffer " << b->name << ": its data variable '" << b->data->name
                             << "' is not bound to memory";
  acc.mem = slot->value.mem.get();
  acc.base = slot->value.offset;
  size_t nd = indices.size();
  if (nd != b->shape.size())
    LOOM_THROW(RuntimeError) << what << " of buffer " << b->name << " with " << nd << " indices, but it has "
                             << b->shape.size() << " dimensions";
  // Scalar indices go to `scalar`; vector ones (rare) are kept whole in `vec`.
  int64_t small[8];
  std::vector<int64_t> large;
  int64_t* scalar = small;
  if (nd > 8) {
    large.resize(nd);
    scalar = large.data();
  }
  std::vector<Value> vec;
  int lanes = 1;
  for (size_t d = 0; d < nd; ++d) {
    const Expr& e = indices[d];
    if (auto* imm = e.as<IntImmNode>(); imm && imm->dtype.lanes() == 1) {
      scalar[d] = imm->value;
      continue;
    }
    Value v = eval(e);
    if (!(v.t.isIntegral() || v.t.isBool()))
      LOOM_THROW(RuntimeError) << what << " of buffer " << b->name << ": index of type " << v.t.str();
    scalar[d] = v.s.i;
    if (v.lanes() > 1) {
      if (lanes > 1 && v.lanes() != lanes)
        LOOM_THROW(RuntimeError) << what << " of buffer " << b->name << ": index lanes " << lanes << " and "
                                 << v.lanes() << " differ";
      lanes = v.lanes();
      if (vec.empty()) vec.resize(nd);
      vec[d] = std::move(v);
    }
  }
  // The layout is fetched after the indices are evaluated (their evaluation may bind variables).
  Layout scratch;
  const Layout& l = layoutOf(b, scratch);
  auto indexAt = [&](size_t d, int k) {
    return !vec.empty() && vec[d].lanes() > 1 ? vec[d].v[size_t(k)].i : scalar[d];
  };
  int64_t unit = int64_t(elemBytes(b->dtype.element())) * b->dtype.lanes();
  acc.lanes = lanes;
  if (lanes > 1) acc.bytes.assign(size_t(lanes), 0);
  for (int k = 0; k < lanes; ++k) {
    if (active && active->lanes() > 1 && active->lane(k).i == 0) {
      if (lanes > 1) acc.bytes[size_t(k)] = 0;
      continue;
    }
    int64_t flat = l.offset;
    bool overflow = false;
    for (size_t d = 0; d < nd; ++d) {
      int64_t term;
      overflow |= __builtin_mul_overflow(indexAt(d, k), l.strides[d], &term);
      overflow |= __builtin_add_overflow(flat, term, &flat);
    }
    int64_t byte = 0;
    overflow = overflow || __builtin_mul_overflow(flat, unit, &byte) || __builtin_add_overflow(byte, acc.base, &byte);
    if (overflow || byte < 0 || byte + unit > acc.mem->bytes) {
      std::vector<int64_t> at;
      for (size_t d = 0; d < nd; ++d) at.push_back(indexAt(d, k));
      std::ostringstream os;
      os << "out-of-bounds " << what << " of buffer " << b->name << " at index " << listStr(at);
      if (lanes > 1) os << " (lane " << k << ")";
      os << ", shape " << listStr(l.shape) << ": element offset "
         << (overflow ? std::string("<overflow>") : std::to_string(flat)) << " is outside the "
         << (acc.mem->bytes - acc.base) / unit << " elements of its memory";
      throw RuntimeError(os.str());
    }
    if (lanes == 1) acc.byte0 = byte;
    else acc.bytes[size_t(k)] = byte;
  }
}

Value Interp::evalLoad(const BufferLoadNode* n, const Value* active, const Value* other) {
  const Buffer& b = n->buffer;
  DataType e = b->dtype.element();
  if (!storable(e)) LOOM_THROW(RuntimeError) << "load of buffer " << b->name << " of unsupported type " << b->dtype.str();
  Access acc;
  resolve(b, n->indices, "load", acc, active);
  int bufLanes = b->dtype.lanes();
  int total = acc.lanes * bufLanes;
  if (n->dtype.element() != e || n->dtype.lanes() != total)
    LOOM_THROW(RuntimeError) << "load of buffer " << b->name << " (" << b->dtype.str() << ") as type "
                             << n->dtype.str() << " with " << acc.lanes << " index lanes";
  Value r = makeValue(n->dtype);
  auto eb = int64_t(elemBytes(e));
  for (int k = 0; k < acc.lanes; ++k)
    for (int l = 0; l < bufLanes; ++l) {
      const int lane = k * bufLanes + l;
      if (active && acc.lanes > 1 && active->lane(k).i == 0)
        r.at(lane) = other->lane(other->lanes() > 1 ? lane : 0);
      else
        r.at(lane) = readScalar(acc.mem->ptr + acc.byteAt(k) + l * eb, e);
    }
  return r;
}

void Interp::execStore(const BufferStoreNode* n, const Value* active) {
  const Buffer& b = n->buffer;
  DataType e = b->dtype.element();
  if (!storable(e)) LOOM_THROW(RuntimeError) << "store to buffer " << b->name << " of unsupported type " << b->dtype.str();
  Value val = eval(n->value);
  Access acc;
  resolve(b, n->indices, "store", acc, active);
  int bufLanes = b->dtype.lanes();
  int total = acc.lanes * bufLanes;
  if (val.t.element() != e || (val.lanes() != total && val.lanes() != 1))
    LOOM_THROW(RuntimeError) << "store of a " << val.t.str() << " value into buffer " << b->name << " ("
                             << b->dtype.str() << ") with " << acc.lanes << " index lanes";
  auto eb = int64_t(elemBytes(e));
  for (int k = 0; k < acc.lanes; ++k)
    for (int l = 0; l < bufLanes; ++l) {
      int lane = k * bufLanes + l;
      if (active && acc.lanes > 1 && active->lane(k).i == 0) continue;
      writeScalar(acc.mem->ptr + acc.byteAt(k) + l * eb, e, val.lane(val.lanes() > 1 ? lane : 0));
    }
}

Scalar Interp::binaryScalar(BinOp op, DataType e, Scalar a, Scalar b) {
  if (isComparison(op)) {
    int c;  // -1, 0, 1, or 2 for unordered
    if (e.isFloat()) c = std::isnan(a.f) || std::isnan(b.f) ? 2 : (a.f < b.f ? -1 : a.f > b.f ? 1 : 0);
    else if (e.isUInt()) c = uint64_t(a.i) < uint64_t(b.i) ? -1 : uint64_t(a.i) > uint64_t(b.i) ? 1 : 0;
    else c = a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
    bool r = false;
    switch (op) {
    case BinOp::EQ: r = c == 0; break;
    case BinOp::NE: r = c != 0; break;
    case BinOp::LT: r = c == -1; break;
    case BinOp::LE: r = c == -1 || c == 0; break;
    case BinOp::GT: r = c == 1; break;
    case BinOp::GE: r = c == 1 || c == 0; break;
    default: break;
    }
    return intScalar(r);
  }
  if (isLogical(op)) {
    bool x = e.isFloat() ? a.f != 0 : a.i != 0, y = e.isFloat() ? b.f != 0 : b.i != 0;
    return intScalar(op == BinOp::And ? (x && y) : (x || y));
  }
  if (e.isFloat()) {
    if (e.bits() == 64) return floatScalar(floatBinary<double>(op, a.f, b.f));
    return floatScalar(roundFloat(e, floatBinary<float>(op, float(a.f), float(b.f))));
  }
  bool isU = e.isUInt() || e.isBool();
  auto ua = uint64_t(a.i), ub = uint64_t(b.i);
  switch (op) {
  case BinOp::Add: return intScalar(normInt(e, ua + ub));
  case BinOp::Sub: return intScalar(normInt(e, ua - ub));
  case BinOp::Mul: return intScalar(normInt(e, ua * ub));
  case BinOp::Min: return isU ? (ua < ub ? a : b) : (a.i < b.i ? a : b);
  case BinOp::Max: return isU ? (ua > ub ? a : b) : (a.i > b.i ? a : b);
  default: break;
  }
  // Division and modulo.
  if (b.i == 0)
    LOOM_THROW(RuntimeError) << "integer division by zero: " << binOpName(op) << "(" << scalarStr(e, a) << ", 0) of type "
                             << e.str();
  if (isU) {
    uint64_t q = ua / ub, r = ua % ub;
    bool wantsQuotient = op == BinOp::Div || op == BinOp::FloorDiv;
    return intScalar(normInt(e, wantsQuotient ? q : r));
  }
  int64_t x = a.i, y = b.i;
  int64_t q, r;
  if (x == std::numeric_limits<int64_t>::min() && y == -1) {
    q = x;  // wraps, like two's complement hardware
    r = 0;
  } else {
    q = x / y;
    r = x % y;
  }
  switch (op) {
  case BinOp::Div: return intScalar(normInt(e, uint64_t(q)));
  case BinOp::Mod: return intScalar(normInt(e, uint64_t(r)));
  case BinOp::FloorDiv:
    if (r != 0 && ((r < 0) != (y < 0))) --q;
    return intScalar(normInt(e, uint64_t(q)));
  case BinOp::FloorMod:
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return intScalar(normInt(e, uint64_t(r)));
  default: break;
  }
  LOOM_THROW(RuntimeError) << "unsupported binary operator " << binOpName(op);
}

Value Interp::evalBinary(const BinaryNode* n) {
  if (isLogical(n->op) && n->dtype.lanes() == 1) {
    // Scalar and/or short-circuit, like C's && and ||.
    bool x = evalCond(n->a, "operand of and/or");
    if (n->op == BinOp::And && !x) return [] { Value v = makeValue(DataType::Bool()); v.s.i = 0; return v; }();
    if (n->op == BinOp::Or && x) return [] { Value v = makeValue(DataType::Bool()); v.s.i = 1; return v; }();
    Value v = makeValue(n->dtype);
    v.s.i = evalCond(n->b, "operand of and/or");
    return v;
  }
  Value a = eval(n->a), b = eval(n->b);
  DataType e = a.t.element();
  if (b.t.element() != e)
    LOOM_THROW(RuntimeError) << binOpName(n->op) << " of operands of types " << a.t.str() << " and " << b.t.str();
  int lanes = n->dtype.lanes();
  if ((a.lanes() != 1 && a.lanes() != lanes) || (b.lanes() != 1 && b.lanes() != lanes))
    LOOM_THROW(RuntimeError) << binOpName(n->op) << " of " << a.t.str() << " and " << b.t.str() << " giving "
                             << n->dtype.str();
  Value r = makeValue(n->dtype);
  for (int k = 0; k < lanes; ++k)
    r.at(k) = binaryScalar(n->op, e, a.lane(a.lanes() > 1 ? k : 0), b.lane(b.lanes() > 1 ? k : 0));
  return r;
}

Value Interp::evalCall(const CallNode* n) {
  if (n->op == "if_then_else") {
    if (n->args.size() != 3) LOOM_THROW(RuntimeError) << "if_then_else with " << n->args.size() << " arguments";
    Value c = eval(n->args[0]);
    if (c.lanes() == 1) {
      bool taken = c.t.isFloat() ? c.s.f != 0 : c.s.i != 0;
      return eval(taken ? n->args[1] : n->args[2]);
    }
    // A lane-guarded load (codegen: a masked load) reads only the lanes whose condition holds.
    if (auto* load = n->args[1].as<BufferLoadNode>();
        load && load->buffer->dtype.lanes() == 1 && load->dtype.lanes() == c.lanes()) {
      Value f = eval(n->args[2]);
      return evalLoad(load, &c, &f);
    }
    Value t = eval(n->args[1]), f = eval(n->args[2]);
    Value r = makeValue(n->dtype);
    for (int k = 0; k < r.lanes(); ++k) {
      bool taken = c.lane(k).i != 0;
      const Value& src = taken ? t : f;
      r.at(k) = src.lane(src.lanes() > 1 ? k : 0);
    }
    return r;
  }
  // A team loop's barrier (codegen/FreeVars.h): run sequentially there is no team, so it
  // answers -1 and the caller takes its serial path.
  if (n->op == "loom_parallel_barrier") {
    Value r = makeValue(n->dtype);
    r.at(0) = fromDouble(n->dtype.element(), -1.0);
    return r;
  }
  const Intrinsic* in = findIntrinsic(n->op);
  if (!in) LOOM_THROW(RuntimeError) << "call of unknown intrinsic '" << n->op << "'";
  if (in->numArgs >= 0 && size_t(in->numArgs) != n->args.size())
    LOOM_THROW(RuntimeError) << "intrinsic '" << n->op << "' takes " << in->numArgs << " arguments, got "
                             << n->args.size();
  if (!in->evalFloat) LOOM_THROW(RuntimeError) << "intrinsic '" << n->op << "' has no reference semantics";
  std::vector<Value> args;
  args.reserve(n->args.size());
  for (auto& a : n->args) args.push_back(eval(a));
  // A call for its effect only (a barrier, a hint): nothing to compute when run sequentially.
  if (n->dtype.isVoid()) return makeValue(n->dtype);
  for (auto& a : args)
    if (a.t.isHandle() || a.t.isVoid())
      LOOM_THROW(RuntimeError) << "intrinsic '" << n->op << "' applied to a " << a.t.str() << " value";
  if (n->dtype.isHandle()) LOOM_THROW(RuntimeError) << "intrinsic '" << n->op << "' returning a handle";
  Value r = makeValue(n->dtype);
  DataType re = n->dtype.element();
  std::vector<double> xs(args.size());
  for (int k = 0; k < r.lanes(); ++k) {
    for (size_t j = 0; j < args.size(); ++j) {
      const Value& a = args[j];
      xs[j] = asDouble(a.t.element(), a.lane(a.lanes() > 1 ? k : 0));
    }
    r.at(k) = fromDouble(re, in->evalFloat(xs));
  }
  return r;
}

Value Interp::eval(const Expr& e) {
  if (!e.defined()) LOOM_THROW(RuntimeError) << "evaluation of an undefined expression";
  switch (e->nodeKind) {
  case NodeKind::IntImm: {
    Value v = makeValue(e->dtype);
    int64_t x = normInt(e->dtype.element(), uint64_t(e.as<IntImmNode>()->value));
    for (int k = 0; k < v.lanes(); ++k) v.at(k).i = x;
    return v;
  }
  case NodeKind::FloatImm: {
    Value v = makeValue(e->dtype);
    double x = roundFloat(e->dtype.element(), e.as<FloatImmNode>()->value);
    for (int k = 0; k < v.lanes(); ++k) v.at(k).f = x;
    return v;
  }
  case NodeKind::StringImm: return makeValue(DataType::Handle());
  case NodeKind::Var: return lookup(e.as<VarNode>());
  case NodeKind::Cast: {
    Value x = eval(e.as<CastNode>()->value);
    DataType to = e->dtype;
    if (to.isHandle() || x.t.isHandle()) {
      if (to.isHandle() && x.t.isHandle()) return x;
      LOOM_THROW(RuntimeError) << "cast from " << x.t.str() << " to " << to.str();
    }
    if (x.lanes() != 1 && x.lanes() != to.lanes())
      LOOM_THROW(RuntimeError) << "cast from " << x.t.str() << " to " << to.str() << " changes the lane count";
    Value r = makeValue(to);
    for (int k = 0; k < r.lanes(); ++k)
      r.at(k) = castScalar(x.t.element(), to.element(), x.lane(x.lanes() > 1 ? k : 0));
    return r;
  }
  case NodeKind::Binary: return evalBinary(e.as<BinaryNode>());
  case NodeKind::Not: {
    Value x = eval(e.as<NotNode>()->a);
    Value r = makeValue(e->dtype);
    for (int k = 0; k < r.lanes(); ++k) {
      Scalar s = x.lane(x.lanes() > 1 ? k : 0);
      r.at(k).i = x.t.isFloat() ? s.f == 0 : s.i == 0;
    }
    return r;
  }
  case NodeKind::Select: {
    auto* n = e.as<SelectNode>();
    Value c = eval(n->condition), t = eval(n->trueValue), f = eval(n->falseValue);
    Value r = makeValue(e->dtype);
    for (int k = 0; k < r.lanes(); ++k) {
      Scalar cs = c.lane(c.lanes() > 1 ? k : 0);
      bool taken = c.t.isFloat() ? cs.f != 0 : cs.i != 0;
      const Value& src = taken ? t : f;
      if (src.t.isHandle()) return src;
      r.at(k) = src.lane(src.lanes() > 1 ? k : 0);
    }
    return r;
  }
  case NodeKind::Let: {
    auto* n = e.as<LetNode>();
    Value v = eval(n->value);
    Scope scope(*this);
    scope.bind(n->var.get(), std::move(v));
    return eval(n->body);
  }
  case NodeKind::BufferLoad: return evalLoad(e.as<BufferLoadNode>());
  case NodeKind::Ramp: {
    auto* n = e.as<RampNode>();
    Value base = eval(n->base), stride = eval(n->stride);
    if (base.lanes() != 1 || stride.lanes() != 1 || base.t != stride.t)
      LOOM_THROW(RuntimeError) << "ramp of " << base.t.str() << " base and " << stride.t.str() << " stride";
    Value r = makeValue(e->dtype);
    Scalar cur = base.s;
    for (int k = 0; k < n->lanes; ++k) {
      r.at(k) = cur;
      cur = binaryScalar(BinOp::Add, base.t, cur, stride.s);
    }
    return r;
  }
  case NodeKind::Broadcast: {
    auto* n = e.as<BroadcastNode>();
    Value x = eval(n->value);
    if (x.lanes() != 1) LOOM_THROW(RuntimeError) << "broadcast of the vector type " << x.t.str();
    Value r = makeValue(e->dtype);
    for (int k = 0; k < n->lanes; ++k) r.at(k) = x.s;
    return r;
  }
  case NodeKind::Call: return evalCall(e.as<CallNode>());
  default: break;
  }
  LOOM_THROW(RuntimeError) << "cannot evaluate a node of kind " << int(e->nodeKind) << " as an expression";
}

void Interp::execBlock(const BlockNode* b, Scope& scope) {
  for (auto& buf : b->allocBuffers) {
    std::vector<int64_t> shape = evalShape(buf);
    int64_t elements = 1;
    if (buf->strides.empty()) {
      for (auto s : shape) elements *= s;
    } else {
      bool empty = false;
      int64_t last = 0;
      for (size_t d = 0; d < shape.size() && d < buf->strides.size(); ++d) {
        empty |= shape[d] == 0;
        last += (shape[d] - 1) * evalInt(buf->strides[d], "buffer stride");
      }
      elements = empty ? 0 : last + 1;
    }
    if (buf->elemOffset.defined()) elements += evalInt(buf->elemOffset, "buffer elem_offset");
    scope.bind(buf->data.get(), handleValue(allocate(elements, buf->dtype, "alloc_buffer " + buf->name)));
  }
  if (b->init.defined()) {
    bool first = true;
    for (auto& iv : b->iterVars)
      if (iv.iterType == IterType::CommReduce && lookup(iv.var.get()).s.i != evalInt(iv.dom.min, "iter var domain"))
        first = false;
    if (first) exec(b->init);
  }
  exec(b->body);
}

void Interp::execRealize(const BlockRealizeNode* n) {
  const BlockNode* b = n->block.get();
  if (n->iterValues.size() != b->iterVars.size())
    LOOM_THROW(RuntimeError) << "block " << b->name << " has " << b->iterVars.size() << " iter vars but "
                             << n->iterValues.size() << " bound values";
  std::vector<Value> values;
  values.reserve(n->iterValues.size());
  for (auto& v : n->iterValues) values.push_back(eval(v));
  if (n->predicate.defined() && !evalCond(n->predicate, "block predicate")) return;
  Scope scope(*this);
  for (size_t i = 0; i < values.size(); ++i) {
    const Var& var = b->iterVars[i].var;
    Value& v = values[i];
    if (v.lanes() != 1 || !(v.t.isIntegral() || v.t.isBool()))
      LOOM_THROW(RuntimeError) << "block " << b->name << ": iter var " << var->name << " bound to a " << v.t.str()
                               << " value";
    if (v.t != var->dtype) {
      v.s = castScalar(v.t, var->dtype, v.s);
      v.t = var->dtype;
    }
    scope.bind(var.get(), std::move(v));
  }
  execBlock(b, scope);
}

void Interp::exec(const Stmt& s) {
  if (!s.defined()) return;
  try {
    execNode(s);
  } catch (const RuntimeError& e) {
    // Located at the innermost statement that has a source span (parsed programs have them).
    if (e.span().defined() || !s->span.defined()) throw;
    throw RuntimeError(e.what(), s->span);
  }
}

void Interp::execNode(const Stmt& s) {
  switch (s->nodeKind) {
  case NodeKind::BufferStore: execStore(s.as<BufferStoreNode>()); return;
  case NodeKind::LetStmt: {
    auto* n = s.as<LetStmtNode>();
    Value v = eval(n->value);
    Scope scope(*this);
    scope.bind(n->var.get(), std::move(v));
    exec(n->body);
    return;
  }
  case NodeKind::AttrStmt: exec(s.as<AttrStmtNode>()->body); return;
  case NodeKind::AssertStmt: {
    auto* n = s.as<AssertStmtNode>();
    if (!evalCond(n->condition, "assert condition"))
      LOOM_THROW(RuntimeError) << "assertion failed: " << n->message;
    exec(n->body);
    return;
  }
  case NodeKind::Allocate: {
    auto* n = s.as<AllocateNode>();
    int64_t elements = 1;
    for (auto& x : n->extents) elements *= evalInt(x, "allocate extent");
    Scope scope(*this);
    scope.bind(n->bufferVar.get(), handleValue(allocate(elements, n->dtype, "allocate " + n->bufferVar->name)));
    exec(n->body);
    return;
  }
  case NodeKind::DeclBuffer: {
    auto* n = s.as<DeclBufferNode>();
    Slot* slot = find(n->buffer->data.get());
    if (!slot || !slot->value.mem)
      LOOM_THROW(RuntimeError) << "decl_buffer " << n->buffer->name << ": its data variable '"
                               << n->buffer->data->name << "' is not bound to memory";
    exec(n->body);
    return;
  }
  case NodeKind::SeqStmt:
    for (auto& x : s.as<SeqStmtNode>()->seq) exec(x);
    return;
  case NodeKind::IfThenElse: {
    auto* n = s.as<IfThenElseNode>();
    if (n->condition.dtype().lanes() > 1) {
      // A vector condition guards one vector store lane by lane (codegen: a masked store).
      auto* store = n->thenCase.as<BufferStoreNode>();
      if (!store || n->elseCase.defined())
        LOOM_THROW(RuntimeError) << "a vector if condition can only guard one buffer store";
      Value c = eval(n->condition);
      execStore(store, &c);
      return;
    }
    if (evalCond(n->condition, "if condition")) exec(n->thenCase);
    else exec(n->elseCase);
    return;
  }
  case NodeKind::For: {
    auto* n = s.as<ForNode>();
    int64_t lo = evalInt(n->min, "loop min"), extent = evalInt(n->extent, "loop extent");
    DataType t = n->loopVar->dtype;
    Scope scope(*this);
    Slot* slot = scope.bind(n->loopVar.get(), makeValue(t));
    for (int64_t k = 0; k < extent; ++k) {
      slot->value.s.i = normInt(t, uint64_t(lo) + uint64_t(k));
      exec(n->body);
    }
    return;
  }
  case NodeKind::While: {
    auto* n = s.as<WhileNode>();
    while (evalCond(n->condition, "while condition")) exec(n->body);
    return;
  }
  case NodeKind::Evaluate: eval(s.as<EvaluateNode>()->value); return;
  case NodeKind::Block: {
    auto* b = s.as<BlockNode>();
    if (!b->iterVars.empty())
      LOOM_THROW(RuntimeError) << "block " << b->name << " with iter vars executed outside a BlockRealize";
    Scope scope(*this);
    execBlock(b, scope);
    return;
  }
  case NodeKind::BlockRealize: execRealize(s.as<BlockRealizeNode>()); return;
  default: break;
  }
  LOOM_THROW(RuntimeError) << "cannot execute a node of kind " << int(s->nodeKind) << " as a statement";
}

void Interp::run(const PrimFunc& f, const std::vector<Arg>& args) {
  if (!f.defined()) LOOM_THROW(RuntimeError) << "interpret: the function is undefined";
  const std::string fn = f->name;
  if (args.size() != f->params.size())
    LOOM_THROW(RuntimeError) << "function " << fn << " takes " << f->params.size() << " arguments, got " << args.size();

  // Shape / stride / offset expressions to check against the actual arrays once vars are bound.
  struct Dim {
    Expr expr;
    int64_t actual;
    std::string what;
  };
  std::vector<Dim> dims;

  for (size_t i = 0; i < args.size(); ++i) {
    const Var& p = f->params[i];
    Buffer b = f->bufferOf(p);
    std::string who = "argument " + std::to_string(i) + " ('" + p->name + "')";
    const Arg& a = args[i];
    if (b.defined() || p->dtype.isHandle()) {
      const NDArray* arr = std::get_if<NDArray>(&a);
      if (!arr) LOOM_THROW(RuntimeError) << fn << ": " << who << " expects an NDArray, got a scalar";
      if (!arr->defined()) LOOM_THROW(RuntimeError) << fn << ": " << who << " is an undefined NDArray";
      if (arr->device().type != runtime::DeviceType::CPU)
        LOOM_THROW(RuntimeError) << fn << ": " << who << " is not in host memory";
      auto mem = std::make_shared<Memory>();
      mem->keep = *arr;
      mem->ptr = static_cast<uint8_t*>(arr->data());
      mem->bytes = int64_t(arr->byteSize());
      Value h = handleValue(mem);
      set(p.get(), h);
      if (!b.defined()) continue;
      runtime::DType d = arr->dtype();
      DataType at(DataType::Code(d.code), d.bits, d.lanes);
      if (at != b->dtype)
        LOOM_THROW(RuntimeError) << fn << ": " << who << " (buffer " << b->name << ") expects a " << b->dtype.str()
                                 << " array, got " << at.str();
      const auto& shape = arr->shape();
      if (shape.size() != b->shape.size())
        LOOM_THROW(RuntimeError) << fn << ": " << who << " (buffer " << b->name << ") expects " << b->shape.size()
                                 << " dimensions, got an array of shape " << listStr(shape);
      set(b->data.get(), h);
      for (size_t d2 = 0; d2 < shape.size(); ++d2)
        dims.push_back({b->shape[d2], shape[d2],
                        who + " (buffer " + b->name + ") dimension " + std::to_string(d2) + " of shape " + listStr(shape)});
      if (!b->strides.empty()) {
        if (b->strides.size() != shape.size())
          LOOM_THROW(RuntimeError) << fn << ": buffer " << b->name << " has " << b->strides.size() << " strides for "
                                   << shape.size() << " dimensions";
        int64_t acc = 1;
        std::vector<int64_t> compact(shape.size());
        for (size_t d2 = shape.size(); d2-- > 0;) {
          compact[d2] = acc;
          acc *= shape[d2];
        }
        for (size_t d2 = 0; d2 < shape.size(); ++d2)
          dims.push_back({b->strides[d2], compact[d2],
                          who + " (buffer " + b->name + ") stride " + std::to_string(d2) + " of the compact array"});
      }
      if (b->elemOffset.defined()) dims.push_back({b->elemOffset, 0, who + " (buffer " + b->name + ") elem_offset"});
    } else {
      DataType t = p->dtype;
      Value v = makeValue(t);
      if (t.lanes() != 1) LOOM_THROW(RuntimeError) << fn << ": " << who << " has the vector type " << t.str();
      if (const int64_t* iv = std::get_if<int64_t>(&a)) {
        if (t.isFloat()) v.s = castScalar(DataType::Int(64), t, intScalar(*iv));
        else v.s.i = normInt(t, uint64_t(*iv));
      } else if (const double* dv = std::get_if<double>(&a)) {
        if (!t.isFloat())
          LOOM_THROW(RuntimeError) << fn << ": " << who << " of type " << t.str() << " expects an integer, got "
                                   << *dv;
        v.s.f = roundFloat(t, *dv);
      } else {
        LOOM_THROW(RuntimeError) << fn << ": " << who << " of type " << t.str() << " expects a scalar, got an NDArray";
      }
      set(p.get(), v);
    }
  }
  // Bind symbolic dimensions first, then check every dimension against its expression.
  for (auto& d : dims)
    if (auto* v = d.expr.as<VarNode>(); v && !find(v)) {
      Value x = makeValue(v->dtype);
      if (!(v->dtype.isIntegral()) || v->dtype.lanes() != 1)
        LOOM_THROW(RuntimeError) << fn << ": " << d.what << " is the non-integer variable " << v->name;
      x.s.i = normInt(v->dtype, uint64_t(d.actual));
      set(v, x);
    }
  for (auto& d : dims) {
    int64_t want = evalInt(d.expr, "buffer shape");
    if (want != d.actual)
      LOOM_THROW(RuntimeError) << fn << ": " << d.what << " is " << d.actual << ", expected " << want;
  }
  for (auto& [v, slot] : m_env)
    if (slot.bound && !slot.value.t.isHandle()) m_entryVars.insert(v);
  exec(f->body);
}

}  // namespace

void interpret(const PrimFunc& f, const std::vector<Arg>& args) {
  Interp in;
  in.run(f, args);
}

}  // namespace loom::tir
