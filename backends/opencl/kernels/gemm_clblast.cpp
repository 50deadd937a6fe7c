// TryGemmClblast (gemm_clblast.h): maps a MatmulGeo onto clblast::Gemm /
// clblast::GemmStridedBatched on the call's queue. The epilogue C (addmm's
// self, linear's bias) is copied (broadcast) into out first and GEMM's beta
// does the rest. Anything CLBlast cannot express is left to matmul.cl.
#include "gemm_clblast.h"

#include <clblast.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

#include "kernel_sources.h"

namespace bpcl {
namespace {

using clblast::Layout;
using clblast::StatusCode;
using clblast::Transpose;

// One operand as CLBlast sees it.
struct Mat {
  Transpose trans = Transpose::kNo;
  size_t ld = 0;
};

// A rows x cols operand with strides (sr, sc) as a matrix of `layout`, plain
// or (allow_trans) transposed. Row-major keeps (r, c) at r * ld + c, its
// transpose at c * ld + r; column-major swaps the roles. A size-1 dim's
// stride is free, so it never blocks a mapping; ld is then the smallest
// CLBlast accepts.
bool AsMatrix(Layout layout, int64_t rows, int64_t cols, int64_t sr, int64_t sc, bool allow_trans, Mat* out) {
  const bool row = layout == Layout::kRowMajor;
  const int64_t s_in = row ? sc : sr, s_out = row ? sr : sc;
  const int64_t n_in = row ? cols : rows, n_out = row ? rows : cols;
  if (s_in == 1 || n_in == 1) {
    const int64_t ld = n_out == 1 ? std::max<int64_t>(n_in, 1) : s_out;
    if (ld >= std::max<int64_t>(n_in, 1)) {
      *out = Mat{Transpose::kNo, static_cast<size_t>(ld)};
      return true;
    }
  }
  if (allow_trans && (s_out == 1 || n_out == 1)) {
    const int64_t ld = n_in == 1 ? std::max<int64_t>(n_out, 1) : s_in;
    if (ld >= std::max<int64_t>(n_out, 1)) {
      *out = Mat{Transpose::kYes, static_cast<size_t>(ld)};
      return true;
    }
  }
  return false;
}

// CLBlast's kernels index with 32-bit ints: every element an operand reaches
// (offset included) must fit, and strides must be non-negative.
bool FitsInt(int64_t offset, const int64_t* sizes, const int64_t* strides, int n) {
  int64_t last = offset;
  for (int k = 0; k < n; ++k) {
    if (strides[k] < 0) return false;
    if (sizes[k] > 0) last += (sizes[k] - 1) * strides[k];
  }
  return last < std::numeric_limits<int32_t>::max();
}

// OpenCL failures that our own kernel would meet as well: reported. Every
// other code (CLBlast's own -1024.. and -2048.. codes, build failures,
// invalid arguments) means "CLBlast cannot run this here": fall back.
bool IsRuntimeFailure(StatusCode code) {
  switch (static_cast<int>(code)) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_OUT_OF_HOST_MEMORY:
    case CL_DEVICE_NOT_AVAILABLE:
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
      return true;
    default:
      return false;
  }
}

Status ClblastError(StatusCode code) {
  const int v = static_cast<int>(code);
  return Status(ClErrorToStatus(v),
                "CLBlast GEMM: " + ClErrorName(v) + " (clblast::StatusCode " + std::to_string(v) + ")");
}

// The GEMM calls: a strided batch over the innermost batch dim, one such
// call per index of the outer batch dims.
struct Plan {
  Layout layout = Layout::kRowMajor;
  Mat a, b, c;
  size_t m = 0, n = 0, k = 0;
  int64_t inner = 1, inner_stride[3] = {0, 0, 0};  // out, A, B
  int64_t outer = 1;
};

template <typename T>
StatusCode RunPlan(const CallCtx& ctx, const MatmulGeo& g, const TensorRef refs[4], const Plan& p, T alpha, T beta) {
  cl_command_queue queue = ctx.queue;
  const int nouter = std::max(g.nb - 1, 0);
  for (int64_t bi = 0; bi < p.outer; ++bi) {
    int64_t off[3] = {refs[0].offset, refs[1].offset, refs[2].offset};
    for (int64_t d = nouter - 1, rest = bi; d >= 0; --d) {
      const int64_t x = rest % g.b_sizes[d];
      rest /= g.b_sizes[d];
      for (int t = 0; t < 3; ++t) off[t] += x * g.b_strides[t][d];
    }
    StatusCode st;
    if (g.nb == 0) {
      st = clblast::Gemm<T>(p.layout, p.a.trans, p.b.trans, p.m, p.n, p.k, alpha, refs[1].mem, off[1], p.a.ld,
                            refs[2].mem, off[2], p.b.ld, beta, refs[0].mem, off[0], p.c.ld, &queue, nullptr);
    } else {
      st = clblast::GemmStridedBatched<T>(p.layout, p.a.trans, p.b.trans, p.m, p.n, p.k, alpha, refs[1].mem, off[1],
                                          p.a.ld, p.inner_stride[1], refs[2].mem, off[2], p.b.ld, p.inner_stride[2],
                                          beta, refs[0].mem, off[0], p.c.ld, p.inner_stride[0],
                                          static_cast<size_t>(p.inner), &queue, nullptr);
    }
    if (st != StatusCode::kSuccess) return st;
  }
  return StatusCode::kSuccess;
}

// Whether C is out itself (addmm_ in place): the epilogue copy is skipped.
bool SameView(const MatmulGeo& g, const TensorRef refs[4]) {
  if (refs[3].mem != refs[0].mem || refs[3].offset != refs[0].offset) return false;
  if (g.M > 1 && g.c_sm != g.o_sm) return false;
  if (g.N > 1 && g.c_sn != g.o_sn) return false;
  for (int d = 0; d < g.nb; ++d)
    if (g.b_strides[3][d] != g.b_strides[0][d]) return false;
  return true;
}

// Plans the calls; false when the geometry does not fit CLBlast.
bool MakePlan(const MatmulGeo& g, const TensorRef refs[4], Plan* p) {
  if (g.K == 0) return false;  // CLBlast rejects k == 0; our kernel writes beta * C
  // Out fixes the layout (C cannot be transposed); A and B follow it.
  bool ok = false;
  for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
    p->layout = layout;
    if (AsMatrix(layout, g.M, g.N, g.o_sm, g.o_sn, false, &p->c) &&
        AsMatrix(layout, g.M, g.K, g.a_sm, g.a_sk, true, &p->a) &&
        AsMatrix(layout, g.K, g.N, g.b_sk, g.b_sn, true, &p->b)) {
      ok = true;
      break;
    }
  }
  if (!ok) return false;
  p->m = static_cast<size_t>(g.M);
  p->n = static_cast<size_t>(g.N);
  p->k = static_cast<size_t>(g.K);
  if (g.nb > 0) {
    p->inner = g.b_sizes[g.nb - 1];
    for (int t = 0; t < 3; ++t) p->inner_stride[t] = g.b_strides[t][g.nb - 1];
    if (p->inner_stride[0] == 0) return false;  // batches would write one out
    p->outer = g.batch / p->inner;
    // Many tiny calls cost more than our one batched launch.
    if (p->outer > 64) return false;
  }
  // Every element reached must be int-indexable (CLBlast's kernels).
  const int64_t mats[4][2][2] = {{{g.M, g.N}, {g.o_sm, g.o_sn}},
                                 {{g.M, g.K}, {g.a_sm, g.a_sk}},
                                 {{g.K, g.N}, {g.b_sk, g.b_sn}},
                                 {{g.M, g.N}, {g.c_sm, g.c_sn}}};
  for (int t = 0; t < 4; ++t) {
    if (t == 3 && !g.has_c) break;
    int64_t sizes[kMaxBatchDims + 2], strides[kMaxBatchDims + 2];
    for (int d = 0; d < g.nb; ++d) {
      sizes[d] = g.b_sizes[d];
      strides[d] = g.b_strides[t][d];
    }
    for (int d = 0; d < 2; ++d) {
      sizes[g.nb + d] = mats[t][0][d];
      strides[g.nb + d] = mats[t][1][d];
    }
    if (!FitsInt(refs[t].offset, sizes, strides, g.nb + 2)) return false;
  }
  return true;
}

// CLBlast's database has no entry for CPU drivers such as PoCL; its defaults
// stage tiles in local memory, which there is plain memory. Measured on PoCL
// (2 cores, AVX-512; scratch tuner over 13 parameter sets, 1024^3 float32):
// defaults 15 GFLOP/s, these 67; and below XGEMM_MIN_INDIRECT_SIZE (896)
// CLBlast's direct kernel took 1.9 ms at 256^3 where the indirect one with
// these parameters takes 0.46 ms. Set once per device and precision (the
// overrides are CLBlast's process-wide state); a failure only costs speed.
void TuneForCpuDriver(const Device* d) {
  static std::mutex mu;
  static std::set<cl_device_id> done;
  std::lock_guard<std::mutex> lock(mu);
  if (!d->local_mem_is_global || !done.insert(d->id).second) return;
  const std::unordered_map<std::string, size_t> xgemm = {
      {"GEMMK", 0}, {"KREG", 1}, {"KWG", 32}, {"KWI", 2}, {"MDIMA", 8}, {"MDIMC", 8}, {"MWG", 64}, {"NDIMB", 8},
      {"NDIMC", 8}, {"NWG", 64}, {"SA", 0},   {"SB", 0},  {"STRM", 0},  {"STRN", 0},  {"VWM", 4},  {"VWN", 4}};
  const std::unordered_map<std::string, size_t> routine = {{"XGEMM_MIN_INDIRECT_SIZE", 64}};
  for (clblast::Precision p : {clblast::Precision::kSingle, clblast::Precision::kDouble}) {
    if (p == clblast::Precision::kDouble && !d->fp64) continue;
    clblast::OverrideParameters(d->id, "Xgemm", p, xgemm);
    clblast::OverrideParameters(d->id, "GemmRoutine", p, routine);
  }
}

}  // namespace

Status TryGemmClblast(const CallCtx& ctx, const DtypeInfo& t, const MatmulGeo& g, const TensorRef refs[4],
                      const ScalarArg& alpha, const ScalarArg& beta, bool* done) {
  *done = false;
  const Backend::ClblastUse use = ctx.backend->use_clblast;
  if (use == Backend::ClblastUse::kNever || (use == Backend::ClblastUse::kAuto && ctx.device->local_mem_is_global))
    return Ok();
  if (t.kind != kKindFloat || (t.item_size != 4 && t.item_size != 8)) return Ok();
  Plan plan;
  if (!MakePlan(g, refs, &plan)) return Ok();
  const bool copy_c = g.has_c && !SameView(g, refs);
  // out shares C's buffer in some other way: filling out would clobber C.
  if (copy_c && refs[3].mem == refs[0].mem) return Ok();
  // C is out: a fallback after some calls ran would read a changed C.
  if (g.has_c && !copy_c && plan.outer > 1) return Ok();
  if (copy_c) {
    // out = C broadcast over [batch..., M, N]; GEMM then adds alpha * A @ B
    // to beta * out. Same program as copy_ (copy.cpp).
    int64_t sizes[kMaxBatchDims + 2], o_st[kMaxBatchDims + 2], c_st[kMaxBatchDims + 2];
    for (int d = 0; d < g.nb; ++d) {
      sizes[d] = g.b_sizes[d];
      o_st[d] = g.b_strides[0][d];
      c_st[d] = g.b_strides[3][d];
    }
    sizes[g.nb] = g.M;
    sizes[g.nb + 1] = g.N;
    o_st[g.nb] = g.o_sm;
    o_st[g.nb + 1] = g.o_sn;
    c_st[g.nb] = g.c_sm;
    c_st[g.nb + 1] = g.c_sn;
    const TensorRef copy_refs[4] = {refs[0], refs[3], {}, {}};
    const int64_t* strides[4] = {o_st, c_st, nullptr, nullptr};
    const ScalarArg none = MakeScalar(t, 0, 0, true);
    const std::string kernel = std::string("copy_") + t.name;
    BPCL_RETURN_IF_ERROR(LaunchPointwiseGeo(ctx, "copy", src::k_copy, DtypeDefines(t, "T") + DeviceDefines(ctx.device),
                                            kernel.c_str(), g.nb + 2, sizes, copy_refs, strides, none, none));
  }
  StatusCode st = StatusCode::kSuccess;
  try {
    // CLBlast creates its kernel objects per call and caches programs under
    // its own lock; serializing with our launches keeps one enqueue order.
    TuneForCpuDriver(ctx.device);
    std::lock_guard<std::mutex> lock(ctx.device->launch_mutex);
    if (t.item_size == 4) {
      float a, b = 0;
      std::memcpy(&a, alpha.bytes, sizeof a);
      if (g.has_c) std::memcpy(&b, beta.bytes, sizeof b);
      st = RunPlan<float>(ctx, g, refs, plan, a, b);
    } else {
      double a, b = 0;
      std::memcpy(&a, alpha.bytes, sizeof a);
      if (g.has_c) std::memcpy(&b, beta.bytes, sizeof b);
      st = RunPlan<double>(ctx, g, refs, plan, a, b);
    }
  } catch (const std::exception& e) {  // CLBlast's C++ API catches its own; guard anyway
    return Status(BP_STATUS_INTERNAL, std::string("CLBlast GEMM threw: ") + e.what());
  } catch (...) {
    return Status(BP_STATUS_INTERNAL, "CLBlast GEMM threw an unknown exception");
  }
  if (st == StatusCode::kSuccess) {
    *done = true;
    ctx.backend->clblast_gemms.fetch_add(1, std::memory_order_relaxed);
    return Ok();
  }
  if (IsRuntimeFailure(st)) return ClblastError(st);
  return Ok();  // CLBlast cannot run this case: our kernel does (out is rewritten whole)
}

}  // namespace bpcl
