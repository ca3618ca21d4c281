// The C functions generated code calls: workspaces and parallel launches (see loom/c_runtime_api.h).
#include "loom/c_runtime_api.h"
#include "runtime/DeviceAPI.h"
#include "runtime/LastError.h"
#include "runtime/ThreadPool.h"

using namespace loom::runtime;

extern "C" {

void* loom_backend_alloc_workspace(int device_type, int device_id, uint64_t nbytes,
                                   int dtype_code_hint, int dtype_bits_hint) {
  void* result = nullptr;
  int rc = guardCall("loom_backend_alloc_workspace", [&] {
    DType hint{uint8_t(dtype_code_hint), uint8_t(dtype_bits_hint > 0 ? dtype_bits_hint : 8), 1};
    Device dev{DeviceType(device_type), device_id};
    result = DeviceAPI::get(dev.type)->allocWorkspace(dev, size_t(nbytes), hint);
    return 0;
  });
  return rc == 0 ? result : nullptr;
}

int loom_backend_free_workspace(int device_type, int device_id, void* ptr) {
  return guardCall("loom_backend_free_workspace", [&] {
    Device dev{DeviceType(device_type), device_id};
    DeviceAPI::get(dev.type)->freeWorkspace(dev, ptr);
    return 0;
  });
}

int loom_backend_parallel_launch(FLambda f, void* cdata, int num_task) {
  return guardCall("loom_backend_parallel_launch",
                   [&] { return ThreadPool::global().launch(f, cdata, num_task); });
}

int loom_backend_parallel_barrier(int task_id, int num_task) {
  return ThreadPool::barrier(task_id, num_task);
}

int loom_backend_num_threads(void) { return ThreadPool::global().numThreads(); }

}  // extern "C"
