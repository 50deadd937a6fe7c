// CPU backend throughput beside its anchors, in one run:
//   add of 16M float32 vs a plain two-thread add loop (STREAM-like),
//   float32 matmul 256/1024/2048 vs oneDNN's dnnl_sgemm.
// Targets (ARCHITECTURE.md section 9): >= 90% of each anchor.
#include <benchmark/benchmark.h>
#include <dnnl.h>

#include <thread>
#include <vector>

#include "bench_context.h"
#include "ratio_reporter.h"

namespace {

using bp_bench::Context;
using bp_bench::Op;
using bp_bench::TensorValue;

constexpr int64_t k16M = 16 * 1024 * 1024;

void Add16M(benchmark::State& state) {
  bp_op_t* add_out = Op("add.out");
  bp_tensor_t* a = bp_bench::Filled(bp_device_t{0, 0}, {k16M});
  bp_tensor_t* b = bp_bench::Filled(bp_device_t{0, 0}, {k16M});
  bp_tensor_t* out = bp_bench::Filled(bp_device_t{0, 0}, {k16M});
  bp_value_t args[4] = {TensorValue(a), TensorValue(b), {}, TensorValue(out)};
  args[2].kind = BP_VALUE_INT;
  args[2].u.i = 1;
  for (auto _ : state) {
    if (bp_op_call(Context(), add_out, args, 4, nullptr, 0) != BP_STATUS_OK) {
      state.SkipWithError(bp_last_error_message());
      break;
    }
  }
  state.SetBytesProcessed(state.iterations() * k16M * 3 * static_cast<int64_t>(sizeof(float)));
  bp_tensor_release(a);
  bp_tensor_release(b);
  bp_tensor_release(out);
}
BENCHMARK(Add16M)->Unit(benchmark::kMillisecond)->UseRealTime();

// The anchor: c = a + b over 16M floats split across two threads.
void Anchor_Add16M(benchmark::State& state) {
  std::vector<float> a(k16M, 1.0f), b(k16M, 2.0f), c(k16M);
  auto work = [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) c[i] = a[i] + b[i];
  };
  for (auto _ : state) {
    std::thread t(work, 0, k16M / 2);
    work(k16M / 2, k16M);
    t.join();
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * k16M * 3 * static_cast<int64_t>(sizeof(float)));
}
BENCHMARK(Anchor_Add16M)->Unit(benchmark::kMillisecond)->UseRealTime();

void Matmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  bp_op_t* mm_out = Op("matmul.out");
  bp_tensor_t* a = bp_bench::Filled(bp_device_t{0, 0}, {n, n});
  bp_tensor_t* b = bp_bench::Filled(bp_device_t{0, 0}, {n, n});
  bp_tensor_t* out = bp_bench::Filled(bp_device_t{0, 0}, {n, n});
  bp_value_t args[3] = {TensorValue(a), TensorValue(b), TensorValue(out)};
  for (auto _ : state) {
    if (bp_op_call(Context(), mm_out, args, 3, nullptr, 0) != BP_STATUS_OK) {
      state.SkipWithError(bp_last_error_message());
      break;
    }
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n * state.iterations() / 1e9,
                                                 benchmark::Counter::kIsRate);
  bp_tensor_release(a);
  bp_tensor_release(b);
  bp_tensor_release(out);
}
BENCHMARK(Matmul)->Arg(256)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

void Anchor_Matmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  for (auto _ : state) {
    dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n * state.iterations() / 1e9,
                                                 benchmark::Counter::kIsRate);
}
BENCHMARK(Anchor_Matmul)->Arg(256)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) { return bp_bench::RunWithRatios(argc, argv); }
