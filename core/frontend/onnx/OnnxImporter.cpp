// The ONNX importer: file loading, checks, tensors, graph inputs/outputs and the node loop.
#include "core/frontend/onnx/OnnxImporter.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <onnx/checker.h>

#include "core/frontend/onnx/OnnxContext.h"
#include "core/graph/ShapeValues.h"
#include "core/graph/SymDim.h"
#include "core/tir/Op.h"
#include "core/graph/Op.h"
#include "core/graph/pass/FoldConstant.h"
#include "core/graph/pass/InferType.h"

namespace loom::frontend {

using namespace graph;

namespace onnxi {

void Context::fail(const std::string& message) const {
  std::string where = m_file + ": ";
  if (node)
    where += "node '" + node->name() + "' (" + node->op_type() + ", opset " +
             std::to_string(m_opset) + "): ";
  throw ImportError(where + message);
}

bool Context::hasInput(int i) const {
  return i < node->input_size() && !node->input(i).empty();
}

Expr Context::input(int i) const {
  if (!hasInput(i)) fail("missing input " + std::to_string(i));
  auto it = m_values.find(node->input(i));
  if (it == m_values.end())
    fail("input '" + node->input(i) + "' is not produced by any earlier node");
  return it->second;
}

runtime::NDArray Context::constInput(int i) const {
  Expr e = input(i);
  if (auto* c = e.as<ConstantNode>()) return c->data;
  Expr folded;
  try {
    folded = foldConstant(e);
  } catch (const Error& err) {
    fail(std::string("cannot evaluate input '") + node->input(i) + "': " + err.what());
  }
  if (auto* c = folded.as<ConstantNode>()) return c->data;
  // A shape computation over symbolic dims can still have constant values (the head size of
  // an attention whose sequence length is symbolic).
  if (auto v = shapeValues(e)) {
    std::vector<int64_t> ints;
    for (const tir::Expr& x : *v)
      if (const int64_t* k = tir::asConstInt(x)) ints.push_back(*k);
    const TensorTypeNode& t = tensorType(e);
    if (ints.size() == v->size()) {
      std::vector<int64_t> shape;
      if (t.ndim() == 1) shape.push_back(int64_t(ints.size()));
      runtime::NDArray a = runtime::NDArray::empty(shape, toDType(t.dtype));
      for (size_t k = 0; k < ints.size(); ++k) {
        if (t.dtype == DataType::Int(64)) a.as<int64_t>()[k] = ints[k];
        else if (t.dtype == DataType::Int(32)) a.as<int32_t>()[k] = int32_t(ints[k]);
        else if (t.dtype == DataType::Float(32)) a.as<float>()[k] = float(ints[k]);
        else if (t.dtype == DataType::Float(64)) a.as<double>()[k] = double(ints[k]);
        else fail("input " + std::to_string(i) + " has unsupported element type " + t.dtype.str());
      }
      return a;
    }
  }
  fail("input " + std::to_string(i) + " ('" + node->input(i) +
       "') must be a constant, but it depends on graph inputs and is not a computation on "
       "shapes; give static input shapes (--input-shapes) so that it folds");
}

graph::Shape Context::dims(const Expr& e) const {
  const TensorTypeNode& t = tensorType(e);
  for (size_t k = 0; k < t.ndim(); ++k)
    if (!t.shape[k].isStatic() && t.shape[k].name.empty())
      fail("dimension " + std::to_string(k) + " of " + shapeStr(t.shape) +
           " is unknown; name it or give static input shapes (--input-shapes)");
  return t.shape;
}

std::vector<tir::Expr> Context::shapeInput(int i) const {
  Expr e = input(i);
  if (auto v = shapeValues(e)) return *v;
  std::vector<tir::Expr> out;
  for (int64_t k : constInts(i)) out.push_back(tir::intImm(DataType::Int(64), k));
  return out;
}

std::vector<int64_t> Context::constInts(int i) const {
  runtime::NDArray a = constInput(i);
  DataType t = toDataType(a.dtype());
  std::vector<int64_t> out(size_t(a.numel()));
  for (size_t k = 0; k < out.size(); ++k) {
    if (t == DataType::Int(64))
      out[k] = a.as<int64_t>()[k];
    else if (t == DataType::Int(32))
      out[k] = a.as<int32_t>()[k];
    else if (t == DataType::Float(32))
      out[k] = int64_t(a.as<float>()[k]);
    else if (t.isBool() || t == DataType::UInt(8))
      out[k] = a.as<uint8_t>()[k];
    else
      fail("input " + std::to_string(i) + " must hold integers, got " + t.str());
  }
  return out;
}

std::vector<double> Context::constFloats(int i) const {
  runtime::NDArray a = constInput(i);
  DataType t = toDataType(a.dtype());
  std::vector<double> out(size_t(a.numel()));
  for (size_t k = 0; k < out.size(); ++k) {
    if (t == DataType::Float(32))
      out[k] = a.as<float>()[k];
    else if (t == DataType::Float(64))
      out[k] = a.as<double>()[k];
    else if (t == DataType::Int(64))
      out[k] = double(a.as<int64_t>()[k]);
    else if (t == DataType::Int(32))
      out[k] = a.as<int32_t>()[k];
    else if (t == DataType::Int(8))
      out[k] = a.as<int8_t>()[k];
    else if (t == DataType::UInt(8))
      out[k] = a.as<uint8_t>()[k];
    else
      fail("input " + std::to_string(i) + " must hold numbers, got " + t.str());
  }
  return out;
}

const onnx::AttributeProto* Context::attr(const std::string& name) const {
  for (const auto& a : node->attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t Context::attrInt(const std::string& name, int64_t def) const {
  const auto* a = attr(name);
  return a ? a->i() : def;
}
double Context::attrFloat(const std::string& name, double def) const {
  const auto* a = attr(name);
  return a ? a->f() : def;
}
std::string Context::attrString(const std::string& name, const std::string& def) const {
  const auto* a = attr(name);
  return a ? a->s() : def;
}
std::vector<int64_t> Context::attrInts(const std::string& name, std::vector<int64_t> def) const {
  const auto* a = attr(name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : def;
}
std::vector<double> Context::attrFloats(const std::string& name, std::vector<double> def) const {
  const auto* a = attr(name);
  return a ? std::vector<double>(a->floats().begin(), a->floats().end()) : def;
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

std::vector<int64_t> Context::staticShape(const Expr& e) const {
  const TensorTypeNode& t = tensorType(e);
  if (!t.isStatic())
    fail("needs a static input shape, got " + shapeStr(t.shape) +
         "; give static input shapes (--input-shapes)");
  return t.staticShape();
}

Expr Context::call(const std::string& op, std::vector<Expr> args, Attrs attrs) const {
  Expr e;
  try {
    e = makeCall(op, std::move(args), std::move(attrs), node ? node->name() : std::string());
    inferType(e);
  } catch (const TypeError& err) {
    fail(err.what());
  }
  return e;
}

std::string converterKey(const onnx::NodeProto& n) {
  bool defaultDomain = n.domain().empty() || n.domain() == "ai.onnx";
  return defaultDomain ? n.op_type() : n.domain() + "." + n.op_type();
}

DataType dtypeFromOnnx(int code, bool* ok) {
  *ok = true;
  switch (code) {
  case onnx::TensorProto::FLOAT:
    return DataType::Float(32);
  case onnx::TensorProto::DOUBLE:
    return DataType::Float(64);
  case onnx::TensorProto::INT64:
    return DataType::Int(64);
  case onnx::TensorProto::INT32:
    return DataType::Int(32);
  case onnx::TensorProto::INT16:
    return DataType::Int(16);
  case onnx::TensorProto::INT8:
    return DataType::Int(8);
  case onnx::TensorProto::UINT8:
    return DataType::UInt(8);
  case onnx::TensorProto::UINT16:
    return DataType::UInt(16);
  case onnx::TensorProto::UINT32:
    return DataType::UInt(32);
  case onnx::TensorProto::UINT64:
    return DataType::UInt(64);
  case onnx::TensorProto::BOOL:
    return DataType::Bool();
  case onnx::TensorProto::FLOAT16:
    return DataType::Float(16);
  case onnx::TensorProto::BFLOAT16:
    return DataType::BFloat16();
  default:
    *ok = false;
    return DataType::Float(32);
  }
}

namespace {
const char* onnxTypeName(int code) {
  return onnx::TensorProto::DataType_IsValid(code)
             ? onnx::TensorProto::DataType_Name(onnx::TensorProto::DataType(code)).c_str()
             : "?";
}

template <class T, class Field> void copyField(runtime::NDArray& a, const Field& f) {
  T* p = a.as<T>();
  for (int i = 0; i < f.size() && i < a.numel(); ++i)
    p[i] = T(f.Get(i));
}
} // namespace

runtime::NDArray tensorFromProto(const onnx::TensorProto& t, const std::string& what) {
  bool ok = false;
  DataType dt = dtypeFromOnnx(t.data_type(), &ok);
  if (!ok)
    throw ImportError(what + ": tensor element type " + onnxTypeName(t.data_type()) +
                      " is not supported");
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    throw ImportError(what + ": tensors with external data are not supported");
  std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape)
    if (d < 0) throw ImportError(what + ": negative dimension in tensor");
  // Check the element count against the data actually present before allocating anything.
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d > 0 && count > (int64_t(1) << 40) / d) throw ImportError(what + ": tensor is too large");
    count *= d;
  }
  int64_t have = t.has_raw_data()
                     ? int64_t(t.raw_data().size()) / std::max<int64_t>(dt.bytes(), 1)
                     : std::max({int64_t(t.float_data_size()), int64_t(t.double_data_size()),
                                 int64_t(t.int64_data_size()), int64_t(t.uint64_data_size()),
                                 int64_t(t.int32_data_size())});
  if (have < count)
    throw ImportError(what + ": tensor of shape with " + std::to_string(count) +
                      " elements holds only " + std::to_string(have) + " values");
  runtime::NDArray a = runtime::NDArray::empty(shape, toDType(dt));
  if (t.has_raw_data()) {
    if (t.raw_data().size() != a.byteSize())
      throw ImportError(what + ": raw data holds " + std::to_string(t.raw_data().size()) +
                        " bytes, expected " + std::to_string(a.byteSize()));
    if (a.byteSize()) std::memcpy(a.data(), t.raw_data().data(), a.byteSize());
    return a;
  }
  int64_t n = a.numel();
  auto need = [&](int have) {
    if (have != n && !(have == 1 && n == 1))
      throw ImportError(what + ": tensor holds " + std::to_string(have) + " values, expected " +
                        std::to_string(n));
  };
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT:
    need(t.float_data_size());
    copyField<float>(a, t.float_data());
    break;
  case onnx::TensorProto::DOUBLE:
    need(t.double_data_size());
    copyField<double>(a, t.double_data());
    break;
  case onnx::TensorProto::INT64:
    need(t.int64_data_size());
    copyField<int64_t>(a, t.int64_data());
    break;
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    need(t.uint64_data_size());
    if (t.data_type() == onnx::TensorProto::UINT32)
      copyField<uint32_t>(a, t.uint64_data());
    else
      copyField<uint64_t>(a, t.uint64_data());
    break;
  case onnx::TensorProto::INT32:
    need(t.int32_data_size());
    copyField<int32_t>(a, t.int32_data());
    break;
  case onnx::TensorProto::INT16:
    need(t.int32_data_size());
    copyField<int16_t>(a, t.int32_data());
    break;
  case onnx::TensorProto::INT8:
    need(t.int32_data_size());
    copyField<int8_t>(a, t.int32_data());
    break;
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16: // the bit patterns, one per int32 entry
    need(t.int32_data_size());
    copyField<uint16_t>(a, t.int32_data());
    break;
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
    need(t.int32_data_size());
    copyField<uint8_t>(a, t.int32_data());
    break;
  default:
    break;
  }
  return a;
}

} // namespace onnxi

namespace {

using onnxi::Context;

int defaultOpset(const onnx::ModelProto& model) {
  int opset = -1;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = int(o.version());
  return opset;
}

Type inputType(const onnx::ValueInfoProto& vi, const ImportOptions& options,
               const std::string& file) {
  const std::string& name = vi.name();
  if (!vi.type().has_tensor_type())
    throw ImportError(file + ": graph input '" + name +
                      "' is not a tensor (sequences and maps are not supported)");
  const auto& tt = vi.type().tensor_type();
  bool ok = false;
  DataType dt = onnxi::dtypeFromOnnx(tt.elem_type(), &ok);
  if (!ok) throw ImportError(file + ": graph input '" + name + "' has unsupported element type");
  auto it = options.inputShapes.find(name);
  if (it != options.inputShapes.end()) {
    if (tt.has_shape() && tt.shape().dim_size() != int(it->second.size()))
      throw ImportError(file + ": --input-shapes gives '" + name + "' rank " +
                        std::to_string(it->second.size()) + " but the model declares rank " +
                        std::to_string(tt.shape().dim_size()));
    for (int i = 0; tt.has_shape() && i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      if (d.has_dim_value() && d.dim_value() != it->second[i])
        throw ImportError(file + ": --input-shapes gives '" + name + "' dimension " +
                          std::to_string(i) + " = " + std::to_string(it->second[i]) +
                          " but the model fixes it to " + std::to_string(d.dim_value()));
    }
    return graph::tensorType(it->second, dt);
  }
  if (!tt.has_shape())
    throw ImportError(file + ": graph input '" + name +
                      "' has no shape; give one with --input-shapes");
  Shape s;
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value())
      s.push_back(Dim(d.dim_value()));
    else if (d.has_dim_param() && !d.dim_param().empty())
      s.push_back(Dim::symbol(d.dim_param()));
    else
      s.push_back(Dim::any());
  }
  return graph::tensorType(s, dt);
}

graph::Module convertModel(const onnx::ModelProto& model, const std::string& file,
                           const ImportOptions& options);

/// Runs onnx::checker (when asked) and the conversion. A checker complaint alone does not stop
/// the import (exporters often omit optional-in-practice fields such as output shapes); when the
/// conversion fails too, the checker's finding is reported first, as the likely cause.
graph::Module importModel(const onnx::ModelProto& model, const std::string& file,
                          const ImportOptions& options) {
  std::string invalid;
  if (options.check) {
    try {
      onnx::checker::check_model(model);
    } catch (const std::exception& e) {
      invalid = e.what();
    }
  }
  if (invalid.empty()) return convertModel(model, file, options);
  try {
    return convertModel(model, file, options);
  } catch (const Error& e) {
    throw ImportError(file + ": not a valid ONNX model: " + invalid + "\n" + e.what());
  }
}

graph::Module convertModel(const onnx::ModelProto& model, const std::string& file,
                           const ImportOptions& options) {
  int opset = defaultOpset(model);
  if (opset < 0) throw ImportError(file + ": the model imports no default-domain opset");
  // Below opset 6 only models whose ops kept their meaning since version 1 (ops whose first
  // versions had different attributes or broadcasting are refused with the range).
  static const std::set<std::string> sameSinceOpset1{"Not", "Softplus", "Softsign", "GlobalAveragePool",
                                                     "GlobalMaxPool", "Identity", "Transpose"};
  bool oldButSame = opset >= 1 && opset < kMinOpset &&
                    std::all_of(model.graph().node().begin(), model.graph().node().end(),
                                [](const onnx::NodeProto& n) { return sameSinceOpset1.count(n.op_type()) > 0; });
  if ((opset < kMinOpset && !oldButSame) || opset > kMaxOpset)
    throw ImportError(file + ": opset " + std::to_string(opset) +
                      " is outside the supported range " + std::to_string(kMinOpset) + "-" +
                      std::to_string(kMaxOpset));
  const onnx::GraphProto& g = model.graph();

  // Unsupported ops: one error that lists them all.
  const auto& table = onnxi::converters();
  std::vector<std::string> unsupported;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    std::string op = onnxi::converterKey(n);
    if (table.count(op)) continue;
    std::string name = n.name().empty() ? "#" + std::to_string(i) : n.name();
    unsupported.push_back("  " + op + " (node '" + name + "', opset " + std::to_string(opset) +
                          ")");
  }
  if (!unsupported.empty()) {
    std::string msg = file + ": " + std::to_string(unsupported.size()) + " unsupported op(s):";
    for (const auto& u : unsupported)
      msg += "\n" + u;
    throw ImportError(msg);
  }

  Context ctx(file, opset);
  auto& values = ctx.values();
  std::set<std::string> initNames;
  for (const auto& init : g.initializer()) {
    values[init.name()] = makeConstant(
        onnxi::tensorFromProto(init, file + ": initializer '" + init.name() + "'"), init.name());
    initNames.insert(init.name());
  }
  std::vector<Var> params;
  for (const auto& in : g.input()) {
    if (initNames.count(in.name())) continue;
    if (auto it = options.constantInputs.find(in.name()); it != options.constantInputs.end()) {
      values[in.name()] = makeConstant(it->second, in.name());
      continue;
    }
    Var v = makeVar(in.name(), inputType(in, options, file));
    params.push_back(v);
    values[in.name()] = v;
  }
  for (const auto& [name, shape] : options.inputShapes) {
    bool found = false;
    for (const Var& p : params)
      found |= p->name == name;
    if (!found)
      throw ImportError(file + ": --input-shapes names '" + name + "', which is not a graph input");
  }
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    ctx.node = &n;
    std::vector<Expr> outs;
    try {
      outs = table.at(onnxi::converterKey(n))(ctx);
    } catch (const ImportError&) {
      throw;
    } catch (const Error& e) {
      ctx.fail(e.what());
    }
    for (int k = 0; k < n.output_size() && k < int(outs.size()); ++k)
      if (!n.output(k).empty()) values[n.output(k)] = outs[k];
  }
  ctx.node = nullptr;
  std::vector<Expr> results;
  for (const auto& out : g.output()) {
    auto it = values.find(out.name());
    if (it == values.end())
      throw ImportError(file + ": graph output '" + out.name() + "' is never produced");
    results.push_back(it->second);
  }
  if (results.empty()) throw ImportError(file + ": the graph has no outputs");
  Expr body = results.size() == 1 ? results[0] : Expr(makeTuple(results));
  graph::Module m;
  m.functions["main"] = makeFunction(params, body);
  try {
    inferType(Expr(m.main()));
  } catch (const Error& e) {
    throw ImportError(file + ": " + e.what());
  }
  return m;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ImportError(path + ": cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

graph::Module importOnnxBytes(const std::string& bytes, const std::string& name,
                              const ImportOptions& options) {
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromString(bytes))
    throw ImportError(name + ": not an ONNX model (protobuf parse failed)");
  if (!model.has_graph()) throw ImportError(name + ": not an ONNX model (no graph)");
  return importModel(model, name, options);
}

graph::Module importOnnx(const std::string& path, const ImportOptions& options) {
  return importOnnxBytes(readFile(path), path, options);
}

runtime::NDArray loadTensorProto(const std::string& path) {
  onnx::TensorProto t;
  std::string bytes = readFile(path);
  if (!t.ParseFromString(bytes)) throw ImportError(path + ": not a serialized ONNX TensorProto");
  return onnxi::tensorFromProto(t, path);
}

std::vector<std::string> supportedOnnxOps() {
  std::vector<std::string> out;
  for (const auto& [name, c] : onnxi::converters())
    out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

std::map<std::string, std::vector<int64_t>> parseInputShapes(const std::string& spec) {
  std::map<std::string, std::vector<int64_t>> out;
  size_t i = 0;
  auto bad = [&](const std::string& why) -> void {
    LOOM_THROW(ValueError) << "--input-shapes \"" << spec << "\": " << why << " at offset " << i
                           << " (expected NAME:[D,D,...],NAME:[...])";
  };
  auto skipSpace = [&] {
    while (i < spec.size() && spec[i] == ' ')
      ++i;
  };
  while (true) {
    skipSpace();
    size_t colon = spec.find(":[", i);
    if (colon == std::string::npos || colon == i) bad("missing NAME:[");
    std::string name = spec.substr(i, colon - i);
    i = colon + 2;
    std::vector<int64_t> dims;
    skipSpace();
    if (i < spec.size() && spec[i] == ']')
      ++i;
    else
      while (true) {
        skipSpace();
        size_t start = i;
        while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i])))
          ++i;
        if (start == i) bad("expected a dimension");
        dims.push_back(std::stoll(spec.substr(start, i - start)));
        skipSpace();
        if (i < spec.size() && spec[i] == ',') {
          ++i;
          continue;
        }
        if (i < spec.size() && spec[i] == ']') {
          ++i;
          break;
        }
        bad("expected ',' or ']'");
      }
    if (out.count(name)) bad("input '" + name + "' given twice");
    out[name] = dims;
    skipSpace();
    if (i == spec.size()) break;
    if (spec[i] != ',') bad("expected ','");
    ++i;
  }
  return out;
}

} // namespace loom::frontend
