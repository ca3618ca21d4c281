// The host side of an OpenCL operator: kernel source built on the OpenCL device, launched in host-step order.
#include "codegen/CodeGenOpenCL.h"

#include <chrono>
#include <unordered_map>

#include "codegen/CodeGenCUDA.h"
#include "codegen/CodeGenLLVM.h"
#include "runtime/RuntimeFailure.h"
#include "runtime/opencl/OpenCLAPI.h"

namespace loom::codegen {

using namespace loom::tir;
using runtime::Device;
using runtime::DeviceType;
using runtime::KernelArg;

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
  transform::GPULimits limits;
  runtime::AttrValue maxThreads = api->attr({DeviceType::OpenCL, 0}, runtime::DeviceAttr::MaxThreadsPerBlock);
  if (auto* v = std::get_if<int64_t>(&maxThreads))
    limits.maxThreadsPerBlock = std::min(limits.maxThreadsPerBlock, *v);
  transform::verifyGPULimits(m_impl->program, limits);
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
  std::unordered_map<const VarNode*, int64_t> scalars;
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
      std::unordered_map<const VarNode*, void*> temps;
      for (auto& step : m_impl->program.steps) {
        switch (step.kind) {
        case transform::HostStep::Kind::Alloc: {
          void* d = api->allocData(dev, size_t(step.count) * size_t(std::max(1, step.dtype.bytes())), 64, {});
          temps[step.var.get()] = d;
          handles[step.var.get()] = d;
          break;
        }
        case transform::HostStep::Kind::Free:
          api->sync(dev);
          api->freeData(dev, temps[step.var.get()]);
          temps.erase(step.var.get());
          handles.erase(step.var.get());
          break;
        case transform::HostStep::Kind::Launch: {
          const transform::DeviceKernel& k = m_impl->program.kernels[size_t(step.kernel)];
          std::vector<KernelArg> kargs;
          for (auto& v : k.params) {
            auto it = handles.find(v.get());
            if (it == handles.end())
              throw runtime::RuntimeFailure("kernel '" + k.name + "' needs '" + v->name + "', which the host does not have");
            kargs.push_back({KernelArg::Kind::Buffer, it->second, 0, 0});
          }
          api->launch(m_impl->built, k.name, kargs, k.grid, k.block);
          break;
        }
        }
      }
      api->sync(dev);
      for (auto& [v, d] : temps) api->freeData(dev, d);
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

}  // namespace loom::codegen
