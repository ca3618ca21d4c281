// The host side of an OpenCL operator: kernel source built on the OpenCL device, launched in host-step order.
#include "codegen/CodeGenOpenCL.h"

#include <chrono>
#include <map>
#include <unordered_map>

#include "codegen/CodeGenCUDA.h"
#include "codegen/CodeGenCUDANVRTC.h"
#include "codegen/CodeGenLLVM.h"
#include "loom/c_runtime_api.h"
#include "runtime/RuntimeFailure.h"
#include "runtime/opencl/OpenCLAPI.h"

namespace loom::codegen {

using namespace loom::tir;
using runtime::Device;
using runtime::DeviceType;
using runtime::KernelArg;

namespace {

/// The device's limits as the verifier's.
transform::GPULimits deviceLimits(runtime::DeviceAPI* api, Device dev) {
  transform::GPULimits limits;
  runtime::AttrValue maxThreads = api->attr(dev, runtime::DeviceAttr::MaxThreadsPerBlock);
  if (auto* v = std::get_if<int64_t>(&maxThreads)) limits.maxThreadsPerBlock = std::min(limits.maxThreadsPerBlock, *v);
  return limits;
}

/// Runs the host steps of `program` with the device buffers of its parameters.
void runHostSteps(runtime::GPUDeviceAPI* api, Device dev, void* built, const transform::DeviceProgram& program,
                  std::unordered_map<const VarNode*, void*>& handles) {
  std::vector<std::pair<const VarNode*, void*>> temps;
  auto release = [&]() {
    if (temps.empty()) return;
    api->sync(dev);
    for (auto& [v, d] : temps) api->freeData(dev, d);
    temps.clear();
  };
  try {
    for (auto& step : program.steps) {
      switch (step.kind) {
      case transform::HostStep::Kind::Alloc: {
        void* d = api->allocData(dev, size_t(step.count) * size_t(std::max(1, step.dtype.bytes())), 64, {});
        temps.emplace_back(step.var.get(), d);
        handles[step.var.get()] = d;
        break;
      }
      case transform::HostStep::Kind::Free: break;  // at the end, once the kernels are done
      case transform::HostStep::Kind::Launch: {
        const transform::DeviceKernel& k = program.kernels[size_t(step.kernel)];
        std::vector<KernelArg> kargs;
        for (auto& v : k.params) {
          auto it = handles.find(v.get());
          if (it == handles.end())
            throw runtime::RuntimeFailure("kernel '" + k.name + "' needs '" + v->name + "', which the host does not have");
          kargs.push_back({KernelArg::Kind::Buffer, it->second, 0, 0});
        }
        api->launch(built, k.name, kargs, k.grid, k.block);
        break;
      }
      }
    }
    release();
  } catch (...) {
    release();
    throw;
  }
}

}  // namespace

struct OpenCLModule::Impl {
  transform::DeviceProgram program;
  std::string source;
  runtime::OpenCLDeviceAPI* api = nullptr;
  void* built = nullptr;
};

OpenCLModule::OpenCLModule(const PrimFunc& lowered) : m_impl(std::make_unique<Impl>()) {
  m_impl->program = transform::splitHostDevice(lowered);
  m_impl->source = emitGPUSource(m_impl->program, GPUDialect::OpenCL);
  runtime::DeviceAPI* api = runtime::DeviceAPI::get(DeviceType::OpenCL);
  m_impl->api = static_cast<runtime::OpenCLDeviceAPI*>(api);
  transform::verifyGPULimits(m_impl->program, deviceLimits(api, {DeviceType::OpenCL, 0}));
  m_impl->built = m_impl->api->buildProgram(m_impl->source);
}

OpenCLModule::~OpenCLModule() {
  if (m_impl && m_impl->built) m_impl->api->releaseProgram(m_impl->built);
}

const std::string& OpenCLModule::source() const { return m_impl->source; }
const transform::DeviceProgram& OpenCLModule::program() const { return m_impl->program; }
std::string OpenCLModule::deviceDescription() const { return m_impl->api->description(); }

double OpenCLModule::run(const std::vector<runtime::NDArray>& args, int repeat) {
  const PrimFunc& f = m_impl->program.func;
  if (args.size() != f->params.size())
    throw runtime::RuntimeFailure("'" + f->name + "' takes " + std::to_string(f->params.size()) + " arguments, got " +
                                  std::to_string(args.size()));
  runtime::OpenCLDeviceAPI* api = m_impl->api;
  Device dev{DeviceType::OpenCL, 0}, cpu{};
  std::unordered_map<const VarNode*, void*> handles;
  std::vector<void*> owned;
  auto cleanup = [&]() {
    for (void* p : owned) api->freeData(dev, p);
  };
  try {
    for (size_t i = 0; i < args.size(); ++i) {
      const Var& p = f->params[i];
      Buffer b = f->bufferOf(p);
      if (!b.defined()) throw runtime::RuntimeFailure("'" + f->name + "': parameter '" + p->name + "' is not a buffer");
      const runtime::NDArray& a = args[i];
      void* d = api->allocData(dev, a.byteSize(), 64, a.dtype());
      owned.push_back(d);
      api->copyData(a.data(), 0, d, 0, a.byteSize(), cpu, dev);
      handles[p.get()] = d;
      handles[b->data.get()] = d;
    }
    double total = 0;
    for (int r = 0; r < std::max(1, repeat); ++r) {
      auto t0 = std::chrono::steady_clock::now();
      runHostSteps(api, dev, m_impl->built, m_impl->program, handles);
      api->sync(dev);
      total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    for (size_t i = 0; i < args.size(); ++i)
      api->copyData(owned[i], 0, args[i].data(), 0, args[i].byteSize(), dev, cpu);
    cleanup();
    return total / std::max(1, repeat);
  } catch (...) {
    cleanup();
    throw;
  }
}

namespace {

/// Every function of a model as packed functions over device tensors.
class GPUKernelModuleNode : public runtime::ModuleNode {
public:
  struct Function {
    GPUKernelModuleNode* module = nullptr;
    transform::DeviceProgram program;
  };

  GPUKernelModuleNode(const std::vector<PrimFunc>& lowered, const Target& target) {
    bool cuda = target.kind == "cuda";
    if (!target.isGPU()) LOOM_THROW(TargetError) << "GPU kernels need a cuda or opencl target, not '" << target.str() << "'";
    m_dev = Device{cuda ? DeviceType::CUDA : DeviceType::OpenCL, 0};
    // The device first: without one, nothing else matters.
    m_api = static_cast<runtime::GPUDeviceAPI*>(runtime::DeviceAPI::get(m_dev.type));
    std::vector<transform::DeviceProgram> programs;
    for (auto& f : lowered) programs.push_back(transform::splitHostDevice(f));
    std::string source = emitGPUSource(programs, cuda ? GPUDialect::CUDA : GPUDialect::OpenCL);
    transform::GPULimits limits = deviceLimits(m_api, m_dev);
    for (auto& p : programs) transform::verifyGPULimits(p, limits);
    if (cuda) source = compileCUDAToPTX(source, target.arch.empty() ? "sm_90" : target.arch);
    m_built = m_api->buildProgram(source);
    for (auto& p : programs) {
      auto fn = std::make_unique<Function>();
      fn->module = this;
      fn->program = std::move(p);
      std::string name = fn->program.func->name;
      m_functions[name] = std::move(fn);
    }
    m_source = std::move(source);
  }
  ~GPUKernelModuleNode() override {
    if (m_built) m_api->releaseProgram(m_built);
  }

  const char* typeKey() const override { return m_dev.type == DeviceType::CUDA ? "cuda" : "opencl"; }
  std::optional<std::string> meta() const override { return m_source; }

  runtime::PackedFunc findFunction(const std::string& name) override {
    auto it = m_functions.find(name);
    if (it == m_functions.end()) return {};
    return runtime::PackedFunc(&GPUKernelModuleNode::call, it->second.get(), name, shared_from_this());
  }

private:
  static int call(LoomValue* args, int* codes, int n, LoomValue*, int* retCode, void* resource) {
    if (retCode) *retCode = kLoomArgNull;
    auto* fn = static_cast<Function*>(resource);
    try {
      const PrimFunc& f = fn->program.func;
      if (size_t(n) != f->params.size())
        throw runtime::RuntimeFailure("'" + f->name + "' takes " + std::to_string(f->params.size()) +
                                      " arguments, got " + std::to_string(n));
      std::unordered_map<const VarNode*, void*> handles;
      for (int i = 0; i < n; ++i) {
        const Var& p = f->params[size_t(i)];
        auto* t = codes[i] == kLoomArgTensor ? static_cast<LoomTensor*>(args[i].v_handle) : nullptr;
        Device dev = fn->module->m_dev;
        if (!t || t->device.device_type != int32_t(dev.type) || t->byte_offset != 0)
          throw runtime::RuntimeFailure("'" + f->name + "': argument " + std::to_string(i) + " ('" + p->name +
                                        "') must be a tensor in " + runtime::deviceTypeName(dev.type) +
                                        " device memory at offset 0");
        handles[p.get()] = t->data;
        Buffer b = f->bufferOf(p);
        if (b.defined()) handles[b->data.get()] = t->data;
      }
      runHostSteps(fn->module->m_api, fn->module->m_dev, fn->module->m_built, fn->program, handles);
      return 0;
    } catch (const std::exception& e) {
      loom_set_last_error(e.what());
      return -1;
    }
  }

  Device m_dev;
  runtime::GPUDeviceAPI* m_api = nullptr;
  void* m_built = nullptr;
  std::string m_source;
  std::map<std::string, std::unique_ptr<Function>> m_functions;
};

}  // namespace

runtime::Module buildGPUKernelModule(const std::vector<PrimFunc>& lowered, const Target& target) {
  return runtime::Module(std::make_shared<GPUKernelModuleNode>(lowered, target));
}

}  // namespace loom::codegen
