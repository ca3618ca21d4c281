// applySymbolBounds: a pass over the graph JSON the model compiler wrote.
#include "core/driver/SymbolBounds.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "core/graph/Op.h"
#include "core/graph/SymDim.h"
#include "core/support/Error.h"
#include "runtime/RuntimeFailure.h"
#include "runtime/ShapeExpr.h"

namespace loom::driver {

void applySymbolBounds(CompiledModel& model, const std::map<std::string, int64_t>& bounds) {
  if (bounds.empty()) return;
  nlohmann::json j = nlohmann::json::parse(model.graphJson);
  std::map<std::string, int64_t> env;
  std::string names;
  bool all = j.contains("symbols") && !j["symbols"].empty();
  if (j.contains("symbols"))
    for (auto& s : j["symbols"]) {
      std::string name = s.at("name").get<std::string>();
      names += (names.empty() ? "" : ", ") + name;
      auto it = bounds.find(name);
      if (it == bounds.end()) {
        all = false;
        continue;
      }
      s["bound"] = it->second;
      env[name] = it->second;
    }
  for (const auto& [name, b] : bounds)
    if (!env.count(name))
      LOOM_THROW(ValueError) << "--input-shapes bounds '" << name << "', but the compiled model has no such symbol ("
                             << (names.empty() ? "it has none: its inputs are static" : "it has " + names) << ")";
  if (all) {
    // Data-dependent counts at their bounds, in node order (a bound may use an earlier count).
    for (const auto& n : j.at("nodes"))
      if (n.value("func", "") == "__datadep") {
        try {
          env[n.at("symbol").get<std::string>()] = runtime::ShapeExpr(n.at("bound").get<std::string>()).eval(env);
        } catch (const runtime::RuntimeFailure&) {
          all = false;
        }
      }
  }
  if (all) {
    std::vector<size_t> need(j.at("storage").size(), 1);
    for (const auto& e : j.at("entries")) {
      size_t bytes = 0;
      runtime::DType d;
      if (!runtime::DType::parse(e.at("dtype").get<std::string>(), &d)) LOOM_THROW(InternalError) << "bad dtype in the graph";
      bytes = d.bytes();
      if (e.contains("sym_shape")) {
        for (const auto& x : e.at("sym_shape"))
          bytes *= size_t(std::max<int64_t>(x.is_number_integer() ? x.get<int64_t>() : runtime::ShapeExpr(x.get<std::string>()).eval(env), 0));
      } else {
        for (const auto& x : e.at("shape")) bytes *= size_t(x.get<int64_t>());
      }
      bytes += e.value("offset", size_t(0));
      size_t s = e.at("storage").get<size_t>();
      need.at(s) = std::max(need[s], bytes);
    }
    for (size_t s = 0; s < need.size(); ++s) j["storage"][s]["bytes"] = need[s];
    j["storage_planned_for_bounds"] = true;
  }
  model.graphJson = j.dump(1);
}

void addShapeChecks(CompiledModel& model, const graph::Module& m) {
  nlohmann::json j = nlohmann::json::parse(model.graphJson);
  if (!j.contains("symbols") || j["symbols"].empty()) return;
  std::set<std::string> inputSymbols;
  for (const auto& s : j["symbols"]) inputSymbols.insert(s.at("name").get<std::string>());
  // Only dims over the input symbols can be checked before the kernels run.
  auto checkable = [&](const graph::Dim& d) {
    if (d.isStatic()) return true;
    if (d.name.empty()) return false;
    for (const std::string& s : graph::dimSymbols(d))
      if (!inputSymbols.count(s)) return false;
    return true;
  };
  std::set<std::string> seen;  // "lhs == rhs" once, at its first node
  nlohmann::json checks = nlohmann::json::array();
  auto add = [&](const graph::Dim& a, const graph::Dim& b, const std::string& what) {
    if (a.isStatic() && b.isStatic()) return;  // the type relation checked it
    if (!checkable(a) || !checkable(b) || graph::dimsProvablyEqual(a, b)) return;
    std::string key = a.str() + " == " + b.str();
    if (!seen.insert(key).second || !seen.insert(b.str() + " == " + a.str()).second) return;
    checks.push_back({{"lhs", a.str()}, {"rhs", b.str()}, {"what", what}});
  };
  auto tensorOf = [](const graph::Expr& e) -> const graph::TensorTypeNode* {
    return e->checkedType.get() ? graph::Type(e->checkedType).as<graph::TensorTypeNode>() : nullptr;
  };
  // The ops whose type relation broadcasts numpy-style (broadcastShapes: trailing dims aligned);
  // nn.bias_add and broadcast_to are of the same pattern kind but align otherwise.
  static const std::set<std::string> numpyBroadcast{
      "add",   "subtract",      "multiply", "divide",     "floor_mod",   "trunc_mod",   "power",
      "maximum", "minimum",     "equal",    "not_equal",  "less",        "less_equal",  "greater",
      "greater_equal", "logical_and", "logical_or", "logical_xor", "where"};
  // Numpy-style broadcast of `shapes` (trailing dims aligned): the first dim other than 1 at each
  // output position against every other such dim.
  auto addBroadcast = [&](const std::vector<graph::Shape>& shapes, const std::vector<size_t>& argOf,
                          const std::string& prefix) {
    size_t n = 0;
    for (const graph::Shape& s : shapes) n = std::max(n, s.size());
    for (size_t k = 0; k < n; ++k) {
      const graph::Dim* first = nullptr;
      size_t firstArg = 0;
      for (size_t i = 0; i < shapes.size(); ++i) {
        const graph::Shape& s = shapes[i];
        if (k + s.size() < n) continue;
        const graph::Dim& d = s[k + s.size() - n];
        if (d.isStatic() && d.value == 1) continue;
        if (!first) {
          first = &d;
          firstArg = argOf[i];
          continue;
        }
        add(*first, d,
            prefix + "dimension " + std::to_string(k) + " of inputs " + std::to_string(firstArg) + " and " +
                std::to_string(argOf[i]));
      }
    }
  };
  // The ops whose arguments' channel vectors (rank 1) must have the data's extent on an axis.
  auto addChannelVectors = [&](const std::vector<const graph::TensorTypeNode*>& args, int64_t axis, size_t from,
                               size_t to, const std::string& node) {
    const graph::Shape& d = args[0]->shape;
    if (axis < 0) axis += int64_t(d.size());
    if (axis < 0 || axis >= int64_t(d.size())) return;
    for (size_t i = from; i < to && i < args.size(); ++i)
      if (args[i]->shape.size() == 1)
        add(d[size_t(axis)], args[i]->shape[0],
            node + ": dimension " + std::to_string(axis) + " of input 0 (the channels) and the length of input " +
                std::to_string(i));
  };
  for (const graph::Expr& e : graph::postOrder(m.main()->body, true)) {
    const auto* call = e.as<graph::CallNode>();
    if (!call || !call->op) continue;
    std::string node = "node '" + (call->name.empty() ? call->op->name : call->name) + "' (" + call->op->name + ")";
    std::vector<const graph::TensorTypeNode*> args;
    for (const graph::Expr& a : call->args) args.push_back(tensorOf(a));
    if (std::find(args.begin(), args.end(), nullptr) != args.end() || args.size() < 2) continue;
    if (call->op->name == "concatenate") {
      int64_t rank = int64_t(args[0]->shape.size());
      int64_t axis = call->attrs.getInt("axis");
      if (axis < 0) axis += rank;
      for (size_t i = 1; i < args.size(); ++i)
        for (int64_t k = 0; k < rank && k < int64_t(args[i]->shape.size()); ++k)
          if (k != axis)
            add(args[0]->shape[size_t(k)], args[i]->shape[size_t(k)],
                node + ": dimension " + std::to_string(k) + " of input 0 and of input " + std::to_string(i));
    } else if (numpyBroadcast.count(call->op->name)) {
      std::vector<graph::Shape> shapes;
      std::vector<size_t> argOf;
      for (size_t i = 0; i < args.size(); ++i) {
        shapes.push_back(args[i]->shape);
        argOf.push_back(i);
      }
      addBroadcast(shapes, argOf, node + ": broadcast ");
    } else if (call->op->name == "nn.dense" && !args[0]->shape.empty() && args[1]->shape.size() == 2) {
      // data (..., K) against weight (N, K).
      add(args[0]->shape.back(), args[1]->shape[1],
          node + ": the reduction dimension (last of input 0, dimension 1 of input 1)");
    } else if (call->op->name == "nn.matmul" && !args[0]->shape.empty() && !args[1]->shape.empty()) {
      // (..., M, K) x (..., K, N); a vector operand is one row (a) or one column (b).
      graph::Shape a = args[0]->shape, b = args[1]->shape;
      if (a.size() == 1) a.insert(a.begin(), graph::Dim(1));
      if (b.size() == 1) b.push_back(graph::Dim(1));
      add(a.back(), b[b.size() - 2],
          node + ": the reduction dimension (dimension " + std::to_string(args[0]->shape.size() - 1) +
              " of input 0, dimension " + std::to_string(args[1]->shape.size() == 1 ? 0 : args[1]->shape.size() - 2) +
              " of input 1)");
      addBroadcast({graph::Shape(a.begin(), a.end() - 2), graph::Shape(b.begin(), b.end() - 2)}, {0, 1},
                   node + ": batch ");
    } else if (call->op->name == "nn.bias_add") {
      addChannelVectors(args, call->attrs.getInt("axis"), 1, 2, node);
    } else if (call->op->name == "nn.batch_norm") {
      addChannelVectors(args, call->attrs.getInt("axis"), 1, 5, node);
    } else if (call->op->name == "nn.instance_norm") {
      addChannelVectors(args, 1, 1, 3, node);
    }
  }
  if (checks.empty()) return;
  j["shape_checks"] = checks;
  model.graphJson = j.dump(1);
}

}  // namespace loom::driver
