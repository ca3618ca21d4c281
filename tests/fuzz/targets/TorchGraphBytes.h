// The byte format of fuzz_torch: a TorchScript graph (ts::Graph, what the libtorch reader hands the
// converter) and the input shapes of forward(), decoded from arbitrary bytes in a structure-aware
// way, and the encoder that writes a real model's graph in the same format (the seeds, made by
// tests/fuzz/tools/torch_fuzz_seed.cpp from .pt files).
//
// Every byte string decodes to a well-formed graph: a node's inputs are always values visible at
// that point (forward()'s arguments, earlier nodes' outputs in this block or an enclosing one,
// the inputs of the blocks it is nested in), nesting is at most kMaxDepth deep and there are at
// most kMaxNodes nodes, so what the fuzzer explores is the converter, not index checks. Node
// kinds come from the converter's own table (supportedTorchOps(), two bytes, modulo its size) or
// are literal strings (byte 255 first: what the encoder always writes, so the seeds do not depend
// on the table, and the unknown kinds the fuzzer makes). Reading past the end gives zeros.
//
//   graph    := nInputs:u8%6 {arg} block nOutputs:u8%4 {ref}
//   arg      := value hasShape:u8 [rank:u8%5 {dim:u8} dtype:u8%8]   (dtype: inputDtypes(); a
//               shape of more than kMaxInputElements elements is dropped)
//   block    := nNodes:u8 {node}          (a block's inputs and outputs are in `node`)
//   node     := kind nIn:u8%33 {ref} nOut:u8%17 {value} [const if prim::Constant]
//               nBlocks:u8%3 {nIn:u8%5 {value} block nOut:u8%5 {ref}} scope:str file:str line:u16 source:str
//   value    := name:str type             type := sel:u8 (< types()' size: types()[sel]; else str)
//   kind     := 255 str | hi:u8 lo:u8     (supportedTorchOps()[(hi*256+lo) % size])
//   ref      := u16                       (visible[ref % visible size])
//   const    := kind:u8%11 payload        (ConstValue::Kind order; ints as `int`, doubles as 8 bytes)
//   tensor   := dtype:u8 (< tensorDtypes()' size, else str) rank:u8%5 {dim:u8} nBytes:u16 {u8}
//   int      := t:u8 (t < 0xF0: t - 32; else 8 bytes, little endian)
//   str      := len:u8 {u8}
#pragma once
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/frontend/torch/TorchImporter.h"

namespace loom::fuzz::torchbytes {

namespace ts = loom::frontend::ts;

constexpr int kMaxDepth = 4;
constexpr int kMaxNodes = 512;
constexpr int64_t kMaxInputElements = 1 << 16;

inline const std::vector<std::string>& types() {
  static const std::vector<std::string> t{"Tensor", "int", "float", "bool", "int[]", "float[]", "Tensor[]", "str",
                                          "NoneType", "Device", "(Tensor, Tensor)", "Tensor?", "int?", "Scalar"};
  return t;
}
inline const std::vector<std::string>& inputDtypes() {
  static const std::vector<std::string> t{"float32", "float64", "int64", "int32", "bool", "uint8", "int8", "float16"};
  return t;
}
inline DataType inputDtype(size_t i) {
  static const DataType t[] = {DataType::Float(32), DataType::Float(64), DataType::Int(64), DataType::Int(32),
                               DataType::Bool(),    DataType::UInt(8),    DataType::Int(8),  DataType::Float(16)};
  return t[i % 8];
}
inline const std::vector<std::string>& tensorDtypes() {
  static const std::vector<std::string> t{"Float", "Long", "Int", "Double", "Bool", "Byte", "Char", "Short", "Half", "BFloat16"};
  return t;
}

class Reader {
public:
  Reader(const uint8_t* data, size_t size) : m_p(data), m_end(data + size) {}
  uint8_t u8() { return m_p < m_end ? *m_p++ : 0; }
  uint16_t u16() {
    uint16_t lo = u8();
    return uint16_t(lo | (uint16_t(u8()) << 8));
  }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(u8()) << (8 * i);
    return v;
  }
  int64_t integer() {
    uint8_t t = u8();
    if (t < 0xF0) return int64_t(t) - 32;
    return int64_t(u64());
  }
  double real() {
    uint64_t bits = u64();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  std::string str() {
    size_t n = u8();
    std::string s;
    while (n-- && m_p < m_end) s += char(*m_p++);
    return s;
  }
  std::vector<uint8_t> bytes(size_t n) {
    size_t k = std::min<size_t>(n, size_t(m_end - m_p));
    std::vector<uint8_t> v(m_p, m_p + k);
    m_p += k;
    return v;
  }

private:
  const uint8_t* m_p;
  const uint8_t* m_end;
};

class Writer {
public:
  void u8(uint8_t v) { m_out += char(v); }
  void u16(uint16_t v) {
    u8(uint8_t(v & 0xFF));
    u8(uint8_t(v >> 8));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) u8(uint8_t(v >> (8 * i)));
  }
  void integer(int64_t v) {
    if (v >= -32 && v < 0xF0 - 32) {
      u8(uint8_t(v + 32));
    } else {
      u8(0xF0);
      u64(uint64_t(v));
    }
  }
  void real(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof d);
    u64(bits);
  }
  /// Strings longer than 255 bytes are cut (names and source lines: only messages use them).
  void str(const std::string& s) {
    size_t n = std::min<size_t>(s.size(), 255);
    u8(uint8_t(n));
    m_out.append(s, 0, n);
  }
  const std::string& out() const { return m_out; }

private:
  std::string m_out;
};

/// Decodes `data` into `g` and the input shapes of its tensor arguments.
class Decoder {
public:
  Decoder(const uint8_t* data, size_t size, const std::vector<std::string>& kinds) : m_r(data, size), m_kinds(kinds) {}

  void decode(ts::Graph& g, frontend::TorchImportOptions& options) {
    m_g = &g;
    int nIn = m_r.u8() % 6;
    for (int i = 0; i < nIn; ++i) {
      int v = value();
      g.inputs.push_back(v);
      m_visible.push_back(v);
      if (m_r.u8() & 1) {
        frontend::InputSpec spec;
        int rank = m_r.u8() % 5;
        int64_t numel = 1;
        for (int d = 0; d < rank; ++d) {
          spec.shape.push_back(m_r.u8());
          numel *= spec.shape.back();
        }
        spec.dtype = inputDtype(m_r.u8());
        spec.dtypeGiven = true;
        // Bigger inputs only make folded constants (zeros(x.size())) big, not other code run.
        if (numel <= kMaxInputElements) options.inputs[baseName(g.values[size_t(v)].name)] = spec;
      }
    }
    block(g.body, 0);
    int nOut = m_r.u8() % 4;
    for (int i = 0; i < nOut; ++i)
      if (int v = ref(); v >= 0) g.body.outputs.push_back(v);
  }

  /// "x.1" -> "x", as the importer names forward()'s arguments.
  static std::string baseName(const std::string& n) {
    size_t dot = n.find_last_of('.');
    if (dot == std::string::npos || dot + 1 == n.size()) return n;
    for (size_t i = dot + 1; i < n.size(); ++i)
      if (n[i] < '0' || n[i] > '9') return n;
    return n.substr(0, dot);
  }

private:
  int value() {
    ts::Value v;
    v.name = m_r.str();
    uint8_t sel = m_r.u8();
    v.type = sel < types().size() ? types()[sel] : m_r.str();
    m_g->values.push_back(std::move(v));
    return int(m_g->values.size()) - 1;
  }
  int ref() {
    uint16_t r = m_r.u16();
    if (m_visible.empty()) return -1;
    return m_visible[r % m_visible.size()];
  }
  void block(ts::Block& b, int depth) {
    int n = m_r.u8();
    for (int i = 0; i < n && m_nodes < kMaxNodes; ++i) {
      ++m_nodes;
      b.nodes.push_back(node(depth));
    }
  }
  ts::Node node(int depth) {
    ts::Node n;
    uint8_t hi = m_r.u8();
    if (hi == 255 || m_kinds.empty()) {
      n.kind = m_r.str();
    } else {
      size_t idx = size_t(hi) << 8 | m_r.u8();
      n.kind = m_kinds[idx % m_kinds.size()];
    }
    int nIn = m_r.u8() % 33;
    for (int i = 0; i < nIn; ++i)
      if (int v = ref(); v >= 0) n.inputs.push_back(v);
    int nOut = m_r.u8() % 17;
    for (int i = 0; i < nOut; ++i) n.outputs.push_back(value());
    if (n.kind == "prim::Constant") n.constant = constant();
    int nBlocks = m_r.u8() % 3;
    for (int k = 0; k < nBlocks; ++k) {
      ts::Block b;
      size_t saved = m_visible.size();
      int bin = m_r.u8() % 5;
      for (int i = 0; i < bin; ++i) {
        b.inputs.push_back(value());
        m_visible.push_back(b.inputs.back());
      }
      if (depth < kMaxDepth) block(b, depth + 1);
      else m_r.u8(); // the node count, unused this deep
      int bout = m_r.u8() % 5;
      for (int i = 0; i < bout; ++i)
        if (int v = ref(); v >= 0) b.outputs.push_back(v);
      m_visible.resize(saved);
      n.blocks.push_back(std::move(b));
    }
    n.scope = m_r.str();
    n.file = m_r.str();
    n.line = m_r.u16();
    n.sourceLine = m_r.str();
    for (int v : n.outputs) m_visible.push_back(v);
    return n;
  }
  ts::ConstValue constant() {
    using K = ts::ConstValue::Kind;
    ts::ConstValue c;
    c.kind = K(m_r.u8() % 11);
    switch (c.kind) {
    case K::None: break;
    case K::Int: c.i = m_r.integer(); break;
    case K::Double: c.d = m_r.real(); break;
    case K::Bool: c.i = m_r.u8() & 1; break;
    case K::String:
    case K::Device:
    case K::Other: c.s = m_r.str(); break;
    case K::Ints:
    case K::Bools: {
      int n = m_r.u8() % 33;
      for (int i = 0; i < n; ++i) c.ints.push_back(c.kind == K::Ints ? m_r.integer() : m_r.u8() & 1);
      break;
    }
    case K::Doubles: {
      int n = m_r.u8() % 33;
      for (int i = 0; i < n; ++i) c.doubles.push_back(m_r.real());
      break;
    }
    case K::Tensor: {
      uint8_t sel = m_r.u8();
      c.tensor.dtype = sel < tensorDtypes().size() ? tensorDtypes()[sel] : m_r.str();
      int rank = m_r.u8() % 5;
      for (int d = 0; d < rank; ++d) c.tensor.shape.push_back(m_r.u8());
      c.tensor.bytes = m_r.bytes(m_r.u16());
      break;
    }
    }
    return c;
  }

  Reader m_r;
  const std::vector<std::string>& m_kinds;
  ts::Graph* m_g = nullptr;
  std::vector<int> m_visible;
  int m_nodes = 0;
};

/// Writes `g` (as the reader made it) and `options` in the format Decoder reads. Fails (returns
/// false, `why` says why) when the graph does not fit the format: more than 32 inputs or 16
/// outputs on a node, 4 inputs or outputs on a block, 255 nodes in a block, deeper than
/// kMaxDepth, a dim over 255, a constant list over 32 items or a tensor over 65535 bytes, or a
/// reference to a value that is not visible there.
class Encoder {
public:
  bool encode(const ts::Graph& g, const frontend::TorchImportOptions& options, std::string* why) {
    m_g = &g;
    try {
      if (g.inputs.size() > 5) fail("more than 5 forward() arguments");
      m_w.u8(uint8_t(g.inputs.size()));
      for (int v : g.inputs) {
        value(v);
        m_visible.push_back(v);
        auto it = options.inputs.find(Decoder::baseName(g.values.at(size_t(v)).name));
        if (it == options.inputs.end()) {
          m_w.u8(0);
          continue;
        }
        m_w.u8(1);
        if (it->second.shape.size() > 4) fail("an input of rank over 4");
        m_w.u8(uint8_t(it->second.shape.size()));
        int64_t numel = 1;
        for (int64_t d : it->second.shape) {
          if (d < 0 || d > 255) fail("an input dim over 255");
          m_w.u8(uint8_t(d));
          numel *= d;
        }
        if (numel > kMaxInputElements) fail("an input of more than " + std::to_string(kMaxInputElements) + " elements");
        size_t dt = 0;
        while (dt < 8 && !(inputDtype(dt) == it->second.dtype)) ++dt;
        if (dt == 8) fail("an input dtype the format has no code for");
        m_w.u8(uint8_t(dt));
      }
      block(g.body, 0);
      if (g.body.outputs.size() > 3) fail("more than 3 results");
      m_w.u8(uint8_t(g.body.outputs.size()));
      for (int v : g.body.outputs) ref(v);
    } catch (const std::string& e) {
      if (why) *why = e;
      return false;
    }
    return true;
  }
  const std::string& bytes() const { return m_w.out(); }

private:
  [[noreturn]] static void fail(const std::string& why) { throw why; }
  void value(int v) {
    const ts::Value& val = m_g->values.at(size_t(v));
    m_w.str(val.name);
    size_t sel = 0;
    while (sel < types().size() && types()[sel] != val.type) ++sel;
    if (sel < types().size()) {
      m_w.u8(uint8_t(sel));
    } else {
      m_w.u8(255);
      m_w.str(val.type);
    }
  }
  void ref(int v) {
    for (size_t i = 0; i < m_visible.size(); ++i)
      if (m_visible[i] == v) {
        m_w.u16(uint16_t(i));
        return;
      }
    fail("value %" + m_g->values.at(size_t(v)).name + " is used where it is not visible");
  }
  void block(const ts::Block& b, int depth) {
    if (b.nodes.size() > 255) fail("a block of more than 255 nodes");
    m_w.u8(uint8_t(b.nodes.size()));
    for (const ts::Node& n : b.nodes) node(n, depth);
  }
  void node(const ts::Node& n, int depth) {
    if (++m_nodes > kMaxNodes) fail("more than " + std::to_string(kMaxNodes) + " nodes");
    m_w.u8(255);
    m_w.str(n.kind);
    if (n.inputs.size() > 32 || n.outputs.size() > 16 || n.blocks.size() > 2) fail("node " + n.kind + " has too many inputs, outputs or blocks");
    m_w.u8(uint8_t(n.inputs.size()));
    for (int v : n.inputs) ref(v);
    m_w.u8(uint8_t(n.outputs.size()));
    for (int v : n.outputs) value(v);
    if (n.kind == "prim::Constant") constant(n.constant);
    m_w.u8(uint8_t(n.blocks.size()));
    for (const ts::Block& b : n.blocks) {
      if (depth >= kMaxDepth) fail("blocks nested deeper than " + std::to_string(kMaxDepth));
      size_t saved = m_visible.size();
      if (b.inputs.size() > 4 || b.outputs.size() > 4) fail("a block of " + n.kind + " with over 4 inputs or outputs");
      m_w.u8(uint8_t(b.inputs.size()));
      for (int v : b.inputs) {
        value(v);
        m_visible.push_back(v);
      }
      block(b, depth + 1);
      m_w.u8(uint8_t(b.outputs.size()));
      for (int v : b.outputs) ref(v);
      m_visible.resize(saved);
    }
    m_w.str(n.scope);
    m_w.str(n.file);
    m_w.u16(uint16_t(std::min(n.line, 65535)));
    m_w.str(n.sourceLine);
    for (int v : n.outputs) m_visible.push_back(v);
  }
  void constant(const ts::ConstValue& c) {
    using K = ts::ConstValue::Kind;
    m_w.u8(uint8_t(c.kind));
    switch (c.kind) {
    case K::None: break;
    case K::Int: m_w.integer(c.i); break;
    case K::Double: m_w.real(c.d); break;
    case K::Bool: m_w.u8(c.i ? 1 : 0); break;
    case K::String:
    case K::Device:
    case K::Other: m_w.str(c.s); break;
    case K::Ints:
    case K::Bools:
      if (c.ints.size() > 32) fail("a constant list of more than 32 items");
      m_w.u8(uint8_t(c.ints.size()));
      for (int64_t x : c.ints) c.kind == K::Ints ? m_w.integer(x) : m_w.u8(x ? 1 : 0);
      break;
    case K::Doubles:
      if (c.doubles.size() > 32) fail("a constant list of more than 32 items");
      m_w.u8(uint8_t(c.doubles.size()));
      for (double x : c.doubles) m_w.real(x);
      break;
    case K::Tensor: {
      size_t sel = 0;
      while (sel < tensorDtypes().size() && tensorDtypes()[sel] != c.tensor.dtype) ++sel;
      if (sel < tensorDtypes().size()) {
        m_w.u8(uint8_t(sel));
      } else {
        m_w.u8(255);
        m_w.str(c.tensor.dtype);
      }
      if (c.tensor.shape.size() > 4) fail("a constant tensor of rank over 4");
      m_w.u8(uint8_t(c.tensor.shape.size()));
      for (int64_t d : c.tensor.shape) {
        if (d < 0 || d > 255) fail("a constant tensor dim over 255");
        m_w.u8(uint8_t(d));
      }
      if (c.tensor.bytes.size() > 65535) fail("a constant tensor of more than 65535 bytes");
      m_w.u16(uint16_t(c.tensor.bytes.size()));
      for (uint8_t x : c.tensor.bytes) m_w.u8(x);
      break;
    }
    }
  }

  const ts::Graph* m_g = nullptr;
  Writer m_w;
  std::vector<int> m_visible;
  int m_nodes = 0;
};

} // namespace loom::fuzz::torchbytes
