/* Loom's runtime for applications: load a compiled module, make arrays, call its functions. */
#ifndef LOOM_RUNTIME_H_
#define LOOM_RUNTIME_H_

/*
 * Link with -lloom_runtime (or the static libloom_runtime.a). Every function returns 0 on
 * success and -1 on failure, with the reason in loom_get_last_error(); nothing aborts.
 * Handles are not thread-safe objects: use one from one thread at a time.
 */

#include "loom/c_runtime_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LoomNDArray* LoomNDArrayHandle;
typedef struct LoomModule* LoomModuleHandle;
typedef struct LoomFunction* LoomFunctionHandle;

/* ---- arrays ---- */

/* A new zero-filled array of `ndim` dimensions `shape` on `device` (CPU: {kLoomCPU, 0}). */
LOOM_DLL int loom_ndarray_empty(const int64_t* shape, int ndim, LoomDataType dtype,
                                LoomDevice device, LoomNDArrayHandle* out);
/* Frees the handle (freeing NULL does nothing). */
LOOM_DLL int loom_ndarray_free(LoomNDArrayHandle array);
/* A deep copy. */
LOOM_DLL int loom_ndarray_copy(LoomNDArrayHandle array, LoomNDArrayHandle* out);
/* Copies `nbytes` (exactly the array's size in bytes) from / to host memory. */
LOOM_DLL int loom_ndarray_copy_from_bytes(LoomNDArrayHandle array, const void* data, size_t nbytes);
LOOM_DLL int loom_ndarray_copy_to_bytes(LoomNDArrayHandle array, void* data, size_t nbytes);
/* The array as a tensor view, valid while the handle lives: read its data/shape, or pass it
   to loom_function_call with type code kLoomArgTensor. NULL for a NULL handle. */
LOOM_DLL LoomTensor* loom_ndarray_tensor(LoomNDArrayHandle array);

/* ---- modules and functions ---- */

/* Loads a module (a shared library made by Loom, or any library exporting packed functions). */
LOOM_DLL int loom_module_load(const char* path, LoomModuleHandle* out);
LOOM_DLL int loom_module_free(LoomModuleHandle module);
/* The module's metadata text (see LOOM_MODULE_META_SYMBOL), or NULL when it has none; valid
   while the handle lives. */
LOOM_DLL const char* loom_module_meta(LoomModuleHandle module);
/* The packed function `name`; fails when the module has none. The function handle keeps the
   module loaded even after loom_module_free. */
LOOM_DLL int loom_module_get_function(LoomModuleHandle module, const char* name,
                                      LoomFunctionHandle* out);
LOOM_DLL int loom_function_free(LoomFunctionHandle func);
/* Calls the function; `ret`/`ret_type_code` may be NULL when the result is not wanted. A string
   result stays valid until the next call of the same function handle. */
LOOM_DLL int loom_function_call(LoomFunctionHandle func, LoomValue* args, int* type_codes,
                                int num_args, LoomValue* ret, int* ret_type_code);

/* ---- threads ---- */

/* Threads used by parallel loops (the caller included); set LOOM_NUM_THREADS before the first
   parallel call to change it. */
LOOM_DLL int loom_runtime_num_threads(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LOOM_RUNTIME_H_ */
