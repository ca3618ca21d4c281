// The tensor-intrinsic registry and the built-in AVX-512 FMA micro-kernels.
#include "core/schedule/TensorIntrin.h"

#include <map>
#include <mutex>

#include "core/tir/Op.h"
#include "core/tir/Parser.h"

namespace loom::tir {

namespace {

std::mutex& registryMutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, TensorIntrin>& registry();

void registerBuiltins(std::map<std::string, TensorIntrin>& m) {
  for (int k : {1, 2, 4, 8, 16}) {
    std::string name = "x86_avx512_fma_f32x16_k" + std::to_string(k);
    m[name] = {name, avx512FmaDesc(k), avx512FmaImpl(k),
               "C[0:16] += A[k] * B[k, 0:16] over " + std::to_string(k) +
                   " k, fp32 (AVX-512 vfmadd, 16 lanes)"};
  }
}

std::map<std::string, TensorIntrin>& registry() {
  static std::map<std::string, TensorIntrin> m = [] {
    std::map<std::string, TensorIntrin> r;
    registerBuiltins(r);
    return r;
  }();
  return m;
}

/// The body of `desc` below its root block: must be loops over one block realize.
bool isLoopNestOverOneBlock(const PrimFunc& f) {
  Stmt s = f->body;
  if (auto* r = s.as<BlockRealizeNode>(); r && r->block->name == "root") s = r->block->body;
  while (auto* l = s.as<ForNode>())
    s = l->body;
  return s.defined() && s->nodeKind == NodeKind::BlockRealize;
}

} // namespace

void registerTensorIntrin(const std::string& name, PrimFunc desc, PrimFunc impl, std::string doc) {
  if (!desc.defined() || !impl.defined())
    LOOM_THROW(ValueError) << "tensor intrinsic '" << name << "': desc and impl must be defined";
  if (desc->bufferMap.size() != impl->bufferMap.size())
    LOOM_THROW(ValueError) << "tensor intrinsic '" << name << "': desc takes "
                           << desc->bufferMap.size() << " buffers but impl takes "
                           << impl->bufferMap.size();
  for (size_t p = 0; p < desc->bufferMap.size(); ++p) {
    const Buffer& a = desc->bufferMap[p].second;
    const Buffer& b = impl->bufferMap[p].second;
    bool same = a->dtype == b->dtype && a->ndim() == b->ndim();
    for (size_t d = 0; same && d < a->ndim(); ++d) {
      auto* x = a->shape[d].as<IntImmNode>();
      auto* y = b->shape[d].as<IntImmNode>();
      same = x && y && x->value == y->value;
    }
    if (!same) {
      auto describe = [](const Buffer& buf) {
        std::string s = buf->dtype.str() + "[";
        for (size_t d = 0; d < buf->ndim(); ++d) {
          auto* x = buf->shape[d].as<IntImmNode>();
          s += (d ? ", " : "") + (x ? std::to_string(x->value) : std::string("?"));
        }
        return s + "]";
      };
      LOOM_THROW(ValueError) << "tensor intrinsic '" << name << "': buffer " << p << " is "
                             << describe(a) << " in desc but " << describe(b)
                             << " in impl (constant shapes, equal in both)";
    }
  }
  if (!isLoopNestOverOneBlock(desc))
    LOOM_THROW(ValueError) << "tensor intrinsic '" << name
                           << "': desc must be a loop nest over one block";
  std::lock_guard<std::mutex> lock(registryMutex());
  registry()[name] = {name, std::move(desc), std::move(impl), std::move(doc)};
}

const TensorIntrin* findTensorIntrin(const std::string& name) {
  std::lock_guard<std::mutex> lock(registryMutex());
  auto& r = registry();
  auto it = r.find(name);
  return it == r.end() ? nullptr : &it->second;
}

std::vector<std::string> tensorIntrinNames() {
  std::lock_guard<std::mutex> lock(registryMutex());
  std::vector<std::string> out;
  for (auto& [n, t] : registry())
    out.push_back(n);
  return out;
}

PrimFunc avx512FmaDesc(int k) {
  std::string K = std::to_string(k);
  return parseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def avx512_fma_f32x16_desc(A: T.Buffer(()" + K + R"(,), "float32"), B: T.Buffer(()" + K +
                       R"(, 16), "float32"), C: T.Buffer((16,), "float32")):
    for k, j in T.grid()" + K + R"(, 16):
        with T.block("update"):
            vk, vj = T.axis.remap("RS", [k, j])
            T.reads(C[vj], A[vk], B[vk, vj])
            T.writes(C[vj])
            C[vj] = C[vj] + A[vk] * B[vk, vj]
)",
                   "<x86_avx512_fma_f32x16_k" + K + ">");
}

PrimFunc avx512FmaImpl(int k) {
  DataType f32 = DataType::Float(32);
  Buffer a = makeBuffer("A", f32, {k});
  Buffer b = makeBuffer("B", f32, {k, 16});
  Buffer c = makeBuffer("C", f32, {16});
  Var kv = makeVar("k");
  Expr lanes = ramp(0, 1, 16);
  Stmt body = bufferStore(
      c, bufferLoad(c, {lanes}) + broadcast(bufferLoad(a, {kv}), 16) * bufferLoad(b, {kv, lanes}),
      {lanes});
  body = forLoop(kv, 0, k, ForKind::Serial, body);
  Var pa = makeVar("A", DataType::Handle()), pb = makeVar("B", DataType::Handle()),
      pc = makeVar("C", DataType::Handle());
  return makePrimFunc("avx512_fma_f32x16_impl", {pa, pb, pc}, {{pa, a}, {pb, b}, {pc, c}}, body);
}

} // namespace loom::tir
