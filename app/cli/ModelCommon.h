// Helpers shared by `loom compile`, `loom run` and `loom onnx-test`: ONNX output names, tensor
// comparison and filling.
#pragma once
#include <string>
#include <vector>

#include "runtime/NDArray.h"

namespace loom::cli {

/// The names of the model's graph outputs, in order (empty when the file does not parse).
std::vector<std::string> onnxOutputNames(const std::string& path);
/// The names of the graph inputs that are not initializers, in order.
std::vector<std::string> onnxInputNames(const std::string& path);
/// Element `i` as a double (NaN for unsupported dtypes).
double elementAt(const runtime::NDArray& a, int64_t i);
/// Compares with |got - want| <= atol + rtol * |want| per element (equal infinities match, a NaN
/// result never does); on mismatch sets `why`.
bool allClose(const runtime::NDArray& got, const runtime::NDArray& want, double rtol, double atol, std::string* why);
/// A tensor filled with zeros, ones or uniform random values in [0, 1) (seeded).
runtime::NDArray filled(const std::vector<int64_t>& shape, runtime::DType t, const std::string& mode, unsigned seed);

}  // namespace loom::cli
