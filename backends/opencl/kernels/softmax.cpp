// softmax.int and log_softmax.int (kernels/softmax.cl). Contract: dim is
// normalized; the input is already cast to the output dtype.
#include <cstring>
#include <string>

#include "geometry.h"
#include "kernel_sources.h"
#include "kernels.h"

namespace bpcl {
namespace {

// softmax.int and log_softmax.int: self and dim at the same indices.
constexpr int kSelf = BP_ARG_SOFTMAX_INT_SELF;
constexpr int kDim = BP_ARG_SOFTMAX_INT_DIM;
static_assert(kSelf == BP_ARG_LOG_SOFTMAX_INT_SELF && kDim == BP_ARG_LOG_SOFTMAX_INT_DIM, "softmax arguments");

Status RunSoftmax(const bp_kernel_call_t* call) {
  CallCtx ctx;
  BPCL_RETURN_IF_ERROR(GetCallCtx(call, &ctx));
  const char* base = static_cast<const char*>(call->kernel_data);
  if (call->num_args <= kDim || call->args[kSelf].kind != BP_VALUE_TENSOR || call->args[kDim].kind != BP_VALUE_INT ||
      call->num_outputs < 1)
    return Status(BP_STATUS_INVALID_ARGUMENT, "expected (Tensor self, int dim, ...) and one output");
  const DLTensor* in = call->args[kSelf].u.tensor;
  const DLTensor* out = call->outputs[0];
  const DtypeInfo t = GetDtype(in->dtype);
  BPCL_RETURN_IF_ERROR(CheckDtype(ctx.device, t, "argument 'self'"));
  if (t.kind < kKindFloat) return Status(BP_STATUS_UNIMPLEMENTED, std::string("needs a floating dtype, got ") + t.name);
  if (out->ndim != in->ndim) return Status(BP_STATUS_INVALID_ARGUMENT, "output rank differs from input rank");
  int64_t dim = call->args[kDim].u.i;
  if (in->ndim == 0 && (dim == 0 || dim == -1)) dim = -1;  // a 0-dim tensor: one row of one element
  else if (dim < 0 || dim >= in->ndim)
    return Status(BP_STATUS_OUT_OF_RANGE, "argument 'dim': " + std::to_string(dim) + " out of range for rank " +
                                              std::to_string(in->ndim) + " (expected a normalized dim)");
  TensorRef ri, ro;
  BPCL_RETURN_IF_ERROR(GetTensorRef(in, "self", &ri));
  BPCL_RETURN_IF_ERROR(GetTensorRef(out, "out", &ro));
  SoftmaxGeo g;
  std::memset(&g, 0, sizeof g);
  int64_t kstr[2][kMaxDims] = {};
  g.rows = 1;
  g.n = 1;
  for (int32_t k = 0; k < in->ndim; ++k) {
    if (k == dim) {
      g.n = in->shape[k];
      g.in_stride = in->strides[k];
      g.out_stride = out->strides[k];
      continue;
    }
    g.k_sizes[g.kdim] = in->shape[k];
    kstr[0][g.kdim] = in->strides[k];
    kstr[1][g.kdim] = out->strides[k];
    g.rows *= in->shape[k];
    ++g.kdim;
  }
  if (g.rows == 0 || g.n == 0) return Ok();
  Coalesce(&g.kdim, g.k_sizes, kstr, 2);
  std::memcpy(g.k_in_strides, kstr[0], sizeof g.k_in_strides);
  std::memcpy(g.k_out_strides, kstr[1], sizeof g.k_out_strides);
  g.in_off = ri.offset;
  g.out_off = ro.offset;
  const std::string options = DtypeDefines(t, "T") + DeviceDefines(ctx.device);
  // Short rows, or many rows strided along dim (neighbouring rows then read
  // neighbouring memory): one work-item per row. Otherwise a work-group per row.
  const bool serial = g.n < 64 || (g.rows >= 1024 && g.in_stride != 1);
  const size_t L = serial ? 1 : GroupSize(ctx.device, 256);
  std::vector<KArg> args = {Arg(g), Arg(ro.mem), Arg(ri.mem)};
  if (ctx.device->local_mem_is_global && t.kind == kKindFloat && g.in_stride == 1 && g.out_stride == 1) {
    // CPU drivers: one work-item per contiguous row, explicitly vectorized.
    const size_t global = static_cast<size_t>(g.rows);
    return Launch(ctx, "softmax", src::k_softmax, options, (std::string("k_") + base + "_vec").c_str(), args, 1,
                  &global, nullptr);
  }
  if (L == 1) {
    const size_t global = static_cast<size_t>(g.rows);
    return Launch(ctx, "softmax", src::k_softmax, options, (std::string("k_") + base + "_serial").c_str(), args, 1,
                  &global, nullptr);
  }
  const size_t acc = (t.kind == kKindFloat && t.item_size == 4 && ctx.device->fp64) ? 8 : t.ct_size;
  args.push_back(LocalArg(L * t.ct_size));
  args.push_back(LocalArg(L * acc));
  const size_t global = static_cast<size_t>(g.rows) * L;
  return Launch(ctx, "softmax", src::k_softmax, options, (std::string("k_") + base + "_group").c_str(), args, 1,
                &global, &L);
}

}  // namespace

void AddSoftmaxKernels(std::vector<KernelReg>* out) {
  static const char kSoftmax[] = "softmax";
  static const char kLogSoftmax[] = "log_softmax";
  // RunSoftmax takes floating dtypes only.
  out->push_back({BP_OP_SOFTMAX_INT, WrapKernel<RunSoftmax>, const_cast<char*>(kSoftmax), BP_DTYPE_MASK_FLOATING});
  out->push_back(
      {BP_OP_LOG_SOFTMAX_INT, WrapKernel<RunSoftmax>, const_cast<char*>(kLogSoftmax), BP_DTYPE_MASK_FLOATING});
}

}  // namespace bpcl
