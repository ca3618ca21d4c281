// The workload registry, spec parsing and the shared helpers of the workload families.
#include "core/topi/Workloads.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "core/te/CreatePrimFunc.h"
#include "core/tir/Printer.h"
#include "core/topi/WorkloadUtil.h"

namespace loom::topi {

namespace detail {

int64_t param(const ParamMap& p, const char* name) {
  auto it = p.find(name);
  LOOM_ICHECK(it != p.end()) << "workload parameter " << name << " missing";
  return it->second;
}

Expr mulC(const Expr& e, int64_t c) {
  return c == 1 ? e : e * c32(c);
}
Expr addC(const Expr& e, int64_t c) {
  if (c == 0) return e;
  return c > 0 ? e + c32(c) : e - c32(-c);
}

std::vector<Expr> shapeOf(const std::vector<int64_t>& dims) {
  std::vector<Expr> s;
  for (auto d : dims)
    s.push_back(c32(d));
  return s;
}

std::string shapeStr(const te::Tensor& t) {
  std::string s = "(";
  for (size_t d = 0; d < t->ndim(); ++d)
    s += (d ? ", " : "") + tir::printExpr(t->shape[d]);
  return s + (t->ndim() == 1 ? ",)" : ")");
}

void checkRank(const te::Tensor& t, size_t rank, const char* op) {
  if (t->ndim() != rank)
    LOOM_THROW(ValueError) << op << ": tensor '" << t->name << "' of shape " << shapeStr(t)
                           << " has rank " << t->ndim() << ", expected " << rank;
}

int64_t constDim(const te::Tensor& t, size_t d, const char* op) {
  const int64_t* c = tir::asConstInt(t->shape.at(d));
  if (!c)
    LOOM_THROW(ValueError) << op << ": dimension " << d << " of tensor '" << t->name << "' "
                           << shapeStr(t) << " must be a constant";
  return *c;
}

bool sameExtent(const Expr& a, const Expr& b) {
  const int64_t *x = tir::asConstInt(a), *y = tir::asConstInt(b);
  if (x && y) return *x == *y;
  return a.same_as(b);
}

te::Tensor input(std::vector<int64_t> shape, const char* name) {
  return te::placeholder(shapeOf(shape), DataType::Float(32), name);
}

View::View(const runtime::NDArray& a) : data(a.as<float>()), shape(a.shape()) {
  LOOM_ICHECK(a.dtype() == runtime::DType::f32()) << "reference arrays are float32";
}
float& View::operator()(std::initializer_list<int64_t> idx) const {
  int64_t off = 0;
  size_t d = 0;
  for (auto i : idx)
    off = off * shape[d++] + i;
  return data[off];
}
int64_t View::size() const {
  int64_t n = 1;
  for (auto d : shape)
    n *= d;
  return n;
}

} // namespace detail

const std::vector<Workload>& allWorkloads() {
  static const std::vector<Workload> all = [] {
    std::vector<Workload> w;
    detail::addMatmulWorkloads(w);
    detail::addConv2dWorkloads(w);
    detail::addElementwiseWorkloads(w);
    detail::addReductionWorkloads(w);
    detail::addSoftmaxWorkloads(w);
    detail::addLayernormWorkloads(w);
    detail::addTransposeWorkloads(w);
    std::sort(w.begin(), w.end(), [](auto& a, auto& b) { return a.name < b.name; });
    return w;
  }();
  return all;
}

const Workload* findWorkload(const std::string& name) {
  for (auto& w : allWorkloads())
    if (w.name == name) return &w;
  return nullptr;
}

std::string WorkloadSpec::str() const {
  std::ostringstream os;
  os << workload->name;
  const char* sep = ":";
  for (auto& [k, v] : params) {
    os << sep << k << "=" << v;
    sep = ",";
  }
  return os.str();
}

namespace {
std::string knownWorkloads() {
  std::string s;
  for (auto& w : allWorkloads())
    s += (s.empty() ? "" : ", ") + w.name;
  return s;
}
std::string validParams(const Workload& w) {
  std::string s;
  for (auto& p : w.params)
    s += (s.empty() ? "" : ", ") + p.name;
  return s.empty() ? "(none)" : s;
}
const WorkloadParam* findParam(const Workload& w, const std::string& name) {
  for (auto& p : w.params)
    if (p.name == name) return &p;
  return nullptr;
}
const Workload& lookup(const std::string& name) {
  const Workload* w = findWorkload(name);
  if (!w)
    LOOM_THROW(topi::WorkloadError)
        << "unknown workload '" << name << "'; known workloads: " << knownWorkloads();
  return *w;
}
WorkloadSpec withDefaults(const Workload& w) {
  WorkloadSpec s;
  s.workload = &w;
  for (auto& p : w.params)
    s.params[p.name] = p.defaultValue;
  return s;
}
void checkValue(const Workload& w, const WorkloadParam& p, int64_t v) {
  if (v < p.minValue)
    LOOM_THROW(topi::WorkloadError) << "workload '" << w.name << "': parameter '" << p.name
                                    << "' is " << v << ", must be at least " << p.minValue;
}
} // namespace

WorkloadSpec parseWorkloadSpec(const std::string& spec) {
  size_t colon = spec.find(':');
  std::string name = spec.substr(0, colon);
  if (name.empty())
    LOOM_THROW(topi::WorkloadError)
        << "empty workload name in '" << spec << "'; known workloads: " << knownWorkloads();
  const Workload& w = lookup(name);
  WorkloadSpec s = withDefaults(w);
  if (colon == std::string::npos) return s;
  std::vector<std::string> seen;
  std::stringstream items(spec.substr(colon + 1));
  std::string item;
  while (std::getline(items, item, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      LOOM_THROW(topi::WorkloadError) << "workload '" << name << "': expected NAME=VALUE, got '"
                                      << item << "' (parameters: " << validParams(w) << ")";
    std::string key = item.substr(0, eq), text = item.substr(eq + 1);
    const WorkloadParam* p = findParam(w, key);
    if (!p)
      LOOM_THROW(topi::WorkloadError) << "workload '" << name << "' has no parameter '" << key
                                      << "'; valid parameters: " << validParams(w);
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      LOOM_THROW(topi::WorkloadError)
          << "workload '" << name << "': parameter '" << key << "' given twice";
    seen.push_back(key);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
      LOOM_THROW(topi::WorkloadError) << "workload '" << name << "': parameter '" << key
                                      << "' has value '" << text << "', expected an integer";
    checkValue(w, *p, v);
    s.params[key] = v;
  }
  if (!spec.empty() && spec.back() == ',')
    LOOM_THROW(topi::WorkloadError)
        << "workload '" << name << "': trailing ',' in '" << spec << "'";
  return s;
}

WorkloadSpec makeWorkloadSpec(const std::string& name, const ParamMap& overrides) {
  const Workload& w = lookup(name);
  WorkloadSpec s = withDefaults(w);
  for (auto& [k, v] : overrides) {
    const WorkloadParam* p = findParam(w, k);
    if (!p)
      LOOM_THROW(topi::WorkloadError) << "workload '" << name << "' has no parameter '" << k
                                      << "'; valid parameters: " << validParams(w);
    checkValue(w, *p, v);
    s.params[k] = v;
  }
  return s;
}

std::vector<te::Tensor> workloadTensors(const WorkloadSpec& spec) {
  LOOM_ICHECK(spec.workload) << "empty workload spec";
  return spec.workload->compute(spec.params);
}

tir::PrimFunc buildWorkload(const WorkloadSpec& spec, const std::string& funcName) {
  return te::createPrimFunc(workloadTensors(spec), funcName);
}

double workloadFlops(const WorkloadSpec& spec) {
  return spec.workload->flops(spec.params);
}

std::vector<runtime::NDArray> makeParamArrays(const tir::PrimFunc& f) {
  std::vector<runtime::NDArray> out;
  for (size_t i = 0; i < f->params.size(); ++i) {
    tir::Buffer b = f->bufferOf(f->params[i]);
    if (!b.defined())
      LOOM_THROW(UnsupportedError) << "parameter '" << f->params[i]->name << "' is a scalar ("
                                   << f->params[i]->dtype.str()
                                   << "), not a buffer; only programs whose parameters are all "
                                      "buffers can be run on random inputs";
    std::vector<int64_t> shape;
    for (auto& e : b->shape) {
      const int64_t* c = tir::asConstInt(e);
      if (!c) LOOM_THROW(UnsupportedError) << "parameter '" << b->name << "' has a symbolic shape";
      shape.push_back(*c);
    }
    runtime::DType dt;
    if (!runtime::DType::parse(b->dtype.str(), &dt))
      LOOM_THROW(UnsupportedError) << "parameter '" << b->name << "' has type " << b->dtype.str();
    try {
      out.push_back(runtime::NDArray::empty(shape, dt));
    } catch (const std::exception& e) {  // the runtime's failure to allocate, e.g. out of memory
      std::string dims;
      for (int64_t d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
      LOOM_THROW(RuntimeError) << "cannot allocate parameter '" << b->name << "' ("
                               << b->dtype.str() << "[" << dims << "]): " << e.what();
    }
  }
  return out;
}

double checkTolerance(const WorkloadSpec& spec) {
  int64_t terms = spec.workload->accumulation ? spec.workload->accumulation(spec.params) : 1;
  return 1e-4 * std::max(1.0, double(terms) / 64.0);
}

void runReference(const WorkloadSpec& spec, const std::vector<runtime::NDArray>& args) {
  const Workload& w = *spec.workload;
  LOOM_ICHECK(int(args.size()) > w.numInputs)
      << "reference of " << w.name << " needs inputs and outputs";
  std::vector<runtime::NDArray> in(args.begin(), args.begin() + w.numInputs);
  std::vector<runtime::NDArray> out(args.begin() + w.numInputs, args.end());
  w.reference(spec.params, in, out);
}

} // namespace loom::topi
