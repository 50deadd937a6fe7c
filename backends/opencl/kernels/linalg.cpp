// matmul, addmm and linear: through CLBlast where gemm_clblast.h takes the
// call, else on one tiled kernel (kernels/matmul.cl):
// out = alpha * (A @ B) + beta * C, every operand strided, batch dims
// broadcast by stride 0. Contract shapes (ops.yaml):
//   matmul: self [..., M, K], other [..., K, N], out [..., M, N] (same rank >= 2)
//   addmm:  self broadcast to [M, N], mat1 [M, K], mat2 [K, N], out [M, N]
//   linear: input [..., K], weight [N, K], bias [N] or NONE, out [..., N]
#include <cstring>
#include <string>

#include "gemm_clblast.h"
#include "geometry.h"
#include "kernel_sources.h"
#include "kernels.h"

namespace bpcl {
namespace {

enum class Lin { kMatmul, kAddmm, kLinear };

Status Shape(bool ok, const std::string& what) {
  return ok ? Ok() : Status(BP_STATUS_INVALID_ARGUMENT, what);
}

// The register-blocked kernel's block for CPU drivers: `rows` x `cols` of out
// per work-item, `cols` two vectors of `vector` elements of the device's
// native width. 12 rows where 32 vector registers hold the 24 accumulators
// (AVX-512), 6 where there are 16 (AVX2 and narrower; BLIS's 6 x 16 kernel).
// Measured on PoCL (AVX-512, 1024^3 float32): 12 x 32 runs 4.7x faster than
// the 4 x 64 of 8-wide vectors before, whose 32 accumulators spilled.
struct RegisterBlock {
  size_t rows, cols, vector;
};
RegisterBlock RegisterBlockFor(const Device* d, const DtypeInfo& t) {
  size_t bytes = 16;  // a power of two in [16, 64]
  while (bytes < 64 && bytes * 2 <= d->native_vector_bytes) bytes *= 2;
  const size_t elem = t.kind == kKindFloat ? t.item_size : 4;  // float16/bfloat16 accumulate in float
  const size_t vector = bytes / elem;
  return {bytes >= 64 ? size_t{12} : size_t{6}, 2 * vector, vector};
}

Status LaunchMatmul(const CallCtx& ctx, const DtypeInfo& t, MatmulGeo& g, const TensorRef refs[4],
                    const ScalarArg& alpha, const ScalarArg& beta) {
  if (g.M == 0 || g.N == 0 || g.batch == 0) return Ok();
  for (int k = 0; k < 4; ++k) g.offs[k] = refs[k].offset;
  bool done = false;  // float32/float64 GEMM through CLBlast when it takes the case
  BPCL_RETURN_IF_ERROR(TryGemmClblast(ctx, t, g, refs, alpha, beta, &done));
  if (done) return Ok();
  if (ctx.device->local_mem_is_global) {
    const RegisterBlock rb = RegisterBlockFor(ctx.device, t);
    const std::string options = DtypeDefines(t, "T") + DeviceDefines(ctx.device) + " -DRB=" + std::to_string(rb.rows) +
                                " -DNB=" + std::to_string(rb.cols) + " -DVW=" + std::to_string(rb.vector) +
                                (ctx.device->fma32 ? " -DBP_HAS_FMA=1" : "");
    cl_mem c = refs[3].mem != nullptr ? refs[3].mem : refs[0].mem;
    std::vector<KArg> args = {Arg(g), Arg(refs[0].mem), Arg(refs[1].mem), Arg(refs[2].mem), Arg(c),
                              KArg{alpha.size, alpha.bytes}, KArg{beta.size, beta.bytes}};
    const size_t global[3] = {(static_cast<size_t>(g.N) + rb.cols - 1) / rb.cols,
                              (static_cast<size_t>(g.M) + rb.rows - 1) / rb.rows, static_cast<size_t>(g.batch)};
    // Work-groups of 4 row blocks over one column block: the driver runs a
    // group's work-items on one thread, which then reads the same panel of B
    // four times from its cache (measured on PoCL, 960^3: 1.6x faster than
    // 2 x 2 groups).
    const size_t local[3] = {1, 4, 1};
    const size_t padded[3] = {global[0], (global[1] + 3) / 4 * 4, global[2]};
    return Launch(ctx, "matmul", src::k_matmul, options, "k_matmul_rb", args, 3, padded, local);
  }
  const size_t tile = ctx.device->max_work_group_size >= 256 ? 16 : ctx.device->max_work_group_size >= 64 ? 8 : 4;
  const std::string options =
      DtypeDefines(t, "T") + DeviceDefines(ctx.device) + " -DTILE=" + std::to_string(tile);
  cl_mem c = refs[3].mem != nullptr ? refs[3].mem : refs[0].mem;
  std::vector<KArg> args = {Arg(g), Arg(refs[0].mem), Arg(refs[1].mem), Arg(refs[2].mem), Arg(c),
                            KArg{alpha.size, alpha.bytes}, KArg{beta.size, beta.bytes}};
  const size_t global[3] = {(static_cast<size_t>(g.N) + tile - 1) / tile * tile,
                            (static_cast<size_t>(g.M) + tile - 1) / tile * tile, static_cast<size_t>(g.batch)};
  const size_t local[3] = {tile, tile, 1};
  return Launch(ctx, "matmul", src::k_matmul, options, "k_matmul", args, 3, global, local);
}

// Adds batch dims (sizes and the strides of out, A, B, C), coalesced.
Status SetBatch(MatmulGeo* g, int32_t nb, const int64_t* sizes, const int64_t* const strides[4]) {
  int64_t st[4][kMaxDims] = {};
  int64_t sz[kMaxDims] = {};
  g->batch = 1;
  for (int32_t k = 0; k < nb; ++k) {
    sz[k] = sizes[k];
    g->batch *= sizes[k];
    for (int t = 0; t < 4; ++t) st[t][k] = strides[t] != nullptr ? strides[t][k] : 0;
  }
  int32_t n = nb;
  Coalesce(&n, sz, st, 4);
  if (n > kMaxBatchDims) return Status(BP_STATUS_UNIMPLEMENTED, "more than 14 batch dims");
  g->nb = n;
  for (int32_t k = 0; k < n; ++k) {
    g->b_sizes[k] = sz[k];
    for (int t = 0; t < 4; ++t) g->b_strides[t][k] = st[t][k];
  }
  return Ok();
}

Status RunLinalg(const bp_kernel_call_t* call) {
  CallCtx ctx;
  BPCL_RETURN_IF_ERROR(GetCallCtx(call, &ctx));
  const Lin kind = *static_cast<const Lin*>(call->kernel_data);
  if (call->num_outputs < 1) return Status(BP_STATUS_INVALID_ARGUMENT, "expected one output");
  const DLTensor* out = call->outputs[0];
  const DtypeInfo t = GetDtype(out->dtype);
  BPCL_RETURN_IF_ERROR(CheckDtype(ctx.device, t, "output"));
  if (t.kind < kKindFloat) return Status(BP_STATUS_UNIMPLEMENTED, std::string("needs a floating dtype, got ") + t.name);
  auto tensor = [&](int i) -> const DLTensor* {
    return (i < call->num_args && call->args[i].kind == BP_VALUE_TENSOR) ? call->args[i].u.tensor : nullptr;
  };
  MatmulGeo g;
  std::memset(&g, 0, sizeof g);
  TensorRef refs[4];
  BPCL_RETURN_IF_ERROR(GetTensorRef(out, "out", &refs[0]));
  ScalarArg alpha = MakeScalar(t, 1.0, 1, true), beta = MakeScalar(t, 0.0, 0, true);

  if (kind == Lin::kMatmul) {
    const DLTensor* a = tensor(BP_ARG_MATMUL_SELF);
    const DLTensor* b = tensor(BP_ARG_MATMUL_OTHER);
    BPCL_RETURN_IF_ERROR(Shape(a && b, "expected (Tensor self, Tensor other)"));
    const int32_t r = out->ndim;
    BPCL_RETURN_IF_ERROR(Shape(r >= 2 && a->ndim == r && b->ndim == r, "expected operands of the output's rank >= 2"));
    g.M = out->shape[r - 2];
    g.N = out->shape[r - 1];
    g.K = a->shape[r - 1];
    BPCL_RETURN_IF_ERROR(Shape(b->shape[r - 2] == g.K, "argument 'other': K mismatch"));
    BPCL_RETURN_IF_ERROR(GetTensorRef(a, "self", &refs[1]));
    BPCL_RETURN_IF_ERROR(GetTensorRef(b, "other", &refs[2]));
    g.a_sm = a->strides[r - 2];
    g.a_sk = a->strides[r - 1];
    g.b_sk = b->strides[r - 2];
    g.b_sn = b->strides[r - 1];
    g.o_sm = out->strides[r - 2];
    g.o_sn = out->strides[r - 1];
    const int64_t* st[4] = {out->strides, a->strides, b->strides, nullptr};
    BPCL_RETURN_IF_ERROR(SetBatch(&g, r - 2, out->shape, st));
  } else if (kind == Lin::kAddmm) {
    const DLTensor* c = tensor(BP_ARG_ADDMM_SELF);
    const DLTensor* a = tensor(BP_ARG_ADDMM_MAT1);
    const DLTensor* b = tensor(BP_ARG_ADDMM_MAT2);
    BPCL_RETURN_IF_ERROR(Shape(c && a && b, "expected (Tensor self, Tensor mat1, Tensor mat2, ...)"));
    BPCL_RETURN_IF_ERROR(Shape(out->ndim == 2 && a->ndim == 2 && b->ndim == 2 && c->ndim == 2,
                               "expected 2-d mat1, mat2, out and self broadcast to [M, N]"));
    g.M = out->shape[0];
    g.N = out->shape[1];
    g.K = a->shape[1];
    BPCL_RETURN_IF_ERROR(GetTensorRef(a, "mat1", &refs[1]));
    BPCL_RETURN_IF_ERROR(GetTensorRef(b, "mat2", &refs[2]));
    BPCL_RETURN_IF_ERROR(GetTensorRef(c, "self", &refs[3]));
    g.a_sm = a->strides[0];
    g.a_sk = a->strides[1];
    g.b_sk = b->strides[0];
    g.b_sn = b->strides[1];
    g.o_sm = out->strides[0];
    g.o_sn = out->strides[1];
    g.c_sm = c->strides[0];
    g.c_sn = c->strides[1];
    const bool has_beta = call->num_args > BP_ARG_ADDMM_BETA;
    if (has_beta) beta = ScalarFromArg(t, call->args[BP_ARG_ADDMM_BETA], 1.0);
    else beta = MakeScalar(t, 1.0, 1, true);
    if (call->num_args > BP_ARG_ADDMM_ALPHA) alpha = ScalarFromArg(t, call->args[BP_ARG_ADDMM_ALPHA], 1.0);
    // beta == 0 ignores self entirely (NaN in self does not propagate), as PyTorch.
    const bp_kernel_arg_t* beta_arg = has_beta ? &call->args[BP_ARG_ADDMM_BETA] : nullptr;
    const bool beta_zero = beta_arg != nullptr && ((beta_arg->kind == BP_VALUE_INT && beta_arg->u.i == 0) ||
                                                   (beta_arg->kind == BP_VALUE_DOUBLE && beta_arg->u.d == 0.0) ||
                                                   (beta_arg->kind == BP_VALUE_BOOL && beta_arg->u.b == 0));
    g.has_c = beta_zero ? 0 : 1;
    g.batch = 1;
  } else {
    const DLTensor* x = tensor(BP_ARG_LINEAR_INPUT);
    const DLTensor* w = tensor(BP_ARG_LINEAR_WEIGHT);
    const DLTensor* bias = tensor(BP_ARG_LINEAR_BIAS);
    BPCL_RETURN_IF_ERROR(Shape(x && w, "expected (Tensor input, Tensor weight, Tensor? bias)"));
    BPCL_RETURN_IF_ERROR(Shape(x->ndim >= 1 && out->ndim == x->ndim && w->ndim == 2,
                               "expected input [..., K], weight [N, K], out [..., N]"));
    const int32_t r = x->ndim;
    g.K = x->shape[r - 1];
    g.N = w->shape[0];
    BPCL_RETURN_IF_ERROR(GetTensorRef(x, "input", &refs[1]));
    BPCL_RETURN_IF_ERROR(GetTensorRef(w, "weight", &refs[2]));
    g.a_sk = x->strides[r - 1];
    g.b_sk = w->strides[1];  // B = weight^T: B[k][n] = weight[n][k]
    g.b_sn = w->strides[0];
    g.o_sn = out->strides[r - 1];
    if (bias != nullptr) {
      BPCL_RETURN_IF_ERROR(Shape(bias->ndim == 1, "argument 'bias': expected [N]"));
      BPCL_RETURN_IF_ERROR(GetTensorRef(bias, "bias", &refs[3]));
      g.c_sm = 0;
      g.c_sn = bias->strides[0];
      g.has_c = 1;
      beta = MakeScalar(t, 1.0, 1, true);
    }
    // Leading dims: coalesce them into M when input and out allow it; any
    // that remain become batch dims (weight and bias broadcast over them).
    int32_t nl = r - 1;
    int64_t sz[kMaxDims] = {};
    int64_t st[4][kMaxDims] = {};
    for (int32_t k = 0; k < nl; ++k) {
      sz[k] = x->shape[k];
      st[0][k] = out->strides[k];
      st[1][k] = x->strides[k];
    }
    Coalesce(&nl, sz, st, 2);
    if (nl == 0) {
      g.M = 1;
      for (int32_t k = 0; k < r - 1; ++k) g.M *= x->shape[k];  // 0 when a leading dim is empty
      g.batch = g.M == 0 ? 0 : 1;
      g.M = g.M == 0 ? 0 : 1;
    } else {
      g.M = sz[nl - 1];
      g.o_sm = st[0][nl - 1];
      g.a_sm = st[1][nl - 1];
      const int64_t* bst[4] = {st[0], st[1], nullptr, nullptr};
      BPCL_RETURN_IF_ERROR(SetBatch(&g, nl - 1, sz, bst));
    }
  }
  return LaunchMatmul(ctx, t, g, refs, alpha, beta);
}

const Lin kMatmul = Lin::kMatmul, kAddmm = Lin::kAddmm, kLinear = Lin::kLinear;

}  // namespace

void AddLinalgKernels(std::vector<KernelReg>* out) {
  // RunLinalg takes floating dtypes only.
  out->push_back({BP_OP_MATMUL, WrapKernel<RunLinalg>, const_cast<Lin*>(&kMatmul), BP_DTYPE_MASK_FLOATING});
  out->push_back({BP_OP_ADDMM, WrapKernel<RunLinalg>, const_cast<Lin*>(&kAddmm), BP_DTYPE_MASK_FLOATING});
  out->push_back({BP_OP_LINEAR, WrapKernel<RunLinalg>, const_cast<Lin*>(&kLinear), BP_DTYPE_MASK_FLOATING});
}

}  // namespace bpcl
