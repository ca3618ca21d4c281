/* A deployment in plain C: links only libloom_runtime.so, loads the test module, calls it. */
#include <stdio.h>
#include <string.h>

#include "loom_runtime.h"

#define CHECK(call)                                                          \
  do {                                                                       \
    if ((call) != 0) {                                                       \
      fprintf(stderr, "%s failed: %s\n", #call, loom_get_last_error());      \
      return 1;                                                              \
    }                                                                        \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: deploy_c MODULE.so\n");
    return 2;
  }
  LoomModuleHandle mod;
  LoomFunctionHandle square;
  CHECK(loom_module_load(argv[1], &mod));
  CHECK(loom_module_get_function(mod, "fixture_parallel_square", &square));
  int64_t shape[1] = {257};
  LoomDataType f32 = {kLoomDTypeFloat, 32, 1};
  LoomDevice cpu = {kLoomCPU, 0};
  LoomNDArrayHandle in, out;
  CHECK(loom_ndarray_empty(shape, 1, f32, cpu, &in));
  CHECK(loom_ndarray_empty(shape, 1, f32, cpu, &out));
  float host[257];
  for (int i = 0; i < 257; ++i) host[i] = (float)(i % 9) - 4.0f;
  CHECK(loom_ndarray_copy_from_bytes(in, host, sizeof host));
  LoomValue args[2];
  int codes[2] = {kLoomArgTensor, kLoomArgTensor};
  args[0].v_handle = loom_ndarray_tensor(in);
  args[1].v_handle = loom_ndarray_tensor(out);
  LoomValue ret;
  int ret_code;
  CHECK(loom_function_call(square, args, codes, 2, &ret, &ret_code));
  float result[257];
  CHECK(loom_ndarray_copy_to_bytes(out, result, sizeof result));
  int wrong = 0;
  for (int i = 0; i < 257; ++i) wrong += result[i] != host[i] * host[i];
  loom_function_free(square);
  LoomFunctionHandle missing = NULL;
  if (loom_module_get_function(mod, "not_there", &missing) == 0 ||
      strstr(loom_get_last_error(), "has no function 'not_there'") == NULL) {
    fprintf(stderr, "missing function not reported\n");
    return 1;
  }
  loom_ndarray_free(in);
  loom_ndarray_free(out);
  loom_module_free(mod);
  printf("deploy_c: %d threads, %d wrong of 257\n", (int)ret.v_int64, wrong);
  return wrong == 0 && ret_code == kLoomArgInt ? 0 : 1;
}
