// compileModel: graph passes, fused groups through TE to PrimFuncs, the default CPU schedule,
// lowering, the storage plan and the executor JSON; the .tar package writer.
#include "core/driver/CompileModel.h"
#include "core/driver/SymbolBounds.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "codegen/CodeGenLLVM.h"
#include "codegen/JITModule.h"
#include "codegen/Target.h"
#include "core/transform/Instruments.h"
#include <cstdio>
#include <cstdlib>
#include "core/graph/DataDependent.h"
#include "core/graph/Mutator.h"
#include "core/graph/Op.h"
#include "core/graph/PassManager.h"
#include "core/graph/SymDim.h"
#include "core/graph/pass/FuseOps.h"
#include "core/graph/pass/InferType.h"
#include "core/driver/CompileModelGPU.h"
#include "core/driver/DataDependentPlan.h"
#include "core/driver/DefaultSchedule.h"
#include "core/driver/ExportLibrary.h"
#include "core/te/CreatePrimFunc.h"
#include "core/tir/Printer.h"
#include "core/topi/nn/ComputeUtil.h"
#include "core/topi/nn/GraphCompute.h"
#include "core/topi/nn/Recurrent.h"
#include "core/transform/Pipeline.h"
#include "runtime/Package.h"

#ifndef LOOM_VERSION
#define LOOM_VERSION "0.1.0"
#endif

namespace loom::driver {

namespace {

using graph::Expr;

/// The tensor types of `t`, tuples flattened.
void flattenTypes(const graph::Type& t, std::vector<const graph::TensorTypeNode*>& out) {
  if (auto* tt = t.as<graph::TensorTypeNode>()) {
    out.push_back(tt);
    return;
  }
  for (const auto& f : t.as<graph::TupleTypeNode>()->fields) flattenTypes(graph::Type(f), out);
}

/// A 0-d or small constant inside a fused group as a compute (a select chain over its values).
te::Tensor constantTensor(const runtime::NDArray& a, const std::string& name) {
  graph::Constant c = graph::makeConstant(a);
  std::vector<runtime::NDArray> v = {a};
  DataType t = graph::toDataType(a.dtype());
  std::vector<tir::Expr> shape;
  for (int64_t d : a.shape()) shape.push_back(tir::intImm(DataType::Int(32), d));
  // Values as doubles (exact for float32 and ints up to 2^53).
  std::vector<double> vals(size_t(a.numel()));
  for (int64_t i = 0; i < a.numel(); ++i) {
    const char* p = static_cast<const char*>(a.data()) + size_t(i) * a.dtype().bytes();
    double x = 0;
    switch (a.dtype().code) {
    case runtime::DType::Float:
      x = a.dtype().bits == 64 ? *reinterpret_cast<const double*>(p) : double(*reinterpret_cast<const float*>(p));
      break;
    case runtime::DType::Bool: x = *reinterpret_cast<const uint8_t*>(p) ? 1 : 0; break;
    case runtime::DType::UInt:
      x = a.dtype().bits == 8 ? *reinterpret_cast<const uint8_t*>(p)
          : a.dtype().bits == 16 ? *reinterpret_cast<const uint16_t*>(p)
          : a.dtype().bits == 32 ? *reinterpret_cast<const uint32_t*>(p)
                                 : double(*reinterpret_cast<const uint64_t*>(p));
      break;
    default:
      x = a.dtype().bits == 8 ? *reinterpret_cast<const int8_t*>(p)
          : a.dtype().bits == 16 ? *reinterpret_cast<const int16_t*>(p)
          : a.dtype().bits == 32 ? *reinterpret_cast<const int32_t*>(p)
                                 : double(*reinterpret_cast<const int64_t*>(p));
    }
    vals[size_t(i)] = x;
  }
  std::vector<int64_t> ext = a.shape();
  auto valueExpr = [&](double x) -> tir::Expr {
    if (t.isBool()) return tir::boolImm(x != 0);
    return tir::makeConst(t, x);
  };
  return te::compute(
      shape,
      [&](const std::vector<tir::Var>& i) -> te::ComputeBody {
        if (vals.size() == 1) return valueExpr(vals[0]);
        tir::Expr flat = tir::intImm(DataType::Int(32), 0);
        for (size_t d = 0; d < ext.size(); ++d) flat = flat * tir::intImm(DataType::Int(32), ext[d]) + i[d];
        tir::Expr r = valueExpr(vals.back());
        for (size_t k = vals.size() - 1; k-- > 0;)
          r = tir::select(tir::eq(flat, tir::intImm(DataType::Int(32), int64_t(k))), valueExpr(vals[k]), r);
        return r;
      },
      name, "constant");
}

/// The TE tensors of a fused group's body: placeholders for its params, op computes for calls.
std::vector<te::Tensor> groupTensors(const graph::Function& fn, std::vector<te::Tensor>& placeholders) {
  std::unordered_map<const graph::ExprNode*, std::vector<te::Tensor>> val;
  for (size_t k = 0; k < fn->params.size(); ++k) {
    const graph::Var& p = fn->params[k];
    const auto* tt = p->checkedType.get() ? graph::Type(p->checkedType).as<graph::TensorTypeNode>() : nullptr;
    if (!tt) tt = p->annotation.as<graph::TensorTypeNode>();
    LOOM_ICHECK(tt) << "group parameter without a tensor type";
    // Symbolic dims become expressions over one int32 variable per symbol, bound from the
    // arguments' shapes at the kernel's entry (docs/dynamic-shapes.md).
    for (const graph::Dim& d : tt->shape)
      if (!d.isStatic() && d.name.empty())
        LOOM_THROW(TypeError) << "input of " << fn->name << " has an unknown dim in " << graph::shapeStr(tt->shape)
                              << " (name it or give static input shapes, e.g. --input-shapes)";
    te::Tensor t = te::placeholder(topi::nn::teShape(*tt), tt->dtype, "p" + std::to_string(k));
    placeholders.push_back(t);
    val[p.get()] = {t};
  }
  int constCount = 0;
  for (const Expr& e : graph::postOrder(fn->body)) {
    if (val.count(e.get())) continue;
    if (auto* c = e.as<graph::ConstantNode>()) {
      val[e.get()] = {constantTensor(c->data, "const" + std::to_string(constCount++))};
    } else if (auto* call = e.as<graph::CallNode>()) {
      if (!call->op) LOOM_THROW(UnsupportedError) << "nested function call in fused group " << fn->name;
      if (!call->op->compute)
        LOOM_THROW(UnsupportedError) << graph::callDescription(*call) << ": no TE compute for this op";
      std::vector<te::Tensor> in;
      for (const Expr& a : call->args) {
        const auto& v = val.at(a.get());
        in.insert(in.end(), v.begin(), v.end());
      }
      try {
        val[e.get()] = call->op->compute(*call, in, e.type());
      } catch (const UnsupportedError& err) {
        // Name the node (the compute knows only its tensors).
        const std::string what = err.what(), desc = graph::callDescription(*call);
        if (what.compare(0, desc.size(), desc) == 0) throw;
        LOOM_THROW(UnsupportedError) << desc << ": " << what;
      }
    } else if (auto* tup = e.as<graph::TupleNode>()) {
      std::vector<te::Tensor> all;
      for (const Expr& f : tup->fields) {
        const auto& v = val.at(f.get());
        all.insert(all.end(), v.begin(), v.end());
      }
      val[e.get()] = all;
    } else if (auto* tg = e.as<graph::TupleGetItemNode>()) {
      // Fields of the tuple, flattened: find the slice of field `index`.
      std::vector<const graph::TensorTypeNode*> before;
      const auto* tt = tg->tuple.type().as<graph::TupleTypeNode>();
      LOOM_ICHECK(tt) << "tuple get item of a non-tuple";
      size_t start = 0;
      for (int k = 0; k < tg->index; ++k) {
        std::vector<const graph::TensorTypeNode*> f;
        flattenTypes(graph::Type(tt->fields[size_t(k)]), f);
        start += f.size();
      }
      std::vector<const graph::TensorTypeNode*> f;
      flattenTypes(graph::Type(tt->fields[size_t(tg->index)]), f);
      const auto& v = val.at(tg->tuple.get());
      val[e.get()] = std::vector<te::Tensor>(v.begin() + long(start), v.begin() + long(start + f.size()));
    } else if (e.as<graph::VarNode>()) {
      LOOM_THROW(UnsupportedError) << "free variable in fused group " << fn->name;
    }
  }
  return val.at(fn->body.get());
}

std::string sanitize(std::string s) {
  for (char& c : s)
    if (!std::isalnum(uint8_t(c)) && c != '_') c = '_';
  return s;
}

/// Binds main's parameters named in `params` as constants.
graph::Module bindParams(const graph::Module& m, const std::map<std::string, runtime::NDArray>& params) {
  if (params.empty()) return m;
  graph::Function main = m.main();
  std::vector<graph::Var> keep;
  std::unordered_map<const graph::ExprNode*, Expr> bound;
  for (const graph::Var& v : main->params) {
    auto it = params.find(v->name);
    if (it == params.end()) keep.push_back(v);
    else bound[v.get()] = graph::makeConstant(it->second, v->name);
  }
  if (bound.empty()) return m;
  struct Binder : graph::ExprMutator {
    std::unordered_map<const graph::ExprNode*, Expr>* map;
    Expr rewrite(const Expr& original, const Expr& rebuilt) override {
      auto it = map->find(original.get());
      return it == map->end() ? rebuilt : it->second;
    }
  } binder;
  binder.map = &bound;
  graph::Module r = m;
  r.functions["main"] = graph::makeFunction(keep, binder.mutate(main->body), main->primitive, main->name);
  return r;
}

/// The ops of a fused group's body, in evaluation order.
std::vector<std::string> groupOps(const graph::Function& fn) {
  std::vector<std::string> ops;
  for (const Expr& e : graph::postOrder(fn->body))
    if (auto* call = e.as<graph::CallNode>(); call && call->op) ops.push_back(call->op->name);
  return ops;
}

/// A model taken apart for compilation: everything but the kernels' schedules and code.
struct ModelPlan {
  CompiledModel model;            ///< graph JSON, params, inputs and outputs; no kernels yet
  std::vector<ModelGroup> groups; ///< one per kernel, unscheduled
};

/// The symbols used by a fused group's parameter and result types, sorted.
std::vector<std::string> groupSymbols(const graph::Function& fn, const graph::Type& result) {
  std::set<std::string> out;
  auto add = [&](const graph::Type& t) {
    std::vector<const graph::TensorTypeNode*> ts;
    flattenTypes(t, ts);
    for (const auto* tt : ts)
      for (const graph::Dim& d : tt->shape)
        for (const std::string& s : graph::dimSymbols(d)) out.insert(s);
  };
  for (const graph::Var& p : fn->params) add(p->checkedType.get() ? graph::Type(p->checkedType) : p->annotation);
  add(result);
  return {out.begin(), out.end()};
}

/// `f` with the symbols' int32 variables appended to its params.
tir::PrimFunc withSymbolParams(const tir::PrimFunc& f, const std::vector<std::string>& syms) {
  if (syms.empty()) return f;
  std::vector<tir::Var> params = f->params;
  for (const std::string& s : syms) params.push_back(topi::nn::symbolIndexVar(s));
  return tir::makePrimFunc(f->name, params, f->bufferMap, f->body, f->attrs);
}

/// Every dim as text when some is symbolic, else nothing.
std::vector<std::string> dimTexts(const graph::Shape& dims) {
  if (std::all_of(dims.begin(), dims.end(), [](const graph::Dim& d) { return d.isStatic(); })) return {};
  std::vector<std::string> out;
  for (const graph::Dim& d : dims) out.push_back(d.str());
  return out;
}

/// `kernelsOnly`: only the groups are wanted (extractGroups), which may have symbolic shapes;
/// the executor's entries then hold 0 for symbolic dims and are not used.
/// The byte offset of each argument of a group that is one concatenate of its parameters, in
/// the result, when every argument is a contiguous slice of it (static shapes, the dims before
/// the axis all 1: a channel concat of batch 1, NCHW or NCHW{k}c); else empty.
std::vector<size_t> concatSliceOffsets(const graph::Function& fn, const graph::Type& result) {
  const auto* c = fn->body.as<graph::CallNode>();
  const auto* out = result.as<graph::TensorTypeNode>();
  if (!c || !c->op || c->op->name != "concatenate" || !out || !out->isStatic() ||
      c->args.size() != fn->params.size())
    return {};
  int64_t axis = c->attrs.getInt("axis");
  if (axis < 0) axis += int64_t(out->ndim());
  for (int64_t d = 0; d < axis; ++d)
    if (out->shape[size_t(d)].value != 1) return {};
  std::vector<size_t> offsets;
  size_t off = 0;
  for (size_t i = 0; i < c->args.size(); ++i) {
    if (c->args[i].get() != fn->params[i].get()) return {};
    const auto* t = graph::Type(fn->params[i]->checkedType).as<graph::TensorTypeNode>();
    // Kernels take 64-byte aligned tensors (tir::Buffer's alignment).
    if (!t || !t->isStatic() || off % 64) return {};
    offsets.push_back(off);
    off += size_t(t->numel()) * graph::toDType(t->dtype).bytes();
  }
  return offsets;
}

/// `inPlaceConcat`: a concatenation whose inputs are each a kernel's result read by nothing else
/// is not a kernel: each producer writes its slice of the result (its entry is a view of the
/// result's storage at an offset). CPU executors only (device storage handles have no offsets).
ModelPlan planModel(const graph::Module& input, const std::map<std::string, runtime::NDArray>& params,
                    const CompileModelOptions& options, bool kernelsOnly = false, bool inPlaceConcat = true) {
  topi::registerGraphComputes();
  ModelPlan plan;
  CompiledModel& model = plan.model;
  model.optLevel = options.optLevel;
  if (!input.main().defined()) LOOM_THROW(ValueError) << "the module has no main function";
  bool blocked = false;
  if (options.desiredLayout == "NCHWc" || options.desiredLayout == "NCHW16c") blocked = true;
  // The default: channel-blocked at opt level 3, where the default schedule register-tiles
  // NCHW16c convs (resnet18 4x, mobilenet_v2 and squeezenet1_1 5-10x faster than in NCHW,
  // bench/README.md); as imported below. Symbolic batch and image sizes block the same way (the
  // blocks are channels, which stay static).
  else if (options.desiredLayout.empty()) blocked = options.optLevel >= 3;
  else if (!options.desiredLayout.empty() && options.desiredLayout != "NCHW")
    LOOM_THROW(ValueError) << "unsupported desired layout '" << options.desiredLayout
                           << "' (supported: NCHW, NCHWc)";
  if (blocked && options.optLevel < 1)
    LOOM_THROW(ValueError) << "desired layout " << options.desiredLayout << " needs opt level 1 or more";
  model.layout = blocked ? "NCHWc" : "NCHW";
  graph::Module m = bindParams(input, params);
  if (options.optLevel >= 1) {
    m = graph::runGraphPasses(m, graph::withoutPasses(graph::fusePipeline(blocked), options.disabledPasses));
  } else {
    // qnn ops have no kernels of their own: even unoptimized they run as their core-op form, and
    // QDQ patterns as integer ops (the results ONNX Runtime gives, at every opt level).
    // simplify-inference is not an optimization either: batch_norm, dropout, ... have no compute
    // of their own (TVM runs SimplifyInference at opt level 0 too).
    m = graph::runGraphPasses(
        m, {"infer-type", "fake-quantization-to-integer", "qnn-canonicalize", "simplify-inference", "infer-type"});
    m = graph::fuseOps(m, 1);
    m = graph::runGraphPasses(m, {"infer-type"});
  }
  graph::Function main = m.main();

  nlohmann::json j;
  j["storage"] = nlohmann::json::array();
  j["entries"] = nlohmann::json::array();
  j["inputs"] = nlohmann::json::array();
  j["params"] = nlohmann::json::array();
  j["nodes"] = nlohmann::json::array();
  j["outputs"] = nlohmann::json::array();

  struct EntryInfo {
    std::vector<int64_t> shape;  ///< 0 for symbolic dims
    runtime::DType dtype;
    int storage = -1;
    graph::Shape dims;           ///< the dims, symbolic ones included
    size_t offset = 0;           ///< byte offset in the storage (a slice of an in-place concat)
    /// The size in bytes; for symbolic dims a representative one (every symbol 64), which only
    /// steers the storage plan's best fit: the executor sizes storage from the real shapes.
    size_t bytes() const {
      size_t n = dtype.bytes();
      for (size_t k = 0; k < shape.size(); ++k) {
        int64_t d = shape[k];
        if (k < dims.size() && !dims[k].isStatic()) {
          std::map<std::string, int64_t> env;
          for (const std::string& sy : graph::dimSymbols(dims[k])) env[sy] = 64;
          d = std::max<int64_t>(graph::evalDim(dims[k], env).value_or(64), 1);
        }
        n *= size_t(d);
      }
      return n;
    }
    bool symbolic() const { return std::any_of(dims.begin(), dims.end(), [](const graph::Dim& d) { return !d.isStatic(); }); }
  };
  std::vector<EntryInfo> entries;
  auto newEntry = [&](const graph::TensorTypeNode& t, const std::string& what) {
    std::vector<int64_t> shape;
    for (const graph::Dim& d : t.shape) {
      if (!d.isStatic() && d.name.empty())
        LOOM_THROW(TypeError) << what << " has an unknown dim in " << graph::shapeStr(t.shape)
                              << " (name it or give static input shapes, e.g. --input-shapes)";
      shape.push_back(d.isStatic() ? d.value : 0);
    }
    entries.push_back({shape, graph::toDType(t.dtype), -1, t.shape});
    return int(entries.size() - 1);
  };
  struct NodeInfo {
    std::string name, func;
    std::vector<int> inputs, outputs;
    std::vector<std::string> symbols = {};
    nlohmann::json extra = {};  ///< a "__datadep" node's op, attrs, symbol and bound
    std::vector<size_t> concatOffsets = {};  ///< concatSliceOffsets of its group
  };
  std::vector<NodeInfo> nodes;
  std::set<int> fixed;  // entries with a storage of their own (inputs, params, outputs)

  std::unordered_map<const graph::ExprNode*, std::vector<int>> ent;
  for (const graph::Var& v : main->params) {
    const auto* tt = v->checkedType.get() ? graph::Type(v->checkedType).as<graph::TensorTypeNode>() : nullptr;
    if (!tt) LOOM_THROW(UnsupportedError) << "model input '" << v->name << "' is not a tensor";
    int e = newEntry(*tt, "input '" + v->name + "'");
    ent[v.get()] = {e};
    fixed.insert(e);
    j["inputs"].push_back({{"name", v->name}, {"entry", e}});
    model.inputs.push_back({v->name, entries[size_t(e)].shape, entries[size_t(e)].dtype, dimTexts(entries[size_t(e)].dims)});
  }
  // The symbols of a dynamic model, each read from the first input dim that is the symbol alone.
  std::set<std::string> symbolNames;
  for (size_t i = 0; i < main->params.size(); ++i) {
    const EntryInfo& en = entries[size_t(ent.at(main->params[i].get()).at(0))];
    for (size_t k = 0; k < en.dims.size(); ++k) {
      const graph::Dim& d = en.dims[k];
      if (d.isStatic() || symbolNames.count(d.name) || graph::dimSymbols(d) != std::vector<std::string>{d.name}) continue;
      symbolNames.insert(d.name);
      j["symbols"].push_back({{"name", d.name}, {"input", int(i)}, {"axis", int(k)}});
    }
  }
  std::set<std::string> paramNames, funcNames;
  std::map<std::string, std::string> kernelByText;
  std::map<std::string, size_t> groupIndex;
  for (const Expr& e : graph::postOrder(main->body)) {
    if (ent.count(e.get())) continue;
    if (auto* c = e.as<graph::ConstantNode>()) {
      std::string name = c->name.empty() ? "p" : sanitize(c->name);
      std::string unique = name;
      for (int k = 1; paramNames.count(unique); ++k) unique = name + "_" + std::to_string(k);
      paramNames.insert(unique);
      std::vector<const graph::TensorTypeNode*> ts;
      flattenTypes(e.type(), ts);
      int id = newEntry(*ts.at(0), "constant '" + unique + "'");
      fixed.insert(id);
      ent[e.get()] = {id};
      model.params[unique] = c->data;
      j["params"].push_back({{"name", unique}, {"entry", id}});
    } else if (auto* call = e.as<graph::CallNode>()) {
      if (!call->fn.defined())
        LOOM_THROW(UnsupportedError) << graph::callDescription(*call) << ": op call outside a fused group";
      const graph::Function& fn = call->fn;
      std::string fname = sanitize(fn->name.empty() ? "fused" : fn->name);
      std::string unique = fname;
      for (int k = 1; funcNames.count(unique); ++k) unique = fname + "_" + std::to_string(k);
      funcNames.insert(unique);
      std::vector<const graph::TensorTypeNode*> outTypes;
      flattenTypes(e.type(), outTypes);
      bool empty = true;
      for (const auto* t : outTypes) empty &= t->isStatic() && t->numel() == 0;
      if (empty) {
        // Nothing to compute: the results are empty tensors.
        std::vector<int> ids;
        for (const auto* t : outTypes) ids.push_back(newEntry(*t, "result of " + unique));
        ent[e.get()] = ids;
        continue;
      }
      // A group that is one call of a loop-kernel op (nn.recurrence) takes the op's own kernel,
      // with its params in the call's argument order.
      const auto* only = fn->body.as<graph::CallNode>();
      const topi::nn::LoopKernel* loop = only && only->op ? topi::nn::findLoopKernel(only->op->name) : nullptr;
      // A data-dependent op (dyn.nonzero, ...) runs in the executor and binds its symbol.
      if (only && only->op && graph::isDataDependentOp(only->op->name)) {
        NodeInfo n{unique, "__datadep", {}, {}};
        for (size_t k = 0; k < only->args.size(); ++k) {
          if (k >= fn->params.size() || only->args[k].get() != fn->params[k].get())
            LOOM_THROW(UnsupportedError) << graph::callDescription(*only)
                                         << ": a data-dependent op must run alone on the group's inputs";
          const auto& v = ent.at(call->args[k].get());
          n.inputs.insert(n.inputs.end(), v.begin(), v.end());
        }
        n.extra = dataDependentNodeJson(*only);
        symbolNames.insert(n.extra.at("symbol").get<std::string>());
        for (const auto* t : outTypes) n.outputs.push_back(newEntry(*t, "result of " + unique));
        ent[e.get()] = n.outputs;
        nodes.push_back(std::move(n));
        continue;
      }
      if (loop) {
        NodeInfo n;
        n.name = unique;
        n.func = unique;
        for (const Expr& a : only->args) {
          auto p = std::find_if(fn->params.begin(), fn->params.end(), [&](const graph::Var& v) { return v.get() == a.get(); });
          if (p == fn->params.end())
            LOOM_THROW(UnsupportedError) << graph::callDescription(*only) << ": an argument is not a group parameter";
          const auto& v = ent.at(call->args[size_t(p - fn->params.begin())].get());
          n.inputs.insert(n.inputs.end(), v.begin(), v.end());
        }
        ModelGroup g{unique, (*loop)(*only, unique), int(only->args.size()), 1, groupOps(fn)};
        g.prescheduled = true;
        plan.groups.push_back(std::move(g));
        for (const auto* t : outTypes) n.outputs.push_back(newEntry(*t, "result of " + unique));
        ent[e.get()] = n.outputs;
        nodes.push_back(std::move(n));
        continue;
      }
      std::vector<te::Tensor> placeholders;
      std::vector<te::Tensor> outs = groupTensors(fn, placeholders);
      // Outputs must be distinct computes: copy placeholders and repeated tensors.
      std::set<const te::TensorNode*> seen;
      for (te::Tensor& o : outs) {
        bool isPlaceholder = dynamic_cast<const te::PlaceholderOpNode*>(o->op.get()) != nullptr;
        if (isPlaceholder || seen.count(o.get())) {
          te::Tensor src = o;
          o = te::compute(
              src->shape,
              [&](const std::vector<tir::Var>& i) -> te::ComputeBody {
                return src(std::vector<tir::Expr>(i.begin(), i.end()));
              },
              "T_copy", "injective");
        }
        seen.insert(o.get());
      }
      std::vector<te::Tensor> args = placeholders;
      args.insert(args.end(), outs.begin(), outs.end());
      // A dynamic model's kernel takes the symbols its shapes use as trailing int32 scalars, so
      // a dim such as (H + 1)//2 has H bound even where no buffer has the dim H itself.
      std::vector<std::string> syms = groupSymbols(fn, e.type());
      // Groups that compute the same thing (printed the same apart from the name) share one kernel.
      std::string key = tir::printFunc(withSymbolParams(te::createPrimFunc(args, "kernel"), syms));
      auto same = kernelByText.find(key);
      std::string func = same != kernelByText.end() ? same->second : unique;
      if (same == kernelByText.end()) {
        kernelByText[key] = unique;
        groupIndex[unique] = plan.groups.size();
        ModelGroup g{unique, withSymbolParams(te::createPrimFunc(args, unique), syms), int(placeholders.size()), 1,
                     groupOps(fn)};
        g.symbols = syms;
        plan.groups.push_back(std::move(g));
      } else {
        ++plan.groups[groupIndex.at(func)].occurrences;
      }
      NodeInfo n;
      n.name = unique;
      n.func = func;
      n.symbols = syms;
      if (inPlaceConcat && !kernelsOnly) n.concatOffsets = concatSliceOffsets(fn, e.type());
      for (const Expr& a : call->args) {
        const auto& v = ent.at(a.get());
        n.inputs.insert(n.inputs.end(), v.begin(), v.end());
      }
      std::vector<const graph::TensorTypeNode*> ts;
      flattenTypes(e.type(), ts);
      for (const auto* t : ts) n.outputs.push_back(newEntry(*t, "result of " + unique));
      ent[e.get()] = n.outputs;
      nodes.push_back(std::move(n));
    } else if (auto* tup = e.as<graph::TupleNode>()) {
      std::vector<int> all;
      for (const Expr& f : tup->fields) {
        const auto& v = ent.at(f.get());
        all.insert(all.end(), v.begin(), v.end());
      }
      ent[e.get()] = all;
    } else if (auto* tg = e.as<graph::TupleGetItemNode>()) {
      const auto* tt = tg->tuple.type().as<graph::TupleTypeNode>();
      size_t start = 0;
      for (int k = 0; k < tg->index; ++k) {
        std::vector<const graph::TensorTypeNode*> f;
        flattenTypes(graph::Type(tt->fields[size_t(k)]), f);
        start += f.size();
      }
      std::vector<const graph::TensorTypeNode*> f;
      flattenTypes(graph::Type(tt->fields[size_t(tg->index)]), f);
      const auto& v = ent.at(tg->tuple.get());
      ent[e.get()] = std::vector<int>(v.begin() + long(start), v.begin() + long(start + f.size()));
    } else if (e.as<graph::FunctionNode>()) {
      ent[e.get()] = {};
    }
  }
  // Outputs: each a distinct entry produced by a node (copies of inputs, params, repeats).
  std::vector<int> outs = ent.at(main->body.get());
  std::set<int> used;
  for (size_t k = 0; k < outs.size(); ++k) {
    int& o = outs[k];
    if (fixed.count(o) || used.count(o)) {
      int c = int(entries.size());
      EntryInfo copy = entries[size_t(o)];  // same shape, dims and dtype; a storage of its own
      copy.storage = -1;
      entries.push_back(copy);
      nodes.push_back({"copy_output" + std::to_string(k), "__copy", {o}, {c}});
      o = c;
    }
    used.insert(o);
    fixed.insert(o);
    std::string name = k < options.outputNames.size() ? options.outputNames[k] : "output" + std::to_string(k);
    j["outputs"].push_back({{"name", name}, {"entry", o}});
    model.outputs.push_back({name, entries[size_t(o)].shape, entries[size_t(o)].dtype, dimTexts(entries[size_t(o)].dims)});
  }

  // Concatenations written in place: each input that one kernel node writes and only the
  // concatenation reads becomes a view of the result at its offset, and the node is dropped (its
  // kernel too when no other node calls it). The result's storage is taken when the first
  // producer runs and released after its last reader.
  std::map<int, std::pair<int, size_t>> sliceOf;  // entry -> (concat result entry, byte offset)
  {
    std::map<int, int> producer, readers;
    for (size_t k = 0; k < nodes.size(); ++k) {
      for (int e : nodes[k].outputs) producer[e] = int(k);
      for (int e : nodes[k].inputs) ++readers[e];
    }
    std::vector<NodeInfo> kept;
    for (size_t k = 0; k < nodes.size(); ++k) {
      const NodeInfo& n = nodes[k];
      bool inPlace = !n.concatOffsets.empty() && n.outputs.size() == 1 && n.concatOffsets.size() == n.inputs.size();
      for (size_t i = 0; inPlace && i < n.inputs.size(); ++i) {
        int e = n.inputs[i];
        auto p = producer.find(e);
        inPlace = !fixed.count(e) && readers[e] == 1 && p != producer.end() && nodes[size_t(p->second)].func != "__copy" &&
                  nodes[size_t(p->second)].concatOffsets.empty() && !entries[size_t(e)].symbolic();
      }
      if (!inPlace) {
        kept.push_back(n);
        continue;
      }
      for (size_t i = 0; i < n.inputs.size(); ++i) sliceOf[n.inputs[i]] = {n.outputs[0], n.concatOffsets[i]};
      auto g = std::find_if(plan.groups.begin(), plan.groups.end(), [&](const ModelGroup& x) { return x.name == n.func; });
      if (g != plan.groups.end() && --g->occurrences == 0) plan.groups.erase(g);
    }
    nodes = std::move(kept);
  }
  // A node whose shapes use a data-dependent symbol runs after the node that binds it, even
  // where no tensor connects them (arange(0, nonzero_0) reads no tensor of the nonzero).
  std::map<std::string, size_t> binder;
  for (size_t k = 0; k < nodes.size(); ++k)
    if (!nodes[k].extra.empty()) binder[nodes[k].extra.at("symbol").get<std::string>()] = k;
  if (!binder.empty()) {
    std::vector<std::set<size_t>> after(nodes.size());  // nodes that must run before node k
    std::map<int, size_t> producer;
    for (size_t k = 0; k < nodes.size(); ++k)
      for (int e : nodes[k].outputs) producer[e] = k;
    for (size_t k = 0; k < nodes.size(); ++k) {
      std::set<std::string> used(nodes[k].symbols.begin(), nodes[k].symbols.end());
      for (const auto* list : {&nodes[k].inputs, &nodes[k].outputs})
        for (int e : *list)
          for (const graph::Dim& d : entries[size_t(e)].dims)
            for (const std::string& sy : graph::dimSymbols(d)) used.insert(sy);
      for (const std::string& sy : used)
        if (auto b = binder.find(sy); b != binder.end() && b->second != k) after[k].insert(b->second);
      for (int e : nodes[k].inputs)
        if (auto p = producer.find(e); p != producer.end()) after[k].insert(p->second);
    }
    // Stable: each step takes the first node (in the original order) whose predecessors ran.
    std::vector<NodeInfo> ordered;
    std::vector<bool> done(nodes.size(), false);
    while (ordered.size() < nodes.size()) {
      size_t pick = nodes.size();
      for (size_t k = 0; k < nodes.size() && pick == nodes.size(); ++k)
        if (!done[k] && std::all_of(after[k].begin(), after[k].end(), [&](size_t q) { return done[q]; })) pick = k;
      LOOM_ICHECK(pick < nodes.size()) << "cyclic node order around data-dependent symbols";
      done[pick] = true;
      ordered.push_back(nodes[pick]);
    }
    nodes = std::move(ordered);
  }

  // Storage plan: fixed entries get their own storage; the others reuse freed storage by
  // liveness (an entry is live from the node that writes it to the last node that reads it).
  std::vector<size_t> storageBytes;
  for (int e : fixed) {
    entries[size_t(e)].storage = int(storageBytes.size());
    storageBytes.push_back(entries[size_t(e)].bytes());
  }
  std::vector<int> lastUse(entries.size(), -1);
  for (size_t k = 0; k < nodes.size(); ++k)
    for (int e : nodes[k].inputs) lastUse[size_t(e)] = int(k);
  std::vector<int> freeList;
  for (size_t k = 0; k < nodes.size(); ++k) {
    std::vector<int> outputs;
    for (int e : nodes[k].outputs) {
      if (auto sl = sliceOf.find(e); sl != sliceOf.end()) outputs.push_back(sl->second.first);
      outputs.push_back(e);
    }
    for (int e : outputs) {
      EntryInfo& en = entries[size_t(e)];
      if (en.storage >= 0) continue;
      if (auto sl = sliceOf.find(e); sl != sliceOf.end()) {
        en.storage = entries[size_t(sl->second.first)].storage;
        en.offset = entries[size_t(sl->second.first)].offset + sl->second.second;
        continue;
      }
      size_t need = en.bytes();
      // Best fit among free storage; else grow the largest free one; else a new one.
      int best = -1;
      for (size_t f = 0; f < freeList.size(); ++f) {
        size_t have = storageBytes[size_t(freeList[f])];
        if (have >= need && (best < 0 || have < storageBytes[size_t(freeList[size_t(best)])])) best = int(f);
      }
      if (best < 0 && !freeList.empty()) {
        best = 0;
        for (size_t f = 1; f < freeList.size(); ++f)
          if (storageBytes[size_t(freeList[f])] > storageBytes[size_t(freeList[size_t(best)])]) best = int(f);
      }
      if (best >= 0) {
        en.storage = freeList[size_t(best)];
        storageBytes[size_t(en.storage)] = std::max(storageBytes[size_t(en.storage)], need);
        freeList.erase(freeList.begin() + best);
      } else {
        en.storage = int(storageBytes.size());
        storageBytes.push_back(need);
      }
    }
    auto release = [&](int e) {
      if (fixed.count(e) || sliceOf.count(e)) return;
      int s = entries[size_t(e)].storage;
      if (std::find(freeList.begin(), freeList.end(), s) == freeList.end()) freeList.push_back(s);
    };
    for (int e : nodes[k].inputs)
      if (lastUse[size_t(e)] == int(k)) release(e);
    for (int e : nodes[k].outputs)
      if (lastUse[size_t(e)] < 0) release(e);
  }
  for (size_t b : storageBytes) j["storage"].push_back({{"bytes", b}});
  for (const EntryInfo& en : entries) {
    nlohmann::json e = {{"storage", en.storage}, {"shape", en.shape}, {"dtype", en.dtype.str()}};
    if (en.offset) e["offset"] = en.offset;
    if (en.symbolic()) {
      nlohmann::json sym = nlohmann::json::array();
      for (const graph::Dim& d : en.dims) {
        if (d.isStatic()) {
          sym.push_back(d.value);
          continue;
        }
        for (const std::string& sy : graph::dimSymbols(d))
          if (!symbolNames.count(sy) && !kernelsOnly)
            LOOM_THROW(TypeError) << "symbol '" << sy << "' (in " << graph::shapeStr(en.dims)
                                  << ") is not a dim of any input by itself, so its value is unknown at run time";
        sym.push_back(d.str());
      }
      e["sym_shape"] = sym;
    }
    j["entries"].push_back(e);
  }
  for (const NodeInfo& n : nodes) {
    nlohmann::json x = {{"name", n.name}, {"func", n.func}, {"inputs", n.inputs}, {"outputs", n.outputs}};
    if (!n.symbols.empty()) x["symbols"] = n.symbols;
    if (!n.extra.empty()) x.update(n.extra);
    j["nodes"].push_back(x);
  }
  model.graphJson = j.dump(1);
  return plan;
}

}  // namespace

std::vector<ModelGroup> extractGroups(const graph::Module& m, const std::map<std::string, runtime::NDArray>& params,
                                      const CompileModelOptions& options) {
  return planModel(m, params, options, true).groups;
}

CompiledModel compileModel(const graph::Module& input, const std::string& target,
                           const std::map<std::string, runtime::NDArray>& params, const CompileModelOptions& options) {
  // The NCHWc default of opt level 3 is made for the CPU schedule; GPU kernels keep NCHW.
  CompileModelOptions planOptions = options;
  if (planOptions.desiredLayout.empty() && isGPUTarget(target)) planOptions.desiredLayout = "NCHW";
  ModelPlan plan = planModel(input, params, planOptions, false, !isGPUTarget(target));
  CompiledModel model = std::move(plan.model);
  model.target = target;
  // Dim equalities the type relations assumed without proof become run-time checks.
  if (input.functions.count("main")) addShapeChecks(model, input);
  if (isGPUTarget(target)) {
    refuseDataDependentNodes(model.graphJson, target);
    return compileModelGPU(std::move(model), plan.groups, options);
  }
  const int total = int(plan.groups.size());
  // Kernels over a data-dependent count (which may be 0) get their reduction inits hoisted.
  std::set<std::string> dataSymbols = dataDependentSymbols(model.graphJson);
  for (int k = 0; k < total; ++k) {
    const ModelGroup& g = plan.groups[size_t(k)];
    if (options.progress) options.progress("lowering " + g.name, k, total);
    tir::PrimFunc pf = g.func;
    std::string source = "none";
    std::optional<GroupSchedule> given;
    if (options.optLevel >= 1 && options.scheduleFor && !g.prescheduled) given = options.scheduleFor(g);
    if (g.prescheduled) {
      source = "loop kernel";
    } else if (given) {
      pf = given->scheduled;
      source = given->source;
    } else if (options.optLevel >= 2) {
      pf = defaultSchedule(pf, true);
      source = "default";
    }
    if (std::any_of(g.symbols.begin(), g.symbols.end(), [&](const std::string& s) { return dataSymbols.count(s); }))
      pf = hoistReductionInits(pf);
    transform::PassContext ctx;
    // LOOM_TIME_PASSES=1: each kernel's lowering passes timed, on stderr (where a compile's time
    // goes; docs/dynamic-shapes.md, "Compile time").
    static const bool timePasses = std::getenv("LOOM_TIME_PASSES") && std::string(std::getenv("LOOM_TIME_PASSES")) != "0";
    auto tp = std::make_shared<transform::TimePasses>();
    if (timePasses) ctx.instruments.push_back(tp);
    transform::LowerOptions lo;
    lo.packedEntry = true;
    model.scheduledKernels.push_back(pf);
    model.kernels.push_back(transform::lower(pf, ctx, lo));
    if (timePasses) std::fprintf(stderr, "lowering passes of %s:\n%s\n", g.name.c_str(), tp->report().c_str());
    model.scheduleSources.push_back(source);
  }
  if (options.progress) options.progress("lowered", total, total);
  return model;
}

std::unique_ptr<runtime::GraphExecutor> createExecutor(const CompiledModel& model) {
  if (isGPUTarget(model.target)) return createGPUExecutor(model);
  runtime::Module mod;
  if (!model.kernels.empty()) {
    auto jit = std::make_shared<codegen::JITModule>(buildModelKernels(model));
    mod = jit->asModule();
  }
  auto ex = std::make_unique<runtime::GraphExecutor>(model.graphJson, mod);
  ex->setParams(model.params);
  return ex;
}

std::string packageMetadata(const CompiledModel& model) {
  auto infos = [](const std::vector<TensorInfo>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const TensorInfo& t : v) {
      nlohmann::json x = {{"name", t.name}, {"shape", t.shape}, {"dtype", t.dtype.str()}};
      if (!t.dims.empty()) x["dims"] = t.dims;
      a.push_back(x);
    }
    return a;
  };
  nlohmann::json j;
  j["format_version"] = runtime::kPackageFormatVersion;
  j["loom_version"] = LOOM_VERSION;
  j["target"] = canonicalTarget(model.target);
  j["opt_level"] = model.optLevel;
  j["inputs"] = infos(model.inputs);
  j["outputs"] = infos(model.outputs);
  j["layout"] = model.layout;
  j["kernels"] = model.kernels.size();
  nlohmann::json sched = nlohmann::json::object();
  for (size_t k = 0; k < model.kernels.size() && k < model.scheduleSources.size(); ++k)
    sched[model.kernels[k]->name] = model.scheduleSources[k];
  j["schedules"] = sched;
  j["tuning_records"] = model.tuningRecords;
  return j.dump(2);
}

void writePackage(const CompiledModel& model, const std::string& path) { exportPackage(model, path); }

}  // namespace loom::driver
