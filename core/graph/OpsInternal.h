// Shared helpers of the op family files (Ops*.cpp): host tensors, shape helpers, registration.
#pragma once
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/graph/Op.h"

namespace loom::graph {

void registerNNOps();
void registerElemwiseOps();
void registerTransformOps();
void registerReduceOps();
/// nn.recurrence (OpsRecurrent.cpp) and its activations, shared with its lowering.
void registerRecurrentOps();
/// image.resize2d_cubic (OpsImage.cpp).
void registerImageOps();
/// The input coordinate of output coordinate `o` under ONNX Resize's coordinate_transformation_mode
/// (OpsNN.cpp; givenScale 0: out/in).
double resizeInCoord(const std::string& mode, int64_t o, int64_t inLen, int64_t outLen, double givenScale);
/// scatter_elements and scatter_nd (OpsScatter.cpp).
void registerScatterOps();
/// channel_shuffle (OpsLayout.cpp).
void registerLayoutOps();
double recurrenceActivation(const std::string& name, double a, double b, double x);

/// A host tensor for reference kernels: values held as double (exact for the int64 values of
/// shape computations and for float32), written back in the output dtype.
struct HostTensor {
  std::vector<int64_t> shape;
  DataType dtype;
  std::vector<double> v;

  HostTensor() = default;
  HostTensor(std::vector<int64_t> s, DataType t)
      : shape(std::move(s)), dtype(t), v(size_t(count(shape)), 0.0) {}
  static int64_t count(const std::vector<int64_t>& s) {
    int64_t n = 1;
    for (int64_t d : s)
      n *= d;
    return n;
  }
  int64_t numel() const { return int64_t(v.size()); }
  /// Row-major strides of `shape`.
  std::vector<int64_t> strides() const;
};

HostTensor fromNDArray(const runtime::NDArray& a);
/// Converts to `a.dtype`: integers truncate toward zero, bools are v != 0.
runtime::NDArray toNDArray(const HostTensor& a);

/// The tensor type of a call argument; GraphTypeError when it is a tuple.
const TensorTypeNode& argTensor(const CallNode& call, const std::vector<Type>& args, size_t i);
/// Normalizes a possibly negative axis against `ndim`; GraphTypeError when out of range.
int64_t normAxis(const CallNode& call, int64_t axis, int64_t ndim);
/// Numpy broadcasting of shapes (static dims must agree or be 1; a symbolic dim against a static
/// one > 1 takes the static one). GraphTypeError names both shapes.
Shape broadcastShapes(const CallNode& call, const Shape& a, const Shape& b);
std::vector<int64_t> broadcastStatic(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
/// The flat index into `in` (of shape inShape, right-aligned broadcasting) of output multi-index
/// `idx` (of the output's rank).
int64_t broadcastIndex(const std::vector<int64_t>& idx, const std::vector<int64_t>& inShape);
/// Unravels flat index `flat` in `shape` into `idx`.
void unravel(int64_t flat, const std::vector<int64_t>& shape, std::vector<int64_t>& idx);

/// Wraps a single-output HostTensor kernel as a HostKernel.
using SimpleKernel = std::function<HostTensor(
    const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& out)>;
HostKernel simpleKernel(SimpleKernel k);

/// Registration shorthand.
void defineOp(const std::string& name, int numInputs, OpPattern pattern,
              std::vector<AttrSpec> attrs, TypeRelation rel, SimpleKernel kernel, std::string doc);

/// Attribute spec shorthands.
AttrSpec attrInt(std::string n, std::optional<int64_t> d = std::nullopt);
AttrSpec attrFloat(std::string n, std::optional<double> d = std::nullopt);
AttrSpec attrString(std::string n, std::optional<std::string> d = std::nullopt);
AttrSpec attrInts(std::string n, std::optional<std::vector<int64_t>> d = std::nullopt);
AttrSpec attrDType(std::string n);

} // namespace loom::graph
