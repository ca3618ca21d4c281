// The graph executor: parses the plan, allocates storage, binds tensor views, calls kernels.
#include "runtime/GraphExecutor.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstring>
#include <nlohmann/json.hpp>

#include "runtime/DataDependentNode.h"
#include "runtime/DeviceAPI.h"
#include "runtime/PackedFunc.h"
#include "runtime/RuntimeFailure.h"

namespace loom::runtime {

size_t GraphExecutor::Entry::bytes() const {
  size_t n = dtype.bytes();
  for (int64_t d : shape) n *= size_t(d);
  return n;
}

GraphExecutor::GraphExecutor(const std::string& graphJson, Module kernels, Device dev)
    : m_kernels(std::move(kernels)), m_dev(dev) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(graphJson);
    if (dev.type != DeviceType::CPU)
      for (const auto& x : j.at("nodes"))
        if (x.value("func", "") == "__datadep")
          throw RuntimeFailure("node '" + x.value("name", "") + "' (" + x.value("op", "") +
                               ") has a data-dependent output shape; such nodes run on the CPU only, not on this device");
    for (const auto& s : j.at("storage")) {
      int64_t bytes = std::max<int64_t>(s.at("bytes").get<int64_t>(), 1);
      m_storage.push_back(Block::allocate(size_t(bytes), dev));
    }
    for (const auto& e : j.at("entries")) {
      Entry en;
      en.storage = e.at("storage").get<int>();
      en.shape = e.at("shape").get<std::vector<int64_t>>();
      if (e.contains("sym_shape")) {
        for (const auto& d : e.at("sym_shape"))
          en.sym.push_back(d.is_number_integer() ? ShapeExpr::constant(d.get<int64_t>()) : ShapeExpr(d.get<std::string>()));
        if (en.sym.size() != en.shape.size())
          throw RuntimeFailure("graph: entry " + std::to_string(m_entries.size()) + " has sym_shape of another rank");
      }
      if (!DType::parse(e.at("dtype").get<std::string>(), &en.dtype))
        throw RuntimeFailure("graph: unknown dtype '" + e.at("dtype").get<std::string>() + "'");
      if (en.storage < 0 || size_t(en.storage) >= m_storage.size())
        throw RuntimeFailure("graph: entry refers to storage " + std::to_string(en.storage) + " of " +
                             std::to_string(m_storage.size()));
      // A slice of a concatenation written in place: a view at a byte offset of its storage
      // (the kernels add the tensor's byte_offset to its data pointer).
      const int64_t offset = e.contains("offset") ? e.at("offset").get<int64_t>() : 0;
      if (offset < 0 || (offset && (!en.sym.empty() || dev.type != DeviceType::CPU)))
        throw RuntimeFailure("graph: entry " + std::to_string(m_entries.size()) + " has a bad offset");
      en.view.byte_offset = uint64_t(offset);
      if (en.sym.empty() && en.bytes() + size_t(offset) > m_storage[size_t(en.storage)].byteSize())
        throw RuntimeFailure("graph: entry " + std::to_string(m_entries.size()) + " does not fit its storage");
      m_entries.push_back(std::move(en));
    }
    auto named = [&](const char* key, std::vector<Named>& out) {
      for (const auto& x : j.at(key)) {
        int e = x.at("entry").get<int>();
        if (e < 0 || size_t(e) >= m_entries.size()) throw RuntimeFailure(std::string("graph: bad entry in ") + key);
        out.push_back({x.at("name").get<std::string>(), e});
      }
    };
    named("inputs", m_inputs);
    if (j.contains("symbols"))
      for (const auto& x : j.at("symbols")) {
        Symbol sy{x.at("name").get<std::string>(), x.at("input").get<int>(), x.at("axis").get<int>(),
                  x.value("bound", int64_t(-1))};
        if (sy.input < 0 || size_t(sy.input) >= m_inputs.size())
          throw RuntimeFailure("graph: symbol '" + sy.name + "' refers to a bad input");
        m_symbols.push_back(std::move(sy));
      }
    m_inputShapesSet.resize(m_inputs.size());
    if (j.contains("shape_checks"))
      for (const auto& x : j.at("shape_checks"))
        m_checks.push_back({ShapeExpr(x.at("lhs").get<std::string>()), ShapeExpr(x.at("rhs").get<std::string>()),
                            x.at("what").get<std::string>()});
    named("params", m_params);
    named("outputs", m_outputs);
    for (const auto& x : j.at("nodes")) {
      Node n;
      n.name = x.at("name").get<std::string>();
      n.func = x.at("func").get<std::string>();
      n.inputs = x.at("inputs").get<std::vector<int>>();
      n.outputs = x.at("outputs").get<std::vector<int>>();
      if (x.contains("symbols")) n.symbols = x.at("symbols").get<std::vector<std::string>>();
      for (int e : n.inputs)
        if (e < 0 || size_t(e) >= m_entries.size()) throw RuntimeFailure("graph: node '" + n.name + "' reads a bad entry");
      for (int e : n.outputs)
        if (e < 0 || size_t(e) >= m_entries.size()) throw RuntimeFailure("graph: node '" + n.name + "' writes a bad entry");
      if (n.func == "__datadep") n.dd = parseDataDependentNode(x, n.name);
      else if (n.func != "__copy") n.fn = m_kernels.getFunction(n.func);
      else if (n.inputs.size() != 1 || n.outputs.size() != 1)
        throw RuntimeFailure("graph: copy node '" + n.name + "' needs one input and one output");
      m_nodes.push_back(std::move(n));
    }
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeFailure(std::string("graph JSON: ") + e.what());
  }
  for (Node& n : m_nodes)
    if (n.dd) linkDataDependent(n);
  for (Entry& e : m_entries) {
    e.view.data = m_storage[size_t(e.storage)].data();
    e.view.device = LoomDevice{int32_t(dev.type), dev.id};
    e.view.ndim = int32_t(e.shape.size());
    e.view.dtype = LoomDataType{e.dtype.code, e.dtype.bits, e.dtype.lanes};
    e.view.shape = e.shape.data();
    e.view.strides = nullptr;
  }
}

std::vector<int64_t> GraphExecutor::inputShape(size_t i) const { return entry(m_inputs.at(i).entry).shape; }
DType GraphExecutor::inputDType(size_t i) const { return entry(m_inputs.at(i).entry).dtype; }
std::vector<int64_t> GraphExecutor::outputShape(size_t i) const { return entry(m_outputs.at(i).entry).shape; }
DType GraphExecutor::outputDType(size_t i) const { return entry(m_outputs.at(i).entry).dtype; }

namespace {
size_t findNamed(const auto& list, const std::string& name, const char* what) {
  std::string names;
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].name == name) return i;
    names += (i ? ", " : "") + list[i].name;
  }
  throw RuntimeFailure(std::string("no ") + what + " named '" + name + "' (the model has: " + names + ")");
}
std::string shapeText(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}
}  // namespace

size_t GraphExecutor::inputIndex(const std::string& name) const { return findNamed(m_inputs, name, "input"); }
size_t GraphExecutor::outputIndex(const std::string& name) const { return findNamed(m_outputs, name, "output"); }

void GraphExecutor::setInput(size_t i, const NDArray& value) {
  if (i >= m_inputs.size())
    throw RuntimeFailure("input index " + std::to_string(i) + " out of range (" + std::to_string(m_inputs.size()) + " inputs)");
  Entry& e = m_entries.at(size_t(m_inputs[i].entry));
  if (e.sym.empty()) {
    if (value.shape() != e.shape || !(value.dtype() == e.dtype))
      throw RuntimeFailure("input '" + m_inputs[i].name + "' expects " + e.dtype.str() + shapeText(e.shape) + ", got " +
                           value.dtype().str() + shapeText(value.shape()));
    if (e.bytes()) copyIn(value, e);
    return;
  }
  // Symbolic dims: the value's extents bind the symbols this input carries; the other dims
  // must equal what the symbols give.
  auto expects = [&] {
    std::string t = "[";
    for (size_t k = 0; k < e.sym.size(); ++k) t += (k ? ", " : "") + e.sym[k].text();
    return e.dtype.str() + t + "]";
  };
  if (value.shape().size() != e.sym.size() || !(value.dtype() == e.dtype))
    throw RuntimeFailure("input '" + m_inputs[i].name + "' expects " + expects() + ", got " + value.dtype().str() +
                         shapeText(value.shape()));
  // The symbols this input gives, checked against their bounds; then the dims that use only
  // those (a dim that uses another input's symbol is checked by run(), whatever the order the
  // inputs are set in).
  std::map<std::string, int64_t> own;
  for (const Symbol& sy : m_symbols)
    if (size_t(sy.input) == i) {
      int64_t v = value.shape()[size_t(sy.axis)];
      if (v < 1)
        throw RuntimeFailure("input '" + m_inputs[i].name + "': dimension " + std::to_string(sy.axis) + " (" + sy.name +
                             ") must be at least 1, got " + std::to_string(v));
      if (sy.bound >= 0 && v > sy.bound)
        throw RuntimeFailure("input '" + m_inputs[i].name + "': dimension " + std::to_string(sy.axis) + " (" + sy.name +
                             ") is " + std::to_string(v) + ", above its bound " + sy.name + " <= " +
                             std::to_string(sy.bound) + " (the model was compiled for " + sy.name + " up to " +
                             std::to_string(sy.bound) + "); got " + value.dtype().str() + shapeText(value.shape()));
      own[sy.name] = v;
    }
  for (size_t k = 0; k < e.sym.size(); ++k) {
    std::vector<std::string> used = e.sym[k].symbols();
    if (!std::all_of(used.begin(), used.end(), [&](const std::string& s) { return own.count(s) > 0; })) continue;
    int64_t want = e.sym[k].eval(own);
    if (want != value.shape()[k])
      throw RuntimeFailure("input '" + m_inputs[i].name + "' expects " + expects() + ": dimension " + std::to_string(k) +
                           " (" + e.sym[k].text() + ") must be " + std::to_string(want) + " here, got " +
                           value.dtype().str() + shapeText(value.shape()));
  }
  for (const auto& [name, v] : own) m_symbolValues[name] = v;
  e.shape = value.shape();
  e.view.shape = e.shape.data();
  Block& st = m_storage[size_t(e.storage)];
  if (st.byteSize() < e.bytes()) {
    st = Block::allocate(e.bytes(), m_dev);
    ++m_storageGrowths;
  }
  e.view.data = st.data();
  m_inputShapesSet[i] = value.shape();
  m_shapesDirty = true;
  if (e.bytes()) copyIn(value, e);
}

void GraphExecutor::bindShapes() {
  std::vector<std::string> missing;
  for (const Symbol& sy : m_symbols)
    if (!m_symbolValues.count(sy.name)) missing.push_back(sy.name + " (input '" + m_inputs[size_t(sy.input)].name + "')");
  if (!missing.empty()) {
    std::string m;
    for (const auto& x : missing) m += (m.empty() ? "" : ", ") + x;
    throw RuntimeFailure("the inputs that give symbols " + m + " are not set");
  }
  for (size_t i = 0; i < m_inputs.size(); ++i) {
    const Entry& e = entry(m_inputs[i].entry);
    if (!e.sym.empty() && m_inputShapesSet[i].empty())
      throw RuntimeFailure("input '" + m_inputs[i].name + "' is not set");
  }
  for (size_t i = 0; i < m_inputs.size(); ++i) checkInputDims(i);
  for (const ShapeCheck& c : m_checks) {
    int64_t a = c.lhs.eval(m_symbolValues), b = c.rhs.eval(m_symbolValues);
    if (a != b)
      throw RuntimeFailure(c.what + ": " + c.lhs.text() + " = " + std::to_string(a) + " but " + c.rhs.text() + " = " +
                           std::to_string(b) + " for these inputs (" + symbolOrigins(c.lhs) +
                           (c.rhs.isConstant() ? "" : "; " + symbolOrigins(c.rhs)) +
                           "); the compiled model needs them equal");
  }
  bindDataSymbolBounds();
  std::vector<size_t> need(m_storage.size(), 0);
  for (Entry& e : m_entries) {
    if (!e.sym.empty())
      for (size_t k = 0; k < e.sym.size(); ++k) {
        e.shape[k] = e.sym[k].eval(m_symbolValues);
        if (e.shape[k] < 0)
          throw RuntimeFailure("dimension " + e.sym[k].text() + " is " + std::to_string(e.shape[k]) +
                               " for these inputs (a kernel does not fit the data)");
      }
    need[size_t(e.storage)] = std::max(need[size_t(e.storage)], e.bytes());
  }
  for (size_t s = 0; s < m_storage.size(); ++s)
    if (m_storage[s].byteSize() < need[s]) {
      m_storage[s] = Block::allocate(need[s], m_dev);
      ++m_storageGrowths;
    }
  for (Entry& e : m_entries) {
    e.view.data = m_storage[size_t(e.storage)].data();
    e.view.shape = e.shape.data();
  }
  m_shapesDirty = false;
}

std::string GraphExecutor::symbolOrigins(const ShapeExpr& e) const {
  std::string out;
  for (const std::string& name : e.symbols())
    for (const Symbol& sy : m_symbols)
      if (sy.name == name) {
        auto v = m_symbolValues.find(name);
        out += (out.empty() ? "" : ", ") + name + " = " + (v == m_symbolValues.end() ? "?" : std::to_string(v->second)) +
               " from dimension " + std::to_string(sy.axis) + " of input '" + m_inputs[size_t(sy.input)].name + "'";
        break;
      }
  return out;
}

void GraphExecutor::checkInputDims(size_t i) const {
  const Entry& e = entry(m_inputs[i].entry);
  const std::vector<int64_t>& got = m_inputShapesSet[i];
  if (e.sym.empty() || got.empty()) return;
  for (size_t k = 0; k < e.sym.size(); ++k) {
    int64_t want = e.sym[k].eval(m_symbolValues);
    if (want == got[k]) continue;
    throw RuntimeFailure("input '" + m_inputs[i].name + "': dimension " + std::to_string(k) + " is " +
                         std::to_string(got[k]) + ", but it must equal " + e.sym[k].text() +
                         (e.sym[k].symbols() == std::vector<std::string>{e.sym[k].text()} ? "" : " = " + std::to_string(want)) +
                         " (" + symbolOrigins(e.sym[k]) + "); got " + e.dtype.str() + shapeText(got));
  }
}

std::map<std::string, int64_t> GraphExecutor::symbolBounds() const {
  std::map<std::string, int64_t> out;
  for (const Symbol& sy : m_symbols)
    if (sy.bound >= 0) out[sy.name] = sy.bound;
  return out;
}

std::vector<std::string> GraphExecutor::dims(const Entry& e) const {
  std::vector<std::string> out;
  for (size_t k = 0; k < e.shape.size(); ++k) out.push_back(e.sym.empty() ? std::to_string(e.shape[k]) : e.sym[k].text());
  return out;
}

std::vector<std::string> GraphExecutor::inputDims(size_t i) const { return dims(entry(m_inputs.at(i).entry)); }
std::vector<std::string> GraphExecutor::outputDims(size_t i) const { return dims(entry(m_outputs.at(i).entry)); }

void GraphExecutor::copyIn(const NDArray& value, const Entry& e) {
  if (m_dev.type == DeviceType::CPU) return value.copyToBytes(e.view.data, e.bytes());
  // Device storage: e.view.data is the device's handle of the entry's storage (offset 0).
  NDArray host = value;
  if (value.device().type != DeviceType::CPU) {
    host = NDArray::empty(value.shape(), value.dtype());
    host.copyFrom(value);
  }
  DeviceAPI::get(m_dev.type)->copyData(host.data(), 0, e.view.data, 0, e.bytes(), Device{}, m_dev);
}

void GraphExecutor::setParams(const std::map<std::string, NDArray>& params) {
  for (const Named& p : m_params) {
    auto it = params.find(p.name);
    if (it == params.end()) throw RuntimeFailure("parameter '" + p.name + "' is missing");
    const Entry& e = entry(p.entry);
    if (it->second.shape() != e.shape || !(it->second.dtype() == e.dtype))
      throw RuntimeFailure("parameter '" + p.name + "' expects " + e.dtype.str() + shapeText(e.shape) + ", got " +
                           it->second.dtype().str() + shapeText(it->second.shape()));
    if (e.bytes()) copyIn(it->second, e);
  }
}

void GraphExecutor::runNode(Node& n) {
  if (n.dd) return runDataDependent(n);
  if (n.func == "__copy") {
    const Entry &a = entry(n.inputs[0]), &b = entry(n.outputs[0]);
    if (a.view.data == b.view.data || !b.bytes()) return;
    if (m_dev.type == DeviceType::CPU) std::memmove(b.view.data, a.view.data, b.bytes());
    else DeviceAPI::get(m_dev.type)->copyData(a.view.data, 0, b.view.data, 0, b.bytes(), m_dev, m_dev);
    return;
  }
  std::vector<PackedArg> args;
  args.reserve(n.inputs.size() + n.outputs.size());
  for (int e : n.inputs) args.emplace_back(&m_entries[size_t(e)].view);
  for (int e : n.outputs) args.emplace_back(&m_entries[size_t(e)].view);
  for (const std::string& s : n.symbols) {
    auto it = m_symbolValues.find(s);
    if (it == m_symbolValues.end()) throw RuntimeFailure("node '" + n.name + "': symbol '" + s + "' has no value");
    args.emplace_back(it->second);
  }
  n.fn.call(std::span<const PackedArg>(args.data(), args.size()));
}

void GraphExecutor::run() {
  if (isDynamic() && m_shapesDirty) bindShapes();
  for (Node& n : m_nodes) runNode(n);
}

namespace {
double nowMs(GraphExecutor::ProfileClock clock) {
  if (clock == GraphExecutor::ProfileClock::ProcessCpu) {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

std::vector<std::pair<std::string, double>> GraphExecutor::runProfiled(ProfileClock clock) {
  if (isDynamic() && m_shapesDirty) bindShapes();
  std::vector<std::pair<std::string, double>> times;
  for (Node& n : m_nodes) {
    double t0 = nowMs(clock);
    runNode(n);
    times.emplace_back(n.name, nowMs(clock) - t0);
  }
  return times;
}

NDArray GraphExecutor::getOutput(size_t i) const {
  if (i >= m_outputs.size())
    throw RuntimeFailure("output index " + std::to_string(i) + " out of range (" + std::to_string(m_outputs.size()) + " outputs)");
  const Entry& e = entry(m_outputs[i].entry);
  NDArray r = NDArray::empty(e.shape, e.dtype);
  if (!e.bytes()) return r;
  if (m_dev.type == DeviceType::CPU) r.copyFromBytes(e.view.data, e.bytes());
  else DeviceAPI::get(m_dev.type)->copyData(e.view.data, 0, r.data(), 0, e.bytes(), m_dev, Device{});
  return r;
}

size_t GraphExecutor::storageBytes() const {
  size_t n = 0;
  for (const Block& s : m_storage) n += s.byteSize();
  return n;
}

}  // namespace loom::runtime
