// The op registry: per op its attribute schema, type relation, fusion pattern and host kernel.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/graph/Expr.h"
#include "core/support/Error.h"
#include "runtime/NDArray.h"

namespace loom::te {
class Tensor;
}

namespace loom::graph {

/// A call whose argument types do not fit the op (the message names the op, the node and the
/// shapes at fault).
LOOM_DECLARE_ERROR(GraphTypeError, TypeError);

/// TVM's op pattern kinds, ordered: a smaller kind fuses more freely.
enum class OpPattern : uint8_t {
  ElemWise = 0,        ///< out[i] = f(in[i])
  Broadcast = 1,       ///< out[i] = f(in[broadcast(i)])
  Injective = 2,       ///< each output element reads one input element (reshape, transpose, ...)
  CommReduce = 3,      ///< commutative reduction (sum, max, ...)
  OutEWiseFusable = 4, ///< complex op whose output elementwise ops can fuse into (conv2d, dense)
  Tuple = 7,           ///< a tuple node
  Opaque = 8,          ///< never fused (softmax, ...)
};
const char* opPatternName(OpPattern p);

/// One attribute of an op's schema. No default: the attribute is required.
struct AttrSpec {
  std::string name;
  AttrKind kind;
  std::optional<AttrValue> defaultValue;
};

/// Output type from argument types; throws GraphTypeError (use LOOM_TYPE_FAIL).
using TypeRelation = std::function<Type(const CallNode& call, const std::vector<Type>& argTypes)>;
/// Reference host kernel: inputs (one array per argument) to outputs (one per tensor of the
/// output type, tuple fields flattened). Used by FoldConstant and the graph evaluator.
using HostKernel = std::function<std::vector<runtime::NDArray>(
    const CallNode& call, const std::vector<runtime::NDArray>& inputs, const Type& outType)>;
/// TE compute of the op (filled in by topi/ when lowering exists): output tensors from inputs.
using TECompute = std::function<std::vector<te::Tensor>(
    const CallNode& call, const std::vector<te::Tensor>& inputs, const Type& outType)>;

struct OpDef {
  std::string name;
  int numInputs = 1; ///< -1: variadic (at least one)
  std::vector<AttrSpec> attrs;
  TypeRelation typeRel;
  OpPattern pattern = OpPattern::Opaque;
  HostKernel hostKernel;
  TECompute compute;
  std::string doc;

  const AttrSpec* findAttr(const std::string& n) const;
};

/// The op registered as `name`, or nullptr.
const OpDef* findOp(const std::string& name);
/// The op registered as `name`; InternalError when missing.
const OpDef& getOp(const std::string& name);
/// All registered ops, sorted by name.
std::vector<const OpDef*> allOps();
/// Registers (or replaces) an op; for topi/ to attach `compute` use mutableOp(). Existing calls
/// keep pointing at the entry, so replace an op only before building graphs with it.
void registerOp(OpDef def);
OpDef* mutableOp(const std::string& name);

/// "nn.conv2d (node 'conv1')" or just the op name when the call has no source name.
std::string callDescription(const CallNode& call);

} // namespace loom::graph

/// LOOM_TYPE_FAIL(call) << "message": throws GraphTypeError "<op> (node '<name>'): message".
#define LOOM_TYPE_FAIL(call)                                                                       \
  ::loom::detail::Thrower<::loom::graph::GraphTypeError>()                                         \
      << ::loom::graph::callDescription(call) << ": "
