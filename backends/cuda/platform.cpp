// CUDA-only parts of the CUDA plugin: its identity and cuBLAS GEMM for
// matmul, addmm and linear (float32, float64, float16, bfloat16).
//
// cuBLAS is column-major; a row-major C = A @ B is computed as
// C^T = B^T @ A^T. Each operand must have a unit stride on one dim (the
// other is its leading dimension); C must be row-major (unit column stride).
// The batch goes to cublasGemmStridedBatchedEx when the batch dims coalesce
// to one stride per operand (zero strides broadcast); otherwise the outer
// batch dims are looped. Anything cuBLAS cannot express returns
// UNIMPLEMENTED and the shared tiled kernel runs.
//
// libcublas is dlopen'ed on the first GEMM, not linked: it (with cublasLt)
// is several hundred MB and would make every plugin load cost >100 ms
// (target: <= 5 ms), even for hosts that never multiply matrices. If it
// cannot be loaded, matmul still works through the tiled kernel.
#include <cublas_v2.h>
#include <dlfcn.h>

#include <climits>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include "gpu_runtime.h"
#include "kernels/kernel_util.h"
#include "platform.h"
#include "plugin.h"

namespace bp_gpu {

struct CublasSlot {
  std::mutex mu;  // cublasSetStream + the call must not interleave across threads
  cublasHandle_t handle = nullptr;
  cublasStatus_t create_status = CUBLAS_STATUS_SUCCESS;
  bool tried = false;
};

// The cuBLAS entry points we use, resolved from the dlopen'ed library.
struct CublasApi {
  void* lib = nullptr;
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  // Spelled out: the header also declares a C++ overload taking cudaDataType.
  cublasStatus_t (*gemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                         const void*, const void*, cudaDataType, int, long long, const void*,
                         cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                         long long, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  decltype(&cublasGetStatusName) status_name = nullptr;
  std::string error;  // why loading failed; empty when it worked
};

struct PlatformState {
  int32_t device_count = 0;
  std::unique_ptr<CublasSlot[]> slots;
  std::once_flag load_once;
  CublasApi api;
};

namespace platform {

const char* const kBackendName = "cuda";
const int32_t kDLDeviceType = kDLCUDA;
const char* const kVendor = "NVIDIA";

PlatformState* Create(int32_t device_count) {
  PlatformState* s = new PlatformState();
  s->device_count = device_count;
  if (device_count > 0) s->slots.reset(new CublasSlot[device_count]);
  return s;
}

void Destroy(PlatformState* s) {
  if (!s) return;
  for (int32_t d = 0; d < s->device_count; ++d) {
    if (s->slots[d].handle && s->api.destroy) {
      (void)cudaSetDevice(d);
      (void)s->api.destroy(s->slots[d].handle);
    }
  }
  // libcublas stays mapped: its own exit-time handlers must not run after
  // an unmap (the same reason hosts rarely dlclose CUDA libraries).
  delete s;
}

namespace {

// One operand as cuBLAS sees it: rows x cols in row-major terms with strides.
struct Layout {
  bool ok = false;
  bool row_major = false;  // unit column stride; else unit row stride
  int64_t ld = 0;
};

Layout Classify(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  // A size-1 dim's stride is irrelevant; pick the value cuBLAS accepts.
  if (cols == 1) cs = 1;
  if (rows == 1) rs = cols > 0 ? cols : 1;
  Layout l;
  if (cs == 1 && rs >= (cols > 1 ? cols : 1)) {
    l.ok = true;
    l.row_major = true;
    l.ld = rs;
  } else if (rs == 1 && cs >= (rows > 1 ? rows : 1)) {
    l.ok = true;
    l.row_major = false;
    l.ld = cs;
  }
  return l;
}

bool FitsInt(int64_t v) { return v >= 0 && v <= INT_MAX; }

#define BP_STR2(x) #x
#define BP_STR(x) BP_STR2(x)

void LoadCublas(CublasApi* api) {
  const char* names[] = {"libcublas.so." BP_STR(CUBLAS_VER_MAJOR), "libcublas.so"};
  for (const char* name : names) {
    api->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (api->lib) break;
  }
  if (!api->lib) {
    const char* e = dlerror();
    api->error = std::string("dlopen(libcublas.so." BP_STR(CUBLAS_VER_MAJOR) "): ") + (e ? e : "?");
    return;
  }
  bool ok = true;
  auto get = [&](auto* fn, const char* sym) {
    *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(api->lib, sym));
    if (!*fn) {
      ok = false;
      api->error += std::string(api->error.empty() ? "" : "; ") + "missing " + sym;
    }
  };
  get(&api->create, "cublasCreate_v2");
  get(&api->destroy, "cublasDestroy_v2");
  get(&api->set_stream, "cublasSetStream_v2");
  get(&api->set_math_mode, "cublasSetMathMode");
  get(&api->gemm, "cublasGemmStridedBatchedEx");
  get(&api->status_name, "cublasGetStatusName");
  if (!ok) api->create = nullptr;  // unusable: the tiled kernel takes over
}

const char* CublasName(const CublasApi& api, cublasStatus_t s) {
  const char* n = api.status_name ? api.status_name(s) : nullptr;
  return n ? n : "CUBLAS_STATUS_?";
}

}  // namespace

bp_status_t Gemm(const bp_kernel_call_t* call, PlatformState* state, const GemmProblem& p) {
  if (!state || call->device_index < 0 || call->device_index >= state->device_count) {
    return BP_STATUS_UNIMPLEMENTED;
  }
  if (p.k == 0) return BP_STATUS_UNIMPLEMENTED;  // the tiled kernel writes the zeros
  cudaDataType_t type;
  cublasComputeType_t compute;
  switch (p.dtype) {
    case DType::kFloat32:
      type = CUDA_R_32F;
      compute = CUBLAS_COMPUTE_32F;
      break;
    case DType::kFloat16:
      type = CUDA_R_16F;
      compute = CUBLAS_COMPUTE_32F;
      break;
    case DType::kBFloat16:
      type = CUDA_R_16BF;
      compute = CUBLAS_COMPUTE_32F;
      break;
    case DType::kFloat64:
      type = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      break;
    default:
      return BP_STATUS_UNIMPLEMENTED;
  }
  const Layout la = Classify(p.m, p.k, p.a_rs, p.a_cs);
  const Layout lb = Classify(p.k, p.n, p.b_rs, p.b_cs);
  const Layout lc = Classify(p.m, p.n, p.c_rs, p.c_cs);
  if (!la.ok || !lb.ok || !lc.ok || !lc.row_major) return BP_STATUS_UNIMPLEMENTED;
  // Batch: at most one coalesced dim goes to the strided-batched call.
  const OffsetCalculator<3>& bc = p.batch;
  const int32_t nb = bc.ndim;
  const int64_t inner = nb > 0 ? bc.sizes[nb - 1] : 1;
  int64_t sa = 0, sb = 0, sc = 0;
  if (nb > 0) {
    sa = bc.contiguous ? 1 : bc.strides[nb - 1][0];
    sb = bc.contiguous ? 1 : bc.strides[nb - 1][1];
    sc = bc.contiguous ? 1 : bc.strides[nb - 1][2];
  }
  if (!FitsInt(p.m) || !FitsInt(p.n) || !FitsInt(p.k) || !FitsInt(la.ld) || !FitsInt(lb.ld) ||
      !FitsInt(lc.ld) || !FitsInt(inner)) {
    return BP_STATUS_UNIMPLEMENTED;
  }
  if (nb > 0 && sc == 0) return BP_STATUS_UNIMPLEMENTED;  // outputs never overlap

  std::call_once(state->load_once, [state] { LoadCublas(&state->api); });
  const CublasApi& api = state->api;
  if (!api.create) {
    PluginState* ps = StateOf(call);
    static std::once_flag warned;
    std::call_once(warned, [&] {
      if (ps && ps->host && ps->host->log) {
        const std::string msg =
            "cuda backend: cuBLAS unavailable, matmul uses the tiled kernel: " + api.error;
        ps->host->log(ps->registrar, BP_LOG_WARNING, msg.c_str());
      }
    });
    return BP_STATUS_UNIMPLEMENTED;
  }
  CublasSlot& slot = state->slots[call->device_index];
  std::lock_guard<std::mutex> lock(slot.mu);
  if (!slot.tried) {
    slot.tried = true;
    slot.create_status = api.create(&slot.handle);
    if (slot.create_status == CUBLAS_STATUS_SUCCESS) {
      // Plain fp32 (no TF32) matches PyTorch's default numerics for float32.
      api.set_math_mode(slot.handle, CUBLAS_DEFAULT_MATH);
    }
  }
  if (slot.create_status != CUBLAS_STATUS_SUCCESS) {
    return KernelError(call, BP_STATUS_UNAVAILABLE, "cublasCreate failed: %s",
                       CublasName(api, slot.create_status));
  }
  cublasStatus_t cs = api.set_stream(slot.handle, StreamOf(call));
  if (cs != CUBLAS_STATUS_SUCCESS) {
    return KernelError(call, BP_STATUS_INTERNAL, "cublasSetStream failed: %s", CublasName(api, cs));
  }
  // C^T (n x m) = op(B^T) (n x k) @ op(A^T) (k x m), column-major.
  const cublasOperation_t op_b = lb.row_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t op_a = la.row_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  const float alpha_f = static_cast<float>(p.alpha), beta_f = static_cast<float>(p.beta);
  const double alpha_d = p.alpha, beta_d = p.beta;
  const void* alpha = type == CUDA_R_64F ? static_cast<const void*>(&alpha_d) : &alpha_f;
  const void* beta = type == CUDA_R_64F ? static_cast<const void*>(&beta_d) : &beta_f;
  const int64_t es = static_cast<int64_t>(DtypeSize(p.dtype));
  const int64_t outer = nb > 1 ? Numel(nb - 1, bc.sizes) : 1;
  for (int64_t o = 0; o < outer; ++o) {
    // Offsets of this outer batch index: the calculator over the outer dims
    // is the same calculator with the innermost dim dropped.
    int64_t off[3] = {0, 0, 0};
    if (nb > 1) {
      OffsetCalculator<3> outer_calc = bc;
      outer_calc.ndim = nb - 1;
      outer_calc.contiguous = 0;
      outer_calc.get(o, off);
    }
    const char* a = static_cast<const char*>(p.a) + off[0] * es;
    const char* b = static_cast<const char*>(p.b) + off[1] * es;
    char* c = static_cast<char*>(p.c) + off[2] * es;
    cs = api.gemm(slot.handle, op_b, op_a, static_cast<int>(p.n), static_cast<int>(p.m),
                  static_cast<int>(p.k), alpha, b, type, static_cast<int>(lb.ld), sb, a, type,
                  static_cast<int>(la.ld), sa, beta, c, type, static_cast<int>(lc.ld), sc,
                  static_cast<int>(inner), compute, CUBLAS_GEMM_DEFAULT);
    if (cs != CUBLAS_STATUS_SUCCESS) {
      return KernelError(
          call, BP_STATUS_INTERNAL,
          "cublasGemmStridedBatchedEx(m=%lld, n=%lld, k=%lld, batch=%lld) failed: %s",
          static_cast<long long>(p.m), static_cast<long long>(p.n), static_cast<long long>(p.k),
          static_cast<long long>(inner), CublasName(api, cs));
    }
  }
  return BP_STATUS_OK;
}

}  // namespace platform
}  // namespace bp_gpu
