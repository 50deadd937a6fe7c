// Boxed arguments of bp_op_call (bp_value_t), one builder per kind. The
// pointers they carry (tensors, int lists, strings) are borrowed: they must
// outlive the call.
#pragma once

#include <cstdint>
#include <vector>

#include "backplane/backplane.h"
#include "dtype.h"

namespace bpc {

inline bp_value_t vnone() {
  bp_value_t v{};
  v.kind = BP_VALUE_NONE;
  return v;
}
// NONE when t is nullptr (an optional tensor left out).
inline bp_value_t vt(bp_tensor_t* t) {
  if (t == nullptr) return vnone();
  bp_value_t v{};
  v.kind = BP_VALUE_TENSOR;
  v.u.tensor = t;
  return v;
}
inline bp_value_t vi(int64_t i) {
  bp_value_t v{};
  v.kind = BP_VALUE_INT;
  v.u.i = i;
  return v;
}
inline bp_value_t vd(double d) {
  bp_value_t v{};
  v.kind = BP_VALUE_DOUBLE;
  v.u.d = d;
  return v;
}
inline bp_value_t vb(bool b) {
  bp_value_t v{};
  v.kind = BP_VALUE_BOOL;
  v.u.b = b ? 1 : 0;
  return v;
}
inline bp_value_t vl(const std::vector<int64_t>& ints) {
  bp_value_t v{};
  v.kind = BP_VALUE_INT_LIST;
  v.u.int_list.data = ints.data();
  v.u.int_list.size = static_cast<int64_t>(ints.size());
  return v;
}
inline bp_value_t vs(const char* s) {
  bp_value_t v{};
  v.kind = BP_VALUE_STRING;
  v.u.str = s;
  return v;
}
inline bp_value_t vdtype(DType d) {
  bp_value_t v{};
  v.kind = BP_VALUE_DTYPE;
  v.u.dtype = dtype_to_dl(d);
  return v;
}

}  // namespace bpc
