// copy_ (with dtype conversion and broadcasting), fill_ and cat. Same-dtype
// contiguous copies use clEnqueueCopyBuffer; the rest run kernels/copy.cl,
// one program per destination dtype with one kernel per source dtype.
#include <cstring>
#include <string>

#include "kernel_sources.h"
#include "launch.h"
#include "kernels.h"

namespace bpcl {
namespace {

bool IsContiguous(const DLTensor* t) {
  int64_t expected = 1;
  for (int32_t k = t->ndim - 1; k >= 0; --k) {
    if (t->shape[k] != 1 && t->strides[k] != expected) return false;
    expected *= t->shape[k];
  }
  return true;
}

std::string CopyOptions(const Device* d, const DtypeInfo& dst) { return DtypeDefines(dst, "T") + DeviceDefines(d); }

// Elementwise dst[...] = convert(src[...]) over `sizes`.
Status LaunchCopy(const CallCtx& ctx, const DtypeInfo& dst_t, const DtypeInfo& src_t, int32_t ndim,
                  const int64_t* sizes, const TensorRef& dst, const int64_t* dst_strides, const TensorRef& src,
                  const int64_t* src_strides) {
  TensorRef refs[4] = {dst, src, {}, {}};
  const int64_t* strides[4] = {dst_strides, src_strides, nullptr, nullptr};
  const ScalarArg none = MakeScalar(dst_t, 0, 0, true);
  const std::string kernel = std::string("copy_") + src_t.name;
  return LaunchPointwiseGeo(ctx, "copy", src::k_copy, CopyOptions(ctx.device, dst_t), kernel.c_str(), ndim, sizes,
                            refs, strides, none, none);
}

Status RunCopy(const bp_kernel_call_t* call) {
  CallCtx ctx;
  BPCL_RETURN_IF_ERROR(GetCallCtx(call, &ctx));
  if (call->num_outputs < 1 || call->num_args <= BP_ARG_COPY__SRC ||
      call->args[BP_ARG_COPY__SRC].kind != BP_VALUE_TENSOR)
    return Status(BP_STATUS_INVALID_ARGUMENT, "expected (self, src) with self as the output");
  const DLTensor* self = call->outputs[0];
  const DLTensor* src = call->args[BP_ARG_COPY__SRC].u.tensor;
  const DtypeInfo dt = GetDtype(self->dtype), st = GetDtype(src->dtype);
  BPCL_RETURN_IF_ERROR(CheckDtype(ctx.device, dt, "argument 'self'"));
  BPCL_RETURN_IF_ERROR(CheckDtype(ctx.device, st, "argument 'src'"));
  if (src->ndim != self->ndim)
    return Status(BP_STATUS_INVALID_ARGUMENT, "argument 'src': expected rank " + std::to_string(self->ndim) +
                                                  " (broadcast to self), got " + std::to_string(src->ndim));
  const int64_t n = Numel(self);
  if (n == 0) return Ok();
  TensorRef d, s;
  BPCL_RETURN_IF_ERROR(GetTensorRef(self, "self", &d));
  BPCL_RETURN_IF_ERROR(GetTensorRef(src, "src", &s));
  const bool same_dtype = std::strcmp(dt.name, st.name) == 0;
  if (d.mem == s.mem && d.offset == s.offset && same_dtype &&
      (self->ndim == 0 || std::memcmp(self->strides, src->strides, sizeof(int64_t) * self->ndim) == 0))
    return Ok();  // copying a tensor onto itself
  if (same_dtype && IsContiguous(self) && IsContiguous(src)) {
    const size_t bytes = static_cast<size_t>(n) * dt.item_size;
    const size_t doff = self->byte_offset, soff = src->byte_offset;
    const bool overlap = d.mem == s.mem && doff < soff + bytes && soff < doff + bytes;
    if (!overlap)
      return ClCheck(clEnqueueCopyBuffer(ctx.queue, s.mem, d.mem, soff, doff, bytes, 0, nullptr, nullptr),
                     "clEnqueueCopyBuffer");
  }
  if (d.mem != s.mem)
    return LaunchCopy(ctx, dt, st, self->ndim, self->shape, d, self->strides, s, src->strides);
  // self and src share a buffer: go through a contiguous temporary of src.
  int64_t tmp_strides[kMaxDims];
  int64_t expected = 1;
  for (int32_t k = self->ndim - 1; k >= 0; --k) {
    tmp_strides[k] = expected;
    expected *= self->shape[k];
  }
  cl_int err = CL_SUCCESS;
  cl_mem tmp = clCreateBuffer(ctx.device->context, CL_MEM_READ_WRITE, static_cast<size_t>(n) * st.item_size, nullptr,
                              &err);
  BPCL_CL(err, "clCreateBuffer");
  TensorRef t{tmp, 0};
  Status status = LaunchCopy(ctx, st, st, self->ndim, self->shape, t, tmp_strides, s, src->strides);
  if (status.ok()) status = LaunchCopy(ctx, dt, st, self->ndim, self->shape, d, self->strides, t, tmp_strides);
  clReleaseMemObject(tmp);  // the queue keeps it alive until the copies ran
  return status;
}

Status RunFill(const bp_kernel_call_t* call) {
  CallCtx ctx;
  BPCL_RETURN_IF_ERROR(GetCallCtx(call, &ctx));
  if (call->num_outputs < 1 || call->num_args <= BP_ARG_FILL__SCALAR_VALUE)
    return Status(BP_STATUS_INVALID_ARGUMENT, "expected (self, value) with self as the output");
  const DLTensor* self = call->outputs[0];
  const DtypeInfo t = GetDtype(self->dtype);
  BPCL_RETURN_IF_ERROR(CheckDtype(ctx.device, t, "argument 'self'"));
  const ScalarArg value = ScalarFromArg(t, call->args[BP_ARG_FILL__SCALAR_VALUE], 0.0);
  const DLTensor* in[3] = {nullptr, nullptr, nullptr};
  return LaunchPointwise(ctx, "pointwise", src::k_pointwise, DtypeDefines(t, "T") + DeviceDefines(ctx.device), "fill",
                         self, in, value, value);
}

Status RunCat(const bp_kernel_call_t* call) {
  CallCtx ctx;
  BPCL_RETURN_IF_ERROR(GetCallCtx(call, &ctx));
  if (call->num_outputs < 1 || call->num_args < BP_NARGS_CAT ||
      call->args[BP_ARG_CAT_TENSORS].kind != BP_VALUE_TENSOR_LIST || call->args[BP_ARG_CAT_DIM].kind != BP_VALUE_INT)
    return Status(BP_STATUS_INVALID_ARGUMENT, "expected (Tensor[] tensors, int dim)");
  const DLTensor* out = call->outputs[0];
  const int64_t dim = call->args[BP_ARG_CAT_DIM].u.i;
  if (dim < 0 || dim >= out->ndim)
    return Status(BP_STATUS_OUT_OF_RANGE, "argument 'dim': " + std::to_string(dim) + " out of range for rank " +
                                              std::to_string(out->ndim));
  const DtypeInfo t = GetDtype(out->dtype);
  BPCL_RETURN_IF_ERROR(CheckDtype(ctx.device, t, "output"));
  TensorRef o;
  BPCL_RETURN_IF_ERROR(GetTensorRef(out, "out", &o));
  const auto& list = call->args[BP_ARG_CAT_TENSORS].u.tensor_list;
  int64_t at = 0;
  for (int64_t k = 0; k < list.size; ++k) {
    const DLTensor* in = list.data[k];
    if (in->ndim != out->ndim)
      return Status(BP_STATUS_INVALID_ARGUMENT, "tensors[" + std::to_string(k) + "]: expected rank " +
                                                    std::to_string(out->ndim) + ", got " + std::to_string(in->ndim));
    if (Numel(in) == 0) {
      at += in->shape[dim];
      continue;
    }
    TensorRef s;
    BPCL_RETURN_IF_ERROR(GetTensorRef(in, "tensors[]", &s));
    TensorRef d{o.mem, o.offset + at * out->strides[dim]};
    BPCL_RETURN_IF_ERROR(LaunchCopy(ctx, t, t, in->ndim, in->shape, d, out->strides, s, in->strides));
    at += in->shape[dim];
  }
  return Ok();
}

}  // namespace

void AddCopyKernels(std::vector<KernelReg>* out) {
  out->push_back({BP_OP_COPY_, WrapKernel<RunCopy>, nullptr, BP_DTYPE_MASK_ALL});
  out->push_back({BP_OP_FILL__SCALAR, WrapKernel<RunFill>, nullptr, BP_DTYPE_MASK_ALL});
  out->push_back({BP_OP_CAT, WrapKernel<RunCat>, nullptr, BP_DTYPE_MASK_ALL});
}

}  // namespace bpcl
