// loom.tir.Schedule: every registered schedule primitive, called by name with TVM's signatures
// (the same instruction kinds, argument binding and trace as the schedule script), and the trace.
#include <nlohmann/json.hpp>

#include "core/schedule/Instruction.h"
#include "core/schedule/Primitives.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Script.h"
#include "core/schedule/Trace.h"
#include "core/tir/Printer.h"
#include "python/src/Common.h"
#include "python/src/Wrappers.h"

namespace loom::python {

namespace {

using tir::Value;

/// A parsed index map (`lambda i, j: (j, i)`) for transform_layout and friends.
struct IndexMap {
  std::shared_ptr<const tir::ScriptLambda> fn;
};

Value toValue(py::handle h) {
  if (h.is_none()) return Value();
  if (py::isinstance<py::bool_>(h)) return Value(h.cast<bool>());
  if (py::isinstance<py::int_>(h)) return Value(int64_t(h.cast<long long>()));
  if (py::isinstance<py::float_>(h)) return Value(h.cast<double>());
  if (py::isinstance<py::str>(h)) return Value(h.cast<std::string>());
  if (py::isinstance<tir::BlockRV>(h)) return Value(h.cast<tir::BlockRV>());
  if (py::isinstance<tir::LoopRV>(h)) return Value(h.cast<tir::LoopRV>());
  if (py::isinstance<tir::ExprRV>(h)) return Value(h.cast<tir::ExprRV>());
  if (py::isinstance<IndexMap>(h)) return Value(h.cast<const IndexMap&>().fn);
  if (py::isinstance<PyExpr>(h)) {
    const int64_t* v = tir::asConstInt(h.cast<const PyExpr&>().expr);
    if (v) return Value(*v);
  }
  if (py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h)) {
    std::vector<Value> items;
    for (py::handle item : h) items.push_back(toValue(item));
    return Value(std::move(items));
  }
  LOOM_THROW(TypeError) << "a schedule primitive cannot take a "
                        << std::string(py::str(py::type::handle_of(h).attr("__name__")))
                        << " (expected a BlockRV, LoopRV, ExprRV, int, float, str, bool, None or a list of them)";
}

py::object fromValue(const Value& v) {
  switch (v.kind()) {
  case Value::Kind::None: return py::none();
  case Value::Kind::Bool: return py::bool_(v.asBool());
  case Value::Kind::Int: return py::int_(v.asInt());
  case Value::Kind::Float: return py::float_(v.asFloat());
  case Value::Kind::String: return py::str(v.asString());
  case Value::Kind::Block: return py::cast(v.asBlock());
  case Value::Kind::Loop: return py::cast(v.asLoop());
  case Value::Kind::ExprRV: return py::cast(v.asExprRV());
  case Value::Kind::List: {
    py::list out;
    for (auto& i : v.asList()) out.append(fromValue(i));
    return out;
  }
  case Value::Kind::Lambda: return py::cast(IndexMap{v.asLambda()});
  }
  return py::none();
}

/// A schedule as Python sees it: the C++ schedule plus the function name it works on.
struct PySchedule {
  tir::Schedule sch;
  std::string funcName;

  /// Like the script runner's call(): a block parameter also takes the block's name, RVs must
  /// name live nodes, arguments are bound to the kind's parameters, then the primitive runs.
  py::object apply(const std::string& name, py::list pyArgs, py::dict pyKwargs) {
    const tir::InstructionKind* kind = tir::findInstructionKind(name);
    if (!kind) {
      std::string msg = "'Schedule' has no primitive '" + name + "'";
      auto close = tir::closeInstructionKindNames(name);
      if (!close.empty()) msg += "; did you mean '" + close[0] + "'?";
      throw py::attribute_error(msg);
    }
    std::vector<Value> args;
    for (py::handle a : pyArgs) args.push_back(toValue(a));
    std::vector<std::pair<std::string, Value>> kwargs;
    for (auto [k, v] : pyKwargs) kwargs.push_back({k.cast<std::string>(), toValue(v)});
    auto byName = [&](const tir::ParamSpec& p, Value& v) {
      if (v.kind() != Value::Kind::String || !(p.types & tir::vt::Block) || (p.types & tir::vt::String)) return;
      v = tir::findInstructionKind("get_block")->apply(sch, {v, Value(funcName)}, Value()).at(0);
    };
    for (size_t i = 0; i < args.size() && i < kind->params.size(); ++i) {
      if (kind->params[i].variadic) break;
      byName(kind->params[i], args[i]);
    }
    for (auto& [k, v] : kwargs)
      for (auto& p : kind->params)
        if (p.name == k) byName(p, v);
    Value decision;
    std::vector<Value> inputs = tir::bindArguments(*kind, args, kwargs, decision);
    std::function<void(const Value&)> check = [&](const Value& v) {
      if (v.kind() == Value::Kind::Block) sch.get(v.asBlock());
      if (v.kind() == Value::Kind::Loop) sch.get(v.asLoop());
      if (v.kind() == Value::Kind::ExprRV) sch.get(v.asExprRV());
      if (v.kind() == Value::Kind::List)
        for (auto& i : v.asList()) check(i);
    };
    for (auto& v : inputs) check(v);
    std::vector<Value> outs = kind->apply(sch, inputs, decision);
    if (kind->returnsList) return fromValue(Value(outs));
    return outs.empty() ? py::object(py::none()) : fromValue(outs[0]);
  }
};

}  // namespace

void bindSchedule(py::module_& m) {
  py::class_<tir::BlockRV>(m, "BlockRV")
      .def_readonly("id", &tir::BlockRV::id)
      .def("__repr__", [](const tir::BlockRV& r) { return "BlockRV(" + std::to_string(r.id) + ")"; });
  py::class_<tir::LoopRV>(m, "LoopRV")
      .def_readonly("id", &tir::LoopRV::id)
      .def("__repr__", [](const tir::LoopRV& r) { return "LoopRV(" + std::to_string(r.id) + ")"; });
  py::class_<tir::ExprRV>(m, "ExprRV")
      .def_readonly("id", &tir::ExprRV::id)
      .def("__repr__", [](const tir::ExprRV& r) { return "ExprRV(" + std::to_string(r.id) + ")"; });
  py::class_<IndexMap>(m, "IndexMap").def("__str__", [](const IndexMap& f) { return f.fn->str(); });
  m.def("parse_index_map", [](const std::string& text) {
    tir::ScriptExprPtr e = tir::parseScriptExpr(text);
    if (e->kind != tir::ScriptExpr::Kind::Lambda) LOOM_THROW(TypeError) << "'" << text << "' is not a lambda";
    auto f = std::make_shared<tir::ScriptLambda>();
    f->params = e->params;
    f->body = e->items[0];
    return IndexMap{f};
  });

  py::class_<tir::Trace>(m, "Trace")
      .def("__str__", &tir::Trace::str)
      .def("__len__", [](const tir::Trace& t) { return t.insts.size(); })
      .def("kinds", [](const tir::Trace& t) {
        std::vector<std::string> out;
        for (auto& i : t.insts) out.push_back(i.kind->name);
        return out;
      })
      .def("as_json", [](const tir::Trace& t) { return t.toJson().dump(); })
      .def_static("from_json", [](const std::string& text) {
        nlohmann::json j;
        try {
          j = nlohmann::json::parse(text);
        } catch (const nlohmann::json::exception& e) {
          LOOM_THROW(ParseError) << "trace JSON: " << e.what();
        }
        return tir::Trace::fromJson(j);
      })
      .def("simplified", &tir::Trace::simplified)
      .def("apply_to_schedule", [](const tir::Trace& t, PySchedule& s) { t.apply(s.sch); }, py::arg("sch"));

  py::class_<PySchedule>(m, "Schedule")
      .def(py::init([](const tir::IRModule& mod, const std::string& funcName, uint64_t seed) {
        return PySchedule{tir::Schedule::fromModule(mod, funcName, seed), funcName};
      }), py::arg("mod"), py::arg("func_name") = "main", py::arg("seed") = 1)
      .def(py::init([](const tir::PrimFunc& f, uint64_t seed) {
        return PySchedule{tir::Schedule(f, seed), f->name};
      }), py::arg("func"), py::arg("seed") = 1)
      .def("apply", &PySchedule::apply)
      .def("set_span", [](PySchedule& s, const std::string& file, int line) {
        s.sch.setSourceSpan(Span{std::make_shared<const std::string>(file), line, 1, line, 1});
      })
      .def_property_readonly("mod", [](const PySchedule& s) {
        tir::IRModule mod = s.sch.mod();
        return mod;
      })
      .def_property_readonly("func", [](const PySchedule& s) { return s.sch.func(); })
      .def_property_readonly("trace", [](const PySchedule& s) { return s.sch.trace(); })
      .def("copy", [](const PySchedule& s) { return PySchedule{s.sch, s.funcName}; })
      .def("get_expr", [](const PySchedule& s, const tir::ExprRV& rv) { return s.sch.get(rv); })
      .def("get_block_name", [](const PySchedule& s, const tir::BlockRV& rv) { return s.sch.get(rv)->name; })
      .def("get_loop_var", [](const PySchedule& s, const tir::LoopRV& rv) { return s.sch.get(rv)->loopVar->name; })
      .def("is_valid", [](const PySchedule& s, py::handle rv) { return s.sch.isValid(toValue(rv)); })
      .def("run_script", [](PySchedule& s, const std::string& text, const std::string& fileName) {
        tir::ScriptResult r = tir::runScript(s.sch, text, fileName);
        if (!r.ok) return py::object(py::make_tuple(r.errorKind, r.message));
        return py::object(py::none());
      }, py::arg("text"), py::arg("file_name") = "<script>");

  m.def("primitive_names", [] { return tir::instructionKindNames(); });
  m.def("primitive_info", [](const std::string& name) {
    const tir::InstructionKind* k = tir::findInstructionKind(name);
    if (!k) throw py::key_error(name);
    py::list params;
    for (auto& p : k->params) params.append(py::make_tuple(p.name, tir::vt::describe(p.types, p.elemTypes), p.defaultValue.has_value(), p.keyword, p.variadic));
    return py::make_tuple(k->doc, params, k->returnsList, k->sampling);
  });
}

}  // namespace loom::python
