// GPU backend benchmarks through the host API (backplane.h), each beside an
// anchor measured in the same run (bench/ratio_reporter.h pairs
// "Anchor_<X>" with "<X>"):
//   GpuAdd16M            add.out of 16M float32  vs  a device-to-device copy
//                        moving the same bytes (3 x 64 MiB: the bandwidth bound)
//   GpuMatmul4096/<dt>   matmul 4096^3 in float32/float16/bfloat16  vs  cuBLAS
//                        cublasGemmEx called directly on raw buffers
//   GpuSoftmax           softmax.int of [4096, 4096] float32 (bytes/s counter)
//   GpuFallbackProd      prod.dim_int over dim 1 (no GPU kernel: CPU fallback round trip)  vs
//                        to_host + the CPU kernel + back to the device, by hand
// The backend is "cuda" (BP_GPU_BENCH_BACKEND=hip selects HIP; the cuBLAS
// anchors then skip). Without a device every benchmark is skipped with the
// backend's no_device_reason.
//
// Wiring (bench/CMakeLists.txt, owned by the lead):
//   if(TARGET backplane_cuda)
//     find_package(CUDAToolkit REQUIRED)
//     backplane_add_bench(bp_bench_gpu gpu_bench.cpp)
//     target_link_libraries(bp_bench_gpu PRIVATE CUDA::cudart CUDA::cublas)
//     target_compile_definitions(bp_bench_gpu PRIVATE BP_GPU_BENCH_HAVE_CUDA=1)
//   endif()
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_context.h"
#include "ratio_reporter.h"

#if defined(BP_GPU_BENCH_HAVE_CUDA)
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

namespace {

using bp_bench::Context;
using bp_bench::Op;
using bp_bench::TensorValue;

const char* BackendName() {
  const char* env = std::getenv("BP_GPU_BENCH_BACKEND");
  return env && *env ? env : "cuda";
}

// The benchmark device, or a skip message in *why.
bool GpuDevice(bp_device_t* out, std::string* why) {
  int32_t backend = -1;
  if (bp_backend_find(Context(), BackendName(), &backend) != BP_STATUS_OK) {
    *why = std::string("skipped: backend '") + BackendName() + "' not loaded: " + bp_last_error_message();
    return false;
  }
  bp_backend_info_t info{};
  info.struct_size = sizeof info;
  if (bp_backend_info(Context(), backend, &info) != BP_STATUS_OK || info.device_count < 1) {
    *why = std::string("skipped: no ") + BackendName() +
           " device: " + (info.no_device_reason ? info.no_device_reason : bp_last_error_message());
    return false;
  }
  *out = bp_device_t{backend, 0};
  return true;
}

#define BP_GPU_DEVICE_OR_SKIP(state, dev)  \
  bp_device_t dev{};                       \
  {                                        \
    std::string why_;                      \
    if (!GpuDevice(&dev, &why_)) {         \
      (state).SkipWithError(why_.c_str()); \
      return;                              \
    }                                      \
  }

DLDataType DtypeArg(int64_t i) {
  switch (i) {
    case 1:
      return DLDataType{kDLFloat, 16, 1};
    case 2:
      return DLDataType{kDLBfloat, 16, 1};
    default:
      return DLDataType{kDLFloat, 32, 1};
  }
}
const char* DtypeLabel(int64_t i) { return i == 1 ? "float16" : i == 2 ? "bfloat16" : "float32"; }

bp_tensor_t* Filled(bp_device_t dev, std::vector<int64_t> sizes, DLDataType dtype, double value) {
  bp_tensor_t* t = nullptr;
  if (bp_tensor_empty(Context(), dev, static_cast<int32_t>(sizes.size()), sizes.data(), dtype, &t) != BP_STATUS_OK) {
    return nullptr;
  }
  bp_value_t args[2] = {TensorValue(t), {}};
  args[1].kind = BP_VALUE_DOUBLE;
  args[1].u.d = value;
  if (bp_op_call(Context(), Op("fill_.Scalar"), args, 2, nullptr, 0) != BP_STATUS_OK) {
    bp_tensor_release(t);
    return nullptr;
  }
  return t;
}

void BM_GpuAdd16M(benchmark::State& state) {
  BP_GPU_DEVICE_OR_SKIP(state, dev);
  const int64_t n = int64_t{16} << 20;
  bp_tensor_t* a = Filled(dev, {n}, bp_bench::Float32(), 1.0);
  bp_tensor_t* b = Filled(dev, {n}, bp_bench::Float32(), 2.0);
  bp_tensor_t* out = Filled(dev, {n}, bp_bench::Float32(), 0.0);
  if (!a || !b || !out) {
    state.SkipWithError(bp_last_error_message());
    return;
  }
  bp_value_t args[4] = {TensorValue(a), TensorValue(b), {}, TensorValue(out)};
  args[2].kind = BP_VALUE_INT;
  args[2].u.i = 1;
  bp_op_t* add_out = Op("add.out");
  for (auto _ : state) {
    if (bp_op_call(Context(), add_out, args, 4, nullptr, 0) != BP_STATUS_OK) {
      state.SkipWithError(bp_last_error_message());
      break;
    }
    bp_device_synchronize(Context(), dev);
  }
  state.SetBytesProcessed(state.iterations() * n * 4 * 3);
  bp_tensor_release(a);
  bp_tensor_release(b);
  bp_tensor_release(out);
}
BENCHMARK(BM_GpuAdd16M)->Name("GpuAdd16M")->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_GpuSoftmax(benchmark::State& state) {
  BP_GPU_DEVICE_OR_SKIP(state, dev);
  bp_tensor_t* x = Filled(dev, {4096, 4096}, bp_bench::Float32(), 0.5);
  if (!x) {
    state.SkipWithError(bp_last_error_message());
    return;
  }
  bp_value_t args[2] = {TensorValue(x), {}};
  args[1].kind = BP_VALUE_INT;
  args[1].u.i = 1;
  bp_op_t* softmax = Op("softmax.int");
  for (auto _ : state) {
    bp_tensor_t* y = nullptr;
    if (bp_op_call(Context(), softmax, args, 2, &y, 1) != BP_STATUS_OK) {
      state.SkipWithError(bp_last_error_message());
      break;
    }
    bp_device_synchronize(Context(), dev);
    bp_tensor_release(y);
  }
  state.SetBytesProcessed(state.iterations() * int64_t{4096} * 4096 * 4 * 2);
  bp_tensor_release(x);
}
BENCHMARK(BM_GpuSoftmax)->Name("GpuSoftmax")->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_GpuMatmul(benchmark::State& state) {
  BP_GPU_DEVICE_OR_SKIP(state, dev);
  const int64_t n = 4096;
  const DLDataType dt = DtypeArg(state.range(0));
  bp_tensor_t* a = Filled(dev, {n, n}, dt, 0.01);
  bp_tensor_t* b = Filled(dev, {n, n}, dt, 0.02);
  bp_tensor_t* c = Filled(dev, {n, n}, dt, 0.0);
  if (!a || !b || !c) {
    state.SkipWithError(bp_last_error_message());
    return;
  }
  bp_value_t args[3] = {TensorValue(a), TensorValue(b), TensorValue(c)};
  bp_op_t* matmul_out = Op("matmul.out");
  for (auto _ : state) {
    if (bp_op_call(Context(), matmul_out, args, 3, nullptr, 0) != BP_STATUS_OK) {
      state.SkipWithError(bp_last_error_message());
      break;
    }
    bp_device_synchronize(Context(), dev);
  }
  state.SetLabel(DtypeLabel(state.range(0)));
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate);
  bp_tensor_release(a);
  bp_tensor_release(b);
  bp_tensor_release(c);
}
BENCHMARK(BM_GpuMatmul)->Name("GpuMatmul4096")->Arg(0)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// prod.dim_int has no GPU kernel: every call is a CPU fallback round trip.
void BM_GpuFallbackProd(benchmark::State& state) {
  BP_GPU_DEVICE_OR_SKIP(state, dev);
  bp_tensor_t* x = bp_bench::Filled(dev, {8, 64, 56, 56});
  bp_value_t args[2] = {TensorValue(x), {}};
  args[1].kind = BP_VALUE_INT;
  args[1].u.i = 1;  // dim
  bp_op_t* prod = Op("prod.dim_int");
  for (auto _ : state) {
    bp_tensor_t* y = nullptr;
    if (bp_op_call(Context(), prod, args, 2, &y, 1) != BP_STATUS_OK) {
      state.SkipWithError(bp_last_error_message());
      break;
    }
    bp_device_synchronize(Context(), dev);
    bp_tensor_release(y);
  }
  bp_tensor_release(x);
}
BENCHMARK(BM_GpuFallbackProd)->Name("GpuFallbackProd")->UseRealTime()->Unit(benchmark::kMicrosecond);

// The same by hand: copy to the CPU, run the CPU kernel, copy the result back.
void BM_AnchorFallbackProd(benchmark::State& state) {
  BP_GPU_DEVICE_OR_SKIP(state, dev);
  bp_tensor_t* x = bp_bench::Filled(dev, {8, 64, 56, 56});
  bp_op_t* prod = Op("prod.dim_int");
  for (auto _ : state) {
    bp_tensor_t* host_x = nullptr;
    bp_tensor_t* host_y = nullptr;
    bp_tensor_t* y = nullptr;
    bp_tensor_to_device(x, bp_device_t{0, 0}, &host_x);
    bp_value_t args[2] = {TensorValue(host_x), {}};
    args[1].kind = BP_VALUE_INT;
    args[1].u.i = 1;  // dim
    bp_op_call(Context(), prod, args, 2, &host_y, 1);
    bp_tensor_to_device(host_y, dev, &y);
    bp_device_synchronize(Context(), dev);
    bp_tensor_release(host_x);
    bp_tensor_release(host_y);
    bp_tensor_release(y);
  }
  bp_tensor_release(x);
}
BENCHMARK(BM_AnchorFallbackProd)->Name("Anchor_GpuFallbackProd")->UseRealTime()->Unit(benchmark::kMicrosecond);

#if defined(BP_GPU_BENCH_HAVE_CUDA)
bool CudaAnchorUsable(benchmark::State& state) {
  std::string why;
  bp_device_t dev{};
  if (std::string(BackendName()) != "cuda") {
    state.SkipWithError("skipped: the cuBLAS/CUDA anchors need the cuda backend");
    return false;
  }
  if (!GpuDevice(&dev, &why)) {
    state.SkipWithError(why.c_str());
    return false;
  }
  return true;
}

// The bandwidth bound of add: one copy moving as many bytes (read 2n, write n
// floats == copy 1.5n floats).
void BM_AnchorGpuAdd16M(benchmark::State& state) {
  if (!CudaAnchorUsable(state)) return;
  const size_t bytes = (size_t{16} << 20) * 4 * 3 / 2;
  void *src = nullptr, *dst = nullptr;
  if (cudaMalloc(&src, bytes) != cudaSuccess || cudaMalloc(&dst, bytes) != cudaSuccess) {
    state.SkipWithError("cudaMalloc failed");
    return;
  }
  for (auto _ : state) {
    cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, nullptr);
    cudaStreamSynchronize(nullptr);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes) * 2);
  cudaFree(src);
  cudaFree(dst);
}
BENCHMARK(BM_AnchorGpuAdd16M)->Name("Anchor_GpuAdd16M")->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_AnchorGpuMatmul(benchmark::State& state) {
  if (!CudaAnchorUsable(state)) return;
  const int n = 4096;
  const int64_t which = state.range(0);
  const cudaDataType_t type = which == 1 ? CUDA_R_16F : which == 2 ? CUDA_R_16BF : CUDA_R_32F;
  const size_t bytes = size_t{4096} * 4096 * (which == 0 ? 4 : 2);
  void *a = nullptr, *b = nullptr, *c = nullptr;
  cublasHandle_t handle = nullptr;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess ||
      cudaMalloc(&c, bytes) != cudaSuccess || cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    state.SkipWithError("cudaMalloc/cublasCreate failed");
    return;
  }
  cudaMemset(a, 0, bytes);
  cudaMemset(b, 0, bytes);
  const float alpha = 1.0f, beta = 0.0f;
  for (auto _ : state) {
    cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, b, type, n, a, type, n, &beta, c, type, n,
                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    cudaDeviceSynchronize();
  }
  state.SetLabel(DtypeLabel(which));
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate);
  cublasDestroy(handle);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
}
BENCHMARK(BM_AnchorGpuMatmul)
    ->Name("Anchor_GpuMatmul4096")
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
#endif  // BP_GPU_BENCH_HAVE_CUDA

}  // namespace

int main(int argc, char** argv) { return bp_bench::RunWithRatios(argc, argv); }
