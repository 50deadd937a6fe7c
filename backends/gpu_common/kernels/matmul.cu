// matmul, addmm, linear: argument plumbing into one GemmProblem, then the
// platform's vendor GEMM (cuBLAS) when it takes the problem, else the shared
// tiled kernel (HIP always: Debian 12 has no hipBLAS/rocBLAS).
//
// The tiled kernel is the classic shared-memory one: a 16x16 output tile per
// block, A and B staged through shared memory in 16-wide K steps,
// accumulation in float (double for float64). Any strides, batch via
// grid.z and an offset calculator (zero batch strides broadcast).
#include "kernel_util.h"
#include "kernels.h"
#include "platform.h"

namespace bp_gpu {
namespace {

constexpr int kTile = 16;

template <typename T>
__global__ void GemmTiledKernel(int64_t m, int64_t n, int64_t k, int64_t batch_count, OffsetCalculator<3> batch,
                                const T* a, int64_t a_rs, int64_t a_cs, const T* b, int64_t b_rs, int64_t b_cs, T* c,
                                int64_t c_rs, int64_t c_cs, OpMath<T> alpha, OpMath<T> beta) {
  using A = OpMath<T>;
  __shared__ A as[kTile][kTile + 1];
  __shared__ A bs[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = static_cast<int64_t>(blockIdx.y) * kTile + ty;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kTile + tx;
  for (int64_t z = blockIdx.z; z < batch_count; z += gridDim.z) {
    int64_t off[3];
    batch.get(z, off);
    const T* ab = a + off[0];
    const T* bb = b + off[1];
    A acc = A(0);
    for (int64_t k0 = 0; k0 < k; k0 += kTile) {
      const int64_t ka = k0 + tx, kb = k0 + ty;
      as[ty][tx] = (row < m && ka < k) ? Load(ab + row * a_rs + ka * a_cs) : A(0);
      bs[ty][tx] = (kb < k && col < n) ? Load(bb + kb * b_rs + col * b_cs) : A(0);
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < kTile; ++kk) acc += as[ty][kk] * bs[kk][tx];
      __syncthreads();
    }
    if (row < m && col < n) {
      T* cp = c + off[2] + row * c_rs + col * c_cs;
      A v = alpha * acc;
      if (beta != A(0)) v += beta * Load(cp);
      Store(cp, v);
    }
  }
}

}  // namespace

bp_status_t RunGemm(const bp_kernel_call_t* call, const GemmProblem& p) {
  if (p.m == 0 || p.n == 0 || p.batch_count == 0) return BP_STATUS_OK;
  if (bp_status_t s = EnterDevice(call)) return s;
  const bp_status_t vendor = platform::Gemm(call, StateOf(call)->platform, p);
  if (vendor != BP_STATUS_UNIMPLEMENTED) return vendor;
  const int64_t gx = (p.n + kTile - 1) / kTile, gy = (p.m + kTile - 1) / kTile;
  if (gx > 0x7fffffff || gy > 65535) {
    return KernelError(call, BP_STATUS_OUT_OF_RANGE, "matrix of %lld x %lld outputs exceeds the tiled kernel's grid",
                       static_cast<long long>(p.m), static_cast<long long>(p.n));
  }
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy),
                  static_cast<unsigned>(p.batch_count < 65535 ? p.batch_count : 65535));
  const dim3 block(kTile, kTile);
  const bp_status_t s = DispatchFloat(p.dtype, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    using A = OpMath<T>;
    BP_GPU_LAUNCH(GemmTiledKernel<T>, grid, block, 0, StreamOf(call))
    (p.m, p.n, p.k, p.batch_count, p.batch, static_cast<const T*>(p.a), p.a_rs, p.a_cs, static_cast<const T*>(p.b),
     p.b_rs, p.b_cs, static_cast<T*>(p.c), p.c_rs, p.c_cs, static_cast<A>(p.alpha), static_cast<A>(p.beta));
    return BP_STATUS_OK;
  });
  if (s != BP_STATUS_OK) return KernelError(call, s, "internal dtype dispatch failure");
  return CheckLaunch(call, "GemmTiledKernel");
}

namespace {

bp_status_t CheckFloat(const bp_kernel_call_t* call, const DLTensor* out, DType* st) {
  return CheckDtype(call, "out", out, false, false, st);
}

// Batch dims [0, nb) of three tensors -> the problem's batch calculator.
void SetBatch(GemmProblem* p, int32_t nb, const int64_t* sizes, const int64_t* as, const int64_t* bs,
              const int64_t* cs) {
  const int64_t* strides[3] = {as, bs, cs};
  p->batch = MakeOffsetCalculator<3>(nb, sizes, strides);
  p->batch_count = Numel(nb, sizes);
}

}  // namespace

bp_status_t MatmulEntry(const bp_kernel_call_t* call) {
  const DLTensor* a = bp_kit_tensor_arg(call, BP_ARG_MATMUL_SELF);
  const DLTensor* b = bp_kit_tensor_arg(call, BP_ARG_MATMUL_OTHER);
  if (!a || !b || call->num_outputs < 1) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT, "expected tensors self, other and an output");
  }
  const DLTensor* c = call->outputs[0];
  const int32_t nd = c->ndim;
  if (nd < 2 || a->ndim != nd || b->ndim != nd) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT,
                       "expected self, other and out of one rank >= 2, got %d, %d and %d", a->ndim, b->ndim, nd);
  }
  GemmProblem p;
  if (bp_status_t s = CheckFloat(call, c, &p.dtype)) return s;
  if (bp_status_t s = RequireSameDtype(call, c, "out", a, "self")) return s;
  if (bp_status_t s = RequireSameDtype(call, c, "out", b, "other")) return s;
  p.m = c->shape[nd - 2];
  p.n = c->shape[nd - 1];
  p.k = a->shape[nd - 1];
  SetBatch(&p, nd - 2, c->shape, a->strides, b->strides, c->strides);
  p.a = DataPtr<const char>(a);
  p.a_rs = a->strides[nd - 2];
  p.a_cs = a->strides[nd - 1];
  p.b = DataPtr<const char>(b);
  p.b_rs = b->strides[nd - 2];
  p.b_cs = b->strides[nd - 1];
  p.c = DataPtr<char>(c);
  p.c_rs = c->strides[nd - 2];
  p.c_cs = c->strides[nd - 1];
  return RunGemm(call, p);
}

bp_status_t AddmmEntry(const bp_kernel_call_t* call) {
  const DLTensor* self = bp_kit_tensor_arg(call, BP_ARG_ADDMM_SELF);
  const DLTensor* m1 = bp_kit_tensor_arg(call, BP_ARG_ADDMM_MAT1);
  const DLTensor* m2 = bp_kit_tensor_arg(call, BP_ARG_ADDMM_MAT2);
  if (!self || !m1 || !m2 || call->num_outputs < 1) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT, "expected tensors self, mat1, mat2 and an output");
  }
  const DLTensor* c = call->outputs[0];
  if (c->ndim != 2 || m1->ndim != 2 || m2->ndim != 2 || self->ndim != 2) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT, "expected 2-D mat1, mat2, out and self broadcast to [M, N]");
  }
  GemmProblem p;
  if (bp_status_t s = CheckFloat(call, c, &p.dtype)) return s;
  if (bp_status_t s = RequireSameDtype(call, c, "out", m1, "mat1")) return s;
  if (bp_status_t s = RequireSameDtype(call, c, "out", m2, "mat2")) return s;
  p.beta = ScalarArg(call, BP_ARG_ADDMM_BETA, 1.0).d;
  p.alpha = ScalarArg(call, BP_ARG_ADDMM_ALPHA, 1.0).d;
  p.m = c->shape[0];
  p.n = c->shape[1];
  p.k = m1->shape[1];
  SetBatch(&p, 0, nullptr, nullptr, nullptr, nullptr);
  if (p.beta != 0.0 && p.m > 0 && p.n > 0) {
    if (bp_status_t s = EnterDevice(call)) return s;
    if (bp_status_t s = CopyInto(call, c, self)) return s;
  }
  p.a = DataPtr<const char>(m1);
  p.a_rs = m1->strides[0];
  p.a_cs = m1->strides[1];
  p.b = DataPtr<const char>(m2);
  p.b_rs = m2->strides[0];
  p.b_cs = m2->strides[1];
  p.c = DataPtr<char>(c);
  p.c_rs = c->strides[0];
  p.c_cs = c->strides[1];
  return RunGemm(call, p);
}

bp_status_t LinearEntry(const bp_kernel_call_t* call) {
  const DLTensor* in = bp_kit_tensor_arg(call, BP_ARG_LINEAR_INPUT);
  const DLTensor* w = bp_kit_tensor_arg(call, BP_ARG_LINEAR_WEIGHT);
  const DLTensor* bias = bp_kit_tensor_arg(call, BP_ARG_LINEAR_BIAS);
  if (!in || !w || call->num_outputs < 1) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT, "expected tensors input, weight and an output");
  }
  const DLTensor* c = call->outputs[0];
  const int32_t nd = in->ndim;
  if (nd < 1 || c->ndim != nd || w->ndim != 2 || (bias && bias->ndim != 1)) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT,
                       "expected input [..., K], weight [N, K], bias [N] and out [..., N]");
  }
  GemmProblem p;
  if (bp_status_t s = CheckFloat(call, c, &p.dtype)) return s;
  if (bp_status_t s = RequireSameDtype(call, c, "out", in, "input")) return s;
  if (bp_status_t s = RequireSameDtype(call, c, "out", w, "weight")) return s;
  p.n = w->shape[0];
  p.k = w->shape[1];
  // Leading dims, coalesced jointly for input and out: the innermost becomes
  // M, the rest the batch (usually none: a contiguous input is one matrix).
  const int64_t* lead_strides[2] = {in->strides, c->strides};
  const OffsetCalculator<2> lead = MakeOffsetCalculator<2>(nd - 1, c->shape, lead_strides);
  int64_t bsizes[kMaxDims], bas[kMaxDims], bbs[kMaxDims], bcs[kMaxDims];
  int32_t nb = 0;
  if (lead.ndim == 0) {
    p.m = Numel(nd - 1, c->shape);  // 1, or 0 for an empty leading dim
    p.a_rs = p.k;
    p.c_rs = p.n;
  } else {
    p.m = lead.sizes[lead.ndim - 1];
    p.a_rs = lead.strides[lead.ndim - 1][0];
    p.c_rs = lead.strides[lead.ndim - 1][1];
    for (int32_t d = 0; d + 1 < lead.ndim; ++d) {
      bsizes[nb] = lead.sizes[d];
      bas[nb] = lead.strides[d][0];
      bbs[nb] = 0;
      bcs[nb] = lead.strides[d][1];
      ++nb;
    }
  }
  SetBatch(&p, nb, bsizes, bas, bbs, bcs);
  p.a = DataPtr<const char>(in);
  p.a_cs = in->strides[nd - 1];
  // B = weight^T: B[k][n] = weight[n][k].
  p.b = DataPtr<const char>(w);
  p.b_rs = w->strides[1];
  p.b_cs = w->strides[0];
  p.c = DataPtr<char>(c);
  p.c_cs = c->strides[nd - 1];
  if (bias && p.m > 0 && p.n > 0) {
    // out <- bias broadcast over the leading dims, then out += input @ weight^T.
    DLTensor bview = *bias;
    int64_t bstr[kMaxDims];
    for (int d = 0; d < nd; ++d) bstr[d] = d == nd - 1 ? bias->strides[0] : 0;
    bview.ndim = nd;
    bview.shape = c->shape;
    bview.strides = bstr;
    if (bp_status_t s = EnterDevice(call)) return s;
    if (bp_status_t s = CopyInto(call, c, &bview)) return s;
    p.beta = 1.0;
  }
  return RunGemm(call, p);
}

}  // namespace bp_gpu
