// make-packed-api: turns a lowered PrimFunc into the runtime's packed calling convention.
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

struct Pass;

/// Intrinsics the packed entry uses; code generators lower them (see codegen/CodeGenLLVM.cpp).
namespace packed {
/// loom_struct_get(base: handle, index: int32, field: int32) -> dtype of the call. Reads one
/// field of element `index` of an array of LoomValue / int (type codes) / a LoomTensor (index 0).
inline constexpr const char* kStructGet = "loom_struct_get";
/// loom_ret(value: int32): returns `value` from the function.
inline constexpr const char* kReturn = "loom_ret";
/// loom_error_fmt(fmt: string, args...: int64 or string): formats like printf (%lld, %s) and
/// records the text with loom_set_last_error.
inline constexpr const char* kErrorFmt = "loom_error_fmt";
/// loom_ptr_add(p: handle, bytes: int64) -> handle.
inline constexpr const char* kPtrAdd = "loom_ptr_add";
/// loom_ptr_to_int(p: handle) -> uint64.
inline constexpr const char* kPtrToInt = "loom_ptr_to_int";

/// The `field` argument of loom_struct_get.
enum Field : int {
  kArgInt64 = 0,      ///< LoomValue[i].v_int64 (int64)
  kArgFloat64 = 1,    ///< LoomValue[i].v_float64 (float64)
  kArgHandle = 2,     ///< LoomValue[i].v_handle (handle)
  kTypeCode = 3,      ///< int[i] (int32)
  kTensorData = 4,    ///< LoomTensor.data (handle)
  kTensorDeviceType = 5,
  kTensorDeviceId = 6,
  kTensorNDim = 7,    ///< int32
  kTensorDTypeCode = 8,   ///< uint8
  kTensorDTypeBits = 9,   ///< uint8
  kTensorDTypeLanes = 10, ///< uint16
  kTensorShape = 11,      ///< handle (int64*)
  kTensorStrides = 12,    ///< handle (int64*, may be NULL)
  kTensorByteOffset = 13, ///< uint64
};
}  // namespace packed

/// Rewrites `f` (lowered: no blocks, buffers flattened) into a function with the packed
/// signature (args: handle, type_codes: handle, num_args: int32, ret: handle,
/// ret_type_code: handle, resource_handle: handle) -> int32 whose body checks the argument
/// count, every argument's type code, and for tensors their device, ndim, dtype, shape (binding
/// symbolic dimensions on first use), strides and alignment, reporting failures through
/// loom_set_last_error as "main: argument 1 (B) has shape [32, 64], expected [64, 64]", then
/// runs the original body with the parameters bound. Sets attr "calling_conv" = "packed".
/// A function already packed is returned as is.
tir::PrimFunc makePackedAPI(const tir::PrimFunc& f);

/// The pass "make-packed-api".
Pass makePackedAPIPass();

}  // namespace loom::transform
