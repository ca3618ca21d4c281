// Expressions, tensor expressions (te), PrimFunc and IRModule, TVMScript printing and parsing,
// lowering: loom.te, loom.tir, loom.script and loom.lower.
#include <pybind11/operators.h>

#include "core/arith/Analyzer.h"
#include "core/te/CreatePrimFunc.h"
#include "core/te/Tensor.h"
#include "core/tir/Op.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "core/tir/StructuralEqual.h"
#include "core/topi/Workloads.h"
#include "core/transform/Pass.h"
#include "core/transform/Pipeline.h"
#include "python/src/Common.h"
#include "python/src/Wrappers.h"

namespace loom::python {

namespace {

using tir::Expr;

Expr constLike(py::handle h, const DataType* like) {
  if (py::isinstance<py::bool_>(h)) return tir::boolImm(h.cast<bool>());
  if (py::isinstance<py::int_>(h)) {
    long long v = h.cast<long long>();
    if (like && (like->isIntegral() || like->isFloat())) return tir::makeConst(*like, double(v));
    if (v > INT32_MAX || v < INT32_MIN) return tir::intImm(DataType::Int(64), v);
    return tir::intImm(DataType::Int(32), v);
  }
  if (py::isinstance<py::float_>(h)) {
    DataType t = like && like->isFloat() ? *like : DataType::Float(32);
    return tir::floatImm(t, h.cast<double>());
  }
  LOOM_THROW(TypeError) << "cannot use a " << std::string(py::str(py::type::handle_of(h).attr("__name__")))
                        << " as an expression (expected a PrimExpr, int, float or bool)";
}

/// The other operand of a binary operator, as an expression typed like `self` when a Python number.
Expr other(const PyExpr& self, py::handle h) {
  if (py::isinstance<PyExpr>(h)) return h.cast<const PyExpr&>().expr;
  DataType t = self.expr.dtype();
  return constLike(h, &t);
}

std::vector<Expr> toExprList(py::handle h) {
  std::vector<Expr> out;
  if (py::isinstance<py::tuple>(h) || py::isinstance<py::list>(h)) {
    for (py::handle item : h) out.push_back(toExpr(item));
  } else {
    out.push_back(toExpr(h));
  }
  return out;
}

std::vector<te::IterVar> toAxisList(py::handle h) {
  std::vector<te::IterVar> out;
  auto one = [&](py::handle item) {
    if (!py::isinstance<PyIterVar>(item)) LOOM_THROW(TypeError) << "a reduction axis must be an IterVar from te.reduce_axis";
    out.push_back(item.cast<const PyIterVar&>().iv);
  };
  if (py::isinstance<py::tuple>(h) || py::isinstance<py::list>(h)) {
    for (py::handle item : h) one(item);
  } else {
    one(h);
  }
  return out;
}

te::ComputeBody toBody(py::handle h) {
  if (py::isinstance<te::Reduce>(h)) return h.cast<te::Reduce>();
  return toExpr(h);
}

/// `f` named `name` (its name and "global_symbol", the symbol it is compiled to).
tir::PrimFunc renamed(const tir::PrimFunc& f, const std::string& name) {
  auto sym = f->attrs.find("global_symbol");
  if (f->name == name && sym != f->attrs.end()) {
    auto* s = sym->second.as<tir::StringImmNode>();
    if (s && s->value == name) return f;
  }
  tir::Annotations attrs = f->attrs;
  return tir::makePrimFunc(name, f->params, f->bufferMap, f->body, attrs);
}

py::object constValue(const Expr& e) {
  if (auto i = e.as<tir::IntImmNode>()) return e.dtype().isBool() ? py::object(py::bool_(i->value != 0)) : py::object(py::int_(i->value));
  if (auto f = e.as<tir::FloatImmNode>()) return py::float_(f->value);
  return py::none();
}

/// The integer value of `e` after constant folding (`const(3) + 4` is 7), or nullopt.
std::optional<int64_t> foldInt(const Expr& e) {
  if (const int64_t* v = tir::asConstInt(e)) return *v;
  arith::Analyzer an;
  // The folded expression is kept: asConstInt points into it, and a temporary's node was freed
  // before the pointer was read (ASan: heap-use-after-free in int(te.const(3) + 4)).
  const Expr folded = an.simplify(e);
  if (const int64_t* v = tir::asConstInt(folded)) return *v;
  return std::nullopt;
}

void bindExpr(py::module_& m) {
  py::class_<PyExpr>(m, "PrimExpr")
      .def_property_readonly("dtype", [](const PyExpr& e) { return e.expr.dtype().str(); })
      .def_property_readonly("value", [](const PyExpr& e) {
        py::object v = constValue(e.expr);
        if (v.is_none()) LOOM_THROW(TypeError) << "'" << tir::printExpr(e.expr) << "' is not a constant";
        return v;
      })
      .def("__int__", [](const PyExpr& e) {
        std::optional<int64_t> v = foldInt(e.expr);
        if (!v) LOOM_THROW(TypeError) << "'" << tir::printExpr(e.expr) << "' is not an integer constant";
        return *v;
      })
      .def("__index__", [](const PyExpr& e) {
        std::optional<int64_t> v = foldInt(e.expr);
        if (!v) LOOM_THROW(TypeError) << "'" << tir::printExpr(e.expr) << "' is not an integer constant";
        return *v;
      })
      .def("__bool__", [](const PyExpr& e) {
        // Like TVM: constants have a truth value; `a == b` is true when both sides are one node.
        if (std::optional<int64_t> v = foldInt(e.expr)) return *v != 0;
        if (auto b = e.expr.as<tir::BinaryNode>()) {
          if (b->op == tir::BinOp::EQ) return b->a.same_as(b->b);
          if (b->op == tir::BinOp::NE) return !b->a.same_as(b->b);
        }
        LOOM_THROW(ValueError) << "the truth value of symbolic expression '" << tir::printExpr(e.expr)
                               << "' is unknown; compare with structural_equal or use it in te.if_then_else";
      })
      .def("__hash__", [](const PyExpr& e) { return std::hash<const void*>()(e.expr.get()); })
      .def("same_as", [](const PyExpr& a, const PyExpr& b) { return a.expr.same_as(b.expr); })
      .def("astype", [](const PyExpr& e, const std::string& t) { return wrapExpr(tir::cast(parseDType(t), e.expr)); })
      .def("__str__", [](const PyExpr& e) { return tir::printExpr(e.expr); })
      .def("__repr__", [](const PyExpr& e) { return tir::printExpr(e.expr); })
#define LOOM_BINOP(py_name, py_rname, result)                                                                  \
  .def(py_name, [](const PyExpr& a, py::object b) { Expr x = a.expr, y = other(a, b); return wrapExpr(result); }) \
  .def(py_rname, [](const PyExpr& b, py::object a) { Expr x = other(b, a), y = b.expr; return wrapExpr(result); })
      LOOM_BINOP("__add__", "__radd__", x + y)
      LOOM_BINOP("__sub__", "__rsub__", x - y)
      LOOM_BINOP("__mul__", "__rmul__", x * y)
      LOOM_BINOP("__truediv__", "__rtruediv__", x / y)
      LOOM_BINOP("__floordiv__", "__rfloordiv__", tir::floordiv(x, y))
      LOOM_BINOP("__mod__", "__rmod__", tir::floormod(x, y))
      LOOM_BINOP("__and__", "__rand__", x && y)
      LOOM_BINOP("__or__", "__ror__", x || y)
#undef LOOM_BINOP
      .def("__lt__", [](const PyExpr& a, py::object b) { return wrapExpr(a.expr < other(a, b)); })
      .def("__le__", [](const PyExpr& a, py::object b) { return wrapExpr(a.expr <= other(a, b)); })
      .def("__gt__", [](const PyExpr& a, py::object b) { return wrapExpr(a.expr > other(a, b)); })
      .def("__ge__", [](const PyExpr& a, py::object b) { return wrapExpr(a.expr >= other(a, b)); })
      .def("__eq__", [](const PyExpr& a, py::object b) { return wrapExpr(tir::eq(a.expr, other(a, b))); })
      .def("__ne__", [](const PyExpr& a, py::object b) { return wrapExpr(tir::ne(a.expr, other(a, b))); })
      .def("__neg__", [](const PyExpr& a) { return wrapExpr(-a.expr); })
      .def("__invert__", [](const PyExpr& a) { return wrapExpr(!a.expr); });

  py::class_<PyVar, PyExpr>(m, "Var").def_property_readonly("name", [](const PyVar& v) { return v.var->name; });
  py::class_<PyIterVar, PyVar>(m, "IterVar")
      .def_property_readonly("var", [](const PyIterVar& v) { return wrapExpr(v.var); })
      .def_property_readonly("dom", [](const PyIterVar& v) {
        return py::make_tuple(wrapExpr(v.iv.dom.min), wrapExpr(v.iv.dom.extent));
      });

  m.def("const", [](py::object v, std::optional<std::string> dtype) {
    if (!dtype) return wrapExpr(constLike(v, nullptr));
    DataType t = parseDType(*dtype);
    return wrapExpr(constLike(v, &t));
  }, py::arg("value"), py::arg("dtype") = py::none());
  m.def("var", [](const std::string& name, const std::string& dtype) { return wrapVar(tir::makeVar(name, parseDType(dtype))); },
        py::arg("name") = "tindex", py::arg("dtype") = "int32");
  m.def("call_intrin", [](const std::string& dtype, const std::string& op, py::args args) {
    std::vector<Expr> xs;
    for (py::handle a : args) xs.push_back(toExpr(a));
    return wrapExpr(dtype.empty() ? tir::call(op, xs) : tir::call(parseDType(dtype), op, xs));
  });
  m.def("if_then_else", [](py::object c, py::object t, py::object f) {
    Expr tv = toExpr(t);
    DataType dt = tv.dtype();
    Expr fv = py::isinstance<PyExpr>(f) ? toExpr(f) : constLike(f, &dt);
    return wrapExpr(tir::ifThenElse(toExpr(c), tv, fv));
  });
  m.def("select", [](py::object c, py::object t, py::object f) {
    Expr tv = toExpr(t);
    DataType dt = tv.dtype();
    Expr fv = py::isinstance<PyExpr>(f) ? toExpr(f) : constLike(f, &dt);
    return wrapExpr(tir::select(toExpr(c), tv, fv));
  });
  m.def("cast", [](py::object v, const std::string& t) { return wrapExpr(tir::cast(parseDType(t), toExpr(v))); });
  auto second = [](const Expr& x, py::handle b) {
    DataType t = x.dtype();
    return py::isinstance<PyExpr>(b) ? toExpr(b) : constLike(b, &t);
  };
  m.def("min", [second](py::object a, py::object b) { Expr x = toExpr(a); return wrapExpr(tir::min(x, second(x, b))); });
  m.def("max", [second](py::object a, py::object b) { Expr x = toExpr(a); return wrapExpr(tir::max(x, second(x, b))); });
  m.def("max_value", [](const std::string& t) { return wrapExpr(te::reducerIdentity(te::ReducerKind::Min, parseDType(t))); });
  m.def("min_value", [](const std::string& t) { return wrapExpr(te::reducerIdentity(te::ReducerKind::Max, parseDType(t))); });
}

void bindTE(py::module_& m) {
  py::class_<te::Reduce>(m, "Reduce").def("__repr__", [](const te::Reduce& r) {
    return std::string(te::reducerName(r.kind)) + "(" + tir::printExpr(r.source) + ")";
  });
  py::class_<te::Tensor>(m, "Tensor")
      .def_property_readonly("name", [](const te::Tensor& t) { return t->name; })
      .def_property_readonly("dtype", [](const te::Tensor& t) { return t->dtype.str(); })
      .def_property_readonly("ndim", [](const te::Tensor& t) { return t->ndim(); })
      .def_property_readonly("shape", [](const te::Tensor& t) {
        py::list out;
        for (auto& s : t->shape) out.append(wrapExpr(s));
        return out;
      })
      .def_property_readonly("op_name", [](const te::Tensor& t) { return t->op->name; })
      .def_property_readonly("is_placeholder", [](const te::Tensor& t) {
        return dynamic_cast<const te::PlaceholderOpNode*>(t->op.get()) != nullptr;
      })
      .def("__getitem__", [](const te::Tensor& t, py::object idx) {
        std::vector<Expr> ix = toExprList(idx);
        if (ix.size() != t->ndim())
          LOOM_THROW(ValueError) << "tensor '" << t->name << "' has " << t->ndim() << " dimensions, indexed with " << ix.size();
        return wrapExpr(t(ix));
      })
      .def("__call__", [](const te::Tensor& t, py::args idx) {
        std::vector<Expr> ix = toExprList(idx);
        if (ix.size() != t->ndim())
          LOOM_THROW(ValueError) << "tensor '" << t->name << "' has " << t->ndim() << " dimensions, indexed with " << ix.size();
        return wrapExpr(t(ix));
      })
      .def("same_as", [](const te::Tensor& a, const te::Tensor& b) { return a.same_as(b); })
      .def("__hash__", [](const te::Tensor& t) { return std::hash<const void*>()(t.get()); })
      .def("__eq__", [](const te::Tensor& a, const te::Tensor& b) { return a.same_as(b); })
      .def("__repr__", [](const te::Tensor& t) {
        std::string s = "Tensor(name=" + t->name + ", shape=[";
        for (size_t i = 0; i < t->shape.size(); ++i) s += (i ? ", " : "") + tir::printExpr(t->shape[i]);
        return s + "], dtype=" + t->dtype.str() + ")";
      });

  m.def("placeholder", [](py::object shape, const std::string& dtype, const std::string& name) {
    return te::placeholder(toExprList(shape), parseDType(dtype), name);
  }, py::arg("shape"), py::arg("dtype") = "float32", py::arg("name") = "placeholder");
  m.def("compute", [](py::object shape, py::function f, const std::string& name, const std::string& tag,
                      std::vector<std::string> axisNames, bool spread) {
    std::vector<Expr> sh = toExprList(shape);
    te::FCompute fc = [&](const std::vector<tir::Var>& vars) -> te::ComputeBody {
      py::list args;
      for (auto& v : vars) args.append(wrapVar(v));
      py::object r = spread ? f(*args) : f(args);
      return toBody(r);
    };
    return te::compute(sh, fc, name, tag, {}, axisNames);
  }, py::arg("shape"), py::arg("fcompute"), py::arg("name") = "compute", py::arg("tag") = "",
     py::arg("axis_names") = std::vector<std::string>{}, py::arg("spread") = true);
  m.def("reduce_axis", [](py::object dom, const std::string& name) {
    te::IterVar iv;
    if (py::isinstance<py::tuple>(dom) || py::isinstance<py::list>(dom)) {
      std::vector<Expr> d = toExprList(dom);
      if (d.size() != 2) LOOM_THROW(ValueError) << "reduce_axis: dom is (begin, end), got " << d.size() << " items";
      const int64_t *lo = tir::asConstInt(d[0]), *hi = tir::asConstInt(d[1]);
      Expr extent = lo && *lo == 0 ? d[1] : lo && hi ? tir::intImm(d[1].dtype(), *hi - *lo) : d[1] - d[0];
      iv = te::reduceAxis(tir::Range(d[0], extent), name);
    } else {
      iv = te::reduceAxis(toExpr(dom), name);
    }
    return wrapIterVar(iv);
  }, py::arg("dom"), py::arg("name") = "rv");
  auto reducer = [](te::Reduce (*fn)(Expr, std::vector<te::IterVar>, Expr)) {
    return [fn](py::object expr, py::object axis, py::object where) {
      Expr w = where.is_none() ? Expr() : toExpr(where);
      return fn(toExpr(expr), toAxisList(axis), w);
    };
  };
  m.def("sum", reducer(&te::sum), py::arg("expr"), py::arg("axis"), py::arg("where") = py::none());
  m.def("reduce_max", reducer(&te::max), py::arg("expr"), py::arg("axis"), py::arg("where") = py::none());
  m.def("reduce_min", reducer(&te::min), py::arg("expr"), py::arg("axis"), py::arg("where") = py::none());
  m.def("reduce_prod", reducer(&te::prod), py::arg("expr"), py::arg("axis"), py::arg("where") = py::none());
  m.def("create_prim_func", [](std::vector<te::Tensor> args, const std::string& name) {
    return te::createPrimFunc(args, name);
  }, py::arg("args"), py::arg("name") = "main");
}

void bindFunc(py::module_& m) {
  py::class_<tir::PrimFunc>(m, "PrimFunc")
      .def_property_readonly("name", [](const tir::PrimFunc& f) { return f->name; })
      .def_property_readonly("num_params", [](const tir::PrimFunc& f) { return f->params.size(); })
      .def("script", [](const tir::PrimFunc& f) { return tir::printFunc(f); })
      .def("with_name", &renamed)
      .def("buffer_info", [](const tir::PrimFunc& f) {
        // (name, shape, dtype) of each buffer parameter, in order.
        py::list out;
        for (auto& [v, b] : f->bufferMap) {
          py::list shape;
          for (auto& s : b->shape) {
            const int64_t* c = tir::asConstInt(s);
            shape.append(c ? py::object(py::int_(*c)) : py::object(py::none()));
          }
          out.append(py::make_tuple(b->name, shape, b->dtype.str()));
        }
        return out;
      })
      .def("show", [](const tir::PrimFunc& f) { py::print(tir::printFunc(f)); })
      .def("__str__", [](const tir::PrimFunc& f) { return tir::printFunc(f); });
  m.def("structural_equal", [](const tir::PrimFunc& a, const tir::PrimFunc& b) { return tir::structuralEqual(a, b); });

  py::class_<tir::IRModule>(m, "IRModule")
      .def(py::init([](std::map<std::string, tir::PrimFunc> funcs) {
        tir::IRModule mod;
        for (auto& [name, f] : funcs) mod.functions[name] = renamed(f, name);
        return mod;
      }), py::arg("functions") = std::map<std::string, tir::PrimFunc>{})
      .def("__getitem__", [](const tir::IRModule& mod, const std::string& name) {
        tir::PrimFunc f = mod.lookup(name);
        if (!f) throw py::key_error("the module has no function '" + name + "'");
        return f;
      })
      .def("__setitem__", [](tir::IRModule& mod, const std::string& name, const tir::PrimFunc& f) {
        mod.functions[name] = renamed(f, name);
      })
      .def("__contains__", [](const tir::IRModule& mod, const std::string& name) { return mod.functions.count(name) > 0; })
      .def("__len__", [](const tir::IRModule& mod) { return mod.functions.size(); })
      .def("keys", [](const tir::IRModule& mod) {
        std::vector<std::string> k;
        for (auto& [n, f] : mod.functions) k.push_back(n);
        return k;
      })
      .def_property_readonly("functions", [](const tir::IRModule& mod) { return mod.functions; })
      .def("script", [](const tir::IRModule& mod) { return tir::printModule(mod); })
      .def("show", [](const tir::IRModule& mod) { py::print(tir::printModule(mod)); })
      .def("__str__", [](const tir::IRModule& mod) { return tir::printModule(mod); });

  m.def("parse_func", &tir::parseFunc, py::arg("text"), py::arg("file_name") = "<input>");
  m.def("parse_module", &tir::parseModule, py::arg("text"), py::arg("file_name") = "<input>");
  m.def("lower_func", [](const tir::PrimFunc& f) {
    transform::PassContext ctx;
    return transform::lower(f, ctx, {});
  });
  m.def("lowering_pass_names", [] { return transform::loweringPassNames({}); });
  m.def("workload", [](const std::string& spec) { return topi::buildWorkload(topi::parseWorkloadSpec(spec)); },
        py::arg("spec"));
}

}  // namespace

Expr toExpr(py::handle h) {
  if (py::isinstance<PyExpr>(h)) return h.cast<const PyExpr&>().expr;
  if (py::isinstance<te::Reduce>(h))
    LOOM_THROW(TypeError) << "a reduction (te.sum/max/min) must be the whole body of a compute, not part of an expression";
  return constLike(h, nullptr);
}

py::object wrapExpr(const Expr& e) {
  if (auto v = e.as<tir::VarNode>()) return wrapVar(tir::Var(v));
  PyExpr w;
  w.expr = e;
  return py::cast(std::move(w));
}
py::object wrapVar(const tir::Var& v) {
  PyVar w;
  w.expr = v;
  w.var = v;
  return py::cast(std::move(w));
}
py::object wrapIterVar(const te::IterVar& iv) {
  PyIterVar w;
  w.expr = iv.var();
  w.var = iv.var();
  w.iv = iv;
  return py::cast(std::move(w));
}

void bindIR(py::module_& m) {
  bindExpr(m);
  bindTE(m);
  bindFunc(m);
}

}  // namespace loom::python
