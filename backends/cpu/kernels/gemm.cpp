// Gemm: oneDNN matmul with strided memory descriptors and a primitive cache,
// a float32 staging path, and a direct loop for float64.
#include "gemm.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dnnl_common.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "packed_weights.h"
#include "parallel.h"

namespace bp_cpu {
namespace {

constexpr int kDnnlMaxDims = 12;

bool DnnlType(DType dt, dnnl::memory::data_type* out) {
  switch (dt) {
    case DType::kFloat32:
      *out = dnnl::memory::data_type::f32;
      return true;
    case DType::kBFloat16:
      *out = dnnl::memory::data_type::bf16;
      return true;
    case DType::kFloat16:
      *out = dnnl::memory::data_type::f16;
      return true;
    default:
      return false;
  }
}

// A matrix operand as oneDNN sees it: broadcast batch dims become size 1.
// Fixed arrays: a call that hits the primitive cache allocates nothing here.
struct Mat {
  int nd = 0;
  int64_t dims[kDnnlMaxDims], strides[kDnnlMaxDims];
  void* data = nullptr;
  dnnl::memory::desc desc(dnnl::memory::data_type dt) const {
    return dnnl::memory::desc(dnnl::memory::dims(dims, dims + nd), dt, dnnl::memory::dims(strides, strides + nd));
  }
};

Mat MakeMat(const DLTensor& t) {
  Mat m;
  m.nd = t.ndim;
  for (int d = 0; d < t.ndim; ++d) {
    const bool broadcast = d < t.ndim - 2 && t.strides[d] == 0;
    // oneDNN cannot express a broadcast row or column (stride 0 in a matrix
    // dim): the caller stages a dense copy instead.
    if (d >= t.ndim - 2 && t.strides[d] == 0 && t.shape[d] > 1)
      throw dnnl::error(dnnl_unimplemented, "broadcast matrix dim");
    m.dims[d] = broadcast ? 1 : t.shape[d];
    m.strides[d] = t.strides[d] == 0 ? 1 : t.strides[d];
  }
  m.data = DataPtr(t);
  return m;
}

// Primitive cache: oneDNN's own cache still pays for the primitive
// descriptor; this one makes a repeated shape a map lookup.
// Primitives run with a user scratchpad, so one cached primitive may execute
// on several host threads at once (oneDNN's shared library scratchpad would
// tie each primitive to the thread that created it).
struct CachedMatmul {
  dnnl::matmul prim;
  dnnl::memory::desc scratchpad;
  dnnl::memory::desc weights;  // the layout the primitive reads B in (packed: oneDNN's choice)
  dnnl::memory::desc a, b, c;  // the operands' user layouts (b: B as stored)
};
PrimitiveCache<CachedMatmul>& GetCache() {
  static auto* cache = new PrimitiveCache<CachedMatmul>;
  return *cache;
}

void AppendKey(std::string* key, const Mat& m) {
  key->append(reinterpret_cast<const char*>(m.dims), static_cast<size_t>(m.nd) * sizeof(int64_t));
  key->append(reinterpret_cast<const char*>(m.strides), static_cast<size_t>(m.nd) * sizeof(int64_t));
  key->push_back('|');
}

// `packed_b`: the primitive picks B's layout (format_tag::any) and the
// caller hands it B reordered into that layout once (PackedWeights).
std::shared_ptr<CachedMatmul> GetPrimitive(dnnl::memory::data_type dt, const Mat& a, const Mat& b, const Mat& c,
                                           float alpha, float beta, bool packed_b) {
  thread_local std::string key;  // its capacity stays: a cache hit allocates nothing
  key.clear();
  key.push_back(static_cast<char>(dt));
  key.push_back(packed_b ? 'P' : 'p');
  key.push_back(static_cast<char>(omp_get_max_threads()));  // a primitive keeps its creator's team size
  key.append(reinterpret_cast<const char*>(&alpha), sizeof alpha);
  key.append(reinterpret_cast<const char*>(&beta), sizeof beta);
  AppendKey(&key, a);
  AppendKey(&key, b);
  AppendKey(&key, c);
  if (std::shared_ptr<CachedMatmul> hit = GetCache().Find(key)) return hit;
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
  if (beta != 0.0f) {
    dnnl::post_ops po;
    po.append_sum(beta);
    attr.set_post_ops(po);
  }
  const dnnl::memory::desc amd = a.desc(dt), bmd = b.desc(dt), cmd = c.desc(dt);
  const dnnl::memory::desc b_any(dnnl::memory::dims(b.dims, b.dims + b.nd), dt, dnnl::memory::format_tag::any);
  dnnl::matmul::desc desc(amd, packed_b ? b_any : bmd, cmd);
  dnnl::matmul::primitive_desc pd(desc, attr, Engine());  // throws if unimplemented
  // oneDNN's reference kernel is far slower than staging dense copies.
  if (std::strncmp(pd.impl_info_str(), "ref", 3) == 0) throw dnnl::error(dnnl_unimplemented, "reference matmul");
  auto prim = std::make_shared<CachedMatmul>(
      CachedMatmul{dnnl::matmul(pd), pd.scratchpad_desc(), pd.weights_desc(), amd, bmd, cmd});
  GetCache().Insert(key, prim);
  return prim;
}

// `b_id`: B's constant-storage id (0: not constant). A constant B with no
// batch of its own (a weight) is read packed: oneDNN's matmul on a plain B
// copies it into its blocked layout on every call, which at the few rows of
// a transformer token batch or a classifier head costs as much as the
// product (ONNX Runtime pre-packs such initializers once, too).
void RunDnnl(dnnl::memory::data_type dt, const Mat& a, const Mat& b, const Mat& c, float alpha, float beta,
             uint64_t b_id) {
  int64_t macs = a.nd == 0 ? 0 : a.dims[a.nd - 1];
  for (int d = 0; d < c.nd; ++d) macs *= c.dims[d];
  const SingleThreadScope single(macs < kDnnlParallelMacs);
  bool packed_b = b_id != 0;
  for (int d = 0; packed_b && d + 2 < b.nd; ++d) packed_b = b.dims[d] == 1;
  const int64_t b_bytes = b.nd < 2 ? 0 : b.dims[b.nd - 1] * b.dims[b.nd - 2] * 4;
  packed_b = packed_b && PackedWeightsCanKeep(b_bytes);  // else the plain B beats a reorder per call
  std::shared_ptr<CachedMatmul> prim = GetPrimitive(dt, a, b, c, alpha, beta, packed_b);
  thread_local dnnl::stream stream(Engine());  // in-order, waited for below: reusable
  // The argument map keeps its nodes from call to call on this thread.
  thread_local std::unordered_map<int, dnnl::memory> args;
  args[DNNL_ARG_SRC] = OperandMemory(prim, DNNL_ARG_SRC, prim->a, a.data);
  args[DNNL_ARG_WEIGHTS] = packed_b ? PackedWeights(b_id, prim->b, b.data, prim->weights, Engine(), stream)
                                    : OperandMemory(prim, DNNL_ARG_WEIGHTS, prim->b, b.data);
  args[DNNL_ARG_DST] = OperandMemory(prim, DNNL_ARG_DST, prim->c, c.data);
  args[DNNL_ARG_SCRATCHPAD] = OperandMemory(prim, DNNL_ARG_SCRATCHPAD, prim->scratchpad,
                                            ScratchpadBuffer(prim->scratchpad.get_size()));
  prim->prim.execute(stream, args);
  stream.wait();
  args[DNNL_ARG_WEIGHTS] = dnnl::memory();  // hold no packed weights past the call
}

// A dense float32 copy of `t` (broadcast batch dims kept at size 1).
struct Staged {
  std::vector<float> buf;
  int64_t shape[BP_MAX_NDIM];
  int64_t strides[BP_MAX_NDIM];
  DLTensor dl{};
};

void Stage(const DLTensor& t, Staged* s, bool copy_in, int64_t* src_shape) {
  int64_t n = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    const bool broadcast = d < t.ndim - 2 && t.strides[d] == 0;
    s->shape[d] = broadcast ? 1 : t.shape[d];
    src_shape[d] = s->shape[d];
    s->strides[d] = n;
    n *= s->shape[d];
  }
  s->buf.assign(static_cast<size_t>(n), 0.0f);
  s->dl = t;
  s->dl.data = s->buf.data();
  s->dl.byte_offset = 0;
  s->dl.dtype = DLDataType{kDLFloat, 32, 1};
  s->dl.shape = s->shape;
  s->dl.strides = s->strides;
  if (copy_in) {
    DLTensor src = t;
    src.shape = src_shape;
    CopyTensor(s->dl, src);
  }
}

// Direct loop, double accumulation; any dtype, any strides.
template <typename T>
void NaiveGemm(const DLTensor& A, const DLTensor& B, const DLTensor& C, double alpha, double beta) {
  const int nd = C.ndim;
  const int64_t M = C.shape[nd - 2], N = C.shape[nd - 1], K = A.shape[nd - 1];
  int64_t batch = 1;
  for (int d = 0; d < nd - 2; ++d) batch *= C.shape[d];
  const int64_t isz = sizeof(T);
  const int64_t as0 = A.strides[nd - 2] * isz, as1 = A.strides[nd - 1] * isz;
  const int64_t bs0 = B.strides[nd - 2] * isz, bs1 = B.strides[nd - 1] * isz;
  const int64_t cs0 = C.strides[nd - 2] * isz, cs1 = C.strides[nd - 1] * isz;
  const int64_t rows = batch * M;
  auto run_rows = [&](int64_t lo, int64_t hi) {
    std::vector<double> acc(static_cast<size_t>(N));
    for (int64_t r = lo; r < hi; ++r) {
      int64_t bi = r / M, m = r % M;
      const char* pa = DataPtr(A);
      const char* pb = DataPtr(B);
      char* pc = DataPtr(C);
      for (int d = nd - 3; d >= 0; --d) {
        const int64_t i = bi % C.shape[d];
        bi /= C.shape[d];
        pa += i * A.strides[d] * isz;
        pb += i * B.strides[d] * isz;
        pc += i * C.strides[d] * isz;
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t k = 0; k < K; ++k) {
        const double av = static_cast<double>(Load(*reinterpret_cast<const T*>(pa + m * as0 + k * as1)));
        const char* brow = pb + k * bs0;
        for (int64_t n = 0; n < N; ++n)
          acc[static_cast<size_t>(n)] += av * static_cast<double>(Load(*reinterpret_cast<const T*>(brow + n * bs1)));
      }
      for (int64_t n = 0; n < N; ++n) {
        T* out = reinterpret_cast<T*>(pc + m * cs0 + n * cs1);
        double v = alpha * acc[static_cast<size_t>(n)];
        if (beta != 0.0) v += beta * static_cast<double>(Load(*out));
        *out = Store<T>(v);
      }
    }
  };
  if (rows * N * K < kParallelGrain || omp_get_max_threads() == 1 || rows == 1) {
    run_rows(0, rows);
  } else {
    ParallelRegion([&](int64_t t, int64_t nt) { run_rows(rows * t / nt, rows * (t + 1) / nt); });
  }
}

// The batch and row dims of `t` (all but the last) as one dim: true, with
// their element count and stride, when they step through memory evenly
// (size-1 dims ignored).
bool CollapseRows(const DLTensor& t, int64_t* rows, int64_t* row_stride) {
  const int nd = t.ndim;
  *rows = 1;
  *row_stride = t.shape[nd - 1] > 0 ? t.shape[nd - 1] : 1;
  int inner = -1;  // the innermost dim of size > 1 seen so far
  for (int d = nd - 2; d >= 0; --d) {
    if (t.shape[d] == 1) continue;
    if (inner >= 0 && t.strides[d] != t.shape[inner] * t.strides[inner]) return false;
    if (inner < 0) *row_stride = t.strides[d];
    inner = d;
    *rows *= t.shape[d];
  }
  return true;
}

}  // namespace

bp_status_t GemmOriented(const bp_kernel_call_t* call, const DLTensor& A, const DLTensor& B, const DLTensor& C,
                         double alpha, double beta, uint64_t b_id);

bp_status_t Gemm(const bp_kernel_call_t* call, const DLTensor& A, const DLTensor& B, const DLTensor& C, double alpha,
                 double beta, uint64_t b_id) {
  const DType dt = DtypeOf(C.dtype);
  if (DtypeOf(A.dtype) != dt || DtypeOf(B.dtype) != dt)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "operands have dtypes %s, %s and output %s (expected one dtype)",
                DtypeName(DtypeOf(A.dtype)), DtypeName(DtypeOf(B.dtype)), DtypeName(dt));
  if (!IsFloating(dt)) return FailDtype(call, C);
  if (Numel(C) == 0) return BP_STATUS_OK;
  if (C.ndim >= 2 && C.strides[C.ndim - 1] != 1 && C.strides[C.ndim - 2] == 1 && C.shape[C.ndim - 2] > 1) {
    // A column-major output: compute C^T = B^T @ A^T, which oneDNN's fast
    // kernels take with a row-major destination.
    int64_t sh[3][BP_MAX_NDIM], st[3][BP_MAX_NDIM];
    DLTensor v[3] = {B, A, C};
    for (int i = 0; i < 3; ++i) {
      for (int d = 0; d < v[i].ndim; ++d) {
        sh[i][d] = v[i].shape[d];
        st[i][d] = v[i].strides[d];
      }
      const int n = v[i].ndim;
      std::swap(sh[i][n - 1], sh[i][n - 2]);
      std::swap(st[i][n - 1], st[i][n - 2]);
      v[i].shape = sh[i];
      v[i].strides = st[i];
    }
    return GemmOriented(call, v[0], v[1], v[2], alpha, beta, 0);  // B is now the left operand
  }
  return GemmOriented(call, A, B, C, alpha, beta, b_id);
}

bp_status_t GemmOriented(const bp_kernel_call_t* call, const DLTensor& A, const DLTensor& B, const DLTensor& C,
                         double alpha, double beta, uint64_t b_id) {
  const DType dt = DtypeOf(C.dtype);
  if (C.ndim > 2) {
    // A batch of products with one B (a weight broadcast over the batch, as
    // torch.matmul's [..., M, K] @ [K, N]) is one [batch * M, K] @ [K, N]
    // product when A's and C's rows step evenly: one large oneDNN call
    // instead of many small ones (a [65, 1, 64] @ [64, 192] projection ran
    // 65 one-row products), as torch.matmul folds the batch into rows.
    bool b_shared = true;
    for (int d = 0; d < B.ndim - 2; ++d) b_shared = b_shared && (B.strides[d] == 0 || B.shape[d] == 1);
    int64_t a_rows, a_step, c_rows, c_step;
    if (b_shared && CollapseRows(A, &a_rows, &a_step) && CollapseRows(C, &c_rows, &c_step) && a_rows == c_rows) {
      int64_t sh[3][2], st[3][2];
      DLTensor v[3] = {A, B, C};
      const int64_t rows[3] = {a_rows, B.shape[B.ndim - 2], c_rows};
      const int64_t steps[3] = {a_step, B.strides[B.ndim - 2], c_step};
      for (int i = 0; i < 3; ++i) {
        const int n = v[i].ndim;
        sh[i][0] = rows[i];
        st[i][0] = steps[i];
        sh[i][1] = v[i].shape[n - 1];
        st[i][1] = v[i].strides[n - 1];
        v[i].ndim = 2;
        v[i].shape = sh[i];
        v[i].strides = st[i];
      }
      return GemmOriented(call, v[0], v[1], v[2], alpha, beta, b_id);
    }
  }
  dnnl::memory::data_type ddt;
  const bool k_zero = A.shape[A.ndim - 1] == 0;
  if (DnnlType(dt, &ddt) && C.ndim <= kDnnlMaxDims && !k_zero) {
    try {
      try {
        RunDnnl(ddt, MakeMat(A), MakeMat(B), MakeMat(C), static_cast<float>(alpha), static_cast<float>(beta), b_id);
        return BP_STATUS_OK;
      } catch (const dnnl::error&) {
        // Unsupported dtype on this CPU or layout: stage dense float32 copies.
      }
      int64_t sa[BP_MAX_NDIM], sb[BP_MAX_NDIM], sc[BP_MAX_NDIM];
      Staged a, b, c;
      Stage(A, &a, true, sa);
      Stage(B, &b, true, sb);
      Stage(C, &c, beta != 0.0, sc);
      Mat ma = MakeMat(a.dl), mb = MakeMat(b.dl), mc = MakeMat(c.dl);
      RunDnnl(dnnl::memory::data_type::f32, ma, mb, mc, static_cast<float>(alpha), static_cast<float>(beta), 0);
      CopyTensor(C, c.dl);
      return BP_STATUS_OK;
    } catch (const dnnl::error&) {
      // Fall through to the direct loop below.
    } catch (const std::bad_alloc&) {
      return Fail(call, BP_STATUS_OUT_OF_MEMORY, "out of memory staging operands");
    }
  }
  try {
    Dispatch(dt, BP_STATUS_INTERNAL, [&](auto tag) -> bp_status_t {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloating<T>) NaiveGemm<T>(A, B, C, alpha, beta);
      return BP_STATUS_OK;
    });
  } catch (const std::bad_alloc&) {
    return Fail(call, BP_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  return BP_STATUS_OK;
}

}  // namespace bp_cpu
