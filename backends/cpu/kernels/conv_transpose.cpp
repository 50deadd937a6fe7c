// conv_transpose2d: a direct loop in gather form. Each output element sums
// the inputs whose scattered taps land on it (oh = ih * stride - padding +
// kh * dilation), accumulating in double; parallel over (n, output channel).
#include "backplane/op_args.h"
#include "common.h"

namespace bp_cpu {
namespace {

template <typename T>
inline opmath_t<T> At(const DLTensor& t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return static_cast<opmath_t<T>>(Load(*reinterpret_cast<const T*>(
      DataPtr(t) +
      (a * t.strides[0] + b * t.strides[1] + c * t.strides[2] + d * t.strides[3]) * static_cast<int64_t>(sizeof(T)))));
}

struct Geometry2d {
  int64_t stride[2], pad[2], dil[2], groups;
};

template <typename T>
void Loop(const DLTensor& x, const DLTensor& w, const DLTensor* bias, const DLTensor& y, const Geometry2d& g) {
  const int64_t N = y.shape[0], OC = y.shape[1], OH = y.shape[2], OW = y.shape[3];
  const int64_t IC = x.shape[1], H = x.shape[2], W = x.shape[3], KH = w.shape[2], KW = w.shape[3];
  const int64_t icg = IC / g.groups, ocg = w.shape[1];
  ParallelFor(N * OC, N * OC * OH * OW * icg * KH * KW, [&](int64_t lo, int64_t hi) {
    for (int64_t no = lo; no < hi; ++no) {
      const int64_t n = no / OC, oc = no % OC, grp = oc / ocg, ocl = oc % ocg;
      const double b = bias ? static_cast<double>(Load(*reinterpret_cast<const T*>(
                                  DataPtr(*bias) + oc * bias->strides[0] * static_cast<int64_t>(sizeof(T)))))
                            : 0.0;
      for (int64_t oh = 0; oh < OH; ++oh) {
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = b;
          for (int64_t kh = 0; kh < KH; ++kh) {
            const int64_t th = oh + g.pad[0] - kh * g.dil[0];
            if (th < 0 || th % g.stride[0] != 0 || th / g.stride[0] >= H) continue;
            const int64_t ih = th / g.stride[0];
            for (int64_t kw = 0; kw < KW; ++kw) {
              const int64_t tw = ow + g.pad[1] - kw * g.dil[1];
              if (tw < 0 || tw % g.stride[1] != 0 || tw / g.stride[1] >= W) continue;
              const int64_t iw = tw / g.stride[1];
              for (int64_t icl = 0; icl < icg; ++icl) {
                const int64_t ic = grp * icg + icl;
                acc += static_cast<double>(At<T>(x, n, ic, ih, iw)) * static_cast<double>(At<T>(w, ic, ocl, kh, kw));
              }
            }
          }
          *reinterpret_cast<T*>(DataPtr(y) +
                                (n * y.strides[0] + oc * y.strides[1] + oh * y.strides[2] + ow * y.strides[3]) *
                                    static_cast<int64_t>(sizeof(T))) = Store<T>(acc);
        }
      }
    }
  });
}

bp_status_t ConvTranspose2d(const bp_kernel_call_t* call) {
  const DLTensor* x = bp_kit_tensor_arg(call, BP_ARG_CONV_TRANSPOSE2D_INPUT_INPUT);
  const DLTensor* w = bp_kit_tensor_arg(call, BP_ARG_CONV_TRANSPOSE2D_INPUT_WEIGHT);
  const DLTensor* bias = bp_kit_tensor_arg(call, BP_ARG_CONV_TRANSPOSE2D_INPUT_BIAS);
  DLTensor* y = call->outputs[0];
  Geometry2d g{};
  IntPairArg(call, BP_ARG_CONV_TRANSPOSE2D_INPUT_STRIDE, 1, g.stride);
  IntPairArg(call, BP_ARG_CONV_TRANSPOSE2D_INPUT_PADDING, 0, g.pad);
  IntPairArg(call, BP_ARG_CONV_TRANSPOSE2D_INPUT_DILATION, 1, g.dil);
  g.groups = bp_kit_int_arg(call, BP_ARG_CONV_TRANSPOSE2D_INPUT_GROUPS, 1);
  if (x == nullptr || w == nullptr || x->ndim != 4 || w->ndim != 4 || y->ndim != 4 || g.groups < 1 ||
      x->shape[1] % g.groups != 0 || y->shape[1] != w->shape[1] * g.groups || g.stride[0] < 1 || g.stride[1] < 1)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT,
                "expected 4-D input, weight [C_in, C_out / groups, kH, kW] and output, positive strides and groups");
  switch (DtypeOf(y->dtype)) {
    case DType::kFloat32:
      Loop<float>(*x, *w, bias, *y, g);
      return BP_STATUS_OK;
    case DType::kFloat64:
      Loop<double>(*x, *w, bias, *y, g);
      return BP_STATUS_OK;
    case DType::kBFloat16:
      Loop<BFloat16>(*x, *w, bias, *y, g);
      return BP_STATUS_OK;
    case DType::kFloat16:
      Loop<Half>(*x, *w, bias, *y, g);
      return BP_STATUS_OK;
    default:
      return FailDtype(call, *y);
  }
}

const KernelDef kKernels[] = {
    {BP_OP_CONV_TRANSPOSE2D_INPUT, ConvTranspose2d, nullptr},
};

}  // namespace

const KernelDef* ConvTransposeKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
