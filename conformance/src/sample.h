// What one conformance case is made of: host tensors (values in double,
// row-major), how each input is laid out on the device (contiguous or a view
// made with the core's view operators), the boxed arguments, and what the
// suite's own reference says should come out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dtype.h"

namespace bpc {

// A dense host tensor: values row-major, each already representable in dtype.
struct HostTensor {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> sizes;
  std::vector<double> values;

  int64_t numel() const;
  int32_t ndim() const { return static_cast<int32_t>(sizes.size()); }
};

// How an input tensor is made on the device (the logical values are the
// same in every layout; only strides, offset and storage differ).
enum class Layout {
  kContiguous,  // bp_tensor_from_host + bp_tensor_to_device
  kTransposed,  // storage holds the transpose; transpose.int(-2, -1) of it (ndim >= 2)
  kStrided,     // storage holds every value twice along the last dim; slice.Tensor step 2
  kOffset,      // storage has one extra leading slice along dim 0; narrow(0, 1, n)
  kExpanded,    // storage holds `expand_from` sizes; expand(sizes) (stride-0 dims)
};
const char* layout_name(Layout layout);

struct TensorInput {
  HostTensor t;
  Layout layout = Layout::kContiguous;
  std::vector<int64_t> expand_from;  // kExpanded: the base sizes (1 where broadcast)
  bool cpu_scalar = false;           // a 0-dim tensor left on the CPU (joins any device)
  // >= 0: not a tensor of its own but a view of the device tensor of that
  // earlier argument (same storage, for overlap cases): layout kContiguous
  // is the very same view (exact alias), kTransposed its transpose. `t`
  // holds the values the view shows.
  int alias_of = -1;
};

// One boxed argument in schema order (mirrors bp_value_t).
struct Arg {
  // kOut: an out= tensor the runner preallocates on the device with
  // tensor.t's sizes, dtype and (sentinel) values.
  enum Kind { kNone, kTensor, kTensorList, kInt, kDouble, kBool, kIntList, kString, kDType, kOut };
  Kind kind = kNone;
  TensorInput tensor;
  std::vector<TensorInput> list;
  int64_t i = 0;
  double d = 0.0;
  bool b = false;
  std::vector<int64_t> ints;
  std::string s;
  DType dtype = DType::kFloat32;

  static Arg none() { return Arg(); }
  static Arg tensor_of(TensorInput t) { Arg a; a.kind = kTensor; a.tensor = std::move(t); return a; }
  static Arg int_of(int64_t v) { Arg a; a.kind = kInt; a.i = v; return a; }
  static Arg double_of(double v) { Arg a; a.kind = kDouble; a.d = v; return a; }
  static Arg bool_of(bool v) { Arg a; a.kind = kBool; a.b = v; return a; }
  static Arg ints_of(std::vector<int64_t> v) { Arg a; a.kind = kIntList; a.ints = std::move(v); return a; }
  static Arg string_of(std::string v) { Arg a; a.kind = kString; a.s = std::move(v); return a; }
  static Arg dtype_of(DType v) { Arg a; a.kind = kDType; a.dtype = v; return a; }
};

// One sample input of an operator.
struct Sample {
  std::string desc;       // "broadcast [3,1] x [1,4]"
  std::vector<Arg> args;  // the functional schema's arguments (trailing defaults may be left out)
  bool quick = true;      // part of the --quick tier
  // The call must fail (bad input). The check: status != OK, the message
  // names the operator, and no output or mutated argument was written.
  bool expect_error = false;
  double ulp_override = -1.0;  // >= 0: ULP bound for this sample instead of the op's
  // The argument the call writes (in-place self, copy_/fill_'s self, out=),
  // -1 for none. On an expected error its values must be unchanged.
  int written_arg = -1;
};

// What the reference says. `mag[k]` (optional, same length as values) is the
// sum of |terms| that made output element k (reductions, matmul): it scales
// the tolerance with the reduced length. `reduce_len` is that length.
struct Expected {
  std::vector<HostTensor> outputs;
  std::vector<std::vector<double>> mag;  // empty or one per output
  int64_t reduce_len = 0;
  std::string error;  // non-empty: the reference cannot produce this (suite bug)
};

}  // namespace bpc
