// Builders for the boxed argument structs of the C ABI. bp_value_t (public
// API) and bp_kernel_arg_t (kernel contract) share one layout apart from the
// tensor pointer type, so one template per kind serves both.
#pragma once

#include <cstdint>
#include <vector>

#include "backplane/types.h"

namespace bp_box {

template <typename V, typename TensorPtr>
V Tensor(TensorPtr t) {
  V v{};
  v.kind = BP_VALUE_TENSOR;
  v.u.tensor = t;
  return v;
}
template <typename V, typename TensorPtr>
V TensorList(const std::vector<TensorPtr>& ts) {  // ts must outlive the call
  V v{};
  v.kind = BP_VALUE_TENSOR_LIST;
  v.u.tensor_list.data = ts.data();
  v.u.tensor_list.size = static_cast<int64_t>(ts.size());
  return v;
}
template <typename V>
V Int(int64_t i) {
  V v{};
  v.kind = BP_VALUE_INT;
  v.u.i = i;
  return v;
}
template <typename V>
V Double(double d) {
  V v{};
  v.kind = BP_VALUE_DOUBLE;
  v.u.d = d;
  return v;
}
template <typename V>
V Bool(bool b) {
  V v{};
  v.kind = BP_VALUE_BOOL;
  v.u.b = b ? 1 : 0;
  return v;
}
template <typename V>
V String(const char* s) {
  V v{};
  v.kind = BP_VALUE_STRING;
  v.u.str = s;
  return v;
}
template <typename V>
V IntList(const std::vector<int64_t>& ints) {  // ints must outlive the call
  V v{};
  v.kind = BP_VALUE_INT_LIST;
  v.u.int_list.data = ints.data();
  v.u.int_list.size = static_cast<int64_t>(ints.size());
  return v;
}
template <typename V>
V Dtype(DLDataType d) {
  V v{};
  v.kind = BP_VALUE_DTYPE;
  v.u.dtype = d;
  return v;
}
template <typename V>
V None() {
  V v{};
  v.kind = BP_VALUE_NONE;
  return v;
}

}  // namespace bp_box
