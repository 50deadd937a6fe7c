// The OpenCL backend beside the CPU backend, in one run (on PoCL both run on
// this machine's cores, so the ratio shows what the OpenCL path costs):
//   add of 16M float32, float32 matmul 1024, softmax 4096 x 1024 (dim 1),
// and the first-call cost of a fresh context that loads the OpenCL plugin
// and runs one add, with a cold and with a warm program disk cache.
// First, float32 matmul.out on OpenCL and on the CPU backend in interleaved
// rounds (interleaved.h; --matmul-rounds=N, 0 skips them), the median
// per-round ratio OpenCL / CPU that docs/benchmarks.md quotes. The OpenCL
// side runs CLBlast when the plugin was built with it; run with
// BACKPLANE_OPENCL_CLBLAST=0 for the plugin's own kernel.
//
// Naming for bench/ratio_reporter.h: "Anchor_OpenCL_<X>" is the CPU backend
// run of "OpenCL_<X>", so each ratio is OpenCL time / CPU time.
// Device work is asynchronous: every timed iteration ends with
// bp_device_synchronize, so a result is complete when it is counted.
// PoCL also keeps its own kernel cache (~/.cache/pocl/kcache); run with
// POCL_KERNEL_CACHE=0 to make the cold case cold for PoCL too.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_context.h"
#include "interleaved.h"
#include "ratio_reporter.h"

namespace {

using bp_bench::Context;
using bp_bench::Op;
using bp_bench::TensorValue;

constexpr int64_t k16M = 16 * 1024 * 1024;

// The device of a run: "opencl:0" or "cpu"; false (and the benchmark
// skipped, saying why) when that backend has no device.
bool Device(benchmark::State& state, bool opencl, bp_device_t* out) {
  if (!opencl) {
    *out = bp_device_t{0, 0};
    return true;
  }
  if (!bp_bench::DeviceOf("opencl:0", out)) {
    state.SkipWithError("no OpenCL device (plugin not loaded or no platform)");
    return false;
  }
  return true;
}

bool Call(benchmark::State& state, bp_op_t* op, bp_value_t* args, int32_t n, bp_device_t dev) {
  if (bp_op_call(Context(), op, args, n, nullptr, 0) != BP_STATUS_OK ||
      bp_device_synchronize(Context(), dev) != BP_STATUS_OK) {
    state.SkipWithError(bp_last_error_message());
    return false;
  }
  return true;
}

void Add16M(benchmark::State& state, bool opencl) {
  bp_device_t dev;
  if (!Device(state, opencl, &dev)) return;
  bp_op_t* add_out = Op("add.out");
  bp_tensor_t* a = bp_bench::Filled(dev, {k16M});
  bp_tensor_t* b = bp_bench::Filled(dev, {k16M});
  bp_tensor_t* out = bp_bench::Filled(dev, {k16M});
  bp_value_t args[4] = {TensorValue(a), TensorValue(b), {}, TensorValue(out)};
  args[2].kind = BP_VALUE_INT;
  args[2].u.i = 1;
  Call(state, add_out, args, 4, dev);  // warm-up: builds the program once
  for (auto _ : state)
    if (!Call(state, add_out, args, 4, dev)) break;
  state.SetBytesProcessed(state.iterations() * k16M * 3 * static_cast<int64_t>(sizeof(float)));
  bp_tensor_release(a);
  bp_tensor_release(b);
  bp_tensor_release(out);
}
void OpenCL_Add16M(benchmark::State& s) { Add16M(s, true); }
void Anchor_OpenCL_Add16M(benchmark::State& s) { Add16M(s, false); }
BENCHMARK(OpenCL_Add16M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(Anchor_OpenCL_Add16M)->Unit(benchmark::kMillisecond)->UseRealTime();

void Matmul(benchmark::State& state, bool opencl) {
  bp_device_t dev;
  if (!Device(state, opencl, &dev)) return;
  const int64_t n = state.range(0);
  bp_op_t* mm_out = Op("matmul.out");
  bp_tensor_t* a = bp_bench::Filled(dev, {n, n});
  bp_tensor_t* b = bp_bench::Filled(dev, {n, n});
  bp_tensor_t* out = bp_bench::Filled(dev, {n, n});
  bp_value_t args[3] = {TensorValue(a), TensorValue(b), TensorValue(out)};
  Call(state, mm_out, args, 3, dev);
  for (auto _ : state)
    if (!Call(state, mm_out, args, 3, dev)) break;
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  bp_tensor_release(a);
  bp_tensor_release(b);
  bp_tensor_release(out);
}
void OpenCL_Matmul(benchmark::State& s) { Matmul(s, true); }
void Anchor_OpenCL_Matmul(benchmark::State& s) { Matmul(s, false); }
BENCHMARK(OpenCL_Matmul)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(Anchor_OpenCL_Matmul)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

void Softmax(benchmark::State& state, bool opencl) {
  bp_device_t dev;
  if (!Device(state, opencl, &dev)) return;
  bp_op_t* softmax = Op("softmax.int");
  bp_tensor_t* x = bp_bench::Filled(dev, {4096, 1024});
  bp_value_t args[2] = {TensorValue(x), {}};
  args[1].kind = BP_VALUE_INT;
  args[1].u.i = 1;
  auto once = [&]() {
    bp_tensor_t* y = nullptr;
    if (bp_op_call(Context(), softmax, args, 2, &y, 1) != BP_STATUS_OK ||
        bp_device_synchronize(Context(), dev) != BP_STATUS_OK) {
      state.SkipWithError(bp_last_error_message());
      return false;
    }
    bp_tensor_release(y);  // the caching allocator reuses the block next time
    return true;
  };
  once();
  for (auto _ : state)
    if (!once()) break;
  state.SetBytesProcessed(state.iterations() * 4096 * 1024 * 2 * static_cast<int64_t>(sizeof(float)));
  bp_tensor_release(x);
}
void OpenCL_Softmax(benchmark::State& s) { Softmax(s, true); }
void Anchor_OpenCL_Softmax(benchmark::State& s) { Softmax(s, false); }
BENCHMARK(OpenCL_Softmax)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(Anchor_OpenCL_Softmax)->Unit(benchmark::kMillisecond)->UseRealTime();

// First call: a fresh context loads the OpenCL plugin and runs one float32
// add of 1024 elements to completion. Cold: an empty program cache
// directory each iteration; warm: one directory filled by an untimed run.
std::string FreshDir(const char* tag) {
  static int counter = 0;
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("bp_opencl_bench_" + std::string(tag) + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  return dir.string();
}

bool FirstCall(benchmark::State& state, const std::string& cache_dir) {
  setenv("BACKPLANE_OPENCL_CACHE_DIR", cache_dir.c_str(), 1);
  bp_context_options_t opts{};
  opts.struct_size = sizeof opts;
  opts.min_log_level = BP_LOG_ERROR;
  bp_context_t* ctx = nullptr;
  if (bp_context_create(&opts, &ctx) != BP_STATUS_OK) {
    state.SkipWithError(bp_last_error_message());
    return false;
  }
  bool ok = false;
  const char* path = std::getenv("BACKPLANE_OPENCL_PLUGIN");
#ifdef BP_OPENCL_PLUGIN_PATH
  if (path == nullptr) path = BP_OPENCL_PLUGIN_PATH;
#endif
  bp_device_t dev{};
  bp_op_t* add = nullptr;
  bp_tensor_t* a = nullptr;
  bp_tensor_t* out = nullptr;
  std::vector<float> host(1024, 1.0f);
  const int64_t size = 1024;
  if (path != nullptr ? bp_plugin_load(ctx, path, nullptr) == BP_STATUS_OK
                      : bp_plugin_discover(ctx, nullptr) == BP_STATUS_OK) {
    if (bp_device_parse(ctx, "opencl:0", &dev) == BP_STATUS_OK && bp_op_find(ctx, "add.Tensor", &add) == BP_STATUS_OK &&
        bp_tensor_from_host(ctx, dev, 1, &size, bp_bench::Float32(), host.data(), host.size() * sizeof(float), &a) ==
            BP_STATUS_OK) {
      bp_value_t args[2] = {TensorValue(a), TensorValue(a)};
      ok = bp_op_call(ctx, add, args, 2, &out, 1) == BP_STATUS_OK &&
           bp_tensor_to_host(out, host.data(), host.size() * sizeof(float)) == BP_STATUS_OK;
    }
  }
  if (!ok) state.SkipWithError(bp_last_error_message());
  bp_tensor_release(out);
  bp_tensor_release(a);
  bp_context_destroy(ctx);
  return ok;
}

void OpenCL_FirstCall_ColdCache(benchmark::State& state) {
  std::vector<std::string> dirs;
  for (auto _ : state) {
    state.PauseTiming();
    dirs.push_back(FreshDir("cold"));
    state.ResumeTiming();
    if (!FirstCall(state, dirs.back())) break;
  }
  for (const auto& d : dirs) std::filesystem::remove_all(d);
}
BENCHMARK(OpenCL_FirstCall_ColdCache)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

void OpenCL_FirstCall_WarmCache(benchmark::State& state) {
  const std::string dir = FreshDir("warm");
  if (!FirstCall(state, dir)) return;  // fills the cache, untimed
  for (auto _ : state)
    if (!FirstCall(state, dir)) break;
  std::filesystem::remove_all(dir);
}
BENCHMARK(OpenCL_FirstCall_WarmCache)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);

// One side of an interleaved matmul row: matmul.out on `dev`, synchronized.
struct MatmulSide {
  bp_device_t dev;
  bp_op_t* op;
  bp_value_t args[3];
  bool ok = true;
};

void RunMatmulSide(void* state, int64_t iters) {
  auto* s = static_cast<MatmulSide*>(state);
  for (int64_t i = 0; i < iters && s->ok; ++i)
    s->ok = bp_op_call(Context(), s->op, s->args, 3, nullptr, 0) == BP_STATUS_OK &&
            bp_device_synchronize(Context(), s->dev) == BP_STATUS_OK;
}

// Prints one line per size: median time per call of each side and the
// median of the per-round ratios OpenCL / CPU.
void MatmulRows(int rounds) {
  bp_device_t cl;
  if (!bp_bench::DeviceOf("opencl:0", &cl)) {
    std::printf("matmul rows skipped: no OpenCL device\n");
    return;
  }
  std::printf("float32 matmul.out, OpenCL vs the CPU backend, %d interleaved rounds, load average %s\n", rounds,
              bp_bench::LoadAverage().c_str());
  std::printf("%-14s %12s %12s %16s\n", "n x n x n", "OpenCL ms", "CPU ms", "ratio (median)");
  for (int64_t n : {256, 1024}) {
    MatmulSide sides[2];
    std::vector<bp_tensor_t*> tensors;
    for (int k = 0; k < 2; ++k) {
      MatmulSide& s = sides[k];
      s.dev = k == 0 ? cl : bp_device_t{0, 0};
      s.op = Op("matmul.out");
      for (int j = 0; j < 3; ++j) {
        tensors.push_back(bp_bench::Filled(s.dev, {n, n}));
        s.args[j] = TensorValue(tensors.back());
      }
    }
    const int64_t iters = n <= 256 ? 20 : 2;
    const bp_bench::RowResult r =
        bp_bench::Interleave(std::to_string(n), RunMatmulSide, &sides[0], RunMatmulSide, &sides[1], rounds, iters);
    if (!sides[0].ok || !sides[1].ok)
      std::printf("%-14s failed: %s\n", r.name.c_str(), bp_last_error_message());
    else
      std::printf("%-14s %12.3f %12.3f %16.2f\n", r.name.c_str(), r.ours_ns / 1e6, r.anchor_ns / 1e6, r.ratio);
    for (bp_tensor_t* t : tensors) bp_tensor_release(t);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 11;
  if (argc > 1 && std::strncmp(argv[1], "--matmul-rounds=", 16) == 0) {
    rounds = std::atoi(argv[1] + 16);
    argv[1] = argv[0];
    ++argv;
    --argc;
  }
  if (rounds > 0) MatmulRows(rounds);
  return bp_bench::RunWithRatios(argc, argv);
}
