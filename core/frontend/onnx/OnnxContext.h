// Internals shared by the ONNX importer files: the conversion context and the converter table.
#pragma once
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h> // defines ONNX_API, then includes onnx-ml.pb.h

#include "core/frontend/onnx/OnnxImporter.h"
#include "core/graph/Expr.h"
#include "core/tir/Expr.h"

namespace loom::frontend::onnxi {

/// The state of one import: the values produced so far and helpers for converters.
class Context {
public:
  Context(std::string file, int opset) : m_file(std::move(file)), m_opset(opset) {}

  int opset() const { return m_opset; }
  const std::string& file() const { return m_file; }
  std::unordered_map<std::string, graph::Expr>& values() { return m_values; }

  /// The node being converted (set by the importer loop).
  const onnx::NodeProto* node = nullptr;
  /// How many data-dependent symbols (nonzero_0, ...) this import has made.
  int dataSymbols = 0;
  /// NonZero results on data by their input, so NonZero of one value gives one count symbol
  /// (PyTorch exports x[mask], y[mask] with a NonZero each; their counts must agree).
  std::unordered_map<const graph::ExprNode*, graph::Expr> nonZeroOf;

  /// Throws ImportError "file: node 'n' (Op): message".
  [[noreturn]] void fail(const std::string& message) const;

  bool hasInput(int i) const;
  graph::Expr input(int i) const;
  int numInputs() const { return node->input_size(); }
  /// The input's value as a constant, folding constant subgraphs; fails when it is not constant.
  runtime::NDArray constInput(int i) const;
  std::vector<int64_t> constInts(int i) const;
  std::vector<double> constFloats(int i) const;

  const onnx::AttributeProto* attr(const std::string& name) const;
  int64_t attrInt(const std::string& name, int64_t def) const;
  double attrFloat(const std::string& name, double def) const;
  std::string attrString(const std::string& name, const std::string& def) const;
  std::vector<int64_t> attrInts(const std::string& name, std::vector<int64_t> def = {}) const;
  std::vector<double> attrFloats(const std::string& name, std::vector<double> def = {}) const;

  /// The typed tensor type of `e` (infers it); fails when it is a tuple.
  const graph::TensorTypeNode& tensorType(const graph::Expr& e) const;
  /// The static shape of `e`; fails naming the symbolic dims when it is not static.
  std::vector<int64_t> staticShape(const graph::Expr& e) const;
  /// The dims of `e`'s shape, static or symbolic; fails on an unknown (`?`) dim.
  graph::Shape dims(const graph::Expr& e) const;
  /// An integer input that is a constant or a computation on shapes (Shape -> Gather -> Concat),
  /// its values as int64 expressions over the model's symbols; fails when it depends on data.
  std::vector<tir::Expr> shapeInput(int i) const;

  /// A call of `op` named after the current node.
  graph::Expr call(const std::string& op, std::vector<graph::Expr> args,
                   graph::Attrs attrs = {}) const;

private:
  std::string m_file;
  int m_opset;
  std::unordered_map<std::string, graph::Expr> m_values;
};

/// A converter returns the node's outputs, in order (fewer than the node declares is fine when
/// the rest are unused).
using Converter = std::function<std::vector<graph::Expr>(Context&)>;
const std::unordered_map<std::string, Converter>& converters();
/// Converters defined outside OnnxConverters.cpp (OnnxConvertersLoss.cpp); converters() includes them.
const std::unordered_map<std::string, Converter>& extraConverters();
/// Einsum and NonZero (OnnxConvertersEinsum.cpp); converters() includes them.
const std::unordered_map<std::string, Converter>& einsumConverters();
/// LSTM, GRU and RNN (OnnxConvertersRecurrent.cpp); converters() includes them.
const std::unordered_map<std::string, Converter>& recurrentConverters();
/// Scatter ops and image ops (OnnxConvertersIndex.cpp); converters() includes them.
const std::unordered_map<std::string, Converter>& indexImageConverters();

/// Loop, Scan and If, unrolled or inlined at import (OnnxConvertersControl.cpp); converters() includes them.
const std::unordered_map<std::string, Converter>& controlFlowConverters();

/// 3-D (NCDHW) Conv and ConvTranspose as sums of 2-D ones over the depth taps (OnnxConverters3D.cpp).
graph::Expr conv3dOf(Context& c, graph::Expr x, graph::Expr w, const graph::Expr& bias, const std::vector<int64_t>& strides,
                     const std::vector<int64_t>& dil, const std::vector<int64_t>& pads, int64_t group);
std::vector<graph::Expr> convTranspose3d(Context& c);

/// Resize, linear or cubic, as two products with interpolation matrices computed at import
/// (OnnxConvertersResize.cpp): antialias (opset 18) and tf_crop_and_resize (`roi`: 4 starts,
/// 4 ends). `out` holds the 4 output sizes.
graph::Expr resizeByMatrices(Context& c, const graph::Expr& x, const std::vector<int64_t>& out,
                             const std::vector<double>& scales, const std::string& mode, const std::string& ctm,
                             bool antialias, const std::vector<double>& roi);

/// Mish, Gelu, GroupNormalization and CenterCropPad (opsets 18-21, OnnxConvertersOpset18.cpp);
/// converters() includes them.
const std::unordered_map<std::string, Converter>& newerOpsetConverters();

/// NonZero, TopK, NonMaxSuppression, Unique and Compress on data, as dyn.* ops with a fresh
/// symbol per output count (OnnxConvertersDataDep.cpp); they replace the constant-only converters
/// of the same ops, which still handle constant inputs.
const std::unordered_map<std::string, Converter>& dataDependentConverters();

/// Cast and CastLike per opset: bfloat16 truncation before opset 19 (OnnxConvertersCast.cpp);
/// they replace the plain converters of OnnxConverters.cpp.
const std::unordered_map<std::string, Converter>& castConverters();

/// Det, MelWeightMatrix and TfIdfVectorizer composed from graph ops (OnnxConvertersNumeric.cpp).
const std::unordered_map<std::string, Converter>& numericConverters();

/// Quantized ops, ONNX's and ONNX Runtime's com.microsoft ones (keys "com.microsoft.QGemm"),
/// as qnn.* ops (OnnxConvertersQuant.cpp); converters() includes them.
const std::unordered_map<std::string, Converter>& quantConverters();

/// The converter table's key of a node: its op type, prefixed with its domain outside ONNX's
/// default domain ("com.microsoft.QLinearAdd").
std::string converterKey(const onnx::NodeProto& n);

/// TensorProto -> NDArray; throws ImportError naming `what` for unsupported element types.
runtime::NDArray tensorFromProto(const onnx::TensorProto& t, const std::string& what);
/// ONNX element type code -> DataType; ok=false when unsupported.
DataType dtypeFromOnnx(int code, bool* ok);

} // namespace loom::frontend::onnxi
