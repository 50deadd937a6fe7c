// The boxing behind ops.hpp's typed operator functions: ArgPack turns typed
// arguments into bp_value_t cells, call_one/call_into run one bp_op_call. Not
// a public interface of its own; included at the end of backplane.hpp.
#pragma once

#include <tuple>
#include <utility>

#include "backplane/backplane.hpp"

namespace bp {

namespace detail {

/// Boxes the arguments of one typed operator call (used by ops.hpp). Holds
/// the storage that the bp_value_t pointers borrow for the call.
template <int N>
struct ArgPack {
  bp_value_t values[N > 0 ? N : 1] = {};
  int count = 0;
  // Tensor[] arguments' handles. Moving an inner vector keeps its buffer, so
  // the pointers in `values` stay valid as lists grow; and an ArgPack without
  // lists allocates nothing (this is on the path of every typed call).
  std::vector<std::vector<bp_tensor_t*>> lists;

  /// The next value slot, cleared and of `kind`.
  bp_value_t& next(int32_t kind) {
    bp_value_t& v = values[count++];
    v = bp_value_t{};
    v.kind = kind;
    return v;
  }
  /// Appends one argument, converted to its bp_value_t kind (an undefined
  /// Tensor or an empty optional becomes BP_VALUE_NONE).
  void add(const Tensor& t) {
    if (!t.defined()) {
      next(BP_VALUE_NONE);
      return;
    }
    next(BP_VALUE_TENSOR).u.tensor = t.get();
  }
  void add(const std::optional<Tensor>& t) {
    if (t && t->defined()) {
      add(*t);
    } else {
      next(BP_VALUE_NONE);
    }
  }
  void add(const std::vector<Tensor>& ts) {
    lists.emplace_back();
    for (const Tensor& t : ts) lists.back().push_back(t.get());
    bp_value_t& v = next(BP_VALUE_TENSOR_LIST);
    v.u.tensor_list.data = lists.back().data();
    v.u.tensor_list.size = static_cast<int64_t>(lists.back().size());
  }
  void add(int64_t i) { next(BP_VALUE_INT).u.i = i; }
  void add(const std::optional<int64_t>& i) {
    if (i) {
      add(*i);
    } else {
      next(BP_VALUE_NONE);
    }
  }
  void add(double d) { next(BP_VALUE_DOUBLE).u.d = d; }
  void add(bool b) { next(BP_VALUE_BOOL).u.b = b ? 1 : 0; }
  void add(const Scalar& s) {
    // Field by field: copying the whole cell would read it with wider loads
    // than the stores that wrote it (a store-forwarding stall on every call).
    const bp_value_t& x = s.value();
    bp_value_t& v = next(x.kind);
    if (x.kind == BP_VALUE_DOUBLE) {
      v.u.d = x.u.d;
    } else if (x.kind == BP_VALUE_BOOL) {
      v.u.b = x.u.b;
    } else {
      v.u.i = x.u.i;
    }
  }
  void add(DLDataType d) { next(BP_VALUE_DTYPE).u.dtype = d; }
  void add(const std::optional<DLDataType>& d) {
    if (d) {
      add(*d);
    } else {
      next(BP_VALUE_NONE);
    }
  }
  void add(const std::string& s) { next(BP_VALUE_STRING).u.str = s.c_str(); }
  void add(const std::optional<std::string>& s) {
    if (s) {
      add(*s);
    } else {
      next(BP_VALUE_NONE);
    }
  }
  void add(const std::vector<int64_t>& v) {
    bp_value_t& x = next(BP_VALUE_INT_LIST);
    x.u.int_list.data = v.data();
    x.u.int_list.size = static_cast<int64_t>(v.size());
  }
  void add(const OptionalIntList& v) {
    if (v.has_value()) {
      add(*v);
    } else {
      next(BP_VALUE_NONE);
    }
  }
};

/// The operator at core-table position `index` named `name`, resolved once
/// per context and cached.
inline const bp_op_t* find_cached(ContextState& st, int index, const char* name) {
  const bp_op_t* op = st.ops[index].load(std::memory_order_acquire);
  if (op != nullptr) return op;
  bp_op_t* found = nullptr;
  check(bp_op_find(st.ctx, name, &found));
  st.ops[index].store(found, std::memory_order_release);
  return found;
}

/// The tuple of Tensors owning out[0..] (used by call_tuple).
template <typename... Ts, size_t... I>
inline std::tuple<Ts...> Wrap(const std::shared_ptr<ContextState>& st, bp_tensor_t* const* out,
                              std::index_sequence<I...>) {
  return std::tuple<Ts...>(Ts(st, out[I])...);
}

/// Calls a one-result operator and wraps the result.
inline Tensor call_one(const std::shared_ptr<ContextState>& st, int index, const char* name,
                       const bp_value_t* args, int32_t num_args) {
  if (!st) throw Error(BP_STATUS_INVALID_ARGUMENT, std::string("INVALID_ARGUMENT: ") + name + ": undefined tensor argument");
  const bp_op_t* op = find_cached(*st, index, name);
  bp_tensor_t* out = nullptr;
  check(bp_op_call(st->ctx, op, args, num_args, &out, 1));
  return Tensor(st, out);
}

/// Calls an operator with several tensor results (torch's tuple returns,
/// such as topk's values and indices) and wraps them in schema order.
template <typename... Ts>
inline std::tuple<Ts...> call_tuple(const std::shared_ptr<ContextState>& st, int index, const char* name,
                                    const bp_value_t* args, int32_t num_args) {
  if (!st) throw Error(BP_STATUS_INVALID_ARGUMENT, std::string("INVALID_ARGUMENT: ") + name + ": undefined tensor argument");
  const bp_op_t* op = find_cached(*st, index, name);
  constexpr size_t kN = sizeof...(Ts);
  bp_tensor_t* out[kN] = {};
  check(bp_op_call(st->ctx, op, args, num_args, out, static_cast<int32_t>(kN)));
  return Wrap<Ts...>(st, out, std::index_sequence_for<Ts...>{});
}

/// Calls an in-place or out= operator for its effect on the tensor it
/// writes; the caller returns that tensor.
inline void call_into(const std::shared_ptr<ContextState>& st, int index, const char* name, const bp_value_t* args,
                      int32_t num_args) {
  if (!st) throw Error(BP_STATUS_INVALID_ARGUMENT, std::string("INVALID_ARGUMENT: ") + name + ": undefined tensor argument");
  check(bp_op_call(st->ctx, find_cached(*st, index, name), args, num_args, nullptr, 0));
}

}  // namespace detail

}  // namespace bp
