// make-packed-api: the packed entry that checks and unpacks runtime arguments before the body runs.
#include "core/transform/MakePackedAPI.h"

#include <functional>
#include <sstream>
#include <unordered_set>

#include "core/support/Error.h"
#include "core/tir/Op.h"
#include "core/tir/Printer.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pass.h"
#include "loom/c_runtime_api.h"

namespace loom::transform {

using namespace loom::tir;

namespace {

const DataType i32 = DataType::Int(32);
const DataType i64 = DataType::Int(64);
const DataType handleT = DataType::Handle();

/// printf-safe text.
std::string escapeFmt(const std::string& s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '%') out += '%';
  }
  return out;
}

Expr structGet(DataType t, Expr base, Expr index, packed::Field field) {
  return call(t, packed::kStructGet, {std::move(base), std::move(index), intImm(i32, field)});
}

/// The name of a packed-call type code, chosen at run time ("int", "float", "tensor", ...).
Expr typeCodeName(const Expr& code) {
  std::pair<int, const char*> names[] = {{kLoomArgInt, "int"},       {kLoomArgUInt, "uint"},
                                         {kLoomArgFloat, "float"},   {kLoomArgHandle, "handle"},
                                         {kLoomArgNull, "null"},     {kLoomArgTensor, "tensor"},
                                         {kLoomArgStr, "str"}};
  Expr out = stringImm("an unknown type");
  for (auto it = std::rbegin(names); it != std::rend(names); ++it)
    out = ifThenElse(eq(code, it->first), stringImm(it->second), out);
  return out;
}

/// The name of a dtype code ("float", "int", ...), chosen at run time.
Expr dtypeCodeName(const Expr& code) {
  std::pair<int, const char*> names[] = {{kLoomDTypeInt, "int"},     {kLoomDTypeUInt, "uint"},
                                         {kLoomDTypeFloat, "float"}, {kLoomDTypeBFloat, "bfloat"},
                                         {kLoomDTypeHandle, "handle"}, {kLoomDTypeBool, "bool"}};
  Expr out = stringImm("?");
  for (auto it = std::rbegin(names); it != std::rend(names); ++it)
    out = ifThenElse(eq(code, it->first), stringImm(it->second), out);
  return out;
}

class Builder {
public:
  Builder(const PrimFunc& f, std::string name) : m_f(f), m_name(std::move(name)) {}

  PrimFunc build() {
    Var args = makeVar("args", handleT), codes = makeVar("arg_type_ids", handleT);
    Var numArgs = makeVar("num_args", i32), ret = makeVar("out_ret_value", handleT);
    Var retCode = makeVar("out_ret_tcode", handleT), resource = makeVar("resource_handle", handleT);
    size_t n = m_f->params.size();
    check(eq(numArgs, int(n)), m_prefix() + ": expected " + std::to_string(n) + " argument" +
                                   (n == 1 ? "" : "s") + ", got %lld",
          {Expr(numArgs)});
    for (size_t i = 0; i < n; ++i) bindParam(i, args, codes);
    // Dims that use a variable only a later (scalar) argument binds: checked once all are bound.
    for (const Deferred& d : m_deferred) {
      if (!allBound(d.extent))
        LOOM_THROW(UnsupportedError) << m_name << ": dimension " << d.axis << " of " << d.buffer << " ("
                                     << printExpr(d.extent) << ") uses variables no argument binds";
      check(eq(d.dim, cast(i64, d.extent)),
            d.at + " dimension " + std::to_string(d.axis) + " is %lld, expected %lld (" + escapeFmt(printExpr(d.extent)) + ")",
            {d.dim, d.extent});
    }

    Stmt body = m_f->body;
    for (auto it = m_items.rbegin(); it != m_items.rend(); ++it) {
      if (it->var.defined()) body = letStmt(it->var, it->value, body);
      else if (it->buffer.defined()) body = declBuffer(it->buffer, body);
      else body = seq({it->stmt, body});
    }
    auto* node = new PrimFuncNode(*m_f.get());
    node->params = {args, codes, numArgs, ret, retCode, resource};
    node->bufferMap.clear();
    node->body = body;
    node->attrs["calling_conv"] = stringImm("packed");
    return PrimFunc(node);
  }

private:
  struct Item {
    Var var;
    Expr value;
    Buffer buffer;
    Stmt stmt;
  };

  std::string m_prefix() const { return escapeFmt(m_name); }

  std::string argText(size_t i) const {
    return m_prefix() + ": argument " + std::to_string(i) + " (" + escapeFmt(m_f->params[i]->name) + ")";
  }

  /// if (!cond) { loom_error_fmt(fmt, args...); return -1; }
  void check(Expr cond, const std::string& fmt, std::vector<Expr> fmtArgs) {
    std::vector<Expr> callArgs = {stringImm(fmt)};
    for (auto& a : fmtArgs) callArgs.push_back(a.dtype().isHandle() ? a : cast(i64, a));
    Stmt fail = seq({evaluate(call(i32, packed::kErrorFmt, callArgs)),
                     evaluate(call(i32, packed::kReturn, {intImm(i32, -1)}))});
    m_items.push_back({Var(), Expr(), Buffer(), ifThen(!cond, fail)});
  }

  Var bind(const std::string& name, DataType t, Expr value) {
    Var v = makeVar(name, t);
    m_items.push_back({v, std::move(value), Buffer(), Stmt()});
    return v;
  }
  void bindVar(const Var& v, Expr value) {
    m_items.push_back({v, std::move(value), Buffer(), Stmt()});
    m_bound.insert(v.get());
  }

  struct Deferred {
    std::string at, buffer;
    int axis;
    Var dim;
    Expr extent;
  };
  std::vector<Deferred> m_deferred;

  bool allBound(const Expr& e) const {
    bool ok = true;
    postOrderVisit(e, [&](const IRNode* n) {
      if (n->nodeKind == NodeKind::Var && !m_bound.count(static_cast<const VarNode*>(n))) ok = false;
    });
    return ok;
  }

  void bindParam(size_t i, const Var& args, const Var& codes) {
    const Var& p = m_f->params[i];
    Buffer buf = m_f->bufferOf(p);
    std::string base = p->name;
    Var code = bind(base + "_code", i32, structGet(i32, codes, int(i), packed::kTypeCode));
    if (buf.defined()) {
      bindTensor(i, args, code, p, buf);
      return;
    }
    DataType t = p->dtype;
    Expr value;
    if (t.isHandle()) {
      check(eq(code, kLoomArgHandle) || eq(code, kLoomArgNull) || eq(code, kLoomArgTensor),
            argText(i) + " must be a handle, got %s", {typeCodeName(code)});
      value = structGet(handleT, args, int(i), packed::kArgHandle);
    } else if (t.isFloat()) {
      check(eq(code, kLoomArgFloat) || eq(code, kLoomArgInt), argText(i) + " must be a float, got %s",
            {typeCodeName(code)});
      value = ifThenElse(eq(code, kLoomArgFloat), cast(t, structGet(DataType::Float(64), args, int(i), packed::kArgFloat64)),
                         cast(t, structGet(i64, args, int(i), packed::kArgInt64)));
    } else if (t.isIntegral() || t.isBool()) {
      check(eq(code, kLoomArgInt) || eq(code, kLoomArgUInt),
            argText(i) + " must be " + (t.isBool() ? "a bool" : "an int") + ", got %s", {typeCodeName(code)});
      value = cast(t, structGet(i64, args, int(i), packed::kArgInt64));
    } else {
      LOOM_THROW(UnsupportedError) << m_name << ": parameter " << p->name << " has type " << t.str()
                                   << ", which the packed calling convention cannot pass";
    }
    if (m_bound.count(p.get())) {
      // Already bound by a tensor's shape: the scalar must agree.
      Var v = bind(base + "_arg", t, value);
      check(eq(v, p), argText(i) + " is %lld, but the shapes give " + escapeFmt(p->name) + " = %lld",
            {Expr(v), Expr(p)});
    } else {
      bindVar(p, value);
    }
  }

  void bindTensor(size_t i, const Var& args, const Var& code, const Var& p, const Buffer& buf) {
    std::string base = p->name;
    if (!buf->strides.empty())
      LOOM_THROW(UnsupportedError) << m_name << ": parameter " << buf->name
                                   << " has explicit strides, which the packed entry cannot check yet";
    std::string at = argText(i);
    check(eq(code, kLoomArgTensor), at + " must be a tensor, got %s", {typeCodeName(code)});
    Var h = bind(base + "_tensor", handleT, structGet(handleT, args, int(i), packed::kArgHandle));
    int ndim = int(buf->ndim());
    Var nd = bind(base + "_ndim", i32, structGet(i32, h, 0, packed::kTensorNDim));
    check(eq(nd, ndim), at + " has rank %lld, expected " + std::to_string(ndim), {Expr(nd)});
    // dtype
    DataType t = buf->dtype;
    Var dcode = bind(base + "_dtype_code", i32, structGet(i32, h, 0, packed::kTensorDTypeCode));
    Var dbits = bind(base + "_dtype_bits", i32, structGet(i32, h, 0, packed::kTensorDTypeBits));
    Var dlanes = bind(base + "_dtype_lanes", i32, structGet(i32, h, 0, packed::kTensorDTypeLanes));
    Expr bitsOk = t.isBool() ? (eq(dbits, 1) || eq(dbits, 8)) : eq(dbits, t.bits());
    Expr dtypeOk = eq(dcode, int(t.code())) && bitsOk && eq(dlanes, t.lanes());
    check(dtypeOk, at + " has dtype %s%.0lld, expected " + t.str(),
          {dtypeCodeName(dcode), select(eq(dcode, int(kLoomDTypeBool)), intImm(i32, 0), Expr(dbits))});
    Var dev = bind(base + "_device_type", i32, structGet(i32, h, 0, packed::kTensorDeviceType));
    check(eq(dev, int(kLoomCPU)), at + " is on device type %lld, expected the CPU (1)", {Expr(dev)});
    // shape: bind symbolic dimensions, then check every dimension at once.
    if (ndim > 0) {
      Var shapePtr = bind(base + "_shape", handleT, structGet(handleT, h, 0, packed::kTensorShape));
      Buffer shapeBuf = makeBuffer(base + "_shape_buf", i64, {ndim});
      Buffer sb = shapeBuf;
      {
        auto* n = new BufferNode(*shapeBuf.get());
        n->data = shapePtr;
        n->alignment = 8;
        sb = Buffer(n);
      }
      m_items.push_back({Var(), Expr(), sb, Stmt()});
      std::vector<Expr> dims;
      for (int k = 0; k < ndim; ++k) dims.push_back(bufferLoad(sb, {intImm(i64, k)}));
      Expr ok;
      std::string got = "[", expected = "[";
      std::vector<Expr> fmtArgs;
      std::vector<Expr> expectedArgs;
      for (int k = 0; k < ndim; ++k) {
        const Expr& e = buf->shape[k];
        if (auto* v = e.as<VarNode>(); v && !m_bound.count(v)) bindVar(Var(v), cast(v->dtype, dims[k]));
        if (!allBound(e)) {
          // A later argument may bind its variables (a dynamic kernel's symbols come after the
          // tensors); the check waits until every argument is bound.
          Var d = bind(base + "_dim" + std::to_string(k), i64, dims[k]);
          m_deferred.push_back({at, buf->name, k, d, e});
          got += std::string(k ? ", " : "") + "%lld";
          fmtArgs.push_back(dims[k]);
          expected += std::string(k ? ", " : "") + "%lld";
          expectedArgs.push_back(dims[k]);
          continue;
        }
        Expr c = eq(dims[k], cast(i64, e));
        ok = ok.defined() ? (ok && c) : c;
        got += std::string(k ? ", " : "") + "%lld";
        fmtArgs.push_back(dims[k]);
        if (auto* ci = asConstInt(e)) {
          expected += std::string(k ? ", " : "") + std::to_string(*ci);
        } else {
          expected += std::string(k ? ", " : "") + "%lld";
          expectedArgs.push_back(e);
        }
      }
      for (auto& e : expectedArgs) fmtArgs.push_back(e);
      if (ok.defined()) check(ok, at + " has shape " + got + "], expected " + expected + "]", fmtArgs);
      // strides: NULL (compact) or exactly the compact row-major strides.
      Var stridesPtr = bind(base + "_strides", handleT, structGet(handleT, h, 0, packed::kTensorStrides));
      Buffer strideBuf = makeBuffer(base + "_strides_buf", i64, {ndim});
      {
        auto* n = new BufferNode(*strideBuf.get());
        n->data = stridesPtr;
        n->alignment = 8;
        strideBuf = Buffer(n);
      }
      m_items.push_back({Var(), Expr(), strideBuf, Stmt()});
      Expr compact;
      Expr stride = intImm(i64, 1);
      for (int k = ndim - 1; k >= 0; --k) {
        Expr c = eq(bufferLoad(strideBuf, {intImm(i64, k)}), stride);
        compact = compact.defined() ? (compact && c) : c;
        stride = stride * dims[k];
      }
      Expr isNull = eq(call(DataType::UInt(64), packed::kPtrToInt, {stridesPtr}), intImm(DataType::UInt(64), 0));
      check(ifThenElse(isNull, boolImm(true), compact), at + " is not compact (its strides are not row-major)", {});
    }
    // data pointer, alignment
    Var raw = bind(base + "_data_raw", handleT, structGet(handleT, h, 0, packed::kTensorData));
    Var off = bind(base + "_byte_offset", i64, cast(i64, structGet(DataType::UInt(64), h, 0, packed::kTensorByteOffset)));
    Expr data = call(handleT, packed::kPtrAdd, {raw, off});
    bindVar(p, data);
    if (!buf->data.same_as(p)) bindVar(buf->data, p);
    // A symbolic element offset: the tensor's byte offset already moved the data pointer.
    if (auto* v = buf->elemOffset.as<VarNode>(); v && !m_bound.count(v)) bindVar(Var(v), makeZero(v->dtype));
    if (buf->alignment > 1) {
      Expr addr = call(DataType::UInt(64), packed::kPtrToInt, {p});
      check(eq(floormod(addr, intImm(DataType::UInt(64), buf->alignment)), intImm(DataType::UInt(64), 0)),
            at + " data is not aligned to " + std::to_string(buf->alignment) + " bytes", {});
    }
  }

  const PrimFunc& m_f;
  std::string m_name;
  std::vector<Item> m_items;
  std::unordered_set<const VarNode*> m_bound;
};

}  // namespace

PrimFunc makePackedAPI(const PrimFunc& f) {
  if (auto it = f->attrs.find("calling_conv"); it != f->attrs.end())
    if (auto* s = it->second.as<StringImmNode>(); s && s->value == "packed") return f;
  std::string name = f->name;
  if (auto it = f->attrs.find("global_symbol"); it != f->attrs.end())
    if (auto* s = it->second.as<StringImmNode>()) name = s->value;
  return Builder(f, name).build();
}

Pass makePackedAPIPass() {
  return Pass{"make-packed-api", [](const PrimFunc& f, PassContext&) { return makePackedAPI(f); }};
}

}  // namespace loom::transform
