// The base of every IR node: an intrusive reference count, and Ref<T>, the handle that shares nodes.
#pragma once
#include <atomic>
#include <cstddef>
#include <functional>
#include <type_traits>
#include <utility>

namespace loom {

/// IR nodes are immutable once built and shared between trees; Ref<T> counts their owners.
class Object {
public:
  Object() = default;
  Object(const Object&) : m_refCount(0) {}
  Object& operator=(const Object&) { return *this; }
  virtual ~Object() = default;

  void incRef() const { m_refCount.fetch_add(1, std::memory_order_relaxed); }
  void decRef() const {
    if (m_refCount.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  int useCount() const { return m_refCount.load(std::memory_order_relaxed); }

private:
  mutable std::atomic<int> m_refCount{0};
};

/// An owning handle to a const node. Equality of handles is identity (same node); use
/// structuralEqual for equality of meaning.
template <class T> class Ref {
public:
  Ref() = default;
  Ref(std::nullptr_t) {}
  Ref(const T* p) : m_ptr(p) {
    if (m_ptr) m_ptr->incRef();
  }
  Ref(const Ref& o) : Ref(o.m_ptr) {}
  Ref(Ref&& o) noexcept : m_ptr(std::exchange(o.m_ptr, nullptr)) {}
  template <class U, class = std::enable_if_t<std::is_convertible_v<const U*, const T*>>>
  Ref(const Ref<U>& o) : Ref(static_cast<const T*>(o.get())) {}
  ~Ref() {
    if (m_ptr) m_ptr->decRef();
  }
  Ref& operator=(Ref o) noexcept {
    std::swap(m_ptr, o.m_ptr);
    return *this;
  }

  const T* get() const { return m_ptr; }
  const T* operator->() const { return m_ptr; }
  const T& operator*() const { return *m_ptr; }
  bool defined() const { return m_ptr != nullptr; }
  explicit operator bool() const { return m_ptr != nullptr; }
  bool same_as(const Ref& o) const { return m_ptr == o.m_ptr; }

  /// Downcast: the node as U, or nullptr when it is not a U.
  template <class U> const U* as() const {
    if constexpr (requires { U::kNodeKind; }) {
      return m_ptr && m_ptr->nodeKind == U::kNodeKind ? static_cast<const U*>(m_ptr) : nullptr;
    } else {
      return dynamic_cast<const U*>(m_ptr);
    }
  }

private:
  const T* m_ptr = nullptr;
};

/// Hash and compare handles by identity (for maps keyed by Var, Buffer, ...).
struct RefHash {
  template <class T> size_t operator()(const Ref<T>& r) const { return std::hash<const void*>()(r.get()); }
};
struct RefEqual {
  template <class T> bool operator()(const Ref<T>& a, const Ref<T>& b) const { return a.get() == b.get(); }
};
struct RefLess {
  template <class T> bool operator()(const Ref<T>& a, const Ref<T>& b) const { return a.get() < b.get(); }
};

}  // namespace loom
