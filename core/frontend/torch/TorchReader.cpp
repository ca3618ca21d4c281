// The libtorch side of the TorchScript importer: loads a torch.jit.save'd archive, freezes and
// inlines forward(), and copies its graph into ts::Graph (TorchGraph.h). Built as a shared
// library only when libtorch is found; the importer opens it with dlopen when a .pt is imported,
// so no other program pays libtorch's start-up (about a second: 280 libraries).
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/script.h>

#include <unordered_map>

#include "core/frontend/torch/TorchGraph.h"

namespace {

using namespace loom::frontend;

ts::TensorData tensorData(const at::Tensor& t0) {
  at::Tensor t = t0.contiguous();
  ts::TensorData d;
  d.shape.assign(t.sizes().begin(), t.sizes().end());
  d.dtype = c10::toString(t.scalar_type());
  size_t n = t.numel() * t.element_size();
  d.bytes.resize(n);
  if (n) std::memcpy(d.bytes.data(), t.data_ptr(), n);
  return d;
}

ts::ConstValue constValue(const c10::IValue& v) {
  ts::ConstValue c;
  using K = ts::ConstValue::Kind;
  if (v.isNone()) {
    c.kind = K::None;
  } else if (v.isBool()) {
    c.kind = K::Bool;
    c.i = v.toBool();
  } else if (v.isInt()) {
    c.kind = K::Int;
    c.i = v.toInt();
  } else if (v.isDouble()) {
    c.kind = K::Double;
    c.d = v.toDouble();
  } else if (v.isString()) {
    c.kind = K::String;
    c.s = v.toStringRef();
  } else if (v.isIntList()) {
    c.kind = K::Ints;
    for (int64_t x : v.toIntVector()) c.ints.push_back(x);
  } else if (v.isDoubleList()) {
    c.kind = K::Doubles;
    for (double x : v.toDoubleVector()) c.doubles.push_back(x);
  } else if (v.isBoolList()) {
    c.kind = K::Bools;
    for (bool x : v.toBoolList()) c.ints.push_back(x);
  } else if (v.isTensor()) {
    c.kind = K::Tensor;
    c.tensor = tensorData(v.toTensor());
  } else if (v.isDevice()) {
    c.kind = K::Device;
    c.s = v.toDevice().str();
  } else {
    c.kind = K::Other;
    c.s = v.type()->str();
  }
  return c;
}

class Copier {
public:
  explicit Copier(ts::Graph& g) : m_g(g) {}

  int value(const torch::jit::Value* v) {
    auto it = m_index.find(v);
    if (it != m_index.end()) return it->second;
    int i = int(m_g.values.size());
    m_g.values.push_back({v->debugName(), v->type()->str()});
    m_index[v] = i;
    return i;
  }

  void block(const torch::jit::Block* b, ts::Block& out) {
    for (const torch::jit::Value* v : b->inputs()) out.inputs.push_back(value(v));
    for (const torch::jit::Node* n : b->nodes()) {
      ts::Node& tn = out.nodes.emplace_back();
      node(n, tn);
    }
    for (const torch::jit::Value* v : b->outputs()) out.outputs.push_back(value(v));
  }

private:
  void node(const torch::jit::Node* n, ts::Node& out) {
    out.kind = n->kind().toQualString();
    for (const torch::jit::Value* v : n->inputs()) out.inputs.push_back(value(v));
    for (const torch::jit::Value* v : n->outputs()) out.outputs.push_back(value(v));
    if (n->kind() == c10::prim::Constant && n->outputs().size() == 1) {
      if (auto iv = torch::jit::toIValue(n->output())) out.constant = constValue(*iv);
    }
    out.scope = scopeOf(n);
    const torch::jit::SourceRange& r = n->sourceRange();
    if (r.source()) {
      if (auto flc = r.file_line_col()) {
        out.file = std::get<0>(*flc);
        out.line = int(std::get<1>(*flc));
      }
      // The whole source line the node came from, trimmed.
      const auto& src = r.source();
      size_t line = src->lineno_for_offset(r.start());
      size_t begin = src->offset_for_line(line);
      size_t end = line + 1 < src->num_lines() ? src->offset_for_line(line + 1) : src->size();
      std::string text = src->text_str().substr(begin, end - begin).str();
      size_t a = text.find_first_not_of(" \t"), b = text.find_last_not_of(" \t\r\n");
      out.sourceLine = a == std::string::npos ? std::string() : text.substr(a, b - a + 1);
    }
    for (const torch::jit::Block* b : n->blocks()) {
      ts::Block& tb = out.blocks.emplace_back();
      block(b, tb);
    }
  }

  /// "features.3.block.0" from the inlined call stack's module instances (scripted and traced
  /// modules alike), else from the tracer's scope ("__module.features/__module.features.3").
  static std::string scopeOf(const torch::jit::Node* n) {
    std::string path;
    if (auto cs = n->callstack()) {
      for (const auto& entry : (*cs)->vec()) {
        const auto& info = std::get<2>(entry);
        if (!info) continue;
        std::string name = info->instance_name();
        // SELF: a method of the same module (conv's _conv_forward); a scripted ModuleList's
        // members appear by index alone ("0.conv"), as the list itself is never called.
        if (name.empty() || name == "self" || name == "SELF") continue;
        path += (path.empty() ? "" : ".") + name;
      }
    }
    if (!path.empty()) return path;
    torch::jit::ScopePtr scope = const_cast<torch::jit::Node*>(n)->scope();
    if (scope && !scope->isBlank()) {
      std::string s = scope->namesFromRoot();
      size_t slash = s.find_last_of('/');
      std::string last = slash == std::string::npos ? s : s.substr(slash + 1);
      if (last.rfind("__module.", 0) == 0) return last.substr(9);
    }
    return path;
  }

  ts::Graph& m_g;
  std::unordered_map<const torch::jit::Value*, int> m_index;
};

} // namespace

extern "C" __attribute__((visibility("default"))) bool
loom_torch_read_graph(const char* path, ts::Graph* out, std::string* error) {
  try {
    torch::jit::Module m = torch::jit::load(path);
    m.eval();
    torch::jit::Module frozen = torch::jit::freeze_module(m);
    std::shared_ptr<torch::jit::Graph> g = frozen.get_method("forward").graph()->copy();
    torch::jit::Inline(*g);
    *out = ts::Graph();
    Copier copy(*out);
    for (const torch::jit::Value* v : g->inputs()) {
      if (v->type()->kind() == c10::TypeKind::ClassType) continue; // self
      out->inputs.push_back(copy.value(v));
    }
    copy.block(g->block(), out->body);
    out->body.inputs.clear();
    return true;
  } catch (const c10::Error& e) {
    *error = e.what_without_backtrace();
  } catch (const std::exception& e) {
    *error = e.what();
  } catch (...) {
    *error = "unknown error in libtorch";
  }
  return false;
}
