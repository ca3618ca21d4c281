// Buffers: a typed, shaped view of memory, named by a handle variable.
#pragma once
#include <string>
#include <vector>

#include "core/tir/Expr.h"

namespace loom::tir {

/// A multi-dimensional buffer. Like a Var, a Buffer's identity is its node. `strides` is empty for
/// a compact row-major layout. `scope` is "global", "shared", "local", "global.cache", ...
struct BufferNode : public Object {
  std::string name;
  Var data;  ///< the handle variable that holds the base address
  DataType dtype;
  std::vector<Expr> shape;
  std::vector<Expr> strides;
  Expr elemOffset;  ///< element offset from `data`, 0 by default
  std::string scope = "global";
  int alignment = 64;  ///< bytes
  Span span;

  size_t ndim() const { return shape.size(); }
};

/// A buffer with compact row-major layout; `data` is created as a fresh handle Var named `name`.
Buffer makeBuffer(std::string name, DataType dtype, std::vector<Expr> shape,
                  std::string scope = "global");

/// A copy of `b` with some fields changed (the result is a new buffer, a different identity).
Buffer withShape(const Buffer& b, std::vector<Expr> shape);
Buffer withScope(const Buffer& b, std::string scope);
Buffer withName(const Buffer& b, std::string name);

/// A rectangular region of a buffer: one Range per dimension.
struct BufferRegion {
  Buffer buffer;
  std::vector<Range> region;
  BufferRegion() = default;
  BufferRegion(Buffer b, std::vector<Range> r) : buffer(std::move(b)), region(std::move(r)) {}
  /// The whole buffer.
  static BufferRegion full(const Buffer& b);
};

}  // namespace loom::tir
