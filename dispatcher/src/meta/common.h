// Helpers shared by the meta function families (internal to meta/).
#pragma once

#include <string>

#include "meta/meta.h"

namespace bp::core::meta {

// "[2, 3]"
// "[2, 3]"; a list longer than BP_MAX_NDIM shows its first BP_MAX_NDIM
// entries and its length, so a caller's huge list never makes a huge message.
std::string SizesText(const int64_t* sizes, int64_t n);
inline std::string SizesText(const Geometry& g) { return SizesText(g.sizes, g.ndim); }
// "add" for "add.Tensor", "add_.Tensor", "add.out", "myvendor::add": the base
// operator name, used where semantics differ by operator (sub, neg, ...).
std::string BaseName(const MetaCallInfo& info);
// BaseName(info) == name, without building a string (meta functions run on
// every generic operator call).
bool BaseNameIs(const MetaCallInfo& info, const char* name);
// The schema argument name of `arg`, "arg3" if the core gave none.
std::string ArgName(const MetaCallInfo& info, int arg);
// "op.name: argument 'x' " prefix.
std::string ArgPrefix(const MetaCallInfo& info, int arg);

// True when args[i] exists and holds a value (not NONE).
inline bool Has(const MetaCallInfo& info, const MetaArg* args, int i) {
  return i < info.num_args && args[i].kind != BP_VALUE_NONE;
}

// Requires args[i] to be a tensor with a dtype Backplane knows.
Status RequireTensor(const MetaCallInfo& info, const MetaArg* args, int i, DType* out_dtype);
// Requires args[i] to be an int, read into *v.
Status IntArg(const MetaCallInfo& info, const MetaArg* args, int i, int64_t* v);
// Hands the kernel argument `arg` as the INT v (a dim normalized by infer).
inline void RewriteInt(MetaPlan* plan, int arg, int64_t v) {
  plan->rewritten[arg].kind = BP_VALUE_INT;
  plan->rewritten[arg].i = v;
}
// The two-tensor prologue (copy_, matmul, linear, binary ops): args[0] and
// args[1] are tensors; *first_dtype (may be NULL) gets args[0]'s dtype.
Status RequireTwoTensors(const MetaCallInfo& info, const MetaArg* args, DType* first_dtype);
// The (self, int dim, index) prologue of index_select, gather and scatter:
// arguments 0 and 2 are tensors, 1 an int wrapped against self's rank into
// *dim, and index has dtype int64 or int32; *self_dtype is self's dtype.
Status SelfDimIndexArgs(const MetaCallInfo& info, const MetaArg* args, DType* self_dtype, int32_t* dim);
// Requires an INT_LIST (or NONE when allow_none).
Status RequireIntList(const MetaCallInfo& info, const MetaArg* args, int i);

// PyTorch's promoteTypes on Backplane's dtype set; kInvalid where PyTorch's
// answer is outside it (uint8 with int8 -> int16).
DType PromoteTypes(DType a, DType b);
// ResultType with an error naming the arguments when there is no common dtype.
Status ResultTypeChecked(const MetaCallInfo& info, const MetaArg* args, const int* idx, int count,
                         DType* out);
// torch's canCast: floating -> integral and non-bool -> bool are refused.
bool CanCast(DType from, DType to);

// Checks element count and byte size fit int64 (OUT_OF_RANGE) and rank.
Status CheckSizes(const MetaCallInfo& info, const char* what, const int64_t* sizes, int32_t ndim,
                  DType dtype);
// Fills plan->outputs[index] as a contiguous tensor and checks its size.
Status SetOutput(const MetaCallInfo& info, MetaPlan* plan, int index, DType dtype,
                 const int64_t* sizes, int32_t ndim, bp_device_t device);
// The device of the call: the first tensor with dims, else the first tensor.
bp_device_t CallDevice(const MetaCallInfo& info, const MetaArg* args);

// `g` seen with `sizes` (ndim >= g.ndim): leading new dims and size-1 dims
// that grow get stride 0. Caller guarantees the shapes broadcast.
Geometry BroadcastTo(const Geometry& g, const int64_t* sizes, int32_t ndim);
// BroadcastTo's strides only, into `strides` (ndim entries).
void BroadcastStrides(const Geometry& g, const int64_t* sizes, int32_t ndim, int64_t* strides);
// Kernel views equal to the arguments and outputs as they are.
void ViewsAsIs(const MetaArg* args, int num_args, const Geometry* outputs, int num_outputs,
               KernelViews* views);

// A prepare() that hands every tensor to the kernel as it is.
Status AsIsPrepare(const MetaCallInfo& info, const MetaArg* args, const MetaPlan& plan,
                   const Geometry* outputs, KernelViews* views);

}  // namespace bp::core::meta
