// Meta functions of conv2d, max_pool2d and avg_pool2d.
//
// Output sizes as PyTorch: conv floor((H + 2p - d(k-1) - 1) / s) + 1; pooling
// the same with ceil_mode rounding up, except that the last window must start
// inside the input or the left padding. Int lists reach the kernel with
// length 2 (a single value is repeated; pooling's empty stride = kernel_size);
// 3-D (unbatched) inputs reach it as [1, C, H, W]. Also defines the shared
// image-shape helpers of meta/nchw.h.
#include "meta/families.h"
#include "meta/nchw.h"

namespace bp::core::meta {

Status Pair(const MetaCallInfo& info, const MetaArg* args, int i, const int64_t* dflt, int64_t* out) {
  BP_RETURN_IF_ERROR(RequireIntList(info, args, i));
  int64_t n = args[i].num_ints;
  if (n == 0 && dflt != nullptr) {
    out[0] = dflt[0], out[1] = dflt[1];
  } else if (n == 1) {
    out[0] = out[1] = args[i].ints[0];
  } else if (n == 2) {
    out[0] = args[i].ints[0], out[1] = args[i].ints[1];
  } else {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected a single int or two ints" +
                                                 (dflt ? std::string(" (or [])") : std::string()) + ", got " +
                                                 SizesText(args[i].ints, static_cast<int32_t>(n)));
  }
  // Keeps the size arithmetic (H + 2 * padding, dilation * kernel) far from int64 overflow.
  const int64_t kLimit = int64_t{1} << 30;
  if (out[0] > kLimit || out[1] > kLimit || out[0] < -kLimit || out[1] < -kLimit) {
    return Error(BP_STATUS_OUT_OF_RANGE, ArgPrefix(info, i) + "expected values of magnitude <= 2^30, got " +
                                             SizesText(out, 2));
  }
  return Status::Ok();
}

Status PairAtLeast(const MetaCallInfo& info, const MetaArg* args, int i, const int64_t* dflt, int64_t min,
                   const char* what, int64_t* out) {
  BP_RETURN_IF_ERROR(Pair(info, args, i, dflt, out));
  if (out[0] >= min && out[1] >= min) return Status::Ok();
  return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected " + what + ", got " + SizesText(out, 2));
}

void RewritePair(MetaPlan* plan, int arg, int slot, const int64_t* v) {
  plan->int_storage[2 * slot] = v[0];
  plan->int_storage[2 * slot + 1] = v[1];
  plan->rewritten[arg].kind = BP_VALUE_INT_LIST;
  plan->rewritten[arg].ints = &plan->int_storage[2 * slot];
  plan->rewritten[arg].num_ints = 2;
}

Status InputImage(const MetaCallInfo& info, const MetaArg* args, DType* d) {
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, d));
  const Geometry& in = *args[0].tensor;
  bool ok = in.ndim == 3 || in.ndim == 4;
  for (int32_t k = in.ndim - 3; ok && k < in.ndim; ++k) ok = in.sizes[k] > 0;
  if (!ok) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 0) + "expected sizes [C, H, W] or [N, C, H, W] with non-zero C, H, W, got " +
                     SizesText(in));
  }
  return Status::Ok();
}

Status Input3or4(const MetaCallInfo& info, const MetaArg* args, DType* d) {
  BP_RETURN_IF_ERROR(InputImage(info, args, d));
  if (!DtypeIsFloating(*d)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 0) + "expected a floating dtype, got " + DtypeName(*d));
  }
  return Status::Ok();
}

Status SetOutput4(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan, DType d, int64_t c,
                  const int64_t* hw) {
  const Geometry& in = *args[0].tensor;
  int64_t sizes[4];
  int32_t n = 0;
  if (in.ndim == 4) sizes[n++] = in.sizes[0];
  sizes[n++] = c;
  sizes[n++] = hw[0];
  sizes[n++] = hw[1];
  BP_RETURN_IF_ERROR(SetOutput(info, plan, 0, d, sizes, n, in.device));
  // A channels-last input gives a channels-last output, as torch's
  // convolution and pooling do: a model kept in NHWC stays there, and
  // oneDNN's NHWC kernels read and write it without reorders.
  if (in.is_channels_last()) plan->outputs[0].set_channels_last_strides();
  return Status::Ok();
}

std::string HW(int64_t h, int64_t w) { return "(" + std::to_string(h) + " x " + std::to_string(w) + ")"; }

Geometry Batched(const Geometry& g) {
  if (g.ndim != 3) return g;
  Geometry b = g;
  b.ndim = 4;
  for (int k = 3; k > 0; --k) b.sizes[k] = g.sizes[k - 1], b.strides[k] = g.strides[k - 1];
  b.sizes[0] = 1;
  b.strides[0] = g.sizes[0] * g.strides[0];
  return b;
}

Status NchwPrepare(const MetaCallInfo& info, const MetaArg* args, const MetaPlan& plan, const Geometry* outputs,
                   KernelViews* views) {
  ViewsAsIs(args, info.num_args, outputs, plan.num_outputs, views);
  views->args[0] = Batched(views->args[0]);
  views->outputs[0] = Batched(views->outputs[0]);
  return Status::Ok();
}

Status ReadConvArgs(const MetaCallInfo& info, const MetaArg* args, const char* weight_layout, int dilation_arg,
                    ConvArgs* c) {
  DType wd;
  BP_RETURN_IF_ERROR(Input3or4(info, args, &c->dtype));
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 1, &wd));
  const Geometry& w = *args[1].tensor;
  if (w.ndim != 4) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 1) + "expected sizes " + weight_layout + ", got " + SizesText(w));
  }
  if (wd != c->dtype) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 1) + "expected dtype " + DtypeName(c->dtype) + " (as 'input'), got " + DtypeName(wd));
  }
  return ReadConvWindow(info, args, ConvPos{3, 4, dilation_arg, 6}, c);
}

Status ReadConvWindow(const MetaCallInfo& info, const MetaArg* args, const ConvPos& pos, ConvArgs* c) {
  BP_RETURN_IF_ERROR(PairAtLeast(info, args, pos.stride, nullptr, 1, "positive strides", c->stride));
  BP_RETURN_IF_ERROR(PairAtLeast(info, args, pos.padding, nullptr, 0, "non-negative padding", c->padding));
  BP_RETURN_IF_ERROR(PairAtLeast(info, args, pos.dilation, nullptr, 1, "positive dilation", c->dilation));
  c->groups = Has(info, args, pos.groups) ? args[pos.groups].i : 1;
  if (c->groups < 1) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, pos.groups) + "expected a positive int, got " + std::to_string(c->groups));
  }
  return Status::Ok();
}

Status ConvBias(const MetaCallInfo& info, const MetaArg* args, int64_t c_out, DType d) {
  if (!Has(info, args, 2)) return Status::Ok();
  DType bd;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 2, &bd));
  const Geometry& b = *args[2].tensor;
  if (b.ndim != 1 || b.sizes[0] != c_out || bd != d) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 2) + "expected sizes [" + std::to_string(c_out) +
                                                 "] and dtype " + DtypeName(d) + ", got " + SizesText(b) + " " +
                                                 DtypeName(bd));
  }
  return Status::Ok();
}

Status ConvOutputSize(const MetaCallInfo& info, const MetaArg* args, const ConvArgs& c, int64_t* hw) {
  const Geometry& in = *args[0].tensor;
  const Geometry& w = *args[1].tensor;
  int64_t c_in = in.sizes[in.ndim - 3];
  if (w.sizes[0] % c.groups != 0) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 1) + "of sizes " + SizesText(w) +
                                                 ": expected C_out divisible by groups=" + std::to_string(c.groups));
  }
  if (w.sizes[1] * c.groups != c_in) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 0) + "of sizes " + SizesText(in) + ": expected " +
                                                 std::to_string(w.sizes[1] * c.groups) + " channels (weight of sizes " +
                                                 SizesText(w) + ", groups=" + std::to_string(c.groups) + "), got " +
                                                 std::to_string(c_in));
  }
  for (int k = 0; k < 2; ++k) {
    if (w.sizes[2 + k] > (int64_t{1} << 32)) {
      return Error(BP_STATUS_OUT_OF_RANGE, ArgPrefix(info, 1) + "of sizes " + SizesText(w) +
                                               ": expected kernel sizes <= 2^32");
    }
  }
  for (int k = 0; k < 2; ++k) {
    int64_t padded = in.sizes[in.ndim - 2 + k] + 2 * c.padding[k];
    int64_t eff = c.dilation[k] * (w.sizes[2 + k] - 1) + 1;
    if (padded < eff) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   ArgPrefix(info, 1) + "has a dilated kernel " +
                       HW(c.dilation[0] * (w.sizes[2] - 1) + 1, c.dilation[1] * (w.sizes[3] - 1) + 1) +
                       " larger than the padded input " +
                       HW(in.sizes[in.ndim - 2] + 2 * c.padding[0], in.sizes[in.ndim - 1] + 2 * c.padding[1]));
    }
    hw[k] = (padded - eff) / c.stride[k] + 1;
  }
  return Status::Ok();
}

namespace {

// conv2d(input, weight, bias, stride, padding, dilation, groups)
Status Conv2dInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  ConvArgs c;
  BP_RETURN_IF_ERROR(ReadConvArgs(info, args, "[C_out, C_in / groups, kH, kW]", /*dilation_arg=*/5, &c));
  int64_t hw[2];
  BP_RETURN_IF_ERROR(ConvOutputSize(info, args, c, hw));
  BP_RETURN_IF_ERROR(ConvBias(info, args, args[1].tensor->sizes[0], c.dtype));
  RewritePair(plan, 3, 0, c.stride);
  RewritePair(plan, 4, 1, c.padding);
  RewritePair(plan, 5, 2, c.dilation);
  plan->no_output_alias = true;
  return SetOutput4(info, args, plan, c.dtype, args[1].tensor->sizes[0], hw);
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// PyTorch's pooling_output_shape.
int64_t PoolOut(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil) {
  int64_t out = FloorDiv(in + 2 * pad - dil * (k - 1) - 1 + (ceil ? stride - 1 : 0), stride) + 1;
  if (ceil && (out - 1) * stride >= in + pad) --out;  // last window must start inside input or left pad
  return out;
}

struct PoolArgs {
  int stride, padding, dilation, ceil;  // argument positions (dilation -1: none)
};

Status PoolInfer(const MetaCallInfo& info, const MetaArg* args, const PoolArgs& pos, MetaPlan* plan) {
  DType d;
  BP_RETURN_IF_ERROR(Input3or4(info, args, &d));
  const Geometry& in = *args[0].tensor;
  int64_t kernel[2], stride[2], padding[2], dilation[2] = {1, 1};
  BP_RETURN_IF_ERROR(PairAtLeast(info, args, 1, nullptr, 1, "positive kernel sizes", kernel));
  BP_RETURN_IF_ERROR(PairAtLeast(info, args, pos.stride, kernel, 1, "positive strides", stride));
  BP_RETURN_IF_ERROR(PairAtLeast(info, args, pos.padding, nullptr, 0, "non-negative padding", padding));
  if (pos.dilation >= 0) {
    BP_RETURN_IF_ERROR(PairAtLeast(info, args, pos.dilation, nullptr, 1, "positive dilation", dilation));
  }
  for (int k = 0; k < 2; ++k) {
    int64_t eff = dilation[k] * (kernel[k] - 1) + 1;
    int64_t limit = pos.dilation >= 0 ? eff / 2 : kernel[k] / 2;
    if (padding[k] > limit) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   ArgPrefix(info, pos.padding) + "expected at most half of the " +
                       (pos.dilation >= 0 ? "effective " : "") + "kernel size (" + std::to_string(limit) +
                       ") in dim " + std::to_string(k) + ", got " + SizesText(padding, 2));
    }
  }
  bool ceil = Has(info, args, pos.ceil) && args[pos.ceil].kind == BP_VALUE_BOOL && args[pos.ceil].b;
  int64_t hw[2];
  for (int k = 0; k < 2; ++k) {
    hw[k] = PoolOut(in.sizes[in.ndim - 2 + k], kernel[k], padding[k], stride[k], dilation[k], ceil);
  }
  if (hw[0] < 1 || hw[1] < 1) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 0) + "of sizes " + SizesText(in) + " gives output size " + HW(hw[0], hw[1]) +
                     " with kernel_size " + SizesText(kernel, 2) + ", stride " + SizesText(stride, 2) +
                     ", padding " + SizesText(padding, 2) + "; expected at least 1 x 1");
  }
  RewritePair(plan, 1, 0, kernel);
  RewritePair(plan, pos.stride, 1, stride);
  RewritePair(plan, pos.padding, 2, padding);
  if (pos.dilation >= 0) RewritePair(plan, pos.dilation, 3, dilation);
  return SetOutput4(info, args, plan, d, in.sizes[in.ndim - 3], hw);
}

// max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode)
Status MaxPoolInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  return PoolInfer(info, args, PoolArgs{2, 3, 4, 5}, plan);
}

// avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
Status AvgPoolInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  if (Has(info, args, 6) && (args[6].kind != BP_VALUE_INT || args[6].i == 0)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 6) + "expected None or a non-zero int, got " +
                                                 (args[6].kind == BP_VALUE_INT ? "0" : "another kind"));
  }
  return PoolInfer(info, args, PoolArgs{2, 3, -1, 4}, plan);
}

}  // namespace

const MetaFunctions kConv2dMeta = {"conv2d", Conv2dInfer, NchwPrepare};
const MetaFunctions kMaxPool2dMeta = {"max_pool2d", MaxPoolInfer, NchwPrepare};
const MetaFunctions kAvgPool2dMeta = {"avg_pool2d", AvgPoolInfer, NchwPrepare};

}  // namespace bp::core::meta
