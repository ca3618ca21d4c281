// The TorchScript importer: the libtorch reader (dlopen), input specs, the node loop with
// unrolled control flow, and the prim:: ops (lists, tuples, scalars, constants).
#include "core/frontend/torch/TorchImporter.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <unistd.h>

#include "core/frontend/torch/TorchContext.h"
#include "core/graph/Evaluator.h"
#include "core/graph/Op.h"
#include "core/graph/pass/FoldConstant.h"
#include "core/graph/pass/InferType.h"
#include "core/support/Numeric.h"
#include "runtime/RuntimeFailure.h"

namespace loom::frontend {

using namespace graph;

namespace tsi {

namespace {
/// "x.1" -> "x": TorchScript's uniquing suffix.
std::string baseName(const std::string& n) {
  size_t dot = n.find_last_of('.');
  if (dot == std::string::npos || dot + 1 == n.size()) return n;
  for (size_t i = dot + 1; i < n.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(n[i]))) return n;
  return n.substr(0, dot);
}

const char* kindName(TV::Kind k) {
  switch (k) {
  case TV::Kind::Undef: return "an undefined value";
  case TV::Kind::None: return "None";
  case TV::Kind::Int: return "an int";
  case TV::Kind::Double: return "a float";
  case TV::Kind::Bool: return "a bool";
  case TV::Kind::String: return "a string";
  case TV::Kind::Device: return "a device";
  case TV::Kind::Tensor: return "a tensor";
  case TV::Kind::List: return "a list";
  case TV::Kind::Tuple: return "a tuple";
  }
  return "?";
}
} // namespace

/// A 0-d int64 constant holding `v` exactly (makeScalar takes a double, which rounds past 2^53).
Expr int64Scalar(int64_t v) {
  runtime::NDArray a = runtime::NDArray::empty({}, toDType(DataType::Int(64)));
  *a.as<int64_t>() = v;
  return makeConstant(a);
}

std::string Context::where(const ts::Node& n) {
  std::string s = n.kind;
  if (!n.scope.empty()) s += " in '" + n.scope + "'";
  if (!n.file.empty()) s += " at " + n.file + ":" + std::to_string(n.line);
  if (!n.sourceLine.empty()) s += " `" + n.sourceLine + "`";
  return s;
}

void Context::fail(const std::string& message) const {
  std::string w = m_file + ": ";
  if (node) {
    std::string out = node->outputs.empty() ? "" : "%" + m_g.values[node->outputs[0]].name + " ";
    w += "node " + out + "(" + where(*node) + "): ";
  }
  throw ImportError(w + message);
}

const TV& Context::value(int index) const {
  auto it = m_values.find(index);
  if (it == m_values.end()) fail("value %" + m_g.values[index].name + " is used before it is defined");
  return it->second;
}

const TV& Context::in(int i) const {
  if (i >= numInputs()) fail("missing input " + std::to_string(i));
  return value(node->inputs[i]);
}

Expr Context::tensor(int i) const {
  const TV& v = in(i);
  switch (v.kind) {
  case TV::Kind::Tensor: return v.e;
  case TV::Kind::Int: return int64Scalar(v.i);
  case TV::Kind::Double: return makeScalar(v.d, DataType::Float(32));
  case TV::Kind::Bool: return makeScalar(double(v.i), DataType::Bool());
  default: fail("input " + std::to_string(i) + " must be a tensor, got " + kindName(v.kind));
  }
}

int64_t Context::integer(int i) const {
  const TV& v = in(i);
  if (v.kind == TV::Kind::Int || v.kind == TV::Kind::Bool) return v.i;
  if (v.kind == TV::Kind::Double)
    if (std::optional<int64_t> n = wholeInt64(v.d)) return *n;
  fail("input " + std::to_string(i) + " must be an int known at import time, got " + kindName(v.kind));
}

double Context::real(int i) const {
  const TV& v = in(i);
  if (v.isNumber()) return v.number();
  fail("input " + std::to_string(i) + " must be a number known at import time, got " + kindName(v.kind));
}

bool Context::boolean(int i) const {
  const TV& v = in(i);
  if (v.kind == TV::Kind::Bool || v.kind == TV::Kind::Int) return v.i != 0;
  fail("input " + std::to_string(i) + " must be a bool known at import time, got " + kindName(v.kind));
}

std::string Context::string(int i) const {
  const TV& v = in(i);
  if (v.kind == TV::Kind::String || v.kind == TV::Kind::Device) return v.s;
  fail("input " + std::to_string(i) + " must be a string, got " + kindName(v.kind));
}

std::vector<TV> Context::list(int i) const {
  const TV& v = in(i);
  if ((v.kind == TV::Kind::List || v.kind == TV::Kind::Tuple) && v.items) return *v.items;
  fail("input " + std::to_string(i) + " must be a list, got " + kindName(v.kind));
}

std::vector<int64_t> Context::ints(int i) const {
  const TV& v = in(i);
  if (v.kind == TV::Kind::Int) return {v.i};
  std::vector<int64_t> out;
  for (const TV& x : list(i)) {
    if (x.kind != TV::Kind::Int)
      fail("input " + std::to_string(i) + " must be a list of ints known at import time, holds " +
           kindName(x.kind));
    out.push_back(x.i);
  }
  return out;
}

DataType Context::dtypeArg(int i, DataType def) const {
  if (isNone(i)) return def;
  bool ok = false;
  DataType t = dtypeFromScalarType(integer(i), &ok);
  if (!ok) fail("unsupported dtype code " + std::to_string(integer(i)));
  return t;
}

const TensorTypeNode& Context::tensorType(const Expr& e) const {
  Type t;
  try {
    t = inferType(e);
  } catch (const Error& err) {
    fail(err.what());
  }
  auto* tt = t.as<TensorTypeNode>();
  if (!tt) fail("expected a tensor, got " + typeStr(t));
  return *tt;
}

std::vector<int64_t> Context::shapeOf(const Expr& e) const {
  const TensorTypeNode& t = tensorType(e);
  if (!t.isStatic()) fail("needs a static shape, got " + shapeStr(t.shape));
  return t.staticShape();
}

Expr Context::call(const std::string& op, std::vector<Expr> args, Attrs attrs) const {
  std::string name;
  if (node) name = !node->scope.empty() ? node->scope
                   : node->outputs.empty() ? node->kind
                                           : baseName(m_g.values[node->outputs[0]].name);
  Expr e;
  try {
    e = makeCall(op, std::move(args), std::move(attrs), name);
    inferType(e);
  } catch (const TypeError& err) {
    fail(err.what());
  }
  return e;
}

Expr Context::cast(const Expr& e, DataType t) const {
  if (dtypeOf(e) == t) return e;
  return call("cast", {e}, {{"dtype", t}});
}

Expr Context::reshape(const Expr& e, const std::vector<int64_t>& shape) const {
  if (shapeOf(e) == shape) return e;
  return call("reshape", {e}, {{"newshape", shape}});
}

DataType dtypeFromScalarType(int64_t code, bool* ok) {
  *ok = true;
  switch (code) {
  case 0: return DataType::UInt(8);
  case 1: return DataType::Int(8);
  case 2: return DataType::Int(16);
  case 3: return DataType::Int(32);
  case 4: return DataType::Int(64);
  case 5: return DataType::Float(16);
  case 6: return DataType::Float(32);
  case 7: return DataType::Float(64);
  case 11: return DataType::Bool();
  case 15: return DataType::BFloat16();
  default: *ok = false; return DataType::Float(32);
  }
}

int64_t normDim(const Context& c, int64_t dim, int64_t rank) {
  int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= std::max<int64_t>(rank, 1))
    c.fail("dim " + std::to_string(dim) + " is out of range for rank " + std::to_string(rank));
  return d;
}

int64_t normShapeDim(const Context& c, int64_t dim, int64_t rank) {
  if (rank == 0) c.fail("dim " + std::to_string(dim) + " of a 0-d tensor, which has no dimensions");
  return normDim(c, dim, rank);
}

namespace {

int64_t scalarTypeCode(DataType t) {
  if (t == DataType::UInt(8)) return 0;
  if (t == DataType::Int(8)) return 1;
  if (t == DataType::Int(16)) return 2;
  if (t == DataType::Int(32)) return 3;
  if (t == DataType::Int(64)) return 4;
  if (t == DataType::Float(16)) return 5;
  if (t == DataType::Float(64)) return 7;
  if (t.isBool()) return 11;
  return 6;
}

DataType dtypeFromName(const std::string& n, bool* ok) {
  static const std::map<std::string, DataType> names{
      {"Float", DataType::Float(32)}, {"Double", DataType::Float(64)}, {"Half", DataType::Float(16)},
      {"BFloat16", DataType::BFloat16()}, {"Long", DataType::Int(64)}, {"Int", DataType::Int(32)},
      {"Short", DataType::Int(16)}, {"Char", DataType::Int(8)}, {"Byte", DataType::UInt(8)},
      {"Bool", DataType::Bool()}};
  auto it = names.find(n);
  *ok = it != names.end();
  return *ok ? it->second : DataType::Float(32);
}

TV fromConstant(const Context& c, const ts::ConstValue& k, const std::string& name) {
  using K = ts::ConstValue::Kind;
  switch (k.kind) {
  case K::None: return TV::none();
  case K::Int: return TV::integer(k.i);
  case K::Double: return TV::real(k.d);
  case K::Bool: return TV::boolean(k.i != 0);
  case K::String: return TV::string(k.s);
  case K::Device: {
    TV d = TV::make(TV::Kind::Device);
    d.s = k.s;
    return d;
  }
  case K::Ints:
  case K::Bools: {
    std::vector<TV> v;
    for (int64_t x : k.ints) v.push_back(k.kind == K::Ints ? TV::integer(x) : TV::boolean(x != 0));
    return TV::list(std::move(v));
  }
  case K::Doubles: {
    std::vector<TV> v;
    for (double x : k.doubles) v.push_back(TV::real(x));
    return TV::list(std::move(v));
  }
  case K::Tensor: {
    bool ok = false;
    DataType t = dtypeFromName(k.tensor.dtype, &ok);
    if (!ok) c.fail("constant tensor of element type " + k.tensor.dtype + " is not supported");
    // The bytes must match the shape before anything of that shape is allocated.
    runtime::DType dt = toDType(t);
    uint64_t want = (uint64_t(dt.bits) * dt.lanes + 7) / 8;
    for (int64_t d : k.tensor.shape)
      if (d < 0 || (d != 0 && want > k.tensor.bytes.size() / uint64_t(d) + 1) || __builtin_mul_overflow(want, uint64_t(d), &want))
        c.fail("constant tensor holds the wrong number of bytes for its shape");
    if (want != k.tensor.bytes.size()) c.fail("constant tensor holds the wrong number of bytes for its shape");
    runtime::NDArray a = runtime::NDArray::empty(k.tensor.shape, dt);
    if (a.byteSize() != k.tensor.bytes.size()) c.fail("constant tensor holds the wrong number of bytes");
    if (a.byteSize()) std::memcpy(a.data(), k.tensor.bytes.data(), a.byteSize());
    return TV::tensor(makeConstant(a, name.rfind("self.", 0) == 0 ? name.substr(5) : name));
  }
  case K::Other: c.fail("constant of type " + k.s + " is not supported");
  }
  return TV::none();
}

/// A tensor's value when it folds to a constant (NumToTensor of a size, constants).
std::optional<runtime::NDArray> constantValue(const Expr& e) {
  if (auto* k = e.as<ConstantNode>()) return k->data;
  try {
    Expr f = foldConstant(e);
    if (auto* k = f.as<ConstantNode>()) return k->data;
  } catch (const Error&) {
  }
  return std::nullopt;
}

double elementAsDouble(const runtime::NDArray& a) {
  DataType t = toDataType(a.dtype());
  if (t == DataType::Float(32)) return *a.as<float>();
  if (t == DataType::Float(64)) return *a.as<double>();
  if (t == DataType::Int(64)) return double(*a.as<int64_t>());
  if (t == DataType::Int(32)) return *a.as<int32_t>();
  if (t.isBool() || t == DataType::UInt(8)) return *a.as<uint8_t>();
  if (t == DataType::Int(8)) return *a.as<int8_t>();
  return NAN;
}

/// Tensor -> number (aten::Int, Float, item, ScalarImplicit): the tensor must fold.
Outs toNumber(Context& c, bool wantInt) {
  const TV& v = c.in(0);
  // int() truncates toward zero, as Python's does; NaN and values past int64 are refused.
  auto truncated = [&](double x) {
    std::optional<int64_t> n = wholeInt64(std::trunc(x));
    if (!n) c.fail("the number " + std::to_string(x) + " does not fit an int64");
    return *n;
  };
  if (v.isNumber())
    return {wantInt ? (v.kind == TV::Kind::Double ? TV::integer(truncated(v.d)) : TV::integer(v.i))
                    : v.kind == TV::Kind::Double ? v : TV::real(v.number())};
  Expr e = c.tensor(0);
  std::optional<runtime::NDArray> k = constantValue(e);
  if (!k) c.fail("the tensor's value depends on the model's inputs; Loom needs it at import time");
  if (k->numel() != 1) c.fail("a tensor of " + std::to_string(k->numel()) + " elements is not a number");
  double x = elementAsDouble(*k);
  DataType t = toDataType(k->dtype());
  if (t == DataType::Int(64)) return {TV::integer(*k->as<int64_t>())};  // exact, past 2^53 too
  if (wantInt || !t.isFloat()) return {TV::integer(truncated(x))};
  return {TV::real(x)};
}

bool equalValues(const TV& a, const TV& b) {
  if (a.isNumber() && b.isNumber()) return a.number() == b.number();
  if (a.kind != b.kind) return false;
  switch (a.kind) {
  case TV::Kind::None: return true;
  case TV::Kind::String:
  case TV::Kind::Device: return a.s == b.s;
  case TV::Kind::List:
  case TV::Kind::Tuple:
    if (a.items->size() != b.items->size()) return false;
    for (size_t i = 0; i < a.items->size(); ++i)
      if (!equalValues((*a.items)[i], (*b.items)[i])) return false;
    return true;
  default: return false;
  }
}

/// Comparison of two import-time values (scalars, strings, None); std::nullopt when either is a
/// tensor (then the aten table's elementwise comparison applies).
std::optional<bool> compareStatic(const Context& c, const std::string& op) {
  const TV& a = c.in(0);
  const TV& b = c.in(1);
  if (a.kind == TV::Kind::Tensor || b.kind == TV::Kind::Tensor) return std::nullopt;
  if (op == "eq") return equalValues(a, b);
  if (op == "ne") return !equalValues(a, b);
  if (!a.isNumber() || !b.isNumber()) c.fail("cannot order " + std::string(kindName(a.kind)) + " and " + kindName(b.kind));
  double x = a.number(), y = b.number();
  if (op == "lt") return x < y;
  if (op == "le") return x <= y;
  if (op == "gt") return x > y;
  return x >= y;
}

/// Scalar arithmetic of two import-time numbers (size arithmetic in scripted models).
std::optional<TV> arithStatic(const Context& c, const std::string& op) {
  if (c.numInputs() < 2) return std::nullopt;
  const TV& a = c.in(0);
  const TV& b = c.in(1);
  if (a.kind == TV::Kind::List && b.kind == TV::Kind::List && op == "add") {
    std::vector<TV> v = *a.items;
    v.insert(v.end(), b.items->begin(), b.items->end());
    return TV::list(std::move(v));
  }
  if (a.kind == TV::Kind::String && b.kind == TV::Kind::String && op == "add") return TV::string(a.s + b.s);
  if (!a.isNumber() || !b.isNumber()) return std::nullopt;
  bool ints = a.kind != TV::Kind::Double && b.kind != TV::Kind::Double;
  double x = a.number(), y = b.number();
  // Python ints do not overflow; an import-time int past int64 is refused (TorchScript's are int64).
  auto checked = [&](bool overflow, int64_t r) {
    if (overflow) c.fail("integer overflow in " + op + " of " + std::to_string(a.i) + " and " + std::to_string(b.i));
    return TV::integer(r);
  };
  int64_t r = 0;
  if (op == "add" || op == "sub" || op == "mul") {
    if (!ints) return TV::real(op == "add" ? x + y : op == "sub" ? x - y : x * y);
    bool overflow = op == "add"   ? __builtin_add_overflow(a.i, b.i, &r)
                    : op == "sub" ? __builtin_sub_overflow(a.i, b.i, &r)
                                  : __builtin_mul_overflow(a.i, b.i, &r);
    return checked(overflow, r);
  }
  if (op == "div") {
    if (y == 0) c.fail("division by zero");
    return TV::real(x / y);
  }
  if (op == "floordiv") {
    if (y == 0) c.fail("division by zero");
    if (ints) {
      if (a.i == std::numeric_limits<int64_t>::min() && b.i == -1) checked(true, 0);
      int64_t q = a.i / b.i;
      if ((a.i % b.i != 0) && ((a.i < 0) != (b.i < 0))) --q;
      return TV::integer(q);
    }
    return TV::real(std::floor(x / y));
  }
  if (op == "remainder") {
    if (y == 0) c.fail("division by zero");
    if (ints) {
      if (b.i == -1) return TV::integer(0);  // INT64_MIN % -1 traps
      int64_t m = a.i % b.i;
      return TV::integer(m != 0 && ((m < 0) != (b.i < 0)) ? m + b.i : m);
    }
    return TV::real(x - std::floor(x / y) * y);
  }
  if (op == "pow") {
    if (!ints || b.i < 0) return TV::real(std::pow(x, y));
    int64_t base = a.i, e = b.i, p = 1;  // by squaring, each product checked
    while (e > 0) {
      if ((e & 1) && __builtin_mul_overflow(p, base, &p)) checked(true, 0);
      e >>= 1;
      if (e && __builtin_mul_overflow(base, base, &base)) checked(true, 0);
    }
    return TV::integer(p);
  }
  return std::nullopt;
}

std::string formatString(const Context& c) {
  std::string fmt = c.string(0), out;
  int next = 1;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] == '{' && i + 1 < fmt.size() && fmt[i + 1] == '}' && next < c.numInputs()) {
      const TV& v = c.in(next++);
      out += v.kind == TV::Kind::Int ? std::to_string(v.i) : v.kind == TV::Kind::Double ? std::to_string(v.d)
             : v.kind == TV::Kind::String ? v.s : std::string("<") + kindName(v.kind) + ">";
      ++i;
    } else {
      out += fmt[i];
    }
  }
  return out;
}

/// prim:: ops and the scalar forms of aten ops; the tensor forms are in atenConverters().
const std::unordered_map<std::string, Converter>& primConverters() {
  static const std::unordered_map<std::string, Converter> table{
      {"prim::ListConstruct", [](Context& c) {
         std::vector<TV> v;
         for (int i = 0; i < c.numInputs(); ++i) v.push_back(c.in(i));
         return Outs{TV::list(std::move(v))};
       }},
      {"prim::TupleConstruct", [](Context& c) {
         std::vector<TV> v;
         for (int i = 0; i < c.numInputs(); ++i) v.push_back(c.in(i));
         return Outs{TV::list(std::move(v), TV::Kind::Tuple)};
       }},
      {"prim::ListUnpack", [](Context& c) {
         std::vector<TV> v = c.list(0);
         if (v.size() != c.node->outputs.size())
           c.fail("unpacks " + std::to_string(c.node->outputs.size()) + " values from a list of " + std::to_string(v.size()));
         return v;
       }},
      {"prim::TupleUnpack", [](Context& c) { return c.list(0); }},
      {"prim::TupleIndex", [](Context& c) {
         std::vector<TV> v = c.list(0);
         int64_t i = c.integer(1);
         if (i < 0) i += int64_t(v.size());
         if (i < 0 || i >= int64_t(v.size())) c.fail("tuple index out of range");
         return Outs{v[size_t(i)]};
       }},
      {"aten::__getitem__", [](Context& c) {
         std::vector<TV> v = c.list(0);
         int64_t i = c.integer(1);
         if (i < 0) i += int64_t(v.size());
         if (i < 0 || i >= int64_t(v.size())) c.fail("list index out of range");
         return Outs{v[size_t(i)]};
       }},
      {"aten::list", [](Context& c) { return Outs{TV::list(c.list(0))}; }},
      {"aten::tensor", [](Context& c) {
         // tensor(data, dtype, device, requires_grad) of a number or a (nested) list of numbers.
         std::vector<int64_t> shape;
         std::vector<double> vals;
         bool anyFloat = false, anyBool = true;
         std::function<void(const TV&, size_t)> walk = [&](const TV& v, size_t depth) {
           if (v.isNumber()) {
             anyFloat |= v.kind == TV::Kind::Double;
             anyBool &= v.kind == TV::Kind::Bool;
             vals.push_back(v.number());
             return;
           }
           if (v.kind != TV::Kind::List && v.kind != TV::Kind::Tuple) c.fail("tensor() of " + std::string(kindName(v.kind)));
           if (shape.size() <= depth) shape.push_back(int64_t(v.items->size()));
           for (const TV& x : *v.items) walk(x, depth + 1);
         };
         walk(c.in(0), 0);
         DataType t = c.dtypeArg(1, anyFloat ? DataType::Float(32) : anyBool && !vals.empty() ? DataType::Bool() : DataType::Int(64));
         runtime::NDArray a = runtime::NDArray::empty(shape, toDType(t));
         if (a.numel() != int64_t(vals.size())) c.fail("tensor() of a ragged list");
         for (size_t k = 0; k < vals.size(); ++k) {
           if (t == DataType::Float(32)) a.as<float>()[k] = float(vals[k]);
           else if (t == DataType::Float(64)) a.as<double>()[k] = vals[k];
           else if (t == DataType::Int(64)) a.as<int64_t>()[k] = int64_t(vals[k]);
           else if (t == DataType::Int(32)) a.as<int32_t>()[k] = int32_t(vals[k]);
           else if (t.isBool() || t == DataType::UInt(8)) a.as<uint8_t>()[k] = uint8_t(vals[k] != 0);
           else c.fail("tensor() of " + t.str() + " is not supported");
         }
         return Outs{TV::tensor(makeConstant(a))};
       }},
      {"aten::len", [](Context& c) {
         if (c.in(0).kind == TV::Kind::Tensor) {
           std::vector<int64_t> s = c.shapeOf(c.tensor(0));
           if (s.empty()) c.fail("len() of a 0-d tensor");
           return Outs{TV::integer(s[0])};
         }
         return Outs{TV::integer(int64_t(c.list(0).size()))};
       }},
      {"aten::append", [](Context& c) {
         const TV& l = c.in(0);
         if (l.kind != TV::Kind::List) c.fail("append to " + std::string(kindName(l.kind)));
         // Lists are shared references: a list appended into itself (directly or through another
         // list) would be a cycle, which TorchScript's types rule out and which every walk over
         // values (outputs, tensor(), ==) would follow forever (and the cycle would never be freed).
         std::function<bool(const TV&)> holds = [&](const TV& v) {
           if (!v.items) return false;
           if (v.items == l.items) return true;
           for (const TV& x : *v.items)
             if (holds(x)) return true;
           return false;
         };
         if (holds(c.in(1))) c.fail("appends a list to itself");
         l.items->push_back(c.in(1));
         return Outs{l};
       }},
      {"prim::NumToTensor", [](Context& c) {
         const TV& v = c.in(0);
         if (v.kind == TV::Kind::Tensor) return Outs{v};
         if (v.kind == TV::Kind::Int) return Outs{TV::tensor(int64Scalar(v.i))};
         DataType t = v.kind == TV::Kind::Double ? DataType::Float(64) : DataType::Bool();
         return Outs{TV::tensor(makeScalar(c.real(0), t))};
       }},
      {"aten::Int", [](Context& c) { return toNumber(c, true); }},
      {"aten::Float", [](Context& c) { return toNumber(c, false); }},
      {"aten::ScalarImplicit", [](Context& c) { return toNumber(c, false); }},
      {"aten::item", [](Context& c) { return toNumber(c, false); }},
      {"aten::Bool", [](Context& c) { Outs o = toNumber(c, true); return Outs{TV::boolean(o[0].i != 0)}; }},
      {"prim::device", [](Context& c) { TV d = TV::make(TV::Kind::Device); d.s = "cpu"; return Outs{d}; }},
      {"prim::dtype", [](Context& c) { return Outs{TV::integer(scalarTypeCode(c.dtypeOf(c.tensor(0))))}; }},
      {"prim::unchecked_cast", [](Context& c) { return Outs{c.in(0)}; }},
      {"prim::Uninitialized", [](Context&) { return Outs{TV()}; }},
      {"prim::RaiseException", [](Context& c) -> Outs {
         c.fail("the model raises an exception here: " + (c.numInputs() ? c.string(0) : std::string()));
       }},
      {"aten::warn", [](Context&) { return Outs{}; }},
      {"aten::format", [](Context& c) { return Outs{TV::string(formatString(c))}; }},
      {"aten::__is__", [](Context& c) { return Outs{TV::boolean(c.in(0).kind == c.in(1).kind && (c.in(0).kind == TV::Kind::None || equalValues(c.in(0), c.in(1))))}; }},
      {"aten::__isnot__", [](Context& c) { return Outs{TV::boolean(!(c.in(0).kind == c.in(1).kind && (c.in(0).kind == TV::Kind::None || equalValues(c.in(0), c.in(1)))))}; }},
      {"aten::__not__", [](Context& c) { return Outs{TV::boolean(!c.boolean(0))}; }},
      {"aten::__and__", [](Context& c) { return Outs{TV::boolean(c.boolean(0) && c.boolean(1))}; }},
      {"aten::__or__", [](Context& c) { return Outs{TV::boolean(c.boolean(0) || c.boolean(1))}; }},
      {"aten::__contains__", [](Context& c) {
         for (const TV& x : c.list(0)) if (equalValues(x, c.in(1))) return Outs{TV::boolean(true)};
         return Outs{TV::boolean(false)};
       }},
      {"prim::min", [](Context& c) {
         std::vector<TV> v = c.numInputs() == 1 ? c.list(0) : std::vector<TV>{c.in(0), c.in(1)};
         if (v.empty()) c.fail("min of an empty list");
         TV best = v[0];
         for (const TV& x : v) if (x.number() < best.number()) best = x;
         return Outs{best};
       }},
      {"prim::max", [](Context& c) {
         std::vector<TV> v = c.numInputs() == 1 ? c.list(0) : std::vector<TV>{c.in(0), c.in(1)};
         if (v.empty()) c.fail("max of an empty list");
         TV best = v[0];
         for (const TV& x : v) if (x.number() > best.number()) best = x;
         return Outs{best};
       }},
      {"aten::floordiv", [](Context& c) {
         if (auto r = arithStatic(c, "floordiv")) return Outs{*r};
         c.fail("floordiv of tensors");
       }},
      {"aten::dim", [](Context& c) { return Outs{TV::integer(int64_t(c.tensorType(c.tensor(0)).ndim()))}; }},
      {"aten::numel", [](Context& c) {
         std::vector<int64_t> s = c.shapeOf(c.tensor(0));
         int64_t n = 1;
         for (int64_t d : s) n *= d;
         return Outs{TV::integer(n)};
       }},
      {"aten::size", [](Context& c) {
         std::vector<int64_t> s = c.shapeOf(c.tensor(0));
         if (c.numInputs() > 1) return Outs{TV::integer(s[size_t(normShapeDim(c, c.integer(1), int64_t(s.size())))])};
         std::vector<TV> v;
         for (int64_t d : s) v.push_back(TV::integer(d));
         return Outs{TV::list(std::move(v))};
       }},
  };
  return table;
}

/// Ops whose scalar and tensor forms share a name: the scalar form is tried first.
const std::set<std::string>& arithmeticKinds() {
  static const std::set<std::string> s{"add", "sub", "mul", "div", "remainder", "pow"};
  return s;
}
const std::set<std::string>& comparisonKinds() {
  static const std::set<std::string> s{"eq", "ne", "lt", "le", "gt", "ge"};
  return s;
}

bool isControlFlow(const std::string& k) { return k == "prim::If" || k == "prim::Loop" || k == "prim::Constant"; }

bool isSupported(const std::string& kind) {
  if (isControlFlow(kind) || primConverters().count(kind) || atenConverters().count(kind)) return true;
  return false;
}

/// The unsupported nodes of `b` and of the loops in it. The branches of a prim::If are checked
/// when the condition has chosen one (scripted library code such as F.interpolate keeps
/// branches for other ranks that never run).
void collectUnsupported(const ts::Block& b, std::vector<std::string>& out, std::set<std::string>& seen) {
  for (const ts::Node& n : b.nodes) {
    if (!isSupported(n.kind)) {
      std::string w = Context::where(n);
      if (n.kind == "prim::GetAttr") w += " (an attribute freezing did not fold)";
      if (seen.insert(w).second) out.push_back("  " + w);
    }
    if (n.kind != "prim::If")
      for (const ts::Block& sub : n.blocks) collectUnsupported(sub, out, seen);
  }
}

/// The shape of the graph that conversion relies on: value indices in range, prim::Constant with
/// one output, prim::If with a condition and two blocks yielding its outputs, prim::Loop with a
/// trip count, a condition and one body taking and yielding (iteration / condition, carried...).
/// The reader's graphs hold these by construction (TorchScript's own invariants); a graph that
/// does not gets an ImportError naming the node instead of an index out of range.
void checkStructure(const std::string& file, const ts::Graph& g) {
  const int numValues = int(g.values.size());
  auto fail = [&](const ts::Node* n, const std::string& message) {
    std::string w = file + ": ";
    if (n) {
      bool named = !n->outputs.empty() && n->outputs[0] >= 0 && n->outputs[0] < numValues;
      w += "node " + (named ? "%" + g.values[size_t(n->outputs[0])].name + " " : std::string()) + "(" + Context::where(*n) + "): ";
    }
    throw ImportError(w + message);
  };
  auto check = [&](const ts::Node* n, const std::vector<int>& vs, const char* what) {
    for (int v : vs)
      if (v < 0 || v >= numValues)
        fail(n, std::string(what) + " value " + std::to_string(v) + " is not one of the graph's " + std::to_string(numValues) + " values");
  };
  auto count = [&](const ts::Node& n, size_t got, size_t want, const std::string& what) {
    if (got != want) fail(&n, "has " + std::to_string(got) + " " + what + ", expected " + std::to_string(want));
  };
  std::function<void(const ts::Block&, const ts::Node*)> block = [&](const ts::Block& b, const ts::Node* owner) {
    check(owner, b.inputs, "a block input");
    for (const ts::Node& n : b.nodes) {
      check(&n, n.inputs, "input");
      check(&n, n.outputs, "output");
      if (n.kind == "prim::Constant") {
        count(n, n.outputs.size(), 1, "outputs");
      } else if (n.kind == "prim::If") {
        count(n, n.inputs.size(), 1, "inputs (the condition)");
        count(n, n.blocks.size(), 2, "blocks");
        for (const ts::Block& sub : n.blocks) count(n, sub.outputs.size(), n.outputs.size(), "values yielded by a branch");
      } else if (n.kind == "prim::Loop") {
        if (n.inputs.size() < 2) fail(&n, "has " + std::to_string(n.inputs.size()) + " inputs, expected the trip count, the condition and the carried values");
        count(n, n.blocks.size(), 1, "blocks");
        size_t carried = n.inputs.size() - 2;
        count(n, n.outputs.size(), carried, "outputs (one per carried value)");
        count(n, n.blocks[0].inputs.size(), carried + 1, "body inputs (the iteration and the carried values)");
        count(n, n.blocks[0].outputs.size(), carried + 1, "body outputs (the condition and the carried values)");
      }
      for (const ts::Block& sub : n.blocks) block(sub, &n);
    }
    check(owner, b.outputs, "a block output");
  };
  check(nullptr, g.inputs, "forward() argument");
  block(g.body, nullptr);
}

void failUnsupported(const std::string& file, const ts::Block& b) {
  std::vector<std::string> unsupported;
  std::set<std::string> seen;
  collectUnsupported(b, unsupported, seen);
  if (unsupported.empty()) return;
  std::string msg = file + ": " + std::to_string(unsupported.size()) + " unsupported op(s):";
  for (const std::string& u : unsupported) msg += "\n" + u;
  throw ImportError(msg);
}

class GraphConverter {
public:
  GraphConverter(const ts::Graph& g, const std::string& file) : m_ctx(g, file) {}

  Context& ctx() { return m_ctx; }

  void block(const ts::Block& b) {
    for (const ts::Node& n : b.nodes) node(n);
  }

private:
  void node(const ts::Node& n) {
    Context& c = m_ctx;
    const ts::Node* saved = c.node;
    c.node = &n;
    if (n.kind == "prim::Constant") {
      c.bind(n.outputs.at(0), fromConstant(c, n.constant, c.graph().values[n.outputs[0]].name));
    } else if (n.kind == "prim::If") {
      ifNode(n);
    } else if (n.kind == "prim::Loop") {
      loopNode(n);
    } else {
      Outs outs = convert(n);
      if (outs.size() < n.outputs.size())
        c.fail("produced " + std::to_string(outs.size()) + " of " + std::to_string(n.outputs.size()) + " outputs");
      for (size_t i = 0; i < n.outputs.size(); ++i) c.bind(n.outputs[i], outs[i]);
      // In-place ops (relu_, add_, ...): later uses of the input see the result.
      if (n.kind.size() > 1 && n.kind.back() == '_' && n.kind[n.kind.size() - 2] != '_' && !n.inputs.empty() &&
          !outs.empty() && outs[0].kind == TV::Kind::Tensor && c.in(0).kind == TV::Kind::Tensor)
        c.bind(n.inputs[0], outs[0]);
    }
    c.node = saved;
  }

  Outs convert(const ts::Node& n) {
    Context& c = m_ctx;
    std::string base = n.kind.rfind("aten::", 0) == 0 ? n.kind.substr(6) : std::string();
    if (!base.empty() && base.back() == '_' && base.size() > 1 && base[base.size() - 2] != '_') base.pop_back();
    try {
      if (arithmeticKinds().count(base) || base == "neg") {
        if (base == "neg" && c.in(0).isNumber())
          return {c.in(0).kind == TV::Kind::Double ? TV::real(-c.in(0).d)
                  : c.in(0).i == std::numeric_limits<int64_t>::min() ? (c.fail("integer overflow in neg"), TV())
                                                                     : TV::integer(-c.in(0).i)};
        if (auto r = arithStatic(c, base)) return {*r};
      }
      if (comparisonKinds().count(base))
        if (auto r = compareStatic(c, base)) return {TV::boolean(*r)};
      if (auto it = primConverters().find(n.kind); it != primConverters().end()) return it->second(c);
      return atenConverters().at(n.kind)(c);
    } catch (const ImportError&) {
      throw;
    } catch (const Error& e) {
      c.fail(e.what());
    } catch (const runtime::RuntimeFailure& e) {  // an array the node's arguments make (a negative dim)
      c.fail(e.what());
    }
  }

  bool condition(const TV& v) {
    if (v.kind == TV::Kind::Bool || v.kind == TV::Kind::Int) return v.i != 0;
    if (v.kind == TV::Kind::Tensor) {
      if (auto k = constantValue(v.e); k && k->numel() == 1) return elementAsDouble(*k) != 0;
    }
    m_ctx.fail("the condition depends on the model's input values, so it cannot be unrolled at import time "
               "(only conditions on shapes, constants and attributes fold)");
  }

  void ifNode(const ts::Node& n) {
    bool cond = condition(m_ctx.in(0));
    const ts::Block& b = n.blocks.at(cond ? 0 : 1);
    failUnsupported(m_ctx.file(), b);
    block(b);
    m_ctx.node = &n;
    for (size_t i = 0; i < n.outputs.size(); ++i) m_ctx.bind(n.outputs[i], m_ctx.value(b.outputs.at(i)));
  }

  void loopNode(const ts::Node& n) {
    Context& c = m_ctx;
    const TV& tripV = c.in(0);
    if (tripV.kind != TV::Kind::Int) c.fail("the loop's trip count must be known at import time");
    int64_t trip = tripV.i;
    bool cond = condition(c.in(1));
    std::vector<TV> carried;
    for (int i = 2; i < c.numInputs(); ++i) carried.push_back(c.in(i));
    const ts::Block& body = n.blocks.at(0);
    constexpr int64_t kMaxIterations = 100000;
    for (int64_t it = 0; it < trip && cond; ++it) {
      if (it >= kMaxIterations) c.fail("the loop runs more than " + std::to_string(kMaxIterations) + " iterations");
      c.bind(body.inputs.at(0), TV::integer(it));
      for (size_t k = 0; k < carried.size(); ++k) c.bind(body.inputs.at(k + 1), carried[k]);
      block(body);
      c.node = &n;
      cond = condition(c.value(body.outputs.at(0)));
      for (size_t k = 0; k < carried.size(); ++k) carried[k] = c.value(body.outputs.at(k + 1));
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) c.bind(n.outputs[k], carried.at(k));
  }

  Context m_ctx;
};

void flattenOutputs(const Context& c, const TV& v, std::vector<Expr>& out) {
  switch (v.kind) {
  case TV::Kind::Tensor: out.push_back(v.e); return;
  case TV::Kind::List:
  case TV::Kind::Tuple:
    for (const TV& x : *v.items) flattenOutputs(c, x, out);
    return;
  case TV::Kind::Int: out.push_back(int64Scalar(v.i)); return;
  case TV::Kind::Double: out.push_back(makeScalar(v.d, DataType::Float(64))); return;
  case TV::Kind::Bool: out.push_back(makeScalar(double(v.i), DataType::Bool())); return;
  default: c.fail(std::string("forward() returns ") + kindName(v.kind) + ", which is not a tensor");
  }
}

} // namespace
} // namespace tsi

graph::Module convertTorchGraph(const ts::Graph& g, const std::string& file, const TorchImportOptions& options) {
  using namespace tsi;
  checkStructure(file, g);
  failUnsupported(file, g.body);

  tsi::GraphConverter conv(g, file);
  Context& c = conv.ctx();
  std::vector<Var> params;
  std::vector<std::string> missing;
  std::set<std::string> used;
  for (int vi : g.inputs) {
    const ts::Value& v = g.values[vi];
    std::string name = baseName(v.name);
    if (v.type != "Tensor" && v.type.rfind("Tensor", 0) != 0 && v.type.find("Float(") != 0)
      throw ImportError(file + ": forward() argument '" + name + "' is of type " + v.type +
                        "; only tensor arguments are supported");
    auto it = options.inputs.find(name);
    if (it == options.inputs.end()) {
      missing.push_back(name);
      continue;
    }
    used.insert(name);
    Var p = makeVar(name, graph::tensorType(it->second.shape, it->second.dtype));
    params.push_back(p);
    c.bind(vi, TV::tensor(p));
  }
  if (!missing.empty()) {
    std::string list, example;
    for (const std::string& m : missing) {
      list += (list.empty() ? "'" : ", '") + m + "'";
      example += (example.empty() ? "" : ",") + m + ":[...]";
    }
    throw ImportError(file + ": no shape for input " + list +
                      " (TorchScript files do not record input shapes); give --input-shapes \"" + example + "\"");
  }
  for (const auto& [name, spec] : options.inputs)
    if (!used.count(name)) {
      std::string args;
      for (int vi : g.inputs) args += (args.empty() ? "" : ", ") + baseName(g.values[vi].name);
      throw ImportError(file + ": --input-shapes names '" + name + "', which is not an argument of forward() (" + args + ")");
    }

  conv.block(g.body);
  c.node = nullptr;
  if (g.body.outputs.size() != 1) throw ImportError(file + ": forward() must return one value");
  std::vector<Expr> results;
  flattenOutputs(c, c.value(g.body.outputs[0]), results);
  if (results.empty()) throw ImportError(file + ": forward() returns no tensor");
  graph::Module m;
  m.functions["main"] = makeFunction(params, results.size() == 1 ? results[0] : Expr(makeTuple(results)));
  try {
    inferType(Expr(m.main()));
  } catch (const Error& e) {
    throw ImportError(file + ": " + e.what());
  }
  return m;
}

namespace {

/// The reader library: LOOM_TORCH_READER in the environment, beside the executable
/// (../lib/libloom_torch_reader.so), or where the build put it.
ts::ReadFn openReader(std::string* why) {
  static ts::ReadFn fn = nullptr;
  static std::string error;
  static bool tried = false;
  if (tried) {
    if (!fn && why) *why = error;
    return fn;
  }
  tried = true;
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("LOOM_TORCH_READER")) candidates.push_back(env);
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    std::string dir(exe, size_t(n));
    dir = dir.substr(0, dir.find_last_of('/'));
    candidates.push_back(dir + "/../lib/libloom_torch_reader.so");
  }
#ifdef LOOM_TORCH_READER
  candidates.push_back(LOOM_TORCH_READER);
#endif
  std::string tried_;
  for (const std::string& path : candidates) {
    if (!std::ifstream(path)) continue;
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      error = "cannot open the TorchScript reader " + path + ": " + dlerror();
      if (why) *why = error;
      return nullptr;
    }
    fn = reinterpret_cast<ts::ReadFn>(dlsym(h, ts::kReadSymbol));
    if (!fn) {
      error = path + " does not export " + ts::kReadSymbol;
      if (why) *why = error;
    }
    return fn;
  }
#ifdef LOOM_TORCH_READER
  error = "the TorchScript reader (libloom_torch_reader.so) is missing; build the loom_torch_reader target";
#else
  error = "this Loom was built without libtorch, so it cannot read TorchScript (.pt) files; install "
          "libtorch-dev (scripts/install-deps.sh) and rebuild";
#endif
  if (why) *why = error;
  return nullptr;
}

} // namespace

bool torchScriptAvailable(std::string* why) { return openReader(why) != nullptr; }

bool looksLikeTorchScript(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[4] = {};
  f.read(magic, 4);
  return f.gcount() == 4 && std::memcmp(magic, "PK\x03\x04", 4) == 0;
}

ts::Graph readTorchScript(const std::string& path) {
  if (!std::ifstream(path)) throw ImportError(path + ": cannot open file");
  if (!looksLikeTorchScript(path))
    throw ImportError(path + ": not a TorchScript archive (torch.jit.save writes a zip file; this file is not one)");
  std::string why;
  ts::ReadFn read = openReader(&why);
  if (!read) throw ImportError(path + ": " + why);
  ts::Graph g;
  std::string error;
  if (!read(path.c_str(), &g, &error)) {
    size_t nl = error.find('\n');
    throw ImportError(path + ": not a TorchScript archive libtorch can load: " + (nl == std::string::npos ? error : error.substr(0, nl)));
  }
  return g;
}

graph::Module importTorchScript(const std::string& path, const TorchImportOptions& options) {
  return convertTorchGraph(readTorchScript(path), path, options);
}

std::vector<std::string> supportedTorchOps() {
  std::vector<std::string> out{"prim::Constant", "prim::If", "prim::Loop"};
  for (const auto& [k, v] : tsi::primConverters()) out.push_back(k);
  for (const auto& [k, v] : tsi::atenConverters()) out.push_back(k);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::map<std::string, InputSpec> parseInputSpecs(const std::string& spec) {
  // NAME:[D,...] optionally followed by :DTYPE; split at top-level commas.
  std::map<std::string, InputSpec> out;
  std::vector<std::string> parts;
  int depth = 0;
  std::string cur;
  for (char ch : spec) {
    if (ch == '[') ++depth;
    if (ch == ']') --depth;
    if (ch == ',' && depth == 0) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  parts.push_back(cur);
  static const std::map<std::string, DataType> dtypes{
      {"float32", DataType::Float(32)}, {"float64", DataType::Float(64)}, {"float16", DataType::Float(16)},
      {"int64", DataType::Int(64)},     {"int32", DataType::Int(32)},     {"int8", DataType::Int(8)},
      {"uint8", DataType::UInt(8)},     {"bool", DataType::Bool()}};
  for (std::string p : parts) {
    auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(' '));
      s.erase(s.find_last_not_of(' ') + 1);
      return s;
    };
    p = trim(p);
    size_t close = p.find(']');
    std::string dtype;
    std::string shapePart = p;
    if (close != std::string::npos && close + 1 < p.size()) {
      std::string rest = trim(p.substr(close + 1));
      if (rest.empty() || rest[0] != ':')
        LOOM_THROW(ValueError) << "--input-shapes \"" << spec << "\": expected ':DTYPE' after '" << p.substr(0, close + 1) << "'";
      dtype = trim(rest.substr(1));
      shapePart = p.substr(0, close + 1);
    }
    auto shapes = parseInputShapes(shapePart);
    InputSpec s;
    s.shape = shapes.begin()->second;
    if (!dtype.empty()) {
      auto it = dtypes.find(dtype);
      if (it == dtypes.end())
        LOOM_THROW(ValueError) << "--input-shapes \"" << spec << "\": unknown dtype '" << dtype
                               << "' (float32, float64, float16, int64, int32, int8, uint8, bool)";
      s.dtype = it->second;
      s.dtypeGiven = true;
    }
    const std::string& name = shapes.begin()->first;
    if (out.count(name)) LOOM_THROW(ValueError) << "--input-shapes \"" << spec << "\": input '" << name << "' given twice";
    out[name] = s;
  }
  return out;
}

} // namespace loom::frontend
