// conv_integer (ONNX ConvInteger-10): int32 conv2d of (input -
// input_zero_point) and (weight - weight_zero_point), input and weight
// int8 or uint8 each. Per image and group, the im2col rows of the shifted
// input are gathered once into an int16 [C_in/g * kH * kW, H_out * W_out]
// panel (padding gives 0, i.e. the input padded with its zero point, as
// ONNX's reference); then the group's weight rows go through
// IntegerPanelProduct (integer_panel.h, matmul_integer's product). Threads
// take output channels, or whole (image, group) units when there are more
// of those than channels per group (depthwise). Input and output are read
// and written through their strides (views work); the weight minus its
// zero points is copied once, contiguous int16. Sums wrap where ONNX's
// int32 result wraps.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <vector>

#include "backplane/op_args.h"
#include "common.h"
#include "integer_panel.h"

namespace bp_cpu {
namespace {

struct ConvInt {
  const DLTensor* x;    // [N, C_in, H, W]
  const DLTensor* w;    // [C_out, C_in / groups, kH, kW]
  const DLTensor* xzp;  // NONE or one element
  const DLTensor* wzp;  // NONE, one element or [C_out]
  const DLTensor* y;    // [N, C_out, H_out, W_out] int32
  int64_t stride[2], pad[2], dil[2], groups;
};

bool IsInt8(const DLTensor& t) {
  const DType d = DtypeOf(t.dtype);
  return d == DType::kInt8 || d == DType::kUInt8;
}

// Everything the loops rely on, checked before anything is written (the
// meta checked it too; a plugin called directly gets a status, not a crash).
const char* Invalid(const ConvInt& c) {
  if (c.x == nullptr || c.w == nullptr || c.x->ndim != 4 || c.w->ndim != 4 || c.y->ndim != 4)
    return "expected 4-D input, weight and output";
  if (!IsInt8(*c.x) || !IsInt8(*c.w) || DtypeOf(c.y->dtype) != DType::kInt32)
    return "expected int8 or uint8 input and weight and an int32 output";
  const int64_t co = c.w->shape[0];
  if (c.groups < 1 || co % c.groups != 0 || c.w->shape[1] * c.groups != c.x->shape[1] || c.y->shape[1] != co ||
      c.y->shape[0] != c.x->shape[0])
    return "expected weight [C_out, C_in / groups, kH, kW] with groups dividing C_out and output [N, C_out, ...]";
  for (int k = 0; k < 2; ++k) {
    if (c.stride[k] < 1 || c.dil[k] < 1 || c.pad[k] < 0)
      return "expected positive stride and dilation and non-negative padding";
    const int64_t eff = c.dil[k] * (c.w->shape[2 + k] - 1) + 1;
    const int64_t padded = c.x->shape[2 + k] + 2 * c.pad[k];
    if (padded < eff || c.y->shape[2 + k] != (padded - eff) / c.stride[k] + 1)
      return "expected the output sizes of conv2d's formula";
  }
  if (c.xzp != nullptr && (Numel(*c.xzp) != 1 || DtypeOf(c.xzp->dtype) != DtypeOf(c.x->dtype)))
    return "expected input_zero_point one element in input's dtype";
  if (c.wzp != nullptr && ((Numel(*c.wzp) != 1 && Numel(*c.wzp) != co) || DtypeOf(c.wzp->dtype) != DtypeOf(c.w->dtype)))
    return "expected weight_zero_point one element or [C_out] in weight's dtype";
  return nullptr;
}

template <typename Tx, typename Tw>
void ConvIntegerTyped(const ConvInt& c) {
  const DLTensor &x = *c.x, &w = *c.w, &y = *c.y;
  const int64_t N = x.shape[0], Cg = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  const int64_t H = x.shape[2], W = x.shape[3], Ho = y.shape[2], Wo = y.shape[3];
  const int64_t Co = w.shape[0], G = c.groups, Cog = Co / G;
  const int64_t K = Cg * KH * KW, P = Ho * Wo, units = N * G;
  // The weight minus its zero points, contiguous int16 [C_out, K], once.
  std::vector<int16_t> wc(static_cast<size_t>(Co * K));
  for (int64_t o = 0, i = 0; o < Co; ++o) {
    const int32_t zo = ZeroPointAt<Tw>(c.wzp, o);
    for (int64_t ci = 0; ci < Cg; ++ci)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw)
          wc[static_cast<size_t>(i++)] = static_cast<int16_t>(
              static_cast<int32_t>(reinterpret_cast<const Tw*>(
                  DataPtr(w))[o * w.strides[0] + ci * w.strides[1] + kh * w.strides[2] + kw * w.strides[3]]) -
              zo);
  }
  const int32_t zx = ZeroPointAt<Tx>(c.xzp, 0);
  const Tx* px = reinterpret_cast<const Tx*>(DataPtr(x));
  int32_t* py = reinterpret_cast<int32_t*>(DataPtr(y));

  // Panel rows [k_lo, k_hi) of unit (n, g): (input - zx) under each output
  // position, 0 where the window reads padding.
  auto gather = [&](int64_t n, int64_t g, int64_t k_lo, int64_t k_hi, int16_t* panel) {
    for (int64_t k = k_lo; k < k_hi; ++k) {
      const int64_t ci = g * Cg + k / (KH * KW), kh = k / KW % KH, kw = k % KW;
      const Tx* plane = px + n * x.strides[0] + ci * x.strides[1];
      int16_t* row = panel + k * P;
      for (int64_t oh = 0; oh < Ho; ++oh) {
        const int64_t ih = oh * c.stride[0] - c.pad[0] + kh * c.dil[0];
        int16_t* out = row + oh * Wo;
        if (ih < 0 || ih >= H) {
          std::fill(out, out + Wo, 0);
          continue;
        }
        const Tx* line = plane + ih * x.strides[2];
        for (int64_t ow = 0; ow < Wo; ++ow) {
          const int64_t iw = ow * c.stride[1] - c.pad[1] + kw * c.dil[1];
          out[ow] = static_cast<int16_t>(iw >= 0 && iw < W ? static_cast<int32_t>(line[iw * x.strides[3]]) - zx : 0);
        }
      }
    }
  };
  // Output channels [o_lo, o_hi) of group g (indices within the group).
  auto rows = [&](int64_t n, int64_t g, int64_t o_lo, int64_t o_hi, const int16_t* panel) {
    const int64_t o0 = g * Cog;
    IntegerPanelProduct(&wc[static_cast<size_t>(o0 * K)], panel, K, P, o_lo, o_hi,
                        [&](int64_t m, int64_t j0, int64_t nb, const uint32_t* sums) {
                          int32_t* dst = py + n * y.strides[0] + (o0 + m) * y.strides[1];
                          int64_t oh = j0 / Wo, ow = j0 % Wo;  // stepped, not divided, per element
                          for (int64_t j = 0; j < nb; ++j) {
                            dst[oh * y.strides[2] + ow * y.strides[3]] = static_cast<int32_t>(sums[j]);
                            if (++ow == Wo) ow = 0, ++oh;
                          }
                        });
  };
  const int64_t unit_work = Cog * P * (K + 1);
  if (units >= Cog) {  // many small units (depthwise, batches): one thread per unit
    // Panels per thread, allocated here: bad_alloc must not leave an OpenMP region.
    const size_t nt = static_cast<size_t>(omp_get_max_threads());
    std::vector<int16_t> panels(nt * static_cast<size_t>(K * P));
    ParallelFor(units, units * unit_work, [&](int64_t lo, int64_t hi) {
      int16_t* panel = &panels[static_cast<size_t>(omp_get_thread_num()) * static_cast<size_t>(K * P)];
      for (int64_t u = lo; u < hi; ++u) {
        gather(u / G, u % G, 0, K, panel);
        rows(u / G, u % G, 0, Cog, panel);
      }
    });
    return;
  }
  std::vector<int16_t> panel(static_cast<size_t>(K * P));
  for (int64_t u = 0; u < units; ++u) {
    ParallelFor(K, K * P, [&](int64_t lo, int64_t hi) { gather(u / G, u % G, lo, hi, panel.data()); });
    ParallelFor(Cog, unit_work, [&](int64_t lo, int64_t hi) { rows(u / G, u % G, lo, hi, panel.data()); });
  }
}

template <typename Tx>
void WithWeight(const ConvInt& c) {
  if (DtypeOf(c.w->dtype) == DType::kInt8) {
    ConvIntegerTyped<Tx, int8_t>(c);
  } else {
    ConvIntegerTyped<Tx, uint8_t>(c);
  }
}

bp_status_t ConvInteger(const bp_kernel_call_t* call) {
  ConvInt c{bp_kit_tensor_arg(call, BP_ARG_CONV_INTEGER_INPUT),
            bp_kit_tensor_arg(call, BP_ARG_CONV_INTEGER_WEIGHT),
            bp_kit_tensor_arg(call, BP_ARG_CONV_INTEGER_INPUT_ZERO_POINT),
            bp_kit_tensor_arg(call, BP_ARG_CONV_INTEGER_WEIGHT_ZERO_POINT),
            call->outputs[0],
            {},
            {},
            {},
            bp_kit_int_arg(call, BP_ARG_CONV_INTEGER_GROUPS, 1)};
  IntPairArg(call, BP_ARG_CONV_INTEGER_STRIDE, 1, c.stride);
  IntPairArg(call, BP_ARG_CONV_INTEGER_PADDING, 0, c.pad);
  IntPairArg(call, BP_ARG_CONV_INTEGER_DILATION, 1, c.dil);
  if (const char* why = Invalid(c)) return Fail(call, BP_STATUS_INVALID_ARGUMENT, "%s", why);
  if (Numel(*c.y) == 0) return BP_STATUS_OK;
  try {
    if (DtypeOf(c.x->dtype) == DType::kInt8) {
      WithWeight<int8_t>(c);
    } else {
      WithWeight<uint8_t>(c);
    }
  } catch (const std::bad_alloc&) {
    return Fail(call, BP_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  return BP_STATUS_OK;
}

const KernelDef kKernels[] = {
    {BP_OP_CONV_INTEGER, ConvInteger, nullptr},
};

}  // namespace

const KernelDef* ConvIntegerKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
