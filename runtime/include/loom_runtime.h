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

/* ---- packaged models (made by `loom compile`: one shared library NAME.so, or NAME.tar) ---- */

typedef struct LoomPackage* LoomPackageHandle;

/* Loads the package at `path` (a model library .so or a .tar, told apart by content): kernels,
   executor graph, parameters. Fails with a message naming the file and the problem for an empty,
   truncated or non-package file, a missing member or symbol, an unsupported format version, a
   damaged member, kernels built for another machine ("built for aarch64, this machine is
   x86_64"), or a kernel the graph calls that the kernels lack. A library is checked before it is
   loaded: nothing of a bad file runs. */
LOOM_DLL int loom_package_load(const char* path, LoomPackageHandle* out);
/* Frees the handle (freeing NULL does nothing). */
LOOM_DLL int loom_package_free(LoomPackageHandle pkg);
/* The package's metadata (metadata.json's text, or the library's embedded copy), valid while the
   handle lives. */
LOOM_DLL int loom_package_metadata(LoomPackageHandle pkg, const char** out);
LOOM_DLL int loom_package_num_inputs(LoomPackageHandle pkg, int* out);
LOOM_DLL int loom_package_num_outputs(LoomPackageHandle pkg, int* out);
/* Name of input / output `index`, valid while the handle lives. */
LOOM_DLL int loom_package_input_name(LoomPackageHandle pkg, int index, const char** out);
LOOM_DLL int loom_package_output_name(LoomPackageHandle pkg, int index, const char** out);
/* Index of the input / output called `name`; fails listing the names when none is. */
LOOM_DLL int loom_package_input_index(LoomPackageHandle pkg, const char* name, int* out);
LOOM_DLL int loom_package_output_index(LoomPackageHandle pkg, const char* name, int* out);
/* Shape of input / output `index`: `*ndim` dimensions at `*shape` (valid until the next call on
   the handle). For a dynamic package (symbolic dims, loom_package_is_dynamic) an input's shape is
   the one it was last set with and an output's the one of the last run; before that a symbolic
   dim reads 0. */
LOOM_DLL int loom_package_input_shape(LoomPackageHandle pkg, int index, const int64_t** shape, int* ndim);
LOOM_DLL int loom_package_output_shape(LoomPackageHandle pkg, int index, const int64_t** shape, int* ndim);
LOOM_DLL int loom_package_input_dtype(LoomPackageHandle pkg, int index, LoomDataType* out);
LOOM_DLL int loom_package_output_dtype(LoomPackageHandle pkg, int index, LoomDataType* out);
/* Size in bytes of input / output `index` (elements times element size). */
LOOM_DLL int loom_package_input_nbytes(LoomPackageHandle pkg, int index, size_t* out);
LOOM_DLL int loom_package_output_nbytes(LoomPackageHandle pkg, int index, size_t* out);
/* Copies `nbytes` of dense row-major data into input `index` / `name`; `nbytes` must be exactly
   the input's size (the message gives the expected dtype, shape and bytes). */
LOOM_DLL int loom_package_set_input(LoomPackageHandle pkg, int index, const void* data, size_t nbytes);
LOOM_DLL int loom_package_set_input_by_name(LoomPackageHandle pkg, const char* name, const void* data,
                                            size_t nbytes);
/* Copies `nbytes` of dense row-major data of shape `shape` (`ndim` dims) into input `index`: the
   way to set an input of a dynamic package, whose symbolic dims take any extent that fits the
   model (the same symbol equal across inputs, at most its bound); a static package's input takes
   only its own shape. `nbytes` must be the shape's size. Fails naming the input, the dim and the
   values (e.g. "input 'data': dimension 3 (W) is 4096, above its bound W <= 2048"). */
LOOM_DLL int loom_package_set_input_shaped(LoomPackageHandle pkg, int index, const void* data, size_t nbytes,
                                           const int64_t* shape, int ndim);
/* `*out` = 1 when the package has symbolic dims (inputs of many shapes), else 0. */
LOOM_DLL int loom_package_is_dynamic(LoomPackageHandle pkg, int* out);
/* Dim `axis` of input `index` as text: a number, or the symbol or expression of a symbolic dim
   ("W", "(H + 1)//2"); valid until the next call on the handle. `*bound` (when not NULL) is the
   symbol's upper bound, or -1 when the dim is not a bounded symbol. */
LOOM_DLL int loom_package_input_dim(LoomPackageHandle pkg, int index, int axis, const char** text, int64_t* bound);
/* Copies a tensor into input `index`; its dtype must be the input's, its shape too (for a dynamic
   package any shape that fits, as loom_package_set_input_shaped), it must be on the CPU and
   compact (strides NULL or row-major). */
LOOM_DLL int loom_package_set_input_tensor(LoomPackageHandle pkg, int index, const LoomTensor* tensor);
/* Runs the model on the inputs set so far (unset inputs hold zeros or their last value). */
LOOM_DLL int loom_package_run(LoomPackageHandle pkg);
/* Copies output `index` of the last run into `buf`; `nbytes` must be exactly the output's size. */
LOOM_DLL int loom_package_get_output(LoomPackageHandle pkg, int index, void* buf, size_t nbytes);

/* ---- threads ---- */

/* Threads used by parallel loops (the caller included); set LOOM_NUM_THREADS before the first
   parallel call to change it. */
LOOM_DLL int loom_runtime_num_threads(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LOOM_RUNTIME_H_ */
