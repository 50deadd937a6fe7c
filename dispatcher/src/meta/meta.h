// Meta functions: the semantics every backend shares (validation,
// broadcasting, type promotion, output sizes and dtype, kernel views).
//
// They are pure functions over tensor metadata (Geometry): no storage, no
// allocation, no device. The core runtime runs an operator call as:
//
//   1. MetaFunctions::infer(args)            -> MetaPlan: output dtypes/sizes,
//                                               per-argument casts, rewritten
//                                               scalar arguments (normalized dims...)
//   2. the core casts arguments (copy_ into temporaries of plan.cast_to),
//      allocates outputs (or checks the caller's out= / in-place tensor
//      against plan.outputs), and
//   3. MetaFunctions::prepare(args', outputs) -> KernelViews: the geometry
//                                               each tensor argument and output
//                                               has in bp_kernel_call_t
//                                               (broadcast by stride 0,
//                                               keepdim unsqueezed, ...),
//                                               per the kernel contract in ops.yaml.
//
// View operators use ViewFn instead: one output sharing args[0]'s storage.
//
// Error messages name the operator, the argument, what was expected and
// what came: "add: argument 'other' of sizes [2, 3] cannot broadcast with
// 'self' of sizes [4, 3] at dim 0 (3 vs 2)".
#pragma once

#include <cstdint>

#include "backplane/backplane.h"
#include "dtype.h"
#include "status.h"

namespace bp::core {

constexpr int kMaxArgs = 16;
constexpr int kMaxOutputs = 4;

struct Geometry {
  DLDataType dtype{};
  int32_t ndim = 0;
  int64_t sizes[BP_MAX_NDIM];    // entries past ndim are 0
  int64_t strides[BP_MAX_NDIM];  // elements; entries past ndim are 0
  int64_t offset = 0;            // storage offset in elements
  bp_device_t device{};

  Geometry() : sizes(), strides() {}
  // Leaves sizes and strides unwritten, for a caller that writes all of them
  // (the output of an operator call: zeroing both arrays first compiled to a
  // `rep stos` on every allocating call).
  struct ArraysUnset {};
  explicit Geometry(ArraysUnset) {}

  int64_t numel() const;
  bool is_contiguous() const;
  void set_contiguous_strides();      // row-major strides for sizes
  // torch's channels-last memory format of a 4-D [N, C, H, W]: dense with C
  // fastest, then W, H, N (strides of size-1 dims do not matter). A tensor
  // that is also contiguous is not channels-last here: where both hold, the
  // default layout stays (torch's suggest_memory_format).
  bool is_channels_last() const;
  void set_channels_last_strides();   // ndim 4: NHWC strides for sizes
};

// One argument after defaults were filled in, as meta functions see it.
struct MetaArg {
  int32_t kind = BP_VALUE_NONE;  // enum bp_value_kind
  const Geometry* tensor = nullptr;
  const Geometry* const* tensors = nullptr;  // BP_VALUE_TENSOR_LIST
  int64_t num_tensors = 0;
  int64_t i = 0;
  double d = 0.0;
  bool b = false;
  const int64_t* ints = nullptr;  // BP_VALUE_INT_LIST
  int64_t num_ints = 0;
  DLDataType dtype{};
  const char* str = nullptr;
};

struct MetaCallInfo {
  const char* op_name;         // "add.Tensor", for messages
  const char* const* arg_names;  // schema argument names, for messages
  int32_t num_args;
};

struct MetaPlan {
  int32_t num_outputs = 1;
  Geometry outputs[kMaxOutputs];        // dtype and sizes of each output
  // dtype each tensor argument (or each element of a tensor list) must have
  // when the kernel runs; bits == 0 means "keep".
  DLDataType cast_to[kMaxArgs] = {};
  // Replacement scalar arguments handed to the kernel (kind NONE: keep the
  // caller's). Int lists point into int_storage.
  MetaArg rewritten[kMaxArgs];
  int64_t int_storage[4 * BP_MAX_NDIM] = {};
  // True when outputs must not alias inputs (matmul, cat...): the core uses
  // a temporary and copies if an out= tensor overlaps an input.
  bool no_output_alias = false;
  // Bit i set: tensor argument i has a dtype the meta function checked
  // itself and is no compute dtype (attention's bool attn_mask), so the
  // operator's dtype claims do not apply to it.
  uint32_t own_dtype_args = 0;
};

struct KernelViews {
  Geometry args[kMaxArgs];              // for BP_VALUE_TENSOR arguments
  Geometry outputs[kMaxOutputs];
};

struct MetaFunctions {
  const char* name;  // "binary", as in ops.yaml's meta field
  Status (*infer)(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan);
  // `args` are the arguments after casts (tensor geometries may differ from
  // infer's); `outputs` are the actual output tensors' geometries.
  Status (*prepare)(const MetaCallInfo& info, const MetaArg* args, const MetaPlan& plan,
                    const Geometry* outputs, KernelViews* views);
};

// View operators: compute the view's geometry over args[0]'s storage.
struct ViewFunctions {
  const char* name;  // "transpose"
  Status (*view)(const MetaCallInfo& info, const MetaArg* args, Geometry* out);
};

// Lookup by ops.yaml meta name; nullptr if unknown. Defined in meta/registry.cpp.
const MetaFunctions* FindMetaFunctions(const char* name);
const ViewFunctions* FindViewFunctions(const char* name);

// reshape's view function returns this code (and no other view function
// does) when no strides can express the new shape over self's storage; `out`
// then holds the result's sizes with contiguous strides and offset 0, and the
// core makes a contiguous copy of self with those sizes instead of a view.
constexpr bp_status_t kViewNeedsCopy = BP_STATUS_FAILED_PRECONDITION;

// cat leaves out 1-D empty inputs (PyTorch's legacy rule): the core drops the
// list elements for which this holds before calling the kernel.
inline bool CatSkipsInput(const Geometry& g) { return g.ndim == 1 && g.sizes[0] == 0; }

// torch.can_cast: floating -> integral and non-bool -> bool are refused.
bool CanCastDtype(DLDataType from, DLDataType to);

// Checks the caller's out= tensor (inplace false) or in-place self (inplace
// true) `actual` against plan.outputs[index]: same sizes (Backplane never
// resizes an out= tensor) and a dtype the result can be cast to, as PyTorch.
// INVALID_ARGUMENT naming the operator and the argument otherwise.
Status CheckOutput(const MetaCallInfo& info, const MetaPlan& plan, int index, const Geometry& actual,
                   bool inplace);

// Overlap of written tensors (meta/overlap.cpp), libtorch's rules. The core
// checks every call that writes a caller's tensor (in-place self, out=,
// copy_), on the fast path and the generic one alike, before any kernel.
// True when two elements of `g` share an address (a stride-0 dim of size > 1).
bool HasInternalOverlap(const Geometry& g);
// INVALID_ARGUMENT naming argument `arg` when HasInternalOverlap(out).
Status CheckNoInternalOverlap(const MetaCallInfo& info, int arg, const Geometry& out);
// For an output and an input on one memory: INVALID_ARGUMENT naming both
// when their memory overlaps, except the exact alias (same offset, sizes and
// strides) where `exact_alias_ok` (pointwise operators). Views that cannot be
// told apart cheaply (one of them not dense, as x[:, 0] and x[:, 1]) pass, as
// torch's MemOverlapStatus::TOO_HARD does.
// `in_shift` is the byte distance from out's storage base to in's (0 for one
// storage; the memory of two storages over one buffer is compared by range).
Status CheckNoPartialOverlap(const MetaCallInfo& info, int out_arg, const Geometry& out, int in_arg, const Geometry& in,
                             bool exact_alias_ok, int64_t in_shift = 0);
// The bytes [*begin, *end) of its storage (from the base) a tensor can touch,
// from its offset, sizes, strides and item size; false when it has no element.
bool TouchedBytes(const Geometry& g, int64_t* begin, int64_t* end);
// True for the pointwise families (output element i reads only element i of
// each input), where an output may be the exact alias of an input.
bool IsPointwise(const MetaFunctions* m);
// True where writing one address twice is harmless (fill_ writes one value
// everywhere; torch skips its overlap check too): the core runs such a call
// on the written view's distinct addresses instead of refusing it.
bool WritesOneValue(const MetaFunctions* m);

// Shared helpers for meta and runtime code.
// The broadcasting rule (PyTorch's, trailing dims aligned): the sizes a and
// b broadcast to, into out; -1, or the first dim that does not broadcast.
int32_t BroadcastSizes(const Geometry& a, const Geometry& b, int32_t* out_ndim, int64_t* out_sizes);
// Broadcasts a and b (PyTorch rules) into out; error names both arguments.
Status BroadcastShapes(const MetaCallInfo& info, int arg_a, const Geometry& a, int arg_b,
                       const Geometry& b, int32_t* out_ndim, int64_t* out_sizes);
// PyTorch's result_type over tensor arguments (dim tensors beat 0-dim tensors,
// categories bool < integral < floating) and scalars.
DLDataType ResultType(const MetaArg* args, const int* arg_indices, int count);
// Normalizes a possibly negative dim against ndim (ndim 0 accepts -1 and 0).
Status WrapDim(const MetaCallInfo& info, int arg, int64_t dim, int32_t ndim, int32_t* out_dim);

}  // namespace bp::core
