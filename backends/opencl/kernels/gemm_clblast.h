// matmul, addmm and linear through CLBlast's GEMM (libclblast-dev), the one
// place that decides whether a call can take it: float32 and float64 (CLBlast's
// float16 GEMM accumulates in half, and devices without cl_khr_fp16 cannot run
// it, so float16 and bfloat16 keep our own kernel), operands whose strides are
// a (possibly transposed) row- or column-major matrix, batch dims as strided
// batches. Built only with BACKPLANE_CLBLAST (BPCL_HAVE_CLBLAST); otherwise
// TryGemmClblast never takes a call and kernels/matmul.cl runs everything.
#pragma once

#include "geometry.h"

namespace bpcl {

// out = alpha * (A @ B) + beta * C over geometry `g` (linalg.cpp's MatmulGeo:
// refs[0..3] = out, A, B, C with element offsets; C used when g.has_c).
// Returns OK with *done = false when CLBlast does not take the call (disabled,
// dtype, strides, sizes, or CLBlast refused it before running anything): the
// caller then runs its own kernel. OK with *done = true: enqueued on
// ctx.queue. An error: an OpenCL runtime failure CLBlast reported (out of
// memory, lost device), with the CLBlast status code in the message.
#ifdef BPCL_HAVE_CLBLAST
Status TryGemmClblast(const CallCtx& ctx, const DtypeInfo& t, const MatmulGeo& g, const TensorRef refs[4],
                      const ScalarArg& alpha, const ScalarArg& beta, bool* done);
#else
inline Status TryGemmClblast(const CallCtx&, const DtypeInfo&, const MatmulGeo&, const TensorRef*, const ScalarArg&,
                             const ScalarArg&, bool* done) {
  *done = false;
  return Ok();
}
#endif

}  // namespace bpcl
