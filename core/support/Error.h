// The error channels: LOOM_ICHECK for our own bugs, typed Error exceptions for user-facing failures.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/support/Span.h"

namespace loom {

/// Base class of every user-facing failure. `kind()` names the error class ("ParseError",
/// "NotSingleChildError", ...); `span()` points at the text the user wrote, when there is some.
class Error : public std::runtime_error {
public:
  explicit Error(std::string message, Span span = {})
      : std::runtime_error(std::move(message)), m_span(std::move(span)) {}
  virtual const char* kind() const { return "Error"; }
  const Span& span() const { return m_span; }
  /// A one-line message without IR dumps (what the tuner logs).
  virtual std::string fastMessage() const { return what(); }
  /// The full message, which may print IR with the offending part marked.
  virtual std::string detailedMessage() const { return what(); }
  /// "file:line:col: error: message" (location omitted when unknown).
  std::string formatted() const;

private:
  Span m_span;
};

#define LOOM_DECLARE_ERROR(Name, Base)                                                           \
  class Name : public Base {                                                                     \
  public:                                                                                        \
    using Base::Base;                                                                            \
    const char* kind() const override { return #Name; }                                          \
  }

LOOM_DECLARE_ERROR(ParseError, Error);
LOOM_DECLARE_ERROR(TypeError, Error);
LOOM_DECLARE_ERROR(ValueError, Error);
LOOM_DECLARE_ERROR(RuntimeError, Error);
LOOM_DECLARE_ERROR(UnsupportedError, Error);

/// An internal invariant failed: a bug in Loom, never the user's fault.
LOOM_DECLARE_ERROR(InternalError, Error);

namespace detail {
/// Collects a message with << and throws InternalError when destroyed.
class ICheckFailure {
public:
  ICheckFailure(const char* file, int line, const char* cond);
  [[noreturn]] ~ICheckFailure() noexcept(false);
  template <class T> ICheckFailure& operator<<(const T& v) {
    m_os << v;
    return *this;
  }

private:
  std::ostringstream m_os;
};

/// Collects a message with << and throws the error type E when destroyed.
template <class E> class Thrower {
public:
  explicit Thrower(Span span = {}) : m_span(std::move(span)) {}
  [[noreturn]] ~Thrower() noexcept(false) { throw E(m_os.str(), m_span); }
  template <class T> Thrower& operator<<(const T& v) {
    m_os << v;
    return *this;
  }

private:
  Span m_span;
  std::ostringstream m_os;
};
}  // namespace detail

}  // namespace loom

/// LOOM_ICHECK(x > 0) << "context": throws InternalError naming the file, line and condition.
#define LOOM_ICHECK(cond)                                                                        \
  if (cond) {                                                                                    \
  } else                                                                                         \
    ::loom::detail::ICheckFailure(__FILE__, __LINE__, #cond)

/// LOOM_THROW(ValueError) << "message": throws a typed user-facing error.
#define LOOM_THROW(ErrorType) ::loom::detail::Thrower<::loom::ErrorType>()
#define LOOM_THROW_AT(ErrorType, span) ::loom::detail::Thrower<::loom::ErrorType>(span)
