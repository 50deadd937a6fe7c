// Reductions: sum, mean, amax, amin, argmax over any dims (kernels/reduce.cl).
// Contract: args[0] has the output dtype (argmax: its own); `dim` is a
// sorted, unique, non-negative INT_LIST (all dims when the caller gave none);
// outputs[0] has keepdim=True sizes.
#include <algorithm>
#include <cstring>
#include <string>

#include "geometry.h"
#include "kernel_sources.h"
#include "kernels.h"

namespace bpcl {

size_t GroupSize(const Device* d, size_t cap) {
  size_t limit = d->max_work_group_size < cap ? d->max_work_group_size : cap;
  size_t g = 1;
  while (g * 2 <= limit) g *= 2;
  return g;
}

namespace {

struct ReduceOp {
  const char* op_name;  // functional schema name
  const char* base;
  bool floating_only;
  bool is_argmax;
};

// Every reduction's kernel finds self and dim at the same indices.
constexpr int kSelf = BP_ARG_SUM_DIM_INTLIST_SELF;
constexpr int kDim = BP_ARG_SUM_DIM_INTLIST_DIM;
static_assert(kSelf == BP_ARG_MEAN_DIM_SELF && kSelf == BP_ARG_AMAX_SELF && kSelf == BP_ARG_AMIN_SELF &&
                  kSelf == BP_ARG_ARGMAX_SELF,
              "reductions: self");
static_assert(kDim == BP_ARG_MEAN_DIM_DIM && kDim == BP_ARG_AMAX_DIM && kDim == BP_ARG_AMIN_DIM &&
                  kDim == BP_ARG_ARGMAX_DIM,
              "reductions: dim");

Status RunReduce(const bp_kernel_call_t* call) {
  CallCtx ctx;
  BPCL_RETURN_IF_ERROR(GetCallCtx(call, &ctx));
  const ReduceOp* op = static_cast<const ReduceOp*>(call->kernel_data);
  if (call->num_args <= kSelf || call->args[kSelf].kind != BP_VALUE_TENSOR || call->num_outputs < 1)
    return Status(BP_STATUS_INVALID_ARGUMENT, "expected (Tensor self, dim, ...) and one output");
  const DLTensor* in = call->args[kSelf].u.tensor;
  const DLTensor* out = call->outputs[0];
  const DtypeInfo t = GetDtype(in->dtype);
  BPCL_RETURN_IF_ERROR(CheckDtype(ctx.device, t, "argument 'self'"));
  if (op->floating_only && t.kind < kKindFloat)
    return Status(BP_STATUS_UNIMPLEMENTED, std::string("needs a floating dtype, got ") + t.name);
  if (op->is_argmax && t.kind == kKindBool) return Status(BP_STATUS_UNIMPLEMENTED, "argmax of bool");
  if (out->ndim != in->ndim)
    return Status(BP_STATUS_INVALID_ARGUMENT, "output: expected keepdim sizes of rank " + std::to_string(in->ndim) +
                                                  ", got rank " + std::to_string(out->ndim));
  // Which dims are reduced.
  bool reduced[kMaxDims] = {};
  const bp_kernel_arg_t* dim = call->num_args > kDim ? &call->args[kDim] : nullptr;
  if (in->ndim == 0 || dim == nullptr || dim->kind == BP_VALUE_NONE ||
      (dim->kind == BP_VALUE_INT_LIST && dim->u.int_list.size == 0)) {
    // All dims (a 0-dim input reduces its one element whatever dim says).
    for (int32_t k = 0; k < in->ndim; ++k) reduced[k] = true;
  } else if (dim->kind == BP_VALUE_INT_LIST || dim->kind == BP_VALUE_INT) {
    const int64_t n = dim->kind == BP_VALUE_INT ? 1 : dim->u.int_list.size;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t dd = dim->kind == BP_VALUE_INT ? dim->u.i : dim->u.int_list.data[j];
      if (dd < 0 || dd >= in->ndim)
        return Status(BP_STATUS_OUT_OF_RANGE, "argument 'dim': " + std::to_string(dd) + " out of range for rank " +
                                                  std::to_string(in->ndim) + " (expected normalized dims)");
      reduced[dd] = true;
    }
  } else {
    return Status(BP_STATUS_INVALID_ARGUMENT, "argument 'dim': expected an int list");
  }
  TensorRef ri, ro;
  BPCL_RETURN_IF_ERROR(GetTensorRef(in, "self", &ri));
  BPCL_RETURN_IF_ERROR(GetTensorRef(out, "out", &ro));

  ReduceGeo g;
  std::memset(&g, 0, sizeof g);
  int64_t kstr[2][kMaxDims] = {}, rstr[1][kMaxDims] = {};
  g.out_numel = 1;
  g.red_numel = 1;
  for (int32_t k = 0; k < in->ndim; ++k) {
    if (reduced[k]) {
      g.r_sizes[g.rdim] = in->shape[k];
      rstr[0][g.rdim] = in->strides[k];
      g.red_numel *= in->shape[k];
      ++g.rdim;
    } else {
      if (out->shape[k] != in->shape[k])
        return Status(BP_STATUS_INVALID_ARGUMENT, "output: size " + std::to_string(out->shape[k]) + " at dim " +
                                                      std::to_string(k) + ", expected " + std::to_string(in->shape[k]));
      g.k_sizes[g.kdim] = in->shape[k];
      kstr[0][g.kdim] = out->strides[k];
      kstr[1][g.kdim] = in->strides[k];
      g.out_numel *= in->shape[k];
      ++g.kdim;
    }
  }
  if (g.out_numel == 0) return Ok();
  // argmax indexes row-major within the reduced dims: keep them uncoalesced
  // only as far as coalescing preserves that order (it does: merging keeps
  // row-major order), so coalesce both groups.
  Coalesce(&g.kdim, g.k_sizes, kstr, 2);
  Coalesce(&g.rdim, g.r_sizes, rstr, 1);
  std::memcpy(g.k_out_strides, kstr[0], sizeof g.k_out_strides);
  std::memcpy(g.k_in_strides, kstr[1], sizeof g.k_in_strides);
  std::memcpy(g.r_in_strides, rstr[0], sizeof g.r_in_strides);
  g.in_off = ri.offset;
  g.out_off = ro.offset;

  const std::string options = DtypeDefines(t, "T") + DeviceDefines(ctx.device);
  // Short reductions, or many outputs whose reduced elements are strided
  // (neighbouring outputs then read neighbouring memory): one work-item per
  // output. Otherwise a work-group per output reads contiguous runs.
  const bool serial = g.red_numel < 64 || (g.out_numel >= 1024 && g.rdim > 0 && g.r_in_strides[g.rdim - 1] != 1);
  const size_t L = serial ? 1 : GroupSize(ctx.device, 256);
  const std::string kname = std::string("k_") + op->base + (serial || L == 1 ? "_serial" : "_group");
  const bool f32_in_double = t.kind == kKindFloat && t.item_size == 4 && ctx.device->fp64;
  const bool is_sum = std::strcmp(op->base, "sum") == 0 || std::strcmp(op->base, "mean") == 0;
  const size_t acc_size =
      op->is_argmax ? t.ct_size : is_sum ? (t.kind >= kKindFloat ? (f32_in_double ? 8 : t.ct_size) : 8) : t.ct_size;
  // CPU drivers run a work-group on one thread: a few long reductions are
  // split in chunks over all compute units, then combined.
  const int64_t parts = std::max<int64_t>(4 * static_cast<int64_t>(ctx.device->compute_units), 1);
  if (!op->is_argmax && ctx.device->local_mem_is_global && g.out_numel < parts && g.red_numel >= 65536) {
    const int32_t P = static_cast<int32_t>(parts);
    const int64_t chunk = (g.red_numel + P - 1) / P;
    cl_int err = CL_SUCCESS;
    cl_mem part = clCreateBuffer(ctx.device->context, CL_MEM_READ_WRITE,
                                 static_cast<size_t>(g.out_numel * P) * acc_size, nullptr, &err);
    BPCL_CL(err, "clCreateBuffer");
    const size_t g1 = static_cast<size_t>(g.out_numel * P), g2 = static_cast<size_t>(g.out_numel);
    Status st = Launch(ctx, "reduce", src::k_reduce, options, (std::string("k_") + op->base + "_part").c_str(),
                       {Arg(g), Arg(part), Arg(ri.mem), Arg(chunk), Arg(P)}, 1, &g1, nullptr);
    if (st.ok())
      st = Launch(ctx, "reduce", src::k_reduce, options, (std::string("k_") + op->base + "_fin").c_str(),
                  {Arg(g), Arg(ro.mem), Arg(part), Arg(P)}, 1, &g2, nullptr);
    clReleaseMemObject(part);  // freed by OpenCL once the queued kernels ran
    return st;
  }
  std::vector<KArg> args = {Arg(g), Arg(ro.mem), Arg(ri.mem)};
  if (serial || L == 1) {
    const size_t global = static_cast<size_t>(g.out_numel);
    return Launch(ctx, "reduce", src::k_reduce, options, kname.c_str(), args, 1, &global, nullptr);
  }
  args.push_back(LocalArg(L * acc_size));
  if (op->is_argmax) args.push_back(LocalArg(L * sizeof(int64_t)));
  const size_t global = static_cast<size_t>(g.out_numel) * L;
  return Launch(ctx, "reduce", src::k_reduce, options, kname.c_str(), args, 1, &global, &L);
}

const ReduceOp kSum{BP_OP_SUM_DIM_INTLIST, "sum", false, false};
const ReduceOp kMean{BP_OP_MEAN_DIM, "mean", true, false};
const ReduceOp kAmax{BP_OP_AMAX, "amax", false, false};
const ReduceOp kAmin{BP_OP_AMIN, "amin", false, false};
const ReduceOp kArgmax{BP_OP_ARGMAX, "argmax", false, true};

}  // namespace

void AddReduceKernels(std::vector<KernelReg>* out) {
  for (const ReduceOp* op : {&kSum, &kMean, &kAmax, &kAmin, &kArgmax}) {
    // The dtypes RunReduce takes: floating only, or every dtype but bool for argmax.
    const uint64_t dtypes = op->floating_only ? BP_DTYPE_MASK_FLOATING
                            : op->is_argmax   ? BP_DTYPE_MASK_ALL & ~BP_DTYPE_MASK_BOOL
                                              : BP_DTYPE_MASK_ALL;
    out->push_back({op->op_name, WrapKernel<RunReduce>, const_cast<ReduceOp*>(op), dtypes});
  }
}

}  // namespace bpcl
